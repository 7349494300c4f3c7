"""nn.Parameter: a Tensor subclass that a Module registers as one of its parameters when
it is assigned as an attribute. It holds an alias of the data it is made from and
requires grad by default; operations on it return plain Tensors, as in torch."""
from .. import _C

Tensor = _C.Tensor


class Parameter(Tensor):
    """Parameter(data=None, requires_grad=True): data (an empty tensor when None) as a
    module parameter."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        return Tensor._make_subclass(cls, data, requires_grad)

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


def is_lazy(param):
    """Lazy (shape-inferred) parameters are not supported: always False."""
    return False
