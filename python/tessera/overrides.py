"""tessera.overrides: the __torch_function__ protocol's public helpers, as torch.overrides.

A Tensor subclass (or any object) with a ``__torch_function__(cls, func, types, args,
kwargs)`` classmethod sees every tessera function, Tensor method, property getter and
Python operator it takes part in; a ``TorchFunctionMode`` entered with ``with`` sees every
call. The default ``Tensor.__torch_function__`` runs the function and returns its tensors
as the subclass. Reference: current PyTorch's torch/overrides.py (torch 1.13 has the same
functions except DisableTorchFunctionSubclass and BaseTorchFunctionMode).
"""
import functools
import inspect
import types as _types
import warnings

from . import _C
from ._torch_function import (  # noqa: F401  (public re-exports)
    _get_current_function_mode,
    _get_current_function_mode_stack,
    _get_overloaded_args,
    _pop_mode,
    _pop_mode_temporarily,
    _push_mode,
    get_default_nowrap_functions,
    handle_torch_function,
    overridable,
)

__all__ = [
    "get_ignored_functions", "get_overridable_functions", "get_testing_overrides", "handle_torch_function",
    "has_torch_function", "resolve_name", "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function",
    "enable_reentrant_dispatch", "TorchFunctionMode", "BaseTorchFunctionMode", "get_default_nowrap_functions",
    "has_torch_function_unary", "has_torch_function_variadic",
]

has_torch_function = _C._has_torch_function
has_torch_function_unary = _C._has_torch_function_unary
has_torch_function_variadic = _C._has_torch_function_variadic
_is_torch_function_mode_enabled = _C._is_torch_function_mode_enabled
_len_torch_function_stack = _C._len_torch_function_stack


def is_tensor_like(inp):
    """Whether inp is a Tensor or an object whose type defines __torch_function__ (a type
    itself is not tensor-like)."""
    return type(inp) is _C.Tensor or hasattr(inp, "__torch_function__") and not isinstance(inp, type)


def wrap_torch_function(dispatcher):
    """Decorator: makes a Python function overridable; dispatcher(*args, **kwargs) returns
    the arguments to check for __torch_function__."""

    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


