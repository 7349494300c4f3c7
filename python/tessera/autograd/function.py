"""Custom differentiable operations, as torch.autograd.Function:

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.mul(x).mul(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad.mul(x.mul(x)).mul(3)

    y = Cube.apply(x)

forward runs without grad; backward returns one grad (or None) per forward argument. The
bookkeeping is libtessera_autograd's (the C++ torch::autograd::Function rules): outputs get
a "CubeBackward" node, saved tensors are checked against in-place writes, inputs marked
dirty have their history rebased, and backward runs with the GIL taken by the engine.
"""
import functools
import warnings

from .. import _C
from .grad_mode import is_grad_enabled, no_grad

_A = _C._autograd


class FunctionCtx:
    """The ``ctx`` that forward and backward share; any attribute may be set on it."""

    def __init__(self):
        self._state = _A._FunctionState()
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._state.save_for_backward(*tensors)

    @property
    def saved_tensors(self):
        return self._state.saved_tensors()

    def mark_dirty(self, *tensors):
        self._state.mark_dirty(*tensors)

    def mark_non_differentiable(self, *tensors):
        self._state.mark_non_differentiable(*tensors)

    def set_materialize_grads(self, value):
        self._state.set_materialize_grads(bool(value))


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call
    ``YourFunction.apply(*args)``."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself. Instantiating an autograd function will raise an "
                      "error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
                           "autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args):
        return _A._function_apply(cls, FunctionCtx(), *args)


def once_differentiable(backward):
    """For a backward that is not itself differentiable: it runs without grad, and asking
    for a second derivative through it raises."""

    @functools.wraps(backward)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = backward(ctx, *args)
        if not is_grad_enabled() or not any(isinstance(a, _C.Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, (tuple, list))
        wrapped = _A._delayed_error("trying to differentiate twice a function that was marked with "
                                    "@once_differentiable", (outputs,) if single else tuple(outputs))
        return wrapped[0] if single else wrapped

    return wrapper
