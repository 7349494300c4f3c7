"""Decorators on DataPipe classes: `functional_datapipe` (registers `dp.<name>(...)`),
`non_deterministic` with the `guaranteed_datapipes_determinism` context, and the
type-validation decorators `argument_validation`, `runtime_validation` and the
`runtime_validation_disabled` context.

torch 1.13 attaches no type to DataPipe classes, so the validations only check what they
can without one (see each docstring).
"""
import functools
import inspect
import typing

from .datapipe import IterDataPipe, MapDataPipe, _DataPipeMeta

__all__ = ["argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
           "runtime_validation", "runtime_validation_disabled"]


class _Switches:
    """Process-wide switches the contexts below flip: whether non-deterministic pipes are
    refused, and whether runtime_validation checks items."""
    determinism_required = False
    validate_at_runtime = True


class _SwitchContext:
    """Sets `_Switches.<_switch>` to `_value` on construction (not on `__enter__`, as in
    torch) and restores the earlier value when its `with` block ends."""
    _switch = _value = None

    def __init__(self):
        self._previous = getattr(_Switches, self._switch)
        setattr(_Switches, self._switch, self._value)

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        setattr(_Switches, self._switch, self._previous)


class functional_datapipe:
    """`@functional_datapipe("name")` on a DataPipe class makes `dp.name(*args)` build
    `Class(dp, *args)`."""

    def __init__(self, name, enable_df_api_tracing=False):
        self.name, self.enable_df_api_tracing = name, enable_df_api_tracing

    def _register_iter(self, target):
        IterDataPipe.register_datapipe_as_function(self.name, target, self.enable_df_api_tracing)

    def __call__(self, cls):
        wrapped_by = getattr(cls, "__self__", None)
        if isinstance(cls, non_deterministic) or isinstance(wrapped_by, non_deterministic):
            self._register_iter(cls)
            return cls
        if isinstance(cls, type):
            if issubclass(cls, IterDataPipe):
                if not isinstance(cls, _DataPipeMeta):
                    raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
                self._register_iter(cls)
            elif issubclass(cls, MapDataPipe):
                MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


class guaranteed_datapipes_determinism(_SwitchContext):
    """While active (from construction to the end of its `with` block), building a pipe
    marked `non_deterministic` raises TypeError."""
    _switch, _value = "determinism_required", True


def _refuse(what):
    raise TypeError(f"{what}, but you set 'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                    "DataPipe if that is acceptable for your application")


def _is_iter_pipe_class(obj):
    return isinstance(obj, type) and issubclass(obj, IterDataPipe)


class non_deterministic:
    """Marks an IterDataPipe class as non-deterministic (`@non_deterministic`), or as
    non-deterministic for the arguments where `fn(*args, **kwargs)` returns True
    (`@non_deterministic(fn)`)."""
    cls = None

    def __init__(self, arg):
        if not isinstance(arg, type):
            if not callable(arg):
                raise TypeError(f"{arg} can not be decorated by non_deterministic")
            self.deterministic_fn = arg
            return
        if not issubclass(arg, IterDataPipe):
            raise TypeError(f"Only `IterDataPipe` can be decorated with `non_deterministic`, but {arg.__name__} "
                            "is found")
        self.cls = arg

    def __call__(self, *args, **kwargs):
        if self.cls is None:
            # non_deterministic(fn) is being applied to the class itself.
            target = args[0]
            if not _is_iter_pipe_class(target):
                raise TypeError(f"Only `IterDataPipe` can be decorated, but {getattr(target, '__name__', target)} "
                                "is found")
            self.cls = target
            return self.deterministic_wrapper_fn
        # The decorated class is being instantiated.
        if _Switches.determinism_required:
            _refuse(f"{self.cls.__name__} is non-deterministic")
        return self.cls(*args, **kwargs)

    def deterministic_wrapper_fn(self, *args, **kwargs):
        verdict = self.deterministic_fn(*args, **kwargs)
        if type(verdict) is not bool:
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to return a boolean value, "
                            f"but {type(verdict)} is found")
        if verdict and _Switches.determinism_required:
            _refuse(f"{self.cls.__name__} is non-deterministic with the inputs")
        return self.cls(*args, **kwargs)


def _check_pipe_argument(name, hint, value):
    if not isinstance(hint, _DataPipeMeta):
        return
    if not isinstance(value, IterDataPipe):
        raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found {type(value)}")
    wanted, actual = getattr(hint, "type", None), getattr(value, "type", None)
    if None not in (wanted, actual) and not actual.issubtype(wanted):
        raise TypeError(f"Expected type of argument '{name}' as a subtype of hint {wanted}, but found {actual}")


def argument_validation(f):
    """Checks, at each call, that arguments annotated with a DataPipe class are
    IterDataPipes. (torch 1.13 then compares element types the classes no longer carry;
    that comparison is made only when both sides have a `type`.)"""
    annotations = typing.get_type_hints(f)
    binder = inspect.signature(f).bind

    @functools.wraps(f)
    def checked(*args, **kwargs):
        for name, value in binder(*args, **kwargs).arguments.items():
            _check_pipe_argument(name, annotations.get(name), value)
        return f(*args, **kwargs)
    return checked


class runtime_validation_disabled(_SwitchContext):
    """Turns `runtime_validation` off from construction to the end of its `with` block."""
    _switch, _value = "validate_at_runtime", False


def runtime_validation(f):
    """Decorates a pipe's `__iter__`: while validation is enabled, each item must satisfy
    `self.type.issubtype_of_instance(item)`. As in torch 1.13, pipes carry no `type`, so
    iterating then raises AttributeError unless the pipe defines one."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @functools.wraps(f)
    def validated_iter(self):
        check = _Switches.validate_at_runtime
        for item in f(self):
            if check and not self.type.issubtype_of_instance(item):
                raise RuntimeError(f"Expected an instance as subtype of {self.type}, but found {item}({type(item)})")
            yield item
    return validated_iter
