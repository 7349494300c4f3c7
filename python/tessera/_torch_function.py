"""The Python half of the __torch_function__ protocol (the public names are in
tessera.overrides). The bindings in C++ (csrc/TorchFunction.h) find the arguments that
override a call and hand it to ``_handle`` here; Python-defined functions and methods get
the same check from ``overridable``. The per-thread state (DisableTorchFunction,
DisableTorchFunctionSubclass) and the TorchFunctionMode stack live in C++, where every
call reads them.

Follows current PyTorch (torch/overrides.py, torch/_tensor.py), which torch 1.13 agrees
with except that 1.13 has no DisableTorchFunctionSubclass (its DisableTorchFunction plays
that role) and no set of default "nowrap" getters beyond the three named below.
"""
import contextlib
import functools
import inspect
import sys
import types as _types
import warnings

from . import _C

_Tensor = _C.Tensor
_disabled_torch_function_impl = _C._disabled_torch_function_impl

_STATE_ENABLED, _STATE_SUBCLASSES_DISABLED, _STATE_ALL_DISABLED = 0, 1, 2


class _StateSwitch:
    """A context manager that sets this thread's protocol state and restores it on exit."""

    __slots__ = ("_saved",)
    _state = _STATE_ENABLED

    def _target(self, saved):
        return self._state

    def __enter__(self):
        self._saved = _C._get_torch_function_state()
        _C._set_torch_function_state(self._target(self._saved))
        return self

    def __exit__(self, *exc):
        _C._set_torch_function_state(self._saved)
        return False


class DisableTorchFunctionSubclass(_StateSwitch):
    """Context manager: within it, Tensor subclasses' and tensor-likes' __torch_function__
    are not called (TorchFunctionModes still are). What Tensor.__torch_function__ runs the
    original function under."""

    __slots__ = ()

    def _target(self, saved):
        return _STATE_SUBCLASSES_DISABLED if saved == _STATE_ENABLED else saved


class DisableTorchFunction(_StateSwitch):
    """Context manager: within it, no __torch_function__ runs, neither subclasses' nor
    modes'."""

    __slots__ = ()
    _state = _STATE_ALL_DISABLED


class _EnableTorchFunction(_StateSwitch):
    """Context manager: re-enables the protocol inside a disabled region (torch._C's)."""

    __slots__ = ()
    _state = _STATE_ENABLED


# ---------------------------------------------------------------- the mode stack

def _push_mode(mode):
    _C._push_on_torch_function_stack(mode)


def _pop_mode():
    return _C._pop_torch_function_stack()


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


def _get_current_function_mode():
    n = _C._len_torch_function_stack()
    return _C._get_function_stack_at(n - 1) if n > 0 else None


def _get_current_function_mode_stack():
    return [_C._get_function_stack_at(i) for i in range(_C._len_torch_function_stack())]


# ---------------------------------------------------------------- dispatching a call

def _overrides(arg_type):
    method = getattr(arg_type, "__torch_function__", None)
    if method is None or method is _disabled_torch_function_impl:
        return False
    # PyTorch's own tensors are not tensor-like here (see csrc/TorchFunction.cpp)
    torch = sys.modules.get("torch")
    torch_tensor = getattr(torch, "Tensor", None) if torch is not None else None
    return not (isinstance(torch_tensor, type) and issubclass(arg_type, torch_tensor))


def _is_pytorch_function(func):
    """Whether func is PyTorch's (torch asks a tessera tensor's __torch_function__ when both
    libraries' tensors meet in a torch call)."""
    owner = getattr(func, "__objclass__", None) or getattr(getattr(func, "__self__", None), "__objclass__", None)
    module = getattr(owner, "__module__", None) if owner is not None else getattr(func, "__module__", None)
    if module is None and isinstance(getattr(func, "__self__", None), _types.ModuleType):
        module = func.__self__.__name__
    return isinstance(module, str) and (module == "torch" or module.startswith("torch."))


def _get_overloaded_args(relevant_args, get_type_fn=None):
    """The arguments whose __torch_function__ is tried, in torch's order: one per type, in
    the order they appear, except that a subclass goes before its parent class."""
    get_type_fn = get_type_fn or type
    overloaded_types = set()
    overloaded_args = []
    for arg in relevant_args:
        arg_type = get_type_fn(arg)
        if arg_type in overloaded_types or not _overrides(arg_type):
            continue
        overloaded_types.add(arg_type)
        index = len(overloaded_args)
        for i, old_arg in enumerate(overloaded_args):
            if issubclass(arg_type, get_type_fn(old_arg)):
                index = i
                break
        overloaded_args.insert(index, arg)
    return overloaded_args


