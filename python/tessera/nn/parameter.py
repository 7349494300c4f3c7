"""nn.Parameter: a Tensor subclass that a Module registers as one of its parameters when
it is assigned as an attribute. It holds an alias of the data it is made from and
requires grad by default; operations on it return plain Tensors, as in torch. Also the
lazy modules' placeholders, UninitializedParameter and UninitializedBuffer."""
from .. import _C
from ..overrides import is_tensor_method_or_property, resolve_name

Tensor = _C.Tensor


class _ParameterMeta(type):
    # A Parameter made from a Tensor subclass stays an instance of that subclass, marked
    # _is_param; isinstance(p, Parameter) holds for it all the same (torch's rule).
    def __instancecheck__(self, instance):
        return super().__instancecheck__(instance) or (
            isinstance(instance, Tensor) and getattr(instance, "_is_param", False))


class Parameter(Tensor, metaclass=_ParameterMeta):
    """Parameter(data=None, requires_grad=True): data (an empty tensor when None) as a
    module parameter. Data of a Tensor subclass stays that subclass (its detach(), with
    requires_grad set and marked as a parameter), so its __torch_function__ keeps working."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        if type(data) is Tensor or type(data) is Parameter:
            return Tensor._make_subclass(cls, data, requires_grad)
        t = data.detach().requires_grad_(requires_grad)
        if type(t) is not type(data):
            raise RuntimeError(
                f"Creating a Parameter from an instance of type {type(data).__name__} requires that detach() "
                f"returns an instance of the same type, but return type {type(t).__name__} was found instead. To "
                "use the type as a Parameter, please correct the detach() semantics defined by its "
                "__torch_dispatch__() implementation.")
        t._is_param = True
        return t

    # As torch: operations on parameters give plain tensors, not Parameters.
    __torch_function__ = _C._disabled_torch_function_impl

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(memory_format=_C.preserve_format), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        # torch's reduce for parameters: rebuild the tensor, then wrap it again.
        return (_rebuild_parameter, (self.data, self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


# -- uninitialised parameters and buffers (the lazy modules' placeholders)

# The tensor methods an uninitialised placeholder still answers, as in torch: its size (of
# its empty data), copying into it, and the dtype/device conversions the module-wide
# .to()/.double()/... apply before the first forward. Everything else is refused.
_UNINITIALIZED_ALLOWED = frozenset(["size", "copy_", "is_floating_point", "half", "float", "double", "char",
                                    "short", "int", "long", "cuda", "cpu", "to", "type", "get_device",
                                    "bfloat16", "is_complex"])
_UNINITIALIZED_CONVERSIONS = ("half", "float", "double", "char", "short", "int", "long", "cuda", "cpu", "to",
                              "type", "bfloat16")
# Operators reach a type's dunder without instance attribute lookup, so they are refused
# by definitions on the mixin itself.
_UNINITIALIZED_OPERATORS = (
    "add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "matmul", "rmatmul", "imatmul",
    "truediv", "rtruediv", "itruediv", "floordiv", "rfloordiv", "ifloordiv", "mod", "rmod", "imod", "pow", "rpow",
    "ipow", "and", "rand", "iand", "or", "ror", "ior", "xor", "rxor", "ixor", "lshift", "rlshift", "ilshift",
    "rshift", "rrshift", "irshift", "neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "eq", "ne",
    "getitem", "setitem", "len", "iter", "bool", "float", "int", "index", "contains", "array")


def _refuse(cls_name, what):
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. Lazy modules (and "
        f"torch.nn.parameter.{cls_name} objects made by hand) hold no data until their first forward: call "
        "forward once with a dummy batch before using the parameters in tensor operations.")


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: a placeholder with an
    empty tensor inside that refuses tensor operations (ValueError) and its shape
    (RuntimeError) until materialize(shape) gives it data and turns it into
    cls_to_become. dtype and device conversions keep it a placeholder.

    tessera has no __torch_function__ protocol, so the refusal covers Tensor methods,
    attributes and operators; a tessera function handed a placeholder directly (F.linear(x,
    w)) sees its empty data and fails on the shape instead."""

    cls_to_become = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        # tessera functions given a placeholder refuse it as its methods do; property
        # getters (method-wrappers: dtype, device, ...) and the allowed methods answer.
        name = getattr(func, "__name__", "")
        if name in _UNINITIALIZED_ALLOWED and is_tensor_method_or_property(func) or \
                type(func).__name__ == "method-wrapper":
            return super().__torch_function__(func, types, args, {} if kwargs is None else kwargs)
        raise _refuse(cls.__name__, resolve_name(func) or repr(func))

    def __getattribute__(self, name):
        if name[0] != "_" and name not in _UNINITIALIZED_ALLOWED:
            cls = type(self)
            if not any(name in vars(k) for k in cls.__mro__ if k not in _TENSOR_TYPES):
                static = None
                for k in cls.__mro__:
                    if name in vars(k):
                        static = vars(k)[name]
                        break
                # methods are refused; properties (dtype, device, grad, ...) answer
                if static is not None and callable(static) and not hasattr(static, "__set__"):
                    raise _refuse(cls.__name__, f"Tensor.{name}")
        return super().__getattribute__(name)

    def materialize(self, shape, device=None, dtype=None):
        """Give the placeholder uninitialised data of `shape` (on its own device and dtype
        unless given) and turn it into cls_to_become."""
        data = super().__getattribute__("data")
        self.data = _C.empty(shape, device=device if device is not None else data.device,
                             dtype=dtype if dtype is not None else data.dtype)
        target = self.cls_to_become
        try:
            self.__class__ = target
        except TypeError:
            # tessera.Tensor is a static type that __class__ cannot be set to; a plain
            # subclass stands in, and a lazy module swaps it for a plain tensor afterwards.
            self.__class__ = _MaterializedTensor

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. It has no shape until its module's "
            "first forward (or a load_state_dict that brings real data); this error often comes from loading an "
            "uninitialized parameter into an initialized one.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__
    __hash__ = Tensor.__hash__

    def __reduce_ex__(self, protocol):
        # only the flag travels: the dtype and device come back as the defaults, as in torch
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            data = super().__getattribute__("data")
            memo[id(self)] = type(self)(self.requires_grad, data.device, data.dtype)
        return memo[id(self)]


