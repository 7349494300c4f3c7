"""tessera.multiprocessing: tensors sent through multiprocessing queues and pipes travel
through shared memory and come back equal (dtypes, views, autograd flags), share_memory_()
shares writes with child processes, and no shared-memory block outlives its users."""
import gc
import os
import threading
from multiprocessing.reduction import ForkingPickler

import pytest
import torch

import tessera
import tessera.multiprocessing as mp
from tessera.nn.parameter import Parameter

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]


def _blocks(*pids):
    pids = pids or (os.getpid(),)
    return [n for n in os.listdir("/dev/shm") if any(n.startswith(f"tessera_{p}_") for p in pids)]


def _echo(q_in, q_out):
    """Sends back everything it receives (with whether it arrived shared) until None."""
    while True:
        x = q_in.get()
        if x is None:
            return
        q_out.put((x, x.is_shared() if isinstance(x, tessera.Tensor) else None))


def _add_one(q, done):
    x = q.get()
    x.add_(1)
    done.put(x.is_shared())


def _matmul_sum(x, q):
    q.put(float((x @ x).sum()))


def sample(dtype):
    x = torch.arange(-6, 18).reshape(4, 6)
    if dtype == "bool":
        x = x % 3 == 0
    elif dtype.startswith("complex"):
        x = torch.complex(x.double(), -x.double())
    x = x.to(getattr(torch, dtype))
    return tessera.from_numpy(x.view(torch.int16).numpy()).view(tessera.bfloat16) if dtype == "bfloat16" \
        else tessera.from_numpy(x.numpy())


def equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())


@pytest.fixture(scope="module")
def echo():
    ctx = mp.get_context("fork")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_echo, args=(q_in, q_out))
    p.start()

    def roundtrip(x):
        q_in.put(x)
        return q_out.get(timeout=20)
    yield roundtrip
    q_in.put(None)
    p.join(10)
    assert p.exitcode == 0
    gc.collect()
    assert _blocks(os.getpid(), p.pid) == []


@pytest.mark.parametrize("dtype", DTYPES)
def test_roundtrip_dtypes(echo, dtype):
    x = sample(dtype)
    y, shared = echo(x)
    assert equal(y, x) and shared and y.is_shared() and not x.is_shared()
    assert y.stride() == x.stride()


def test_roundtrip_views(echo):
    base = tessera.arange(60.).reshape(6, 10)
    for x in (base.t(), base[1:5, ::3], base[2], base[:, 4], base.expand(2, 6, 10), base[3, 4], tessera.zeros(0, 3),
              tessera.tensor(2.5)):
        y, _ = echo(x)
        assert equal(y, x) and y.stride() == x.stride()
    # a row of a large tensor ships only the row
    big = tessera.zeros(1000, 100)
    y, _ = echo(big[7])
    assert y._storage_nbytes() == 400


def test_autograd_flags_and_parameters(echo):
    leaf = tessera.ones(3, requires_grad=True)
    y, _ = echo(leaf)
    assert y.requires_grad and y.is_leaf and equal(y.detach(), leaf.detach())
    p = Parameter(tessera.full((2, 2), 3.0))
    y, _ = echo(p)
    assert type(y) is Parameter and y.requires_grad and equal(y.detach(), p.detach())
    y, _ = echo([p, {"k": (leaf, 7)}])  # containers pickle their tensors the same way
    assert type(y[0]) is Parameter and y[1]["k"][1] == 7
    with pytest.raises(RuntimeError) as got:
        ForkingPickler.dumps(tessera.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError) as want:
        ForkingPickler.dumps(torch.ones(2, requires_grad=True) * 2)
    assert str(got.value) == str(want.value)


def test_resend_received_and_send_twice(echo):
    x = tessera.arange(5)
    a, _ = echo(x)
    b, _ = echo(x)
    c, _ = echo(a)  # a received tensor is sent on (copied: its block's name is gone)
    assert equal(a, x) and equal(b, x) and equal(c, x)


def test_payload_received_once():
    payload = ForkingPickler.dumps(tessera.ones(4))
    assert equal(ForkingPickler.loads(payload), tessera.ones(4))
    with pytest.raises(RuntimeError, match="can be received only once"):
        ForkingPickler.loads(payload)
    assert _blocks() == []


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_share_memory_child_writes(method):
    ctx = mp.get_context(method)
    x = tessera.zeros(2, 3)
    ptr = x.data_ptr()
    assert x.share_memory_() is x and x.is_shared() and x.data_ptr() != ptr
    assert x.share_memory_().data_ptr() == x.data_ptr()  # already shared: no move
    q, done = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_add_one, args=(q, done))
    p.start()
    q.put(x[1])  # a view of the shared block is sent by name, not copied
    assert done.get(timeout=60) is True
    p.join(10)
    assert x.tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    assert len(_blocks()) == 1
    del x
    gc.collect()
    assert _blocks() == []


def test_share_memory_parameter_keeps_identity():
    p = Parameter(tessera.ones(4))
    p.share_memory_()
    assert type(p) is Parameter and p.requires_grad and p.is_shared() and p.tolist() == [1.0] * 4
    (p * 2).sum().backward()
    assert p.grad.tolist() == [2.0] * 4


def test_forked_child_runs_parallel_ops():
    # the parent has run OpenMP regions; a forked child must not hang in its own
    x = tessera.randn(600, 600)
    expected = float((x @ x).sum())
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_matmul_sum, args=(x, q))
    p.start()
    try:
        assert q.get(timeout=30) == pytest.approx(expected, rel=1e-4)
    finally:
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join()


def test_module_api():
    assert mp.get_context is not None and mp.Process and mp.Queue and mp.Pipe and mp.cpu_count() >= 1
    assert set(mp.__all__) >= {"get_context", "Process", "Queue", "set_sharing_strategy"}
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_system")
    with pytest.raises(NotImplementedError):
        mp.set_sharing_strategy("file_descriptor")
    a, b = mp.Pipe()
    a.send(tessera.arange(3.))
    assert b.recv().tolist() == [0.0, 1.0, 2.0]


def test_failed_pickling_hands_back_its_blocks():
    # A handoff tensor (what a DataLoader worker collates into) and a plain one are pickled
    # before the lock fails: taking the handoffs back leaves no block behind, and the
    # handoff tensor still sends afterwards (as a copy, its own name being gone).
    from tessera.multiprocessing import _shm
    from tessera.multiprocessing.reductions import new_shared
    batch = new_shared((2, 3), tessera.float32)
    batch.copy_(tessera.arange(6.0).view(2, 3))
    plain = tessera.arange(4)
    with _shm.recording_handoffs() as handoffs:
        with pytest.raises(TypeError, match="lock"):
            ForkingPickler.dumps((batch, plain, threading.Lock()))
        assert len(handoffs) == 1 and len(handoffs.marked) == 1
        handoffs.take_back()
    assert _blocks() == []
    assert batch.is_shared() and batch.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert equal(ForkingPickler.loads(ForkingPickler.dumps(batch)), batch)
    del batch
    gc.collect()
    assert _blocks() == []