_MODULE_NAMES = {"tessera._C": "tessera", "tessera._C._nn": "tessera.nn.functional",
                 "tessera._C._linalg": "tessera.linalg", "tessera._C._fft": "tessera.fft",
                 "tessera._C._special": "tessera.special", "tessera._C._nested": "tessera.nested"}


def _public_name(public_api):
    """How an error names the function: 'tessera.add', 'tessera.Tensor.add', ..."""
    owner = getattr(public_api, "__objclass__", None) or getattr(getattr(public_api, "__self__", None),
                                                                 "__objclass__", None)
    name = getattr(public_api, "__name__", None) or repr(public_api)
    method = getattr(public_api, "_tessera_tensor_method", None)
    if method:
        return f"tessera.Tensor.{method}"
    if name == "__get__" and not isinstance(public_api, _types.FunctionType):
        descriptor = getattr(public_api, "__self__", None)
        prop = getattr(descriptor, "__name__", None) or getattr(getattr(descriptor, "fget", None), "__name__", None)
        return f"tessera.Tensor.{prop}.__get__"
    if owner is not None and isinstance(owner, type) and issubclass(owner, _Tensor):
        return f"tessera.Tensor.{name}"
    module = getattr(public_api, "__module__", None)
    if isinstance(public_api, _types.BuiltinFunctionType) and isinstance(getattr(public_api, "__self__", None),
                                                                         _types.ModuleType):
        module = public_api.__self__.__name__
    module = _MODULE_NAMES.get(module, module)
    return f"{module}.{name}" if module else name


def _dispatch(public_api, overloaded_args, args, kwargs):
    types = tuple(map(type, overloaded_args))
    if _C._is_torch_function_mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for overloaded_arg in overloaded_args:
        torch_func_method = overloaded_arg.__torch_function__
        if (getattr(torch_func_method, "__self__", None) is overloaded_arg
                and torch_func_method is not _disabled_torch_function_impl):
            warnings.warn("Defining your `__torch_function__` as a plain method is deprecated and will be an error "
                          "in future, please define it as a classmethod.", DeprecationWarning)
        result = torch_func_method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    msg = (f"no implementation found for '{_public_name(public_api)}' on types that implement "
           f"__torch_function__: {[type(arg) for arg in overloaded_args]}")
    if _C._is_torch_function_mode_enabled():
        msg += f" nor in mode {_get_current_function_mode()}"
    raise TypeError(msg)


