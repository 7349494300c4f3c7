"""POSIX shared-memory blocks that tessera tensors live on when they cross processes,
and the registry (by address) that tells whether a tensor's storage is one of them.

A block is a named POSIX shm object (``/dev/shm/tessera_<pid>_<n>_<tag>`` on Linux) mapped
with mmap; a numpy uint8 array over the mapping is what tessera.from_numpy wraps, so the
mapping lives exactly as long as some tensor views it.
"""
import contextlib
import itertools
import mmap
import os
import secrets
import threading
import weakref

import numpy as np

try:  # what multiprocessing.shared_memory uses, minus its resource tracker (which would
    import _posixshmem  # warn about, and unlink, blocks handed over to another process)
except ImportError:  # pragma: no cover - non-POSIX platforms
    _posixshmem = None

PREFIX = "tessera_"
_SHM_DIR = "/dev/shm"

# Kinds of block.
OWNED = "owned"      # made by share_memory_(): the name stays until the creator drops it
HANDOFF = "handoff"  # made for one transfer: the first receiver unlinks the name
MAPPED = "mapped"    # mapped by a receiver; `name` is None once it has been unlinked

_counter = itertools.count()
_blocks = {}  # address of a block's first byte -> _Block
_recording = threading.local()  # .names: the Handoffs lists collecting what is handed out


class _Block:
    """Bookkeeping for one mapping in this process."""
    __slots__ = ("name", "nbytes", "addr", "kind", "creator_pid", "sent")

    def __init__(self, name, nbytes, addr, kind):
        self.name, self.nbytes, self.addr, self.kind = name, nbytes, addr, kind
        self.creator_pid = os.getpid()
        self.sent = False


def _require_posix():
    if _posixshmem is None:
        raise NotImplementedError("tessera.multiprocessing needs POSIX shared memory (_posixshmem), "
                                  "which this platform's Python does not provide")


def _open(name, flags):
    return _posixshmem.shm_open("/" + name, flags, 0o600)


def unlink(name):
    """Removes a block's name; mappings of it stay valid. A name already gone is fine."""
    try:
        _posixshmem.shm_unlink("/" + name)
    except FileNotFoundError:
        pass


def _map(fd, nbytes):
    try:
        return mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)


def _release(block):
    """Finalizer of a block's array: forget it, and unlink a name this process still owns."""
    if _blocks.get(block.addr) is block:
        del _blocks[block.addr]
    # A forked child inherits the registry and may drop its copy of a parent's tensor: only
    # the creating process may remove the name.
    if block.name is not None and os.getpid() == block.creator_pid and (
            block.kind == OWNED or (block.kind == HANDOFF and not block.sent)):
        unlink(block.name)


def _track(block, array):
    _blocks[block.addr] = block
    weakref.finalize(array, _release, block)


def create(nbytes, kind, track=True):
    """A new block of `nbytes` (> 0) bytes: (uint8 numpy array over it, its _Block).

    The array keeps the mapping alive; a tensor made from it with tessera.from_numpy keeps
    the array alive. Untracked blocks are for data that only passes through."""
    _require_posix()
    while True:
        name = f"{PREFIX}{os.getpid()}_{next(_counter)}_{secrets.token_hex(4)}"
        try:
            fd = _open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL)
            break
        except FileExistsError:  # a stale block of an earlier process with this pid
            continue
    try:
        os.ftruncate(fd, nbytes)
    except OSError:
        os.close(fd)
        unlink(name)
        raise
    mm = _map(fd, nbytes)
    array = np.frombuffer(mm, dtype=np.uint8)
    block = _Block(name, nbytes, array.__array_interface__["data"][0], kind)
    if track:
        _track(block, array)
    return array, block


def write_once(src):
    """A HANDOFF block holding a copy of the uint8 array `src`, not kept mapped here: its
    name, for a receiver that will unlink it."""
    _require_posix()
    array, block = create(src.nbytes, HANDOFF, track=False)
    array[...] = src
    for names in getattr(_recording, "names", ()):
        names.append(block.name)
    return block.name


def mark_sent(block):
    """Records that a tracked HANDOFF block's name now belongs to its receiver."""
    block.sent = True
    for names in getattr(_recording, "names", ()):
        names.marked.append(block)


class Handoffs(list):
    """The names of the blocks handed over while recording (write_once copies), and in
    .marked the tracked blocks whose names were given away."""

    def __init__(self):
        super().__init__()
        self.marked = []

    def take_back(self):
        """Undoes the handoffs of a send that never happened (its pickling failed): unlinks
        the copies and the marked blocks' names now, before the sender reports the failure;
        the marked blocks' mappings stay valid here, as private memory."""
        for name in self:
            unlink(name)
        for block in self.marked:
            if block.name is not None:
                unlink(block.name)
            block.name, block.sent = None, False
        self.clear()
        self.marked.clear()


@contextlib.contextmanager
def recording_handoffs():
    """Collects (as a Handoffs list) the blocks this thread hands over while in the block, so
    that a sender can take back those a receiver never got (a failed pickling, or a
    process that died starting up)."""
    names = Handoffs()
    if not hasattr(_recording, "names"):
        _recording.names = []
    _recording.names.append(names)
    try:
        yield names
    finally:
        # by identity: Handoffs lists with equal contents are still different recordings
        _recording.names[:] = [n for n in _recording.names if n is not names]


def _forget_recordings():
    # A child forked while its parent was recording (fork-context DataLoader workers start
    # that way) must not keep adding to the parent's lists, which nobody there reads.
    _recording.names = []


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_recordings)


def attach(name, nbytes, unlink_after):
    """The uint8 array over an existing block `name`; unlinks the name after mapping it when
    this process is its (only) receiver."""
    _require_posix()
    try:
        fd = _open(name, os.O_RDWR)
    except FileNotFoundError:
        raise RuntimeError(
            f"shared memory block {name!r} of a tensor sent from another process no longer exists: "
            "a tensor sent once through a queue can be received only once, and a block made by "
            "share_memory_() lives only as long as the sending process keeps its tensor") from None
    mm = _map(fd, nbytes)
    if unlink_after:
        unlink(name)
    array = np.frombuffer(mm, dtype=np.uint8)
    block = _Block(None if unlink_after else name, nbytes, array.__array_interface__["data"][0], MAPPED)
    _track(block, array)
    return array


def lookup(t):
    """The _Block that tensor t's storage lives on, or None."""
    if t.device.type != "cpu":
        return None
    base = t.data_ptr() - t.storage_offset() * t.element_size()
    block = _blocks.get(base)
    if block is None or t._storage_nbytes() > block.nbytes:
        return None
    return block


def unlink_orphans(pid):
    """Unlinks every block that process `pid` (now gone) made and nobody received."""
    if not os.path.isdir(_SHM_DIR):
        return
    stem = f"{PREFIX}{pid}_"
    try:
        names = os.listdir(_SHM_DIR)
    except OSError:
        return
    for n in names:
        if n.startswith(stem):
            unlink(n)
