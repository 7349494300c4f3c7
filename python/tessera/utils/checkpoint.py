"""Activation checkpointing as torch.utils.checkpoint: a checkpointed segment runs forward
without keeping its intermediate tensors, and is re-run with grad enabled during backward
to rebuild them, trading compute for memory."""
import contextlib
import warnings
import weakref

import tessera as _t
from ..autograd import Function
from ..autograd import backward as _autograd_backward
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction", "CheckpointError",
           "check_backward_validity", "detach_variable", "noop_context_fn", "get_device_states", "set_device_states"]

# The first sentence is torch's, so warning filters written for torch also match here.
_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Like torch 1.13, tessera "
    "uses the reentrant variant (use_reentrant=True) when it is not passed.")


class CheckpointError(RuntimeError):
    """A non-reentrant checkpoint's recomputation did not rebuild the tensors the forward
    saved (different control flow, shapes or dtypes), or a saved tensor was asked for in a
    way recomputation cannot serve."""


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


def get_device_states(*args):
    """(devices, rng states) of the CUDA devices the tensors among ``args`` live on, for
    set_device_states to restore. Every tensor is on the CPU here, so both lists are
    empty, as in a CPU-only torch."""
    devices = sorted({a.get_device() for a in args if isinstance(a, _t.Tensor) and a.is_cuda})
    states = []
    for d in devices:
        with _t.cuda.device(d):
            states.append(_t.cuda.get_rng_state())
    return devices, states


def set_device_states(devices, states):
    """Restores the CUDA generators get_device_states captured (nothing for empty lists;
    a device raises as torch without CUDA does)."""
    for d, state in zip(devices, states):
        with _t.cuda.device(d):
            _t.cuda.set_rng_state(state)


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


def _autocast_state():
    """The thread's CPU autocast settings, for re-running a region as its forward ran (torch
    does the same: a recomputed matmul must be in the forward's precision)."""
    return {"enabled": _t.is_autocast_cpu_enabled(), "dtype": _t.get_autocast_cpu_dtype(),
            "cache_enabled": _t.is_autocast_cache_enabled()}


def _autocast_as(state):
    return _t.autocast("cpu", **state)


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward keeps only the inputs; backward re-runs the
    function with grad enabled and calls autograd.backward on the rebuilt graph."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        # Dropout and friends must draw the same numbers when the segment is re-run.
        ctx.fwd_cpu_state = _t.get_rng_state() if preserve_rng_state else None
        ctx.autocast_state = _autocast_state()
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
            with enable_grad(), _autocast_as(ctx.autocast_state):
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


class _SavedSlot:
    """What the forward keeps of one saved tensor: nothing but identity. Recomputation
    fills the frame's ``recomputed`` map for every slot still alive."""
    __slots__ = ("__weakref__",)


class _RecomputeFrame:
    """One non-reentrant checkpoint call: the slots its forward saved (in order, with each
    tensor's shape / dtype / device for the determinism check) and how to run the segment
    again."""

    def __init__(self, run, rng_state, recompute_context, check_metadata):
        self.run = run
        self.rng_state = rng_state
        self.recompute_context = recompute_context
        self.check_metadata = check_metadata
        self.slots = []      # weak references, in the order the forward saved tensors
        self.metadata = []
        self.recomputed = weakref.WeakKeyDictionary()

    def pack(self, tensor):
        slot = _SavedSlot()
        self.slots.append(weakref.ref(slot))
        self.metadata.append((tuple(tensor.shape), tensor.dtype, tensor.device))
        return slot

    def unpack(self, slot):
        if slot not in self.recomputed:
            self.recompute()
        if slot not in self.recomputed:
            raise CheckpointError(
                "torch.utils.checkpoint: a tensor saved inside a checkpointed region was not rebuilt when the region "
                "was recomputed (the recomputation saved fewer tensors than the forward did)")
        return self.recomputed[slot]

    def recompute(self):
        # The forward saved N tensors; the same code re-run with grad enabled saves the same N
        # in the same order. Slots whose backward already ran are dead and are skipped.
        count = 0

        def pack_recomputed(tensor):
            nonlocal count
            index = count
            count += 1
            if index >= len(self.slots):
                raise CheckpointError(
                    "torch.utils.checkpoint: recomputing the checkpointed region saved more tensors than its forward "
                    "did (" + str(len(self.slots)) + "); the region must run the same operations both times")
            if self.check_metadata:
                now = (tuple(tensor.shape), tensor.dtype, tensor.device)
                if now != self.metadata[index]:
                    raise CheckpointError(
                        "torch.utils.checkpoint: recomputed tensor {} has shape/dtype/device {}, but the forward "
                        "saved {}; the region must compute the same tensors both times (pass "
                        "determinism_check='none' to skip this check)".format(index, now, self.metadata[index]))
            slot = self.slots[index]()
            if slot is not None:
                self.recomputed[slot] = tensor.detach()

        def refuse(_):
            raise CheckpointError("torch.utils.checkpoint: a tensor saved while recomputing a checkpointed region "
                                  "cannot be used for backward")

        from ..autograd.graph import saved_tensors_hooks
        with _cpu_rng_as(self.rng_state), enable_grad(), self.recompute_context, \
                saved_tensors_hooks(pack_recomputed, refuse):
            self.run()


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check, debug, *args,
                                  **kwargs):
    """The non-reentrant checkpoint: the segment runs once with grad enabled under
    saved-tensor hooks that keep only a slot per saved tensor; the first backward that needs
    one of them re-runs the segment (same RNG state) and hands out the rebuilt tensors.
    Works with autograd.grad, backward(inputs=...) and inputs that do not require grad."""
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got " + str(determinism_check))
    if debug:
        raise NotImplementedError("checkpoint(debug=True) is not supported by tessera (no operator trace on "
                                  "recomputation errors)")
    forward_context, recompute_context = context_fn()
    rng_state = _t.get_rng_state() if preserve_rng_state else None
    autocast_state = _autocast_state()

    def recompute():
        with _autocast_as(autocast_state):
            return function(*args, **kwargs)
    frame = _RecomputeFrame(recompute, rng_state, recompute_context,
                            determinism_check == "default")
    from ..autograd.graph import saved_tensors_hooks
    with forward_context, saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


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

    ``use_reentrant=False`` (saved-tensor hooks) works with ``autograd.grad``,
    ``backward(inputs=...)``, keyword arguments and inputs that do not require grad. The
    reentrant variant (1.13's default), like torch's, supports ``backward()`` without
    ``inputs=`` only and needs an input that requires grad for gradients to reach the
    function's parameters; unlike torch it cannot detect ``autograd.grad`` through it (the
    gradients returned are right, but closed-over parameters also get ``.grad``)."""
    use_reentrant = _resolve_use_reentrant(use_reentrant)
    preserve = kwargs.pop("preserve_rng_state", True)
    if not use_reentrant:
        return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug, *args,
                                             **kwargs)
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
