"""tessera.distributed: the stores against torch's own (HashStore, TCPStore, FileStore,
PrefixStore), and process groups of 1 to 4 processes on 127.0.0.1 whose collectives are
checked, for every Gloo dtype, against the answer computed in one process. Every process is
bounded in time, so a hang fails the test instead of the run."""
import os
import pickle
import shutil
import socket
import subprocess
import sys
import time
from datetime import timedelta
from functools import reduce as fold

import numpy as np
import pytest
import torch.distributed as tdist

import tessera
import tessera.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from distributed_worker import DTYPES, INTEGRAL, values  # noqa: E402

LAUNCH_TIMEOUT = 120


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(scenario, world, tmp_path, init="tcp", script="distributed_worker.py", env=None):
    init_method = f"tcp://127.0.0.1:{free_port()}" if init == "tcp" else f"file://{tmp_path}/rendezvous"
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", **(env or {}))
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, script), scenario, str(r),
                               str(world), init_method, str(tmp_path)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for r in range(world)]
    deadline = time.monotonic() + LAUNCH_TIMEOUT
    outputs = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
            outputs.append(out.decode(errors="replace"))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    results = {}
    for r in range(world):
        path = tmp_path / f"rank{r}.pkl"
        if path.exists():
            with open(path, "rb") as f:
                results[r] = pickle.load(f)
    return procs, outputs, results


# ---- the answers, computed in one process ----

def inputs(dt, world, n=6, kind="sum", offset=0):
    vs = [values(r, n, kind, offset) for r in range(world)]
    return [(v % 2 == 1) if dt == "bool" else v.astype(np.float64) for v in vs]


def expect_reduce(op, xs, dt):
    if dt == "bool":
        f = {"SUM": np.logical_or, "MAX": np.logical_or, "BOR": np.logical_or, "MIN": np.logical_and,
             "PRODUCT": np.logical_and, "BAND": np.logical_and, "BXOR": np.logical_xor}[op]
        return fold(f, xs)
    if op in ("BAND", "BOR", "BXOR"):
        ints = [x.astype(np.int64) for x in xs]
        f = {"BAND": np.bitwise_and, "BOR": np.bitwise_or, "BXOR": np.bitwise_xor}[op]
        return fold(f, ints).astype(np.float64)
    f = {"SUM": np.add, "PRODUCT": np.multiply, "MIN": np.minimum, "MAX": np.maximum}[op]
    return fold(f, xs)


def close(got, want):
    np.testing.assert_array_equal(np.asarray(got).astype(np.float64), np.asarray(want).astype(np.float64))


@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_every_collective_and_dtype(world, tmp_path):
    procs, outputs, results = launch("collectives", world, tmp_path, init="tcp" if world != 3 else "file")
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
    check_collectives(results, world, DTYPES, "gloo", tmp_path)


@pytest.mark.skipif(not dist.is_mpi_available() or shutil.which("mpirun") is None,
                    reason="tessera built without MPI, or no mpirun")
@pytest.mark.parametrize("world", [1, 2, 3])
def test_every_collective_and_dtype_on_mpi(world, tmp_path):
    # mpirun starts the ranks; MPI has no float16/bfloat16/bool (torch's MPI group neither)
    from distributed_worker import MPI_DTYPES
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(world), sys.executable,
           os.path.join(HERE, "distributed_worker.py"), "collectives", "-1", str(world), "mpi", str(tmp_path)]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=LAUNCH_TIMEOUT)
    assert run.returncode == 0, run.stdout.decode(errors="replace")
    results = {}
    for r in range(world):
        with open(tmp_path / f"rank{r}.pkl", "rb") as f:
            results[r] = pickle.load(f)
    check_collectives(results, world, MPI_DTYPES, "mpi", tmp_path)


