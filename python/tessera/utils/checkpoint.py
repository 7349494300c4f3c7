"""Activation checkpointing as torch.utils.checkpoint: a checkpointed segment runs forward
without keeping its intermediate tensors, and is re-run with grad enabled during backward
to rebuild them, trading compute for memory."""
import contextlib
import warnings

import tessera as _t
from ..autograd import Function
from ..autograd import backward as _autograd_backward
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "noop_context_fn"]

# The first sentence is torch's, so warning filters written for torch also match here.
_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. tessera implements the "
    "use_reentrant=True variant only, and uses it when use_reentrant is not passed.")


def noop_context_fn():
    """The default ``context_fn``: no extra context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """``inputs`` (a tuple) with every tensor replaced by a detached leaf that keeps its
    requires_grad flag; other values are passed through."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: ", type(inputs).__name__)
    out = []
    for inp in inputs:
        if isinstance(inp, _t.Tensor):
            leaf = inp.detach()
            leaf.requires_grad_(inp.requires_grad)
            out.append(leaf)
        else:
            out.append(inp)
    return tuple(out)


def check_backward_validity(inputs):
    """Warns when no tensor in ``inputs`` requires grad: the reentrant checkpoint's output
    would then have no grad_fn, so nothing inside the segment would receive gradients."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, _t.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")


@contextlib.contextmanager
def _cpu_rng_as(state):
    """Runs the block with the default CPU generator set to ``state`` (None: untouched) and
    gives the surrounding code its own stream back afterwards."""
    if state is None:
        yield
        return
    outer = _t.get_rng_state()
    _t.set_rng_state(state)
    try:
        yield
    finally:
        _t.set_rng_state(outer)


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward keeps only the inputs; backward re-runs the
    function with grad enabled and calls autograd.backward on the rebuilt graph."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        # Dropout and friends must draw the same numbers when the segment is re-run.
        ctx.fwd_cpu_state = _t.get_rng_state() if preserve_rng_state else None
        # Tensors go through save_for_backward (version-checked against in-place writes);
        # everything else is kept as is, with a hole where each tensor goes.
        ctx.inputs = [None if isinstance(a, _t.Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, _t.Tensor)]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        inputs = list(ctx.inputs)
        for i, saved in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = saved
        with _cpu_rng_as(ctx.fwd_cpu_state):
            # Fresh leaves, so the inner backward stops at them and leaves their grads there.
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, _t.Tensor):
            outputs = (outputs,)
        roots, seeds = [], []
        for out, grad in zip(outputs, grad_outputs):
            if isinstance(out, _t.Tensor) and out.requires_grad:
                roots.append(out)
                seeds.append(grad)
        if not roots:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        # Reentrant: a backward inside a backward. Parameters the function closes over get
        # their .grad accumulated here directly.
        _autograd_backward(roots, seeds)
        return (None, None) + tuple(x.grad if isinstance(x, _t.Tensor) else None for x in detached)


def _resolve_use_reentrant(use_reentrant):
    # Current torch asks for use_reentrant explicitly and warns when it is left out, falling
    # back to the reentrant variant (torch 1.13's default was use_reentrant=True).
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=3)
        return True
    return use_reentrant


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, **kwargs):
    """Runs ``function(*args)`` without keeping its intermediate activations; they are
    recomputed during backward. ``preserve_rng_state=True`` (a keyword) replays the CPU RNG
    so random ops recompute identically.

    Only the reentrant variant (``use_reentrant=True``) exists: like torch's, it supports
    ``backward()`` without ``inputs=``, not ``autograd.grad``, and needs an input that
    requires grad for gradients to reach the function's parameters. Unlike torch, tessera
    cannot yet detect ``autograd.grad`` / ``backward(inputs=...)`` through a checkpoint
    (torch raises): the gradients returned are right, but parameters the function closes
    over also get their ``.grad`` accumulated."""
    use_reentrant = _resolve_use_reentrant(use_reentrant)
    preserve = kwargs.pop("preserve_rng_state", True)
    if not use_reentrant:
        raise NotImplementedError(
            "checkpoint(use_reentrant=False) is not supported: the non-reentrant variant needs saved-tensor hooks "
            "(torch.autograd.graph.saved_tensors_hooks), which tessera's autograd does not provide yet. Use "
            "use_reentrant=True.")
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if context_fn is not noop_context_fn or debug is not False:
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    del determinism_check  # only the non-reentrant variant checks recomputed metadata
    return CheckpointFunction.apply(function, preserve, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs ``functions`` (an nn.Sequential or a list of callables) one after another on
    ``input``, split into ``segments`` chunks; every chunk but the last is checkpointed."""
    use_reentrant = _resolve_use_reentrant(use_reentrant)
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run_range(first, last):
        def forward(x):
            for j in range(first, last + 1):
                x = functions[j](x)
            return x
        return forward

    sequential = getattr(_t.nn, "Sequential", None)
    if sequential is not None and isinstance(functions, sequential):
        functions = list(functions.children())

    size = len(functions) // segments
    last = -1
    for first in range(0, size * (segments - 1), size):
        last = first + size - 1
        input = checkpoint(run_range(first, last), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    # The last chunk runs normally: its activations are needed right away by backward.
    return run_range(last + 1, len(functions) - 1)(input)
