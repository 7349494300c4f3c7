"""Autograd helpers for the recurrent layers: taking a [T, ...] tensor (or a packed
sequence's data) apart into its T steps with one backward node, so that the gradient of
the whole is assembled in one stack/cat instead of T full-size zero tensors summed."""
import tessera as _t
from ...autograd.function import Function

__all__ = ["split_steps", "unbind_steps"]


class _UnbindSteps(Function):
    """x.unbind(0) with a single backward: the grads of the T slices are stacked back.

    unbind records one SelectBackward per slice, and each of those writes its slice into a
    zero tensor of x's full size, which the engine then adds up: O(T^2) memory traffic for
    a sequence of T steps. Here backward does one stack of T slice-sized grads."""

    @staticmethod
    def forward(ctx, x):
        # Grads of slices nobody used arrive as None; backward fills in zeros itself, only
        # slice-sized, rather than letting the engine materialise them.
        ctx.set_materialize_grads(False)
        ctx.step_shape = tuple(x.shape[1:])
        ctx.dtype, ctx.device = x.dtype, x.device
        return tuple(x.unbind(0))

    @staticmethod
    def backward(ctx, *grads):
        zeros = None
        parts = []
        for g in grads:
            if g is None:
                if zeros is None:
                    zeros = _t.zeros(ctx.step_shape, dtype=ctx.dtype, device=ctx.device)
                g = zeros
            parts.append(g)
        return _t.stack(parts, 0)


def unbind_steps(x):
    """x.unbind(0) whose backward costs O(T), not O(T^2); a tuple of views of x."""
    if x.dim() == 0:
        raise RuntimeError("unbind_steps: a 0-d tensor has no steps to unbind")
    if x.size(0) == 0:
        return ()
    return _UnbindSteps.apply(x)


class _SplitSteps(Function):
    """x.split(sizes, 0) with a single backward that concatenates the slices' grads."""

    @staticmethod
    def forward(ctx, x, sizes):
        ctx.set_materialize_grads(False)
        ctx.sizes = sizes
        ctx.step_shape = tuple(x.shape[1:])
        ctx.dtype, ctx.device = x.dtype, x.device
        return tuple(x.split(sizes, 0))

    @staticmethod
    def backward(ctx, *grads):
        parts = [g if g is not None else _t.zeros((n,) + ctx.step_shape, dtype=ctx.dtype, device=ctx.device)
                 for g, n in zip(grads, ctx.sizes)]
        return _t.cat(parts, 0), None


def split_steps(x, sizes):
    """The rows of x cut into consecutive pieces of the given sizes (a packed sequence's
    steps), with an O(len(x)) backward; a tuple of views of x."""
    if sum(sizes) != x.size(0):
        raise RuntimeError(f"split_steps: sizes add up to {sum(sizes)}, but x has {x.size(0)} rows")
    if not sizes:
        return ()
    return _SplitSteps.apply(x, list(sizes))