def check_collectives(results, world, dtypes, backend, tmp_path):
    assert len(results) == world
    for rank, out in results.items():
        assert out["world"] == (rank, world, backend, True)
        for dt in dtypes:
            ops = ["SUM", "MIN", "MAX", "PRODUCT"] + (["BAND", "BOR", "BXOR"] if dt in INTEGRAL else [])
            for op in ops:
                xs = inputs(dt, world, kind="product" if op == "PRODUCT" else "sum")
                close(out[f"all_reduce/{dt}/{op}"], expect_reduce(op, xs, dt))
            xs = inputs(dt, world)
            close(out[f"broadcast/{dt}"], xs[world - 1])
            if rank == 0:
                close(out[f"reduce/{dt}"], expect_reduce("MAX", xs, dt))
            close(out[f"all_gather/{dt}"], np.stack(xs))
            close(out[f"all_gather_into_tensor/{dt}"], np.concatenate(xs))
            if rank == world - 1:
                close(out[f"gather/{dt}"], np.stack(xs))
            close(out[f"scatter/{dt}"], inputs(dt, world + 10)[rank + 10])
            if dt != "bool":
                chunks = [expect_reduce("SUM", inputs(dt, world, offset=6 * r), dt) for r in range(world)]
                close(out[f"reduce_scatter/{dt}"], chunks[rank])
                whole = expect_reduce("SUM", inputs(dt, world, n=6 * world), dt)
                close(out[f"reduce_scatter_tensor/{dt}"], whole[6 * rank: 6 * rank + 6])
            sent = inputs(dt, world, n=2 * world)
            close(out[f"all_to_all_single/{dt}"], np.concatenate([s[2 * rank: 2 * rank + 2] for s in sent]))
            close(out[f"all_to_all/{dt}"], np.stack([inputs(dt, world, n=3, offset=3 * rank)[j] for j in range(world)]))
        # uneven splits: rank j sent rows [sum(1..rank), +rank+1) of its input to this rank
        rows = [values(j, 2 * sum(k + 1 for k in range(world))).reshape(-1, 2) for j in range(world)]
        start = sum(k + 1 for k in range(rank))
        close(out["all_to_all_single/uneven"], np.concatenate([r[start: start + rank + 1] for r in rows]))
        re = sum(values(r, 6) for r in range(world))
        im = sum(values(r + 1, 6) for r in range(world))
        close(out["all_reduce/complex64"].real, re)
        close(out["all_reduce/complex64"].imag, im)
        if world > 1:
            prev = (rank - 1) % world
            close(out["send_recv"], values(prev, 6))
            close(out["batch_isend_irecv"], values(prev, 6))
            close(out["p2p_futures"], values(prev, 6))
            if rank == 0:
                for sender in range(1, world):
                    close(out[f"recv_any/{sender}"], values(sender, 6))
        total = sum(values(r, 6) for r in range(world))
        close(out["async/work"], total)
        close(out["async/future"], total)
        assert out["async/completed"]
        assert out["all_gather_object"] == [{"rank": r, "items": list(range(r))} for r in range(world)]
        assert out["broadcast_object_list"] == [f"from {world - 1}", (world - 1) * 10, {"k": [world - 1]}]
        if rank == 0:
            assert out["gather_object"] == [("gathered", r) for r in range(world)]
        assert out["scatter_object_list"] == {"to": rank, "pad": "x" * rank}
        evens = list(range(0, world, 2))
        if rank % 2 == 0:
            close(out["new_group/all_reduce"], sum(values(r, 6) for r in evens))
            assert out["new_group/rank_size"] == (evens.index(rank), len(evens))
        else:
            assert out["new_group/rank_size"] == (-1, -1)
        assert (tmp_path / f"rank{rank}.after").read_text() == "False"


def test_dataloader_shards_datapipes_over_ranks_and_workers(tmp_path):
    procs, outputs, results = launch("datapipe", 2, tmp_path)
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
    for workers in (0, 2):
        for epoch in range(2):
            shares = [results[r][f"datapipe/{workers}/{epoch}"] for r in range(2)]
            assert sorted(shares[0] + shares[1]) == list(range(40))  # disjoint, nothing lost
            assert len(shares[0]) == len(shares[1]) == 20
        assert results[0][f"datapipe/{workers}/0"] != results[0][f"datapipe/{workers}/1"]  # reshuffled


def test_a_killed_rank_makes_the_collective_raise_not_hang(tmp_path):
    procs, outputs, results = launch("killed_peer", 2, tmp_path)
    assert procs[1].returncode == 3
    assert procs[0].returncode == 0, outputs[0]
    err = results[0]["error"]
    assert err is not None and "ProcessGroupGloo::allreduce" in err, err
    assert results[0]["seconds"] < 30


def test_monitored_barrier_names_the_missing_rank(tmp_path):
    procs, outputs, results = launch("slow_rank", 2, tmp_path)
    assert procs[0].returncode == 0, outputs[0]
    assert results[0]["error"] == "Rank 1 failed to pass monitoredBarrier in 1000 ms"


