"""How tessera tensors cross processes: reducers registered with multiprocessing's
ForkingPickler (what Queue, Pipe and spawn's arguments pickle with) that move a tensor's
data through a shared-memory block and pickle only the block's name and the geometry, and
Tensor.share_memory_() / is_shared().
"""
from multiprocessing.reduction import ForkingPickler

from .. import _C
from .._utils import get_tensor_metadata, set_tensor_metadata
from ..storage import _physical
from . import _shm


def _dtype_name(dtype):
    return repr(dtype).split(".", 1)[1]  # "tessera.float32" -> "float32"


def _bytes_of(t, offset, numel):
    """The uint8 numpy array (sharing memory) over `numel` elements of t's storage from `offset`."""
    return _C.as_strided(_physical(t), (numel,), (1,), offset).view(_C.uint8).numpy()


def _span(t):
    """Elements from t's first element to its last, inclusive (strides are never negative)."""
    return 1 + sum((n - 1) * s for n, s in zip(t.size(), t.stride()))


def _check_sendable(t):
    if t.device.type != "cpu":
        raise NotImplementedError(f"sending tensors on {t.device.type} between processes is not supported; "
                                  "move them to the CPU first")
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
            "support crossing process boundaries.  If you just want to transfer the data, call detach() on "
            "the tensor before serializing (e.g., putting it on the queue).")


def _tensor_args(t):
    """(name, unlink, nbytes, dtype, size, stride, storage_offset): where the receiver finds t."""
    size, stride, offset = tuple(t.size()), tuple(t.stride()), t.storage_offset()
    item = t.element_size()
    block = _shm.lookup(t)
    if block is not None and block.nbytes % item == 0:
        if block.kind == _shm.HANDOFF and not block.sent and block.name is not None:
            # Made for this one transfer (a batch collated in a DataLoader worker): the
            # receiver takes the name over and unlinks it.
            _shm.mark_sent(block)
            return block.name, True, block.nbytes, size, stride, offset
        if block.name is not None and block.kind != _shm.HANDOFF:
            # A block made by share_memory_(): receivers map it and the name stays.
            return block.name, False, block.nbytes, size, stride, offset
    # Otherwise the data is copied once into a block of its own: only the elements from the
    # first to the last t views, so a row of a large tensor does not ship the whole storage.
    span = _span(t)
    name = _shm.write_once(_bytes_of(t, offset, span))
    return name, True, span * item, size, stride, 0


def _rebuild_tensor(cls, name, unlink, nbytes, dtype_name, size, stride, offset, requires_grad, metadata=None):
    dtype = getattr(_C, dtype_name)
    flat = _C.from_numpy(_shm.attach(name, nbytes, unlink))
    if dtype != _C.uint8:
        flat = flat.view(dtype)
    t = _C.as_strided(flat, size, stride, offset)
    if metadata:
        set_tensor_metadata(t, metadata)  # the block holds raw memory; the conj/neg bits come beside it
    if cls is not _C.Tensor:
        return cls(t, requires_grad=requires_grad)
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_empty(cls, dtype_name, size, stride, requires_grad, metadata=None):
    t = _C.empty_strided(size, stride, dtype=getattr(_C, dtype_name))
    if metadata:
        set_tensor_metadata(t, metadata)
    if cls is not _C.Tensor:
        return cls(t, requires_grad=requires_grad)
    return t.requires_grad_(True) if requires_grad else t


def reduce_tensor(t):
    """ForkingPickler's reducer for tessera tensors (and Parameters)."""
    _check_sendable(t)
    cls = type(t)
    metadata = get_tensor_metadata(t)
    extra = (metadata,) if metadata else ()
    if t.numel() == 0:
        return _rebuild_empty, (cls, _dtype_name(t.dtype), tuple(t.size()), tuple(t.stride()), t.requires_grad) + extra
    name, unlink, nbytes, size, stride, offset = _tensor_args(t)
    return _rebuild_tensor, (cls, name, unlink, nbytes, _dtype_name(t.dtype), size, stride, offset,
                             t.requires_grad) + extra


def new_shared(shape, dtype, kind=_shm.HANDOFF):
    """A contiguous tensor of `shape` and `dtype` allocated in a new shared-memory block.

    HANDOFF blocks suit a result that will be sent exactly once (a DataLoader worker's batch);
    OWNED ones are what share_memory_() makes."""
    numel = 1
    for n in shape:
        numel *= n
    item = _C.empty((), dtype=dtype).element_size()
    array, _ = _shm.create(max(numel, 1) * item, kind)
    flat = _C.from_numpy(array)
    if dtype != _C.uint8:
        flat = flat.view(dtype)
    return flat[:numel].view(tuple(shape))


def share_memory_(self):
    """Moves this tensor's storage into shared memory (a no-op if it is there already), so
    that sending it to another process shares it instead of copying it.

    Like ``t.data = ...``, only this tensor object moves: views of the old storage taken
    before the call keep the old (private) memory."""
    if self.device.type != "cpu":
        raise NotImplementedError(f"share_memory_() of a tensor on {self.device.type} is not supported")
    if _shm.lookup(self) is not None:
        return self
    item = self.element_size()
    numel = self._storage_nbytes() // item
    shared = new_shared((max(numel, 1),), self.dtype, kind=_shm.OWNED)
    if numel:
        shared.view(_C.uint8).numpy()[...] = _bytes_of(self, 0, numel)
    moved = _C.as_strided(shared, tuple(self.size()), tuple(self.stride()), self.storage_offset())
    set_tensor_metadata(moved, get_tensor_metadata(self))  # set_data takes the bits from moved
    _C._autograd.set_data(self, moved)
    return self


def is_shared(self):
    """Whether this tensor's storage is in shared memory (share_memory_(), or received from
    another process)."""
    return _shm.lookup(self) is not None


def init_reductions():
    from ..nn.parameter import Parameter
    ForkingPickler.register(_C.Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
    _C._add_tensor_methods({"share_memory_": share_memory_, "is_shared": is_shared})
