"""DataPipe graphs (graph.traverse_dps, graph_settings), Shuffler's laws, and the DataLoader
over DataPipes (shuffling and sharding per worker, 0 and 2 workers, persistent workers)
against torch 1.13. Shuffled orders come from each library's own generator, so they are
compared as laws (multisets, determinism under a seed), not item by item."""
import collections
import pickle
import warnings

import pytest
import torch
import torch.utils.data as tud
import torch.utils.data.backward_compatibility as t_bc
import torch.utils.data.graph as t_graph
import torch.utils.data.graph_settings as t_gs
from torch.utils.data.datapipes import iter as t_iter, map as t_map

import tessera
import tessera.utils.data as sud
import tessera.utils.data.backward_compatibility as s_bc
import tessera.utils.data.graph as s_graph
import tessera.utils.data.graph_settings as s_gs
from tessera.utils.data.datapipes import iter as s_iter, map as s_map
from test_datapipes import add1, both, is_even, mod3, plain

NS = collections.namedtuple("NS", "lib data it mp graph gs bc")
LIBS = {"torch": NS(torch, tud, t_iter, t_map, t_graph, t_gs, t_bc),
        "tessera": NS(tessera, sud, s_iter, s_map, s_graph, s_gs, s_bc)}
TIMEOUT = 60  # seconds a DataLoader waits for a worker's batch before failing the test


def each(fn):
    """fn(ns) for torch and tessera: the outcomes must agree; returns torch's."""
    return both(lambda data, it, mp: fn(LIBS["torch" if data is tud else "tessera"]))


def shape(graph):
    """A traverse_dps graph as nested (class name, children), ids left out."""
    return [(type(dp).__name__, shape(sub)) for dp, sub in graph.values()]