# ---- stores, against torch's ----

def test_detail_debug_reports_mismatched_collectives(tmp_path):
    # TORCH_DISTRIBUTED_DEBUG=DETAIL: every rank raises naming both collectives (torch's
    # ProcessGroupWrapper message); the group stays usable, matching calls still work.
    procs, outputs, results = launch("mismatch", 2, tmp_path, env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"})
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
    for rank, out in results.items():
        other = 1 - rank
        assert out["level"] == "DebugLevel.DETAIL"
        ops = ("ALLREDUCE", "BROADCAST") if rank == 0 else ("BROADCAST", "ALLREDUCE")
        assert out["op"] == (
            f"Detected mismatch between collectives on ranks. Rank {rank} is running collective: "
            f"CollectiveFingerPrint(OpType={ops[0]}, TensorShape=[10], TensorDtypes=Float, TensorDeviceTypes=cpu), "
            f"but Rank {other} is running collective: CollectiveFingerPrint(OpType={ops[1]}, TensorShape=[10], "
            "TensorDtypes=Float, TensorDeviceTypes=cpu).")
        shapes = ("[10]", "[20]") if rank == 0 else ("[20]", "[10]")
        assert f"TensorShape={shapes[0]}" in out["shape"] and f"TensorShape={shapes[1]}" in out["shape"]
        dtypes = ("Float", "Long") if rank == 0 else ("Long", "Float")
        assert f"TensorDtypes={dtypes[0]}, TensorDeviceTypes=cpu), but" in out["dtype"]
        assert f"TensorDtypes={dtypes[1]}, TensorDeviceTypes=cpu)." in out["dtype"]
        assert "OpType=BARRIER" in out["barrier"] and "OpType=ALLGATHER" in out["barrier"]
        assert out["after"] == [3.0] * 4
        assert out["ddp_grad_equal"]
    assert results[0]["skipped"] == "[Rank 0]: Ranks 1 failed to pass monitoredBarrier in 5000 ms"


def store_script(store):
    out = []
    store.set("a", "1")
    store.set("b", b"\x00bytes\xff")
    out.append(store.get("a"))
    out.append(store.get("b"))
    out.append(store.add("n", 3))
    out.append(store.add("n", -5))
    out.append(store.get("n"))
    out.append(store.compare_set("a", "1", "x"))
    out.append(store.compare_set("a", "1", "y"))
    out.append(store.compare_set("missing", "q", "w"))
    out.append(store.compare_set("fresh", "", "w"))
    out.append(store.num_keys())
    out.append(store.delete_key("a"))
    out.append(store.delete_key("a"))
    out.append(store.num_keys())
    store.wait(["b", "n"])
    store.wait(["b"], timedelta(seconds=1))
    return out


def make_stores(kind, tmp_path):
    port = free_port()
    if kind == "hash":
        return dist.HashStore(), tdist.HashStore()
    if kind == "tcp":
        return (dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=10)),
                tdist.TCPStore("127.0.0.1", port, 1, True, timedelta(seconds=10)))
    if kind == "file":
        return dist.FileStore(str(tmp_path / "ours"), 1), tdist.FileStore(str(tmp_path / "theirs"), 1)
    ours = dist.PrefixStore("pre", dist.HashStore())
    theirs = tdist.PrefixStore("pre", tdist.HashStore())
    return ours, theirs


@pytest.mark.parametrize("kind", ["hash", "tcp", "file", "prefix"])
def test_store_operations_match_torch(kind, tmp_path):
    ours, theirs = make_stores(kind, tmp_path)
    assert store_script(ours) == store_script(theirs)
    # check() is current torch's (1.13 has it in C++ only)
    assert ours.check(["b", "n"]) and not ours.check(["b", "a"])


@pytest.mark.parametrize("kind", ["hash", "tcp", "file", "prefix"])
def test_store_wait_and_get_time_out(kind, tmp_path):
    ours, _ = make_stores(kind, tmp_path)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="Timeout waiting for key"):
        ours.wait(["never"], timedelta(milliseconds=200))
    ours.set_timeout(timedelta(milliseconds=200))
    with pytest.raises(RuntimeError, match="Timeout waiting for key"):
        ours.get("never")
    assert time.monotonic() - start < 10
    ours.set("after", "ok")  # the store still works after a timeout
    assert ours.get("after") == b"ok"


