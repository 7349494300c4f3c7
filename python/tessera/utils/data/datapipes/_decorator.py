"""Decorators on DataPipe classes: `functional_datapipe` (registers `dp.<name>(...)`),
`non_deterministic` with the `guaranteed_datapipes_determinism` context, and the
type-validation decorators `argument_validation`, `runtime_validation` and the
`runtime_validation_disabled` context.

torch 1.13 attaches no type to DataPipe classes, so the validations only check what they
can without one (see each docstring).
"""
import inspect
from functools import wraps
from typing import get_type_hints

from .datapipe import IterDataPipe, MapDataPipe, _DataPipeMeta

__all__ = ["argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
           "runtime_validation", "runtime_validation_disabled"]


class functional_datapipe:
    """`@functional_datapipe("name")` on a DataPipe class makes `dp.name(*args)` build
    `Class(dp, *args)`."""

    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if isinstance(cls, non_deterministic) or isinstance(getattr(cls, "__self__", None), non_deterministic):
            IterDataPipe.register_datapipe_as_function(self.name, cls, self.enable_df_api_tracing)
        elif isinstance(cls, type) and issubclass(cls, IterDataPipe):
            if not isinstance(cls, _DataPipeMeta):
                raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
            IterDataPipe.register_datapipe_as_function(self.name, cls, self.enable_df_api_tracing)
        elif isinstance(cls, type) and issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


_determinism = False


class guaranteed_datapipes_determinism:
    """While active (from construction to the end of its `with` block), building a pipe
    marked `non_deterministic` raises TypeError."""

    def __init__(self):
        global _determinism
        self.prev = _determinism
        _determinism = True

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        global _determinism
        _determinism = self.prev


class non_deterministic:
    """Marks an IterDataPipe class as non-deterministic (`@non_deterministic`), or as
    non-deterministic for the arguments where `fn(*args, **kwargs)` returns True
    (`@non_deterministic(fn)`)."""
    cls = None

    def __init__(self, arg):
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`, but {arg.__name__} "
                                "is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:  # decorating a class: this call builds an instance
            if _determinism:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe "
                                "if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        # non_deterministic(fn) applied to the class: this call receives the class
        cls = args[0]
        if not (isinstance(cls, type) and issubclass(cls, IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {getattr(cls, '__name__', cls)} is found")
        self.cls = cls
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to return a boolean value, "
                            f"but {type(res)} is found")
        if _determinism and res:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                            "'guaranteed_datapipes_determinism'. You can turn off determinism for this DataPipe if "
                            "that is acceptable for your application")
        return self.cls(*args, **kwargs)


def argument_validation(f):
    """Checks, at each call, that arguments annotated with a DataPipe class are
    IterDataPipes. (torch 1.13 then compares element types the classes no longer carry;
    that comparison is made only when both sides have a `type`.)"""
    signature = inspect.signature(f)
    hints = get_type_hints(f)

    @wraps(f)
    def wrapper(*args, **kwargs):
        for name, value in signature.bind(*args, **kwargs).arguments.items():
            hint = hints.get(name)
            if not isinstance(hint, _DataPipeMeta):
                continue
            if not isinstance(value, IterDataPipe):
                raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found {type(value)}")
            want, got = getattr(hint, "type", None), getattr(value, "type", None)
            if want is not None and got is not None and not got.issubtype(want):
                raise TypeError(f"Expected type of argument '{name}' as a subtype of hint {want}, but found {got}")
        return f(*args, **kwargs)
    return wrapper


_runtime_validation_enabled = True


class runtime_validation_disabled:
    """Turns `runtime_validation` off from construction to the end of its `with` block."""

    def __init__(self):
        global _runtime_validation_enabled
        self.prev = _runtime_validation_enabled
        _runtime_validation_enabled = False

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        global _runtime_validation_enabled
        _runtime_validation_enabled = self.prev


def runtime_validation(f):
    """Decorates a pipe's `__iter__`: while validation is enabled, each item must satisfy
    `self.type.issubtype_of_instance(item)`. As in torch 1.13, pipes carry no `type`, so
    iterating then raises AttributeError unless the pipe defines one."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @wraps(f)
    def wrapper(self):
        if not _runtime_validation_enabled:
            yield from f(self)
            return
        for item in f(self):
            if not self.type.issubtype_of_instance(item):
                raise RuntimeError(f"Expected an instance as subtype of {self.type}, but found {item}({type(item)})")
            yield item
    return wrapper
