"""tessera.autograd.graph: hooks on the tensors the autograd graph saves for backward
(torch.autograd.graph.saved_tensors_hooks and friends). Activation checkpointing
(utils.checkpoint, use_reentrant=False) and offloading activations are built on them."""
import contextlib

from .. import _C

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

_A = _C._autograd


class saved_tensors_hooks:
    """Inside this block every tensor an operation saves for backward is passed to
    ``pack_hook`` and only its result is kept; backward passes that result to
    ``unpack_hook``, which must return a tensor with the saved tensor's contents.
    Blocks nest (the innermost pair applies) and are per thread. The hooks must not modify
    their input in place."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _A._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc):
        _A._pop_saved_tensors_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Keeps each saved tensor in host memory (``tensor.cpu()``; with ``pin_memory``, a
    copy, which torch pins when a CUDA device exists; tessera's Python has none) and moves
    it back to its device when backward needs it. ``device_type`` is accepted as current
    torch does."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        del device_type  # torch uses it to ask its device module about pinning

        def pack_to_cpu(tensor):
            if not pin_memory:
                return tensor.device, tensor.cpu()
            packed = _C.empty(tuple(tensor.size()), dtype=tensor.dtype, layout=tensor.layout)
            packed.copy_(tensor)
            return tensor.device, packed

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside this block, entering ``saved_tensors_hooks`` raises RuntimeError with
    ``error_message`` (for features that cannot work with them)."""
    previous = _A._saved_tensors_hooks_get_disabled_error_message()
    _A._saved_tensors_hooks_disable(error_message)
    try:
        yield
    finally:
        if previous is None:
            _A._saved_tensors_hooks_enable()
        else:
            _A._saved_tensors_hooks_disable(previous)
