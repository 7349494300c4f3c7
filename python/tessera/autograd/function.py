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

NestedIOFunction is the legacy, instance-based form (``f = MyFn(); y = f(x, (a, b))``)
whose forward_extended / backward_extended take and return nested lists and tuples of
tensors; it runs on the same machinery.
"""
import functools
import types
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


# ---------------------------------------------------------------- nested inputs and outputs

def _not_nestable(obj, accepted):
    from .._tensor_casts import typename
    return ValueError("Auto nesting doesn't know how to process an input object of type " + typename(obj)
                      + f". Accepted types: {accepted}, or lists/tuples of them")


def _iter_tensors(obj, keep_none=False):
    """The tensors in obj (a tensor, or lists, tuples and dicts of them), depth first; with
    keep_none, the Nones too (backward's "no gradient" entries)."""
    if isinstance(obj, _C.Tensor):
        yield obj
    elif obj is None:
        if keep_none:
            yield None
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _iter_tensors(item, keep_none)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _iter_tensors(item, keep_none)
    else:
        raise _not_nestable(obj, "Tensors or None" if keep_none else "Tensors")


def _map_tensor_data(obj):
    """obj with each tensor replaced by its .data (the same nesting, namedtuples kept)."""
    if isinstance(obj, _C.Tensor):
        return obj.data
    if obj is None:
        return None
    if isinstance(obj, (list, tuple)):
        return _same_sequence(obj, [_map_tensor_data(item) for item in obj])
    if isinstance(obj, dict):
        return {key: _map_tensor_data(value) for key, value in obj.items()}
    raise _not_nestable(obj, "Tensors")


_SLOT = object()  # where a tensor sits in a nesting kept only for its shape


def _shape_of(obj):
    """obj's list/tuple nesting with every leaf but None replaced by _SLOT. The function
    keeps only this of its outputs: keeping them would close a reference cycle (output ->
    its C++ grad_fn -> this function) that Python's collector cannot see."""
    if isinstance(obj, (list, tuple)):
        return _same_sequence(obj, [_shape_of(item) for item in obj])
    return None if obj is None else _SLOT


def _same_sequence(like, items):
    """items as a sequence of like's type (a namedtuple's fields positional)."""
    return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)


def _unflatten(flat, proto):
    """The items of flat, in order, nested as proto's lists and tuples are (a None in proto
    stays None; any other leaf takes the next item)."""

    def take(items, proto):
        if not isinstance(proto, (list, tuple)):
            return items[0], items[1:]
        out = []
        for part in proto:
            if part is None:
                out.append(None)
            else:
                value, items = take(items, part)
                out.append(value)
        return _same_sequence(proto, out), items

    return take(tuple(flat), proto)[0]


def _legacy_forward(fn, *flat_input):
    outputs = fn.forward(*flat_input)
    # What forward_extended asked for, handed to the C++ context before the outputs are wrapped.
    if hasattr(fn, "to_save"):
        fn._state.save_for_backward(*fn.to_save)
        del fn.to_save
    if hasattr(fn, "dirty_tensors"):
        fn._state.mark_dirty(*fn.dirty_tensors)
        del fn.dirty_tensors
    if hasattr(fn, "non_differentiable"):
        fn._state.mark_non_differentiable(*fn.non_differentiable)
        del fn.non_differentiable
    return outputs


def _legacy_backward(fn, *grads):
    # The engine does not say whether the graph is retained; it releases this function
    # itself after a backward that does not retain it, so nothing needs deleting here.
    return fn._do_backward(grads, True)


class NestedIOFunction(Function):
    """A legacy autograd function: an instance is called once, ``f(*inputs)``, where the
    inputs are tensors or nested lists/tuples of them. Subclasses define the instance
    methods ``forward_extended(*inputs)`` (on the inputs' .data, returning tensors nested
    any way) and ``backward_extended(*grad_outputs)`` (gradients nested as the outputs,
    returning one per input tensor, nested as the inputs, None for none), and may call
    save_for_backward / mark_dirty / mark_non_differentiable with nested tensors."""

    def _do_forward(self, *input):
        self._nested_input = input
        flat_input = tuple(_iter_tensors(input))
        self._state = _A._FunctionState()
        node_type = types.SimpleNamespace(__name__=type(self).__name__, forward=_legacy_forward,
                                          backward=_legacy_backward)
        flat_output = _A._function_apply(node_type, self, *flat_input)
        return _unflatten(flat_output, self._nested_output)

    def _do_backward(self, gradients, retain_variables):
        self.retain_variables = retain_variables
        result = self.backward(*gradients)
        if not retain_variables:
            self.__dict__.pop("_nested_output", None)
            self.__dict__.pop("_to_save_nested", None)
        return result

    def backward(self, *gradients):
        nested_gradients = _unflatten(gradients, self._nested_output)
        if not isinstance(self._nested_output, (list, tuple)):
            # forward_extended returned one tensor: its gradient is the one argument (torch
            # would unpack the tensor itself into arguments here)
            nested_gradients = (nested_gradients,)
        result = self.backward_extended(*nested_gradients)
        return tuple(_iter_tensors(result, keep_none=True))

    __call__ = _do_forward

    def forward(self, *args):
        nested_tensors = _map_tensor_data(self._nested_input)
        result = self.forward_extended(*nested_tensors)
        del self._nested_input
        self._nested_output = _shape_of(result)
        return tuple(_iter_tensors(result))

    def save_for_backward(self, *args):
        self.to_save = tuple(_iter_tensors(args))
        self._to_save_nested = _shape_of(args)

    @property
    def saved_tensors(self):
        return _unflatten(self._state.saved_tensors(), self._to_save_nested)

    def mark_dirty(self, *args, **kwargs):
        self.dirty_tensors = tuple(_iter_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs):
        self.non_differentiable = tuple(_iter_tensors((args, kwargs)))

    def forward_extended(self, *input):
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        raise NotImplementedError