class TorchFunctionMode:
    """A mode that sees every tessera call made while it is entered (``with Mode():``), in
    its ``__torch_function__(self, func, types, args=(), kwargs=None)``; inside that, the
    mode is off, so calling func runs the function (or the next mode down the stack)."""

    inner: "TorchFunctionMode"

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`")
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every function unchanged (a base for modes that only observe)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        return func(*args, **kwargs)


def enable_reentrant_dispatch():
    """torch's helper for __torch_dispatch__ subclasses, which tessera does not have yet."""
    raise NotImplementedError("enable_reentrant_dispatch belongs to __torch_dispatch__, which tessera does not "
                              "have yet (issue 28)")


# ---------------------------------------------------------------- the overridable surface

# Names torch.overrides.get_ignored_functions() lists (functions that take no tensor to
# dispatch on, factories, grad modes, the protocol's own plumbing), by namespace.
_IGNORED = {
    "tessera": {
        "arange", "are_deterministic_algorithms_enabled", "as_strided", "as_tensor", "asarray", "bartlett_window",
        "blackman_window", "can_cast", "device", "dtype", "empty", "empty_strided", "eye", "fill", "finfo",
        "from_file", "from_numpy", "frombuffer", "full", "get_default_dtype", "get_deterministic_debug_mode",
        "get_device", "get_float32_matmul_precision", "get_num_interop_threads", "get_num_threads",
        "hamming_window", "hann_window", "iinfo", "init_num_threads", "is_anomaly_check_nan_enabled",
        "is_anomaly_enabled", "is_autocast_cache_enabled", "is_autocast_cpu_enabled", "is_autocast_enabled",
        "is_deterministic_algorithms_warn_only_enabled", "is_grad_enabled", "is_inference_mode_enabled",
        "is_storage", "is_tensor", "is_warn_always_enabled", "kaiser_window", "layout", "linspace", "logspace",
        "memory_format", "normal", "ones", "promote_types", "qscheme", "rand", "randint", "randn", "randperm",
        "range", "result_type", "scalar_tensor", "set_anomaly_enabled", "set_default_tensor_type",
        "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_flush_denormal",
        "set_num_interop_threads", "set_num_threads", "set_warn_always", "sparse_coo_tensor", "tensor",
        "tril_indices", "triu_indices", "typename", "use_deterministic_algorithms", "vander", "zeros",
        "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state", "load", "save",
        "set_printoptions", "align_tensors", "broadcast_shapes", "enable_grad", "inference_mode", "no_grad",
        "set_grad_enabled", "set_default_dtype", "get_default_device", "set_default_device", "compile",
        "is_nonzero_fn", "autocast", "from_dlpack", "to_dlpack", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
        "randn_like", "randint_like", "empty_permuted",
    },
    "tessera.nn.functional": {"assert_int_or_pair", "hardsigmoid", "hardswish", "sigmoid", "tanh", "upsample",
                              "upsample_bilinear", "upsample_nearest"},
    "tessera.fft": {"fftfreq", "rfftfreq"},
    "tessera.linalg": set(),
    "tessera.special": set(),
    "tessera.nn.init": {"calculate_gain", "constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal",
                        "orthogonal", "sparse", "uniform", "xavier_normal", "xavier_uniform"},
}
# Ignored functions that still reach modes (torch's are C++ bindings, which modes see) are
# wrapped all the same; these never dispatch: switches, seeds, files, the protocol itself.
_NEVER_DISPATCHED = {"typename", "is_tensor", "is_storage", "load", "save", "compile", "from_dlpack", "to_dlpack",
                     "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "set_printoptions",
                     "enable_grad", "inference_mode", "no_grad", "set_grad_enabled", "broadcast_shapes",
                     "align_tensors", "calculate_gain"}


def _never_dispatched(name):
    return name in _NEVER_DISPATCHED or name.startswith(("set_", "get_", "are_", "is_", "init_"))
# (torch ignores the *_like factories only for testing overrides; they do dispatch)
_IGNORED["tessera"] -= {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
                        "randint_like"}


def _namespaces():
    import tessera
    import tessera.nn.functional as F
    import tessera.nn.init as init
    return {"tessera": tessera, "tessera.nn.functional": F, "tessera.linalg": tessera.linalg,
            "tessera.fft": tessera.fft, "tessera.special": tessera.special, "tessera.nn.init": init}


def _is_function(value):
    return isinstance(value, (_types.FunctionType, _types.BuiltinFunctionType))


def _public_functions(ns_name, ns):
    for name in dir(ns):
        if name.startswith("_"):
            continue
        value = getattr(ns, name, None)
        if _is_function(value) and name not in _IGNORED.get(ns_name, ()):
            yield name, value


def _tensor_methods():
    from ._torch_function import _IGNORED_TENSOR_METHODS
    out = {}
    for name, value in vars(_C.Tensor).items():
        if name in _IGNORED_TENSOR_METHODS or (name.startswith("__") and name not in _TENSOR_DUNDERS):
            continue
        if isinstance(value, (property, _types.GetSetDescriptorType)):
            out[name] = value.__get__
        elif callable(value) and not isinstance(value, (classmethod, staticmethod, type)):
            out[name] = value
    return out


_TENSOR_DUNDERS = {
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
    "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__",
    "__rmod__", "__imod__", "__pow__", "__rpow__", "__ipow__", "__matmul__", "__rmatmul__", "__and__", "__rand__",
    "__iand__", "__or__", "__ror__", "__ior__", "__xor__", "__rxor__", "__ixor__", "__lshift__", "__rlshift__",
    "__ilshift__", "__rshift__", "__rrshift__", "__irshift__", "__neg__", "__pos__", "__abs__", "__invert__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__getitem__", "__setitem__", "__len__",
    "__bool__", "__float__", "__int__", "__index__", "__repr__", "__format__", "__reversed__", "__complex__",
    "__array__", "__array_wrap__", "__contains__",
}


@functools.lru_cache(None)
def _overridable_index():
    funcs, index = {}, {}
    for ns_name, ns in _namespaces().items():
        listed = funcs.setdefault(ns, [])
        for name, fn in _public_functions(ns_name, ns):
            listed.append(fn)
            index.setdefault(fn, f"{ns_name}.{name}")
    listed = funcs.setdefault(_C.Tensor, [])
    for name, fn in _tensor_methods().items():
        listed.append(fn)
        index.setdefault(fn, f"tessera.Tensor.{name}")
    return funcs, index


def get_overridable_functions():
    """{namespace (module or tessera.Tensor): [functions that __torch_function__ can override]}."""
    return _overridable_index()[0]


def resolve_name(f):
    """The qualified name ('tessera.add', 'tessera.Tensor.add') of an overridable function,
    or None."""
    if isinstance(f, (_types.MethodType, _types.MethodWrapperType)) and f.__name__ == "__get__":
        descriptor = f.__self__
        name = getattr(descriptor, "__name__", None) or getattr(getattr(descriptor, "fget", None), "__name__", None)
        return f"tessera.Tensor.{name}.__get__" if name else None
    return _overridable_index()[1].get(f)


def get_ignored_functions():
    """The public functions that cannot be overridden (they take no tensor to dispatch on)."""
    ignored = set()
    for ns_name, ns in _namespaces().items():
        for name in _IGNORED.get(ns_name, ()):
            value = getattr(ns, name, None)
            if _is_function(value) or isinstance(value, type):
                ignored.add(value)
    from ._torch_function import _IGNORED_TENSOR_METHODS
    for name in _IGNORED_TENSOR_METHODS:
        value = vars(_C.Tensor).get(name)
        if value is not None and callable(value):
            ignored.add(value)
    ignored.update({_C._has_torch_function, _C._has_torch_function_unary, _C._has_torch_function_variadic,
                    handle_torch_function})
    return ignored


def _dummy(fn):
    def dummy(*args, **kwargs):
        return -1
    try:
        dummy.__signature__ = inspect.signature(fn)
    except (TypeError, ValueError):
        pass
    return dummy


def get_testing_overrides():
    """{overridable function: a dummy with its signature (where Python can read one) that
    returns -1}: what a test of a __torch_function__ implementation calls instead."""
    out = {}
    for fns in get_overridable_functions().values():
        for fn in fns:
            out[fn] = _dummy(fn)
    return out


def is_tensor_method_or_property(func):
    """Whether func is a Tensor method or a property getter (called with the tensor first)."""
    return func in _tensor_methods().values() or getattr(func, "__name__", None) == "__get__"


def _make_python_functions_overridable():
    """Replaces the Python-defined public functions of tessera, tessera.nn.functional,
    tessera.linalg, tessera.fft, tessera.special and tessera.nn.init by overridable ones (C++
    bindings check in C++). A function bound under several names gets one wrapper."""
    wrapped = {}
    for ns_name, ns in _namespaces().items():
        for name in dir(ns):
            if name.startswith("_") or (name in _IGNORED.get(ns_name, ()) and _never_dispatched(name)):
                continue
            value = getattr(ns, name, None)
            if not isinstance(value, _types.FunctionType) or not (value.__module__ or "").startswith("tessera"):
                continue
            if value not in wrapped:
                wrapped[value] = overridable(value)
            setattr(ns, name, wrapped[value])
    _overridable_index.cache_clear()