def loader_items(ns, dp, **kwargs):
    if kwargs.get("num_workers", 0) > 0:
        kwargs.setdefault("timeout", TIMEOUT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [plain(x) for x in ns.data.DataLoader(dp, **kwargs)]


def counts(items):
    return collections.Counter(repr(x) for x in items)


# ----------------------------------------------------------------------------- graphs

def test_traverse_shapes():
    def run(ns):
        it = ns.it
        src = it.IterableWrapper(range(6))
        a, b = src.fork(2)
        c0, c1 = it.IterableWrapper(range(4)).demux(2, is_even)
        pipes = [src.map(add1).filter(is_even).batch(2),
                 a.zip(b).shuffle(),
                 c0.concat(c1, it.IterableWrapper([1])).sharding_filter(),
                 it.Multiplexer(src, src.map(add1)),
                 ns.mp.SequenceWrapper(range(3)).map(add1).batch(2),
                 ns.mp.SequenceWrapper(range(3)).shuffle()]
        return [shape(ns.graph.traverse_dps(p)) for p in pipes]
    each(run)


def test_traverse_deprecated_form():
    def run(ns):
        dp = ns.it.IterableWrapper(range(3)).map(add1)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = [shape(ns.graph.traverse(dp)), shape(ns.graph.traverse(dp, only_datapipe=True))]
        return out, [(x.category.__name__, str(x.message)) for x in w]
    each(run)

    for ns in LIBS.values():  # every attribute must pickle without only_datapipe
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dp = ns.it.IterableWrapper(range(3)).map(lambda x: x)
            with pytest.raises((pickle.PicklingError, AttributeError)):
                ns.graph.traverse(dp)
            assert len(shape(ns.graph.traverse_dps(dp))[0][1]) == 1
        with pytest.raises(RuntimeError, match="Expected `IterDataPipe` or `MapDataPipe`"):
            ns.graph.traverse_dps([1])


def test_get_all_graph_pipes_and_sharding():
    def run(ns):
        dp = ns.it.IterableWrapper(range(10)).shuffle().set_shuffle(False).sharding_filter().map(add1)
        names = [type(p).__name__ for p in ns.gs.get_all_graph_pipes(ns.graph.traverse_dps(dp))]
        shards = []
        for i in range(3):
            ns.gs.apply_sharding(dp, 3, i)
            shards.append((list(dp), len(dp)))
        return names, shards
    each(run)

    def twice(ns):
        dp = ns.it.IterableWrapper(range(4)).sharding_filter().sharding_filter()
        ns.gs.apply_sharding(dp, 2, 0)
    assert each(twice)[1] == "RuntimeError"


def test_apply_shuffle_settings():
    def run(ns):
        dp = ns.it.IterableWrapper(range(8)).shuffle().map(add1)
        same = ns.gs.apply_shuffle_settings(dp, shuffle=False)
        off = list(same)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            plain_dp = ns.it.IterableWrapper(range(8))
            untouched = ns.gs.apply_shuffle_settings(plain_dp, shuffle=None) is plain_dp
            added = ns.gs.apply_shuffle_settings(plain_dp, shuffle=True)
        return [same is dp, off, untouched, type(added).__name__, sorted(added), [str(x.message) for x in w]]
    each(run)


def test_apply_random_seed_laws():
    for ns in LIBS.values():
        def order(seed):
            dp = ns.it.IterableWrapper(range(40)).shuffle().map(add1)
            g = ns.lib.Generator()
            g.manual_seed(seed)
            ns.gs.apply_random_seed(dp, g)
            return list(dp)
        assert order(1) == order(1)
        assert order(1) != order(2)
        assert sorted(order(3)) == list(range(1, 41))


# ---------------------------------------------------------------------------- shuffler

def test_shuffler_seeded_by_global_generator():
    for ns in LIBS.values():
        def epochs(seed):
            ns.lib.manual_seed(seed)
            dp = ns.it.IterableWrapper(range(50)).shuffle(buffer_size=16)
            return [list(dp), list(dp)]
        first = epochs(0)
        assert first == epochs(0)  # determined by the global seed
        assert first[0] != first[1]  # a fresh seed every epoch
        assert all(sorted(e) == list(range(50)) for e in first)
        m = ns.mp.SequenceWrapper(range(30)).shuffle()
        ns.lib.manual_seed(5)
        a = list(m)
        ns.lib.manual_seed(5)
        assert list(m) == a and sorted(a) == list(range(30))


def test_shuffler_set_seed_matches_torch_exactly():
    # set_seed feeds Python's random.Random directly: the same seed gives torch's order.
    def run(ns):
        dp = ns.it.IterableWrapper(range(100)).shuffle(buffer_size=10)
        out = [list(dp.set_seed(s)) for s in (0, 1, 2**40)]
        out.append(list(ns.mp.SequenceWrapper(range(20)).shuffle().set_seed(9)))
        return out
    each(run)


# -------------------------------------------------------------------------- DataLoader

@pytest.mark.parametrize("workers", [0, 2])
def test_loader_deterministic_pipes_match(workers):
    def run(ns):
        it = ns.it
        return [loader_items(ns, it.IterableWrapper(range(10)).map(add1), batch_size=3, num_workers=workers),
                loader_items(ns, it.IterableWrapper(range(11)).sharding_filter(), batch_size=2,
                             num_workers=workers),
                loader_items(ns, it.IterableWrapper(range(9)).sharding_filter().batch(2), batch_size=None,
                             num_workers=workers),
                loader_items(ns, it.IterableWrapper(range(7)).shuffle().sharding_filter(), shuffle=False,
                             num_workers=workers),
                loader_items(ns, ns.mp.SequenceWrapper(range(7)).map(add1), batch_size=2, num_workers=workers)]
    each(run)


@pytest.mark.parametrize("workers", [0, 2])
def test_loader_shuffled_pipes_same_multiset(workers):
    results = {}
    for name, ns in LIBS.items():
        dp = ns.it.IterableWrapper(range(30)).shuffle().sharding_filter().map(add1)
        got = loader_items(ns, dp, batch_size=None, num_workers=workers)
        got2 = loader_items(ns, dp, batch_size=4, shuffle=True, num_workers=workers)
        mp_got = loader_items(ns, ns.mp.SequenceWrapper(range(12)), batch_size=None, shuffle=True,
                              num_workers=workers)
        results[name] = [counts(got), counts(sum((b[2] for b in got2), [])), counts(mp_got)]
        assert got != sorted(got)  # shuffled (30! orders; sorted is one of them)
    assert results["tessera"] == results["torch"]
    assert results["torch"][0] == counts(range(1, 31))  # sharded, every item exactly once


@pytest.mark.parametrize("workers", [0, 2])
def test_loader_seed_laws(workers):
    for ns in LIBS.values():
        dp = ns.it.IterableWrapper(range(40)).shuffle().sharding_filter()

        def run(seed):
            g = ns.lib.Generator()
            g.manual_seed(seed)
            return loader_items(ns, dp, batch_size=None, num_workers=workers, generator=g)
        a = run(7)
        assert run(7) == a
        assert run(8) != a
        ns.lib.manual_seed(3)
        b = loader_items(ns, dp, batch_size=None, num_workers=workers)
        ns.lib.manual_seed(3)
        assert loader_items(ns, dp, batch_size=None, num_workers=workers) == b


def test_loader_persistent_workers_reshuffle_each_epoch():
    for ns in LIBS.values():
        dp = ns.it.IterableWrapper(range(40)).shuffle().sharding_filter()
        loader = ns.data.DataLoader(dp, batch_size=None, num_workers=2, persistent_workers=True, timeout=TIMEOUT)
        epochs = [[int(x) for x in loader] for _ in range(3)]
        assert all(sorted(e) == list(range(40)) for e in epochs)
        assert epochs[0] != epochs[1] != epochs[2]


def test_loader_shuffle_true_without_shuffler():
    # torch 1.13 warns that it appends a Shuffler, then drops it; tessera keeps it.
    for ns in LIBS.values():
        dp = ns.it.IterableWrapper(range(20))
        with pytest.warns(UserWarning, match="does not contain a `Shuffler`"):
            loader = ns.data.DataLoader(dp, batch_size=None, shuffle=True)
        assert sorted(int(x) for x in loader) == list(range(20))
    ns = LIBS["tessera"]
    ns.lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [int(x) for x in ns.data.DataLoader(dp, batch_size=None, shuffle=True)] != list(range(20))


def test_loader_len_and_worker_info():
    def run(ns):
        out = [len(ns.data.DataLoader(ns.it.IterableWrapper(range(10)).sharding_filter(), batch_size=3)),
               len(ns.data.DataLoader(ns.it.IterableWrapper(range(10)), batch_size=3, drop_last=True)),
               len(ns.data.DataLoader(ns.mp.SequenceWrapper(range(10)), batch_size=4))]
        try:
            len(ns.data.DataLoader(ns.it.IterableWrapper(range(10)).filter(is_even)))
        except TypeError:
            out.append("TypeError")
        return out
    each(run)

    # batch_size=None: default_convert turns the tuples into lists, as torch 1.13 does.
    want = sorted(plain([i % 2, ["ShardingFilterIterDataPipe", 2, i % 2], i]) for i in range(8))
    for ns in LIBS.values():
        dp = ns.it.IterableWrapper(range(8)).sharding_filter().map(_worker_and_item)
        assert sorted(loader_items(ns, dp, batch_size=None, num_workers=2)) == want


def _worker_and_item(x):
    # Which worker read x, and how that worker's copy of the sharding_filter was set.
    info = (torch.utils.data.get_worker_info() or tessera.utils.data.get_worker_info())
    shard = [p for p in _all_pipes(info.dataset) if type(p).__name__ == "ShardingFilterIterDataPipe"][0]
    return info.id, (type(shard).__name__, shard.num_of_instances, shard.instance_id), x


def _all_pipes(dp):
    found, todo = [], [dp]
    while todo:
        p = todo.pop()
        found.append(p)
        for attr in ("datapipe", "source_datapipe", "_datapipe"):
            if hasattr(type(p), "__dict__") and attr in getattr(p, "__dict__", {}):
                todo.append(p.__dict__[attr])
    return found


def test_dataloader2_over_pipes():
    def run(ns):
        dp = ns.it.IterableWrapper(range(10)).sharding_filter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = [[plain(b) for b in ns.data.DataLoader2(dp, batch_size=3)],
                   [plain(b) for b in ns.data.DataLoader2(dp, batch_size=4, drop_last=True, num_workers=2,
                                                          timeout=TIMEOUT)],
                   [plain(b) for b in ns.data.DataLoader2(ns.mp.SequenceWrapper(range(5)), batch_size=2)],
                   sorted(int(x) for b in ns.data.DataLoader2(dp.shuffle(), batch_size=5, shuffle=True)
                          for x in b)]
        return out
    each(run)

    def outside(ns):
        ns.data.DataLoader2(ns.it.IterableWrapper(range(4)), batch_size=2, batch_outside_worker=True)
    each(outside)

    def thread_mode_inside(ns):  # batching inside the pipe: a DataLoader, whatever the mode
        return type(ns.data.DataLoader2(ns.it.IterableWrapper(range(4)), parallelism_mode="thread")).__name__
    each(thread_mode_inside)
    # batch_outside_worker with threads: test_datapipe_communication.py


def test_backward_compatibility_worker_init_fn_warns():
    def run(ns):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ns.bc.worker_init_fn(0)
        return [str(x.message) for x in w]
    each(run)


def test_loader_spawned_workers_get_sharded_seeded_copies():
    got = {}
    for name, ns in LIBS.items():
        dp = ns.it.IterableWrapper(range(12)).shuffle().sharding_filter()
        got[name] = counts(loader_items(ns, dp, batch_size=None, num_workers=2, multiprocessing_context="spawn"))
    assert got["tessera"] == got["torch"] == counts(range(12))