def test_tcp_store_serves_other_processes_and_wakes_waiters():
    master = dist.TCPStore("127.0.0.1", 0, 2, True, timedelta(seconds=20), wait_for_workers=False)
    code = ("import sys, tessera.distributed as d; from datetime import timedelta; "
            f"s = d.TCPStore('127.0.0.1', {master.port}, 2, False, timedelta(seconds=20)); "
            "s.set('from_child', 'hi'); print(s.get('from_parent').decode()); s.add('done', 1)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=dict(os.environ))
    assert master.get("from_child") == b"hi"  # blocks until the child sets it
    master.set("from_parent", "hello")
    out, _ = child.communicate(timeout=60)
    assert out.decode().strip() == "hello"
    assert master.add("done", 0) == 1


def test_tcp_store_on_an_occupied_port_is_a_clear_error():
    first = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=5))
    with pytest.raises(RuntimeError, match="failed to listen on 127.0.0.1:%d .*Address already in use" % first.port):
        dist.TCPStore("127.0.0.1", first.port, 1, True, timedelta(seconds=5))


def test_tcp_store_multi_tenant_shares_one_server():
    a = dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=5), multi_tenant=True)
    b = dist.TCPStore("127.0.0.1", a.port, 1, True, timedelta(seconds=5), multi_tenant=True)
    a.set("k", "v")
    assert b.get("k") == b"v"


def test_tcp_store_client_without_a_server_times_out():
    port = free_port()
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="could not connect"):
        dist.TCPStore("127.0.0.1", port, 1, False, timedelta(milliseconds=300))
    assert time.monotonic() - start < 10


def test_file_store_is_shared_through_the_file_and_removed_by_the_last(tmp_path):
    path = str(tmp_path / "shared")
    a, b = dist.FileStore(path, 2), dist.FileStore(path, 2)
    a.set("x", "1")
    assert b.get("x") == b"1"
    assert b.add("c", 2) == 2 and a.add("c", 3) == 5
    del a
    assert os.path.exists(path)
    del b
    assert not os.path.exists(path)


# ---- the API in one process ----

@pytest.fixture
def world_of_one():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_one_process_group(world_of_one):
    assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
    assert dist.get_backend() == "gloo" and dist.group.WORLD is dist.GroupMember.WORLD
    t = tessera.arange(4.0)
    dist.all_reduce(t)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="trying to initialize the default process group twice"):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)


def test_errors_match_torch(world_of_one):
    t = tessera.ones(3)
    with pytest.raises(RuntimeError, match="Cannot use ReduceOp.AVG with Gloo"):
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
    with pytest.raises(RuntimeError, match="Cannot use ReduceOp.BAND with non-integral dtype"):
        dist.all_reduce(t, op=dist.ReduceOp.BAND)
    with pytest.raises(RuntimeError, match="Expected parameter `tensor` to be of type torch.Tensor"):
        dist.all_reduce([1, 2])
    with pytest.raises(RuntimeError, match="does not support ReduceOp.MAX on complex"):
        dist.all_reduce(tessera.ones(2, dtype=tessera.complex64), op=dist.ReduceOp.MAX)
    with pytest.raises(ValueError, match="``gather_list`` must be specified on destination rank"):
        dist.gather(t, dst=0)
    with pytest.raises(ValueError, match="``scatter_list`` must be specified on source rank"):
        dist.scatter(t, src=0)
    with pytest.raises(RuntimeError, match="non-overlapping and dense"):
        dist.all_reduce(tessera.ones(4, 4)[:, ::2])
    with pytest.raises(RuntimeError, match="tensors must be contiguous"):
        dist.all_gather([tessera.zeros(4, 4)], tessera.ones(4, 4).t())
    with pytest.raises(RuntimeError, match="invalid root rank: 3"):
        dist.broadcast(t, src=3)
    with pytest.raises(RuntimeError, match="Invalid ``op``"):
        dist.P2POp(dist.all_reduce, t, 0)
    with pytest.raises(ValueError, match="Invalid destination rank"):
        dist.send(t, dst=0)