def _make_refusing_operator(op):
    def operator(self, *args, **kwargs):
        raise _refuse(type(self).__name__, f"Tensor.{op}")
    operator.__name__ = op
    return operator


for _name in _UNINITIALIZED_OPERATORS:
    if hasattr(Tensor, f"__{_name}__"):
        setattr(UninitializedTensorMixin, f"__{_name}__", _make_refusing_operator(f"__{_name}__"))


def _make_conversion(name):
    def convert(self, *args, **kwargs):
        result = getattr(Tensor, name)(self, *args, **kwargs)
        if result is self or not isinstance(result, Tensor) or isinstance(result, UninitializedTensorMixin):
            return result
        # the converted placeholder stays a placeholder, with the new dtype and device
        return type(self)(self.requires_grad, result.device, result.dtype)
    convert.__name__ = name
    return convert


for _name in _UNINITIALIZED_CONVERSIONS:
    if hasattr(Tensor, _name):
        setattr(UninitializedTensorMixin, _name, _make_conversion(_name))
del _name


class _MaterializedTensor(Tensor):
    """A materialised UninitializedBuffer: an ordinary tensor in all but its type (see
    UninitializedTensorMixin.materialize)."""

    __torch_function__ = _C._disabled_torch_function_impl


_TENSOR_TYPES = (Tensor, object)


def is_lazy(param):
    """True for an uninitialised parameter or buffer (one a lazy module has not shaped yet)."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet: the placeholder a lazy module holds until
    its first forward. Its dtype and device (given here, or set by module conversions) are
    those of the Parameter materialize() makes."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Tensor._make_subclass(cls, _C.empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy module's running statistics before its
    first forward)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        return Tensor._make_subclass(cls, _C.empty(0, device=device, dtype=dtype), requires_grad)
