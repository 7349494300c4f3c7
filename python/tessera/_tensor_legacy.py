"""Tensor methods torch keeps for old code and for devices Tessera does not have:
the legacy constructors ``new`` / ``new_tensor``, the Python-callable loops ``apply_`` /
``map_`` / ``map2_``, storage queries, ``as_subclass``, and the device and layout probes
(``is_xpu``, ``cuda()``, ``pin_memory()``, ...) answered as a CPU-only torch answers them.

Importing this module installs them on ``tessera.Tensor``.
"""
import builtins
import inspect
import numbers
import warnings

from . import _C
from ._legacy_tensors import legacy_new
from ._tensor_casts import _legacy_name
from .storage import LEGACY_STORAGES, TypedStorage

_Tensor = _C.Tensor


def new(self, *args, **kwargs):
    """new(*sizes) / new(data) / new(size) / new(tensor) / new(storage) -> Tensor

    The legacy constructor with self's dtype and device: uninitialized for sizes, a copy
    for data, an alias for a tensor or storage of the same dtype. Prefer new_empty /
    new_tensor."""
    return legacy_new(self.dtype, self.device, args, kwargs)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """new_tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor

    A new tensor holding a copy of data, with self's dtype and device unless given."""
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    if isinstance(data, _Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
                      "sourceTensor.clone().detach().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        result = data.detach().to(device, dtype, copy=True)
    else:
        result = _C.tensor(data, dtype=dtype, device=device)
    if pin_memory:
        return globals()["pin_memory"](result)  # raises: no CUDA to pin memory for
    return result.requires_grad_(True) if requires_grad else result


def _check_tensor(fn, name, position, obj):
    if not isinstance(obj, _Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {builtins.type(obj).__name__}")


def is_same_size(self, other):
    """is_same_size(other) -> bool: whether self and other have the same shape."""
    _check_tensor("is_same_size", "other", 1, other)
    return self.shape == other.shape


def is_nonzero(self):
    """is_nonzero() -> bool: the truth value of a one-element tensor (an error for none
    or more than one)."""
    return self.__bool__()


def is_inference(self):
    """is_inference() -> bool: False. Tessera has no inference tensors: tensors made under
    tessera.inference_mode() are ordinary tensors (they may be updated in place and used
    by autograd outside it)."""
    return False


def get_device(self):
    """get_device() -> int: the device index, -1 for the CPU."""
    if self.device.type == "cpu":
        return -1
    return self.device.index if self.device.index is not None else 0


def storage(self):
    """storage() -> TypedStorage: the memory self views, as a typed storage."""
    return TypedStorage.of(self)


def storage_type(self):
    """storage_type() -> type: the legacy storage class of self's dtype (FloatStorage, ...)."""
    return LEGACY_STORAGES[self.dtype]


# ---------------------------------------------------------------- Python callables over elements

def _converter(dtype):
    """How a callable's result becomes an element of dtype, with torch's errors."""
    if dtype.is_complex:
        kind, cast = numbers.Complex, complex
    elif dtype.is_floating_point:
        kind, cast = numbers.Real, float
    elif dtype == _C.bool:
        kind, cast = numbers.Real, bool
    else:
        kind, cast = numbers.Real, int  # int(0.5) == 0: C's truncation, as torch converts

    def convert(value):
        if not isinstance(value, kind):
            noun = "complex number" if kind is numbers.Complex else "real number"
            raise TypeError(f"must be {noun}, not {builtins.type(value).__name__}")
        return cast(value)
    return convert


def _flat(values):
    """The elements of a tolist() result, in order."""
    if not isinstance(values, list):
        return [values]
    out = []
    stack = [iter(values)]
    while stack:
        for v in stack[-1]:
            if isinstance(v, list):
                stack.append(iter(v))
                break
            out.append(v)
        else:
            stack.pop()
    return out


def _elementwise(self, name, fn, others):
    if any(t.requires_grad for t in (self,) + others):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")
    if self.device.type != "cpu":
        raise RuntimeError(f"{name}() is only implemented on CPU tensors (got one on {self.device})")
    columns = [_flat(self.tolist())] + [_flat(o.expand(self.shape).tolist()) for o in others]
    convert = _converter(self.dtype)
    results = [convert(fn(*args)) for args in zip(*columns)]
    if results:
        self.detach().copy_(_C.tensor(results, dtype=self.dtype).reshape(self.shape))
    return self


def apply_(self, callable):
    """apply_(callable) -> Tensor

    Replaces each element x of self by callable(x), in place (CPU only, slow: one Python
    call per element)."""
    return _elementwise(self, "apply_", callable, ())


def map_(self, other, callable):
    """map_(tensor, callable) -> Tensor

    Replaces each element a of self by callable(a, b), b the matching element of other
    (broadcast to self's shape), in place (CPU only)."""
    _check_tensor("map_", "other", 1, other)
    if other.dtype != self.dtype and not (self.requires_grad or other.requires_grad):
        raise TypeError(f"map_: expected {_legacy_name(self)} for 'other' (got {_legacy_name(other)})")
    return _elementwise(self, "map_", callable, (other,))


def map2_(self, x, y, callable):
    """map2_(x, y, callable) -> Tensor

    Replaces each element a of self by callable(a, b, c), b and c the matching elements
    of x and y (broadcast to self's shape), in place (CPU only)."""
    _check_tensor("map2_", "x", 1, x)
    _check_tensor("map2_", "y", 2, y)
    if not any(t.requires_grad for t in (self, x, y)):
        for name, t in (("x", x), ("y", y)):
            if t.dtype != self.dtype:
                raise TypeError(f"map2_: expected {_legacy_name(self)} for argument '{name}' (got {_legacy_name(t)})")
    return _elementwise(self, "map2_", callable, (x, y))


def as_subclass(self, cls):
    """as_subclass(cls) -> Tensor: self as an instance of the Tensor subclass cls: the same
    tensor (memory, autograd graph and gradient) in a new Python object."""
    if not (isinstance(cls, builtins.type) and issubclass(cls, _Tensor)):
        raise RuntimeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                           "possible. Make sure your class inherits from Tensor.")
    return _C._autograd.as_subclass(self, cls)


# ---------------------------------------------------------------- devices Tessera does not have

def cuda(self, device=None, non_blocking=False, memory_format=_C.preserve_format):
    """cuda(device=None, non_blocking=False) -> Tensor: a copy in CUDA memory. Tessera has
    no CUDA backend in this build, so this raises AssertionError, as a CPU-only torch does."""
    from . import cuda as _cuda
    _cuda._lazy_init()
    return self.to("cuda" if device is None else device, non_blocking=non_blocking, memory_format=memory_format)


def _not_linked(kind):
    def method(self, device=None, non_blocking=False, memory_format=_C.preserve_format):
        raise RuntimeError(f"Tessera is not linked with support for {kind} devices")
    method.__name__ = method.__qualname__ = kind
    method.__doc__ = f"{kind}(device=None, non_blocking=False) -> Tensor: not available (no {kind} backend)."
    return method


def pin_memory(self, device=None):
    """pin_memory() -> Tensor: page-locked memory is for copies to a CUDA device, which
    this build has none of: NotImplementedError, as in a CPU-only torch."""
    raise NotImplementedError("Could not run 'aten::_pin_memory' with arguments from the 'CUDA' backend: Tessera "
                              "has no CUDA backend in this build, and pinned memory only serves copies to one.")


def is_pinned(self, device=None):
    """is_pinned() -> bool: False (no tensor is in page-locked memory without CUDA)."""
    return False


def record_stream(self, stream):
    """record_stream(stream): CUDA streams only; not available in this build."""
    raise RuntimeError("record_stream: Tessera has no CUDA backend in this build, so there is no CUDA stream "
                       f"to record (got {builtins.type(stream).__name__})")


def _volatile_get(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _volatile_set(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with tessera.no_grad():` instead.",
                  UserWarning, stacklevel=2)


def _false(self):
    return False


def is_distributed(self):
    """is_distributed() -> bool: False: no distributed tensors."""
    return False


def reinforce(self, reward):
    """reinforce(reward): removed from torch (stochastic functions went to
    torch.distributions); raises RuntimeError with torch's instructions."""
    raise RuntimeError("reinforce() was removed.\n"
                       "Use torch.distributions instead.\n"
                       "See https://pytorch.org/docs/master/distributions.html\n"
                       "\n"
                       "Instead of:\n"
                       "\n"
                       "probs = policy_network(state)\n"
                       "action = probs.multinomial()\n"
                       "next_state, reward = env.step(action)\n"
                       "action.reinforce(reward)\n"
                       "action.backward()\n"
                       "\n"
                       "Use:\n"
                       "\n"
                       "probs = policy_network(state)\n"
                       "# NOTE: categorical is equivalent to what used to be called multinomial\n"
                       "m = torch.distributions.Categorical(probs)\n"
                       "action = m.sample()\n"
                       "next_state, reward = env.step(action)\n"
                       "loss = -m.log_prob(action) * reward\n"
                       "loss.backward()\n")


reinforce.__qualname__ = "Tensor.reinforce"  # a missing argument is reported as torch reports it


def _name_get(self):
    return None


def _name_readonly(self, *value):
    raise AttributeError(f"attribute 'name' of '{_Tensor.__module__}.{_Tensor.__qualname__}' objects is not writable")


_methods = {fn.__name__: fn for fn in (
    new, new_tensor, is_same_size, is_nonzero, is_inference, get_device, storage, storage_type, apply_, map_, map2_,
    as_subclass, cuda, pin_memory, is_pinned, record_stream, reinforce, is_distributed)}
_methods.update({kind: _not_linked(kind) for kind in ("xpu", "ipu")})
# Layouts and devices Tessera's tensors never have.
_methods.update({name: property(_false, doc="False: Tessera has no such device or layout.")
                 for name in ("is_ipu", "is_xpu", "is_mps", "is_vulkan", "is_ort")})

_methods["volatile"] = property(_volatile_get, _volatile_set, doc="Removed: always False (warns).")
# torch's tracer names the tensors it records; every other tensor's name is None, and
# the attribute cannot be set.
_methods["name"] = property(_name_get, _name_readonly, _name_readonly, doc="None: the name torch's JIT tracer "
                            "gives a tensor; Tessera has no tracer.")
_C._add_tensor_methods(_methods)


# ---------------------------------------------------------------- function forms (tessera.is_nonzero(t), ...)

def _function_form(method, *names):
    def fn(*args):
        for position, (name, arg) in enumerate(zip(names, args), 1):
            _check_tensor(method.__name__, name, position, arg)
        return method(*args)
    fn.__name__ = fn.__qualname__ = method.__name__
    fn.__doc__ = f"{method.__name__}({', '.join(names)}) -> {method.__doc__.split('-> ', 1)[1]}"
    fn.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    return fn


is_same_size_fn = _function_form(is_same_size, "input", "other")
is_nonzero_fn = _function_form(is_nonzero, "input")
is_inference_fn = _function_form(is_inference, "input")
get_device_fn = _function_form(get_device, "input")
is_conj_fn = _function_form(_Tensor.is_conj, "input")
is_neg_fn = _function_form(_Tensor.is_neg, "input")