def _handle(public_api, overloaded, args, kwargs):
    """Called by the C++ bindings: `overloaded` holds the overriding arguments in order of
    appearance (possibly none, when only a mode asked); kwargs is None when the call had
    none, as torch passes it."""
    return _dispatch(public_api, _get_overloaded_args(overloaded), args, kwargs)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Implements a function with __torch_function__ overrides (torch.overrides'): tries
    the active mode, then each overriding argument of relevant_args; raises TypeError when
    none answers."""
    return _dispatch(public_api, _get_overloaded_args(relevant_args), args, kwargs)


def _flat_relevant(args, kwargs):
    out = []
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, (list, tuple)):
            out.extend(value)
        else:
            out.append(value)
    return [v for v in out if type(v) is not _Tensor]


def _call_shape(fn):
    """(signature or None, whether calls are normalized): a function without *args/**kwargs
    is called by overrides as torch's Python functions call handle_torch_function: its
    required arguments positionally, every other one (defaults filled in) by keyword."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None, False
    params = list(sig.parameters.values())
    plain = bool(params) and all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params[1:]) and \
        params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD)
    return sig, plain


def _normalize(shape, args, kwargs):
    sig, plain = shape
    if sig is None:
        return args, kwargs
    bound = sig.bind(*args, **kwargs)  # a call the function itself would refuse raises TypeError here
    if not plain:
        return args, kwargs
    bound.apply_defaults()
    positional, keywords = [], {}
    for name, param in sig.parameters.items():
        if param.default is param.empty and param.kind != param.KEYWORD_ONLY and not keywords:
            positional.append(bound.arguments[name])
        else:
            keywords[name] = bound.arguments[name]
    return tuple(positional), keywords


def overridable(fn, normalize=True):
    """Wraps a function written in Python so that an overriding argument (one list or tuple
    deep) or a mode sees the call, as torch's functions check has_torch_function first.
    The wrapper is what __torch_function__ receives as `func`. With normalize (functions,
    not Tensor methods, which torch mostly writes in C++ and passes as called), overrides
    get torch's argument shape (see _call_shape)."""
    if getattr(fn, "_tessera_overridable", False):
        return fn
    need = _C._torch_function_args_need_dispatch
    signature = []  # computed on the first dispatch

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if need(args, kwargs):
            if not signature:
                signature.append(_call_shape(fn) if normalize else (None, False))
            args, kwargs = _normalize(signature[0], args, kwargs)
            relevant = _get_overloaded_args(_flat_relevant(args, kwargs))
            # a Tensor method gets kwargs as torch's C++ methods pass them: None when empty
            return _dispatch(wrapper, relevant, args, kwargs if normalize or kwargs else None)
        return fn(*args, **kwargs)

    wrapper._tessera_overridable = True
    return wrapper


def overridable_property(prop):
    """A property of Tensor written in Python, with its getter dispatched as Tensor.<name>.__get__."""
    fget = prop.fget

    def getter(self):
        if _C._has_torch_function_unary(self):
            public = type_property.__get__
            return _dispatch(public, _get_overloaded_args((self,)), (self,), None)
        return fget(self)

    getter.__name__ = getter.__qualname__ = fget.__name__
    getter.__doc__ = fget.__doc__

    type_property = property(getter, prop.fset, prop.fdel, prop.__doc__)
    return type_property


# ---------------------------------------------------------------- Tensor's own override

def get_default_nowrap_functions():
    """The getters whose results Tensor.__torch_function__ returns as they are, not
    converted to the subclass (a subclass's .grad stays what was stored)."""
    return {getattr(_Tensor, name).__get__ for name in ("_base", "grad", "_grad") if hasattr(_Tensor, name)}


@functools.lru_cache(None)
def _nowrap():
    return get_default_nowrap_functions()


def _convert(ret, cls):
    if cls is _Tensor:
        return ret
    if isinstance(ret, _Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        # structseqs (return_types) and lists alike
        ret = type(ret)(_convert(r, cls) for r in ret)
    return ret


def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """The default __torch_function__ of Tensor subclasses: runs func with subclass overrides
    disabled and returns its tensors as instances of cls (torch's Tensor.__torch_function__).
    A subclass overrides it to change what functions do on its instances."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types) or _is_pytorch_function(func):
        # (a PyTorch function given a tessera tensor: torch then reports that no
        # implementation takes it, instead of calling itself again and again)
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _nowrap():
            return ret
        return _convert(ret, cls)


# Tensor methods written in Python that stay out of the protocol (torch's ignored ones and
# the plumbing the protocol itself uses).
_IGNORED_TENSOR_METHODS = frozenset({
    "__torch_function__", "__torch_dispatch__", "__reduce_ex__", "__new__", "__init__", "__init_subclass__", "__subclasshook__",
    "__dir__", "__hash__", "__iter__", "__delitem__", "__getattribute__", "__setattr__", "__delattr__",
    "as_subclass", "_make_subclass", "_make_wrapper_subclass", "_reduce_ex_internal", "_fix_weakref",
    "new", "new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor", "new_zeros",
    "eig", "lstsq", "solve", "reinforce", "stride", "__deepcopy__", "__copy__", "__setstate__",
    "__getstate__", "_conj", "_neg_view", "_conj_physical", "_is_zerotensor",
})


def wrap_tensor_methods(methods):
    """The dict given to _C._add_tensor_methods, with its functions and properties made
    overridable (except the ignored names)."""
    out = {}
    for name, value in methods.items():
        if name in _IGNORED_TENSOR_METHODS:
            out[name] = value
        elif isinstance(value, _types.FunctionType):
            out[name] = overridable(value, normalize=False)
            out[name]._tessera_tensor_method = name
        elif isinstance(value, property) and value.fget is not None:
            out[name] = overridable_property(value)
        else:
            out[name] = value
    return out