def test_init_errors_match_torch(monkeypatch):
    for var in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    for lib in (dist, tdist):
        with pytest.raises(ValueError, match="environment variable RANK expected, but not set"):
            lib.init_process_group("gloo")
        with pytest.raises(ValueError, match="Invalid backend: 'nope'"):
            lib.Backend("nope")
        with pytest.raises(RuntimeError, match="Expected timeout argument to be of type ?datetime.timedelta"):
            lib.init_process_group("gloo", timeout=5)
        with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
            lib.all_reduce(tessera.ones(1) if lib is dist else __import__("torch").ones(1))
    assert not dist.is_initialized()


def test_env_init_and_async_work(monkeypatch):
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", timeout=timedelta(seconds=20))
    try:
        t = tessera.full((5,), 2.0)
        work = dist.all_reduce(t, op=dist.ReduceOp.PRODUCT, async_op=True)
        assert work.wait() is True and work.is_completed() and work.is_success()
        assert work.result()[0] is not None and t.tolist() == [2.0] * 5
        fut = dist.broadcast(t, 0, async_op=True).get_future()
        assert fut.wait()[0].tolist() == [2.0] * 5 and fut.done()
        out = [None]
        dist.all_gather_object(out, {"x": 1})
        assert out == [{"x": 1}]
    finally:
        dist.destroy_process_group()


def test_store_details_match_torch(tmp_path):
    for lib in (dist, tdist):
        s = lib.HashStore()
        s.set("k", bytearray(b"ab"))
        assert s.get("k") == b"ab"
        inner = lib.HashStore()
        p = lib.PrefixStore("x", inner)
        inner.set_timeout(timedelta(seconds=7))
        assert p.timeout == timedelta(seconds=7)


def test_layouts_and_sizes_match_torch(world_of_one):
    t = tessera.arange(12.0).reshape(3, 4).t()  # dense, not contiguous: element-wise collectives take it
    dist.all_reduce(t)
    assert t.tolist() == tessera.arange(12.0).reshape(3, 4).t().tolist()
    with pytest.raises(RuntimeError, match="invalid tensor size"):
        dist.all_gather([tessera.zeros(6)], tessera.zeros(2, 3))


def test_futures():
    from tessera.futures import Future, collect_all, wait_all
    f = Future()
    chained = f.then(lambda fut: fut.value() + 1)
    assert not f.done()
    f.set_result(41)
    assert chained.wait() == 42
    g = Future()
    g.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        g.wait()
    a, b = Future(), Future()
    both = collect_all([a, b])
    a.set_result(1)
    assert not both.done()
    b.set_result(2)
    assert wait_all([a, b]) == [1, 2] and both.done()
    # a callback that raises is logged; the others run (as torch's)
    f, seen = Future(), []
    f.add_done_callback(lambda _: 1 / 0)
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    f.set_result(5)
    assert seen == [5]
    ok, bad = Future(), Future()
    both = collect_all([ok, bad])
    ok.set_result(1)
    bad.set_exception(ValueError("no"))
    with pytest.raises(ValueError, match="no"):
        both.wait()


# ---- DistributedDataParallel against one process on the whole batch (torch) ----

def _torch_model(init):
    import torch
    m = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    m.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    return m


def _torch_grads(m, *batches):
    import torch
    m.zero_grad()
    for x, y in batches:
        torch.nn.functional.mse_loss(m(torch.tensor(x)), torch.tensor(y)).backward()
    return {n: p.grad.numpy().copy() for n, p in m.named_parameters()}


def _same_everywhere(results, key):
    first = results[0][key]
    for out in results.values():
        for k in first:
            np.testing.assert_array_equal(out[key][k], first[k])
    return first


