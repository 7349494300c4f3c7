"""tessera.utils.data against torch.utils.data: datasets, samplers, collation and the
DataLoader give the same batches, lengths and errors; with worker processes: order, seeding,
worker info, persistent workers, timeouts, dead workers, exceptions and shared-memory cleanup."""
import collections
import gc
import multiprocessing
import os
import pickle
import random
import signal
import threading
import time
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import tessera
import tessera.utils.data as sud

LIBS = {"torch": (torch, tud), "tessera": (tessera, sud)}
Point = collections.namedtuple("Point", ["x", "y"])


def same(got, want):
    """tessera result `got` equals torch result `want`: structure, types, dtypes, values."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, tessera.Tensor), type(got)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    elif isinstance(want, (list, tuple)):
        assert type(got).__name__ == type(want).__name__ and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, dict):
        assert type(got) is type(want) and list(got) == list(want)
        for k in want:
            same(got[k], want[k])
    else:
        assert type(got) is type(want) and got == want


def raises_alike(fn):
    """fn(lib, data) raises the same exception class and message with torch and tessera."""
    with pytest.raises(Exception) as want:
        fn(*LIBS["torch"])
    with pytest.raises(Exception) as got:
        fn(*LIBS["tessera"])
    assert got.type is want.type
    assert str(got.value) == str(want.value)


def tensors(lib, n=10):
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    return lib.from_numpy(x.copy()), lib.from_numpy(np.arange(n, dtype=np.int64))


# ---- datasets

def test_tensor_dataset():
    (x, y), (tx, ty) = tensors(tessera), tensors(torch)
    ds, tds = sud.TensorDataset(x, y), tud.TensorDataset(tx, ty)
    assert len(ds) == len(tds) == 10
    same(ds[3], tds[3])
    same(ds[-1], tds[-1])
    raises_alike(lambda lib, data: data.TensorDataset(lib.zeros(3), lib.zeros(4)))


def test_concat_subset_and_add():
    def build(lib, data):
        a, b = data.TensorDataset(lib.arange(3)), data.TensorDataset(lib.arange(10, 15))
        c = a + b
        return c, data.Subset(c, [6, 0, 3])
    (c, s), (tc, ts) = build(*LIBS["tessera"]), build(*LIBS["torch"])
    assert isinstance(c, sud.ConcatDataset) and len(c) == len(tc) == 8
    assert c.cumulative_sizes == tc.cumulative_sizes
    for i in list(range(-8, 8)):
        same(c[i], tc[i])
    assert len(s) == 3
    for i in range(3):
        same(s[i], ts[i])
    raises_alike(lambda lib, data: build(lib, data)[0][-9])
    raises_alike(lambda lib, data: data.ConcatDataset([]))
    # iterable datasets chain with +
    chained = _Range(0, 3) + _Range(5, 7)
    assert isinstance(chained, sud.ChainDataset) and list(chained) == [0, 1, 2, 5, 6] and len(chained) == 5


def test_random_split():
    g = tessera.Generator().manual_seed(7)
    parts = sud.random_split(range(10), [3, 7], generator=g)
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = sud.random_split(range(10), [3, 7], generator=tessera.Generator().manual_seed(7))
    assert [p.indices for p in again] == [p.indices for p in parts]
    # fractions: the lengths are computed as torch computes them
    for n, fracs in [(10, [0.3, 0.7]), (11, [0.5, 0.25, 0.25]), (7, [0.1, 0.1, 0.8])]:
        got = sud.random_split(range(n), fracs, generator=tessera.Generator().manual_seed(0))
        want = tud.random_split(range(n), fracs, generator=torch.Generator().manual_seed(0))
        assert [len(p) for p in got] == [len(p) for p in want]
    raises_alike(lambda lib, data: data.random_split(range(10), [3, 5]))
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        sud.random_split(range(10), [-0.5, 1.5])


# ---- samplers

def test_sequential_and_batch_sampler():
    for n, bs in [(10, 3), (9, 3), (1, 4)]:
        for drop_last in (False, True):
            got = sud.BatchSampler(sud.SequentialSampler(range(n)), bs, drop_last)
            want = tud.BatchSampler(tud.SequentialSampler(range(n)), bs, drop_last)
            assert list(got) == list(want) and len(got) == len(want)
    for bad in (0, -1, 2.0, True):
        raises_alike(lambda lib, data: data.BatchSampler(range(4), bad, False))
    raises_alike(lambda lib, data: data.BatchSampler(range(4), 2, 1))


def test_random_sampler():
    def order(**kw):
        return list(sud.RandomSampler(range(20), generator=tessera.Generator().manual_seed(3), **kw))
    assert order() == order() and sorted(order()) == list(range(20))
    assert order() != list(range(20))
    longer = order(num_samples=45)
    assert len(longer) == 45 and sorted(longer[:20]) == sorted(longer[20:40]) == list(range(20))
    with_repl = order(replacement=True, num_samples=70)
    assert len(with_repl) == 70 and all(0 <= i < 20 for i in with_repl) and with_repl == order(replacement=True,
                                                                                                num_samples=70)
    assert len(sud.RandomSampler(range(5), replacement=True, num_samples=9)) == 9
    # without a generator, tessera.manual_seed makes the order reproducible
    tessera.manual_seed(11)
    a = list(sud.RandomSampler(range(30)))
    tessera.manual_seed(11)
    assert a == list(sud.RandomSampler(range(30)))
    raises_alike(lambda lib, data: data.RandomSampler(range(4), replacement=1))
    raises_alike(lambda lib, data: data.RandomSampler(range(4), num_samples=0))
    raises_alike(lambda lib, data: data.RandomSampler(range(0)))


def test_subset_and_weighted_samplers():
    idx = [4, 9, 2, 7]
    got = list(sud.SubsetRandomSampler(idx, generator=tessera.Generator().manual_seed(1)))
    assert sorted(got) == sorted(idx) and got == list(sud.SubsetRandomSampler(idx, tessera.Generator().manual_seed(1)))
    w = [0.0, 1.0, 0.0, 3.0, 2.0]
    drawn = list(sud.WeightedRandomSampler(w, 200, generator=tessera.Generator().manual_seed(2)))
    assert len(drawn) == 200 and set(drawn) <= {1, 3, 4} and drawn.count(3) > drawn.count(1)
    distinct = list(sud.WeightedRandomSampler(w, 3, replacement=False, generator=tessera.Generator().manual_seed(2)))
    assert sorted(distinct) == [1, 3, 4]
    assert sud.WeightedRandomSampler(w, 7).weights.dtype == tessera.float64
    for bad in (0, True, 2.5):
        raises_alike(lambda lib, data: data.WeightedRandomSampler(w, bad))
    raises_alike(lambda lib, data: data.WeightedRandomSampler(w, 2, replacement=0))
    raises_alike(lambda lib, data: data.WeightedRandomSampler([[1.0, 2.0]], 2))


# ---- collation

def sample_batch(lib):
    t = lib.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    return [
        {"t": t[i], "n": np.array([i, i + 1], dtype=np.int16), "f": 0.5 * i, "i": i, "b": bool(i), "s": f"s{i}",
         "by": b"x", "p": Point(np.float32(i), [i, 2 * i]), "tu": (i, np.float64(i))}
        for i in range(2)
    ]


def test_default_collate_structures():
    same(sud.default_collate(sample_batch(tessera)), tud.default_collate(sample_batch(torch)))
    for batch in ([1, 2, 3], [1.5, 2.0], [True, False], ["a", "b"], [(0, 1), (2, 3)], [[0, 1], [2, 3]],
                  [Point(0, 1.0), Point(2, 3.0)], [np.float32(1), np.float32(2)], [np.int8(1), np.int8(2)],
                  [collections.OrderedDict(a=1, b=2)], [np.zeros((2, 2), dtype=np.float64)] * 3):
        same(sud.default_collate(batch), tud.default_collate(batch))
    raises_alike(lambda lib, data: data.default_collate([[1, 2], [3]]))
    raises_alike(lambda lib, data: data.default_collate([_Opaque(), _Opaque()]))
    raises_alike(lambda lib, data: data.default_collate([np.array(["a"]), np.array(["b"])]))


class _Opaque:
    pass


def test_default_convert():
    for data in (np.arange(4), np.float64(2.5), {"a": np.ones(2)}, Point(np.array(0), 1), (np.int32(3), "s"),
                 [np.zeros(2), [np.ones(1)]], "text", 7, np.array(["a"])):
        got, want = sud.default_convert(data), tud.default_convert(data)
        if isinstance(want, np.ndarray):
            assert got is data
        else:
            same(got, want)
    x = tessera.ones(2)
    assert sud.default_convert(x) is x


# ---- DataLoader, main process

class _Range(sud.IterableDataset):
    """start..end-1, split between workers like torch's documentation example."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = sud.get_worker_info()
        lo, hi = self.start, self.end
        if info is not None:
            per = -(-(hi - lo) // info.num_workers)
            lo = lo + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))

    def __len__(self):
        return self.end - self.start


class _TorchRange(tud.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))

    def __len__(self):
        return self.end - self.start


def loaders(make):
    """(tessera DataLoader, torch DataLoader) of make(lib, data)."""
    return make(*LIBS["tessera"]), make(*LIBS["torch"])


@pytest.mark.parametrize("kw", [dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=None),
                                dict(batch_size=3, collate_fn=lambda b: [len(b)] + [x[1] for x in b])])
def test_dataloader_map_style(kw):
    got, want = loaders(lambda lib, data: data.DataLoader(data.TensorDataset(*tensors(lib)), **kw))
    assert len(got) == len(want)
    same(list(got), list(want))


def test_dataloader_batch_sampler_and_iterable():
    got, want = loaders(lambda lib, data: data.DataLoader(data.TensorDataset(*tensors(lib)),
                                                          batch_sampler=[[3, 1], [0], [9, 8, 7]]))
    same(list(got), list(want))
    for kw in (dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=None)):
        got = sud.DataLoader(_Range(0, 10), **kw)
        want = tud.DataLoader(_TorchRange(0, 10), **kw)
        assert len(got) == len(want)
        same(list(got), list(want))


def test_dataloader_shuffle_reproducible():
    ds = sud.TensorDataset(*tensors(tessera, 30))

    def epoch(seed):
        return [b[1].tolist() for b in sud.DataLoader(ds, batch_size=7, shuffle=True,
                                                      generator=tessera.Generator().manual_seed(seed))]
    a = epoch(5)
    assert a == epoch(5) and sorted(sum(a, [])) == list(range(30)) and sum(a, []) != list(range(30))