def _close(got, want, rtol=1e-10, atol=1e-12):
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("world", [2, 3])
def test_ddp_gradients_equal_one_process_on_the_whole_batch(world, tmp_path):
    import torch
    from distributed_worker import _ddp_data
    procs, outputs, results = launch("ddp", world, tmp_path)
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
    xa, ya, xb, yb = _ddp_data(world)

    def split_loss_grads(m, x, y):
        # DDP averages the ranks' mean losses: the mean over equal-sized shards
        return _torch_grads(m, *[(x[4 * r: 4 * r + 4] / 1.0, y[4 * r: 4 * r + 4]) for r in range(world)])

    def averaged(m, x, y):
        g = split_loss_grads(m, x, y)
        return {k: v / world for k, v in g.items()}

    init = _same_everywhere(results, "ddp/init")  # rank 0's weights reached every rank
    ref = _torch_model(init)
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step, (x, y) in enumerate([(xa, ya), (xb, yb)]):
        want = averaged(ref, x, y)
        for out in results.values():
            _close(out[f"ddp/grads{step}"], want)
        for p, k in zip(ref.parameters(), want):
            p.grad = torch.tensor(want[k])
        opt.step()
    final = _same_everywhere(results, "ddp/final")
    _close(final, {k: v.detach().numpy() for k, v in ref.state_dict().items()})

    ref = _torch_model(_same_everywhere(results, "no_sync/init"))
    want = {k: averaged(ref, xa, ya)[k] + averaged(ref, xb, yb)[k] for k in averaged(ref, xa, ya)}
    for rank, out in results.items():
        local = _torch_grads(ref, (xa[4 * rank: 4 * rank + 4], ya[4 * rank: 4 * rank + 4]))
        _close(out["no_sync/local"], local)  # inside no_sync nothing was reduced
        _close(out["no_sync/grads"], want)

    # the compressed hooks round each rank's share to float16 / bfloat16 (8 / 11 bits)
    for name, rtol, atol in [("plain", 1e-10, 1e-12), ("bucket_view", 1e-10, 1e-12), ("fp16", 2e-3, 2e-4),
                             ("bf16", 2e-2, 2e-3)]:
        ref = _torch_model(_same_everywhere(results, f"{name}/init"))
        want = averaged(ref, xa, ya)
        for out in results.values():
            _close(out[f"{name}/grads"], want, rtol=rtol, atol=atol)
            _close(out[f"{name}/twice"], {k: 2 * v for k, v in want.items()}, rtol=rtol, atol=2 * atol)
            _close(out[f"{name}/after_zero"], want, rtol=rtol, atol=atol)

    ref = _torch_model(_same_everywhere(results, "hooked/init"))
    ref[0].bias.register_hook(lambda g: g * 0)
    for out in results.values():
        _close(out["hooked/grads"], averaged(ref, xa, ya))
        assert not out["hooked/grads"]["0.bias"].any()
    ref = _torch_model(_same_everywhere(results, "checkpoint/init"))
    for out in results.values():
        _close(out["checkpoint/grads"], averaged(ref, xa, ya))
    if world >= 3:
        ref = _torch_model(results[1]["subgroup/init"])
        g = _torch_grads(ref, *[(xa[4 * r: 4 * r + 4], ya[4 * r: 4 * r + 4]) for r in (1, 2)])
        for r in (1, 2):
            _close(results[r]["subgroup/init"], results[1]["subgroup/init"])
            _close(results[r]["subgroup/grads"], {k: v / 2 for k, v in g.items()})

    # Python comm hooks: the mean, the sum, fp16 through the hook function itself
    ref = _torch_model(_same_everywhere(results, "pyhook/init"))
    for out in results.values():
        _close(out["pyhook/grads"], averaged(ref, xa, ya))
        assert out["pyhook/seen"]["last"][-1] is True and not any(out["pyhook/seen"]["last"][:-1])
        assert all(out["pyhook/seen"]["consistent"])
        assert out["pyhook/twice"] == "register_comm_hook or register_builtin_comm_hook can only be called once."
    ref = _torch_model(_same_everywhere(results, "sumhook/init"))
    for out in results.values():
        _close(out["sumhook/grads"], split_loss_grads(ref, xa, ya))
    ref = _torch_model(_same_everywhere(results, "grouphook/init"))
    for out in results.values():
        _close(out["grouphook/grads"], averaged(ref, xa, ya), rtol=2e-3, atol=2e-4)

    init = _same_everywhere(results, "unused/init")
    lin = torch.nn.Linear(5, 3).double()
    lin.load_state_dict({k.split(".", 1)[1]: torch.tensor(v) for k, v in init.items() if k.startswith("used.")})
    g = {}
    for r in range(world):
        lin.zero_grad()
        torch.nn.functional.mse_loss(lin(torch.tensor(xa[4 * r: 4 * r + 4])), torch.tensor(ya[4 * r: 4 * r + 4])).backward()
        for n, p in lin.named_parameters():
            g[f"used.{n}"] = g.get(f"used.{n}", 0) + p.grad.numpy() / world
    for out in results.values():
        _close(out["unused/grads"], g)  # the unused layer's grads stay None
        assert out["unused/unused"] == [2, 3]
        assert out["unused/error"].startswith("Expected to have finished reduction in the prior iteration")