def test_dataloader_argument_errors():
    def check(**kw):
        raises_alike(lambda lib, data: data.DataLoader(data.TensorDataset(lib.zeros(4)), **kw))
    check(num_workers=-1)
    check(timeout=-1)
    check(persistent_workers=True)
    check(sampler=[0, 1], shuffle=True)
    check(batch_sampler=[[0]], batch_size=2)
    check(batch_sampler=[[0]], drop_last=True)
    check(batch_sampler=[[0]], shuffle=True)
    check(batch_size=None, drop_last=True)
    check(multiprocessing_context="fork")
    for kw in (dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])):
        with pytest.raises(ValueError) as got:
            sud.DataLoader(_Range(0, 3), **kw)
        with pytest.raises(ValueError) as want:
            tud.DataLoader(_TorchRange(0, 3), **kw)
        assert str(got.value) == str(want.value).replace("_TorchRange", "_Range")
    with pytest.raises(ValueError, match="multiprocessing_context option should specify a valid start method"):
        sud.DataLoader(_Range(0, 3), num_workers=1, multiprocessing_context="nope")
    # current torch: prefetch_factor defaults to None and is refused without workers
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        sud.DataLoader(_Range(0, 3), prefetch_factor=2)
    assert sud.DataLoader(_Range(0, 3)).prefetch_factor is None
    assert sud.DataLoader(_Range(0, 3), num_workers=1).prefetch_factor == 2
    dl = sud.DataLoader(_Range(0, 3))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        dl.batch_size = 3
    assert sud.get_worker_info() is None


def test_pin_memory_warns_without_accelerator():
    with pytest.warns(UserWarning, match="no accelerator is found"):
        out = list(sud.DataLoader(sud.TensorDataset(tessera.ones(2)), pin_memory=True))
    assert len(out) == 2


# ---- DataLoader with workers

class _Probe(sud.Dataset):
    """Item i: (i, worker id, worker seed, pid, a draw of tessera's and python's global RNG)."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = sud.get_worker_info()
        return (i, info.id, info.seed, os.getpid(), tessera.rand(1), random.random(), info.num_workers,
                type(info.dataset).__name__)


class _Faulty(sud.Dataset):
    def __init__(self, action):
        self.action = action

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            if self.action == "exit":
                os._exit(3)
            if self.action == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.action == "sleep":
                time.sleep(1.2)
            if self.action == "raise":
                raise ValueError(f"bad sample {i}")
            if self.action == "keyerror":
                raise KeyError("missing")
            if self.action == "custom":
                raise _NeedsTwoArgs(1, 2)
        return tessera.full((2,), float(i))


class _NeedsTwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


def _shm_names(pids):
    return [n for n in os.listdir("/dev/shm") if any(n.startswith(f"tessera_{p}_") for p in pids)]


def test_workers_preserve_order_and_free_shared_memory():
    ds = sud.TensorDataset(*tensors(tessera, 37))
    it = iter(sud.DataLoader(ds, batch_size=4, num_workers=2))
    pids = [w.pid for w in it._workers]
    batches = list(it)
    same(batches, list(tud.DataLoader(tud.TensorDataset(*tensors(torch, 37)), batch_size=4)))
    assert all(b[0].is_shared() for b in batches)
    assert not any(w.is_alive() for w in it._workers)
    del batches
    assert _shm_names(pids + [os.getpid()]) == []


def test_worker_info_seeds_and_init_fn():
    def run(seed):
        dl = sud.DataLoader(_Probe(), batch_size=2, num_workers=2, generator=tessera.Generator().manual_seed(seed),
                            worker_init_fn=_init_fn)
        return [b for b in dl]
    first = run(4)
    flat = [(int(b[0][k]), int(b[1][k]), int(b[2][k])) for b in first for k in range(2)]
    assert [i for i, _, _ in flat] == list(range(12))
    seeds = {w: s for _, w, s in flat}
    assert set(seeds) == {0, 1} and seeds[1] == seeds[0] + 1
    assert all(int(n) == 2 for b in first for n in b[6]) and first[0][7] == ["_Probe", "_Probe"]
    # worker_init_fn ran in the worker: it seeded python's RNG with 1000 + id after the loader did
    random.seed(1000)
    r0 = random.random()
    assert [b[5][k].item() for b in first for k in range(2) if int(b[1][k]) == 0][0] == r0
    again = run(4)
    for a, b in zip(first, again):
        assert tessera.equal(a[4], b[4])
    assert not tessera.equal(first[0][4], run(5)[0][4])


def _init_fn(worker_id):
    info = sud.get_worker_info()
    assert info.id == worker_id
    random.seed(1000 + worker_id)


def test_iterable_dataset_sharded_by_workers():
    out = list(sud.DataLoader(_Range(0, 11), batch_size=2, num_workers=2))
    values = sorted(v for b in out for v in b.tolist())
    assert values == list(range(11))
    # worker 0 has 0..5, worker 1 has 6..10; batches alternate between them
    assert out[0].tolist() == [0, 1] and out[1].tolist() == [6, 7]


def test_persistent_workers_reused():
    dl = sud.DataLoader(_Probe(), batch_size=3, num_workers=2, persistent_workers=True)
    pids = [{int(p) for b in dl for p in b[3]} for _ in range(2)]
    assert pids[0] == pids[1] and len(pids[0]) == 2
    # an epoch abandoned half way does not leak into the next one
    it = iter(dl)
    next(it)
    assert [int(i) for b in dl for i in b[0]] == list(range(12))
    workers = dl._iterator._workers
    del dl, it
    import gc
    gc.collect()
    assert not any(w.is_alive() for w in workers)


def test_timeout():
    dl = sud.DataLoader(_Faulty("sleep"), batch_size=2, num_workers=1, timeout=0.5)
    it = iter(dl)
    next(it), next(it)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.5 seconds"):
        next(it)
    assert time.monotonic() - start < 2.5
    workers = it._workers
    del it
    assert not any(w.is_alive() for w in workers)


@pytest.mark.parametrize("action,message", [("exit", "exited unexpectedly with exit code 3"),
                                            ("kill", "is killed by signal: Killed")])
def test_dead_worker_is_reported(action, message):
    it = iter(sud.DataLoader(_Faulty(action), batch_size=2, num_workers=2))
    start = time.monotonic()
    with pytest.raises(RuntimeError) as err:
        list(it)
    assert time.monotonic() - start < 5
    assert message in str(err.value)
    pids = [w.pid for w in it._workers]
    assert any(f"pid {p})" in str(err.value) for p in pids)
    assert not any(w.is_alive() for w in it._workers)


def test_worker_exception_propagates():
    with pytest.raises(ValueError) as err:
        list(sud.DataLoader(_Faulty("raise"), batch_size=2, num_workers=2))
    text = str(err.value)
    assert "Caught ValueError in DataLoader worker process 0." in text
    assert "Original Traceback" in text and "bad sample 5" in text and "__getitem__" in text
    with pytest.raises(KeyError) as err:
        list(sud.DataLoader(_Faulty("keyerror"), batch_size=2, num_workers=1))
    assert str(err.value).startswith("Caught KeyError in DataLoader worker process 0.\nOriginal")
    with pytest.raises(RuntimeError, match="Caught _NeedsTwoArgs in DataLoader worker process"):
        list(sud.DataLoader(_Faulty("custom"), batch_size=2, num_workers=1))
    # the same exception in the main process (num_workers=0) is the plain one
    with pytest.raises(ValueError, match="^bad sample 5$"):
        list(sud.DataLoader(_Faulty("raise"), batch_size=2))


def test_abandoned_iterator_shuts_down_workers():
    it = iter(sud.DataLoader(sud.TensorDataset(tessera.randn(64, 8)), batch_size=2, num_workers=2))
    next(it)
    workers, pids = it._workers, [w.pid for w in it._workers]
    del it
    assert not any(w.is_alive() for w in workers)
    assert _shm_names(pids) == []


def test_spawn_context():
    dl = sud.DataLoader(sud.TensorDataset(*tensors(tessera, 6)), batch_size=4, num_workers=1,
                        multiprocessing_context="spawn")
    same(list(dl), list(tud.DataLoader(tud.TensorDataset(*tensors(torch, 6)), batch_size=4)))


class _DiesWhenUnpickled:
    def __reduce__(self):
        return (os._exit, (7,))


class _CrashOnArrival(sud.Dataset):
    """A spawned worker dies unpickling this before it gets to the tensor."""

    def __init__(self):
        self.first = _DiesWhenUnpickled()
        self.x = tessera.ones(5)

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return self.x


def test_spawned_worker_dying_at_startup_leaks_nothing():
    it = iter(sud.DataLoader(_CrashOnArrival(), num_workers=1, multiprocessing_context="spawn"))
    with pytest.raises(RuntimeError, match="exited unexpectedly with exit code 7"):
        next(it)
    assert _shm_names([os.getpid(), it._workers[0].pid]) == []


def test_workers_warn_on_iterable_length():
    class Unsharded(sud.IterableDataset):
        def __iter__(self):
            return iter(range(3))

        def __len__(self):
            return 3
    dl = sud.DataLoader(Unsharded(), num_workers=2)
    assert len(dl) == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = list(dl)
    assert sorted(int(x) for x in out) == [0, 0, 1, 1, 2, 2]
    assert any("Length of IterableDataset" in str(w.message) for w in caught)


def test_spawn_start_failure_leaks_no_shared_memory():
    # spawn copies the dataset's tensors into handoff blocks before it finds that the lambda
    # collate_fn cannot be pickled; those blocks must not outlive the failed start
    dl = sud.DataLoader(sud.TensorDataset(tessera.randn(1000, 100)), batch_size=4, num_workers=2,
                        multiprocessing_context="spawn", collate_fn=lambda b: b)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        iter(dl)
    assert _shm_names([os.getpid()]) == []


class _PicklesOnce:
    """A collate_fn that spawn can pickle for the first worker but not the second."""
    pickled = 0

    def __call__(self, batch):
        return batch

    def __reduce__(self):
        type(self).pickled += 1
        if type(self).pickled > 1:
            raise pickle.PicklingError("second worker refused")
        return (_PicklesOnce, ())


def test_spawn_start_failure_stops_started_workers():
    _PicklesOnce.pickled = 0
    dl = sud.DataLoader(sud.TensorDataset(tessera.randn(50, 10)), num_workers=2, multiprocessing_context="spawn",
                        collate_fn=_PicklesOnce())
    started = []
    real_start = multiprocessing.context.SpawnProcess.start

    def start(self):
        started.append(self)
        real_start(self)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(multiprocessing.context.SpawnProcess, "start", start)
        with pytest.raises(pickle.PicklingError, match="second worker refused"):
            iter(dl)
    assert len(started) == 2 and started[0].exitcode is not None  # the first was stopped and joined
    assert _shm_names([os.getpid(), started[0].pid]) == []


def _collate_with_unpicklable(batch):
    # a shared-memory batch (collated in the worker), a plain tensor that would be copied
    # into a block of its own, then something that cannot be pickled at all
    return sud.default_collate(batch), tessera.arange(8.0)[::2], threading.Lock()


def test_unpicklable_batch_leaks_no_shared_memory():
    # one batch only: a prefetched second one would be in shared memory while we look
    dl = sud.DataLoader(sud.TensorDataset(tessera.randn(4, 3)), batch_size=4, num_workers=1,
                        persistent_workers=True, collate_fn=_collate_with_unpicklable)
    it = iter(dl)
    pids = [w.pid for w in it._workers]
    with pytest.raises(TypeError, match="Caught TypeError in DataLoader worker process 0 \\(sending its batch\\)"):
        next(it)
    assert all(w.is_alive() for w in it._workers)  # persistent: the loader is still up
    assert _shm_names(pids + [os.getpid()]) == []
    del dl, it
    gc.collect()
