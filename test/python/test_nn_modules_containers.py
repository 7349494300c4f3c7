"""Containers (Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict) against
torch.nn 1.13: each scenario runs once with torch and once with tessera and records what
it observes (child names, reprs, lengths, state_dict keys, errors); the records must match."""
from collections import OrderedDict

import pytest
import torch

import tessera


def norm_text(s):
    return str(s).replace("torch.", "tessera.")


def run_scenario(fn):
    """fn(lib, log) with lib = torch, then tessera; the two logs must be equal."""
    logs = {}
    for lib in (torch, tessera):
        log = []
        fn(lib, log)
        logs[lib.__name__] = [norm_text(x) for x in log]
    assert logs["tessera"] == logs["torch"]


def raises(log, call):
    """Records the exception class and message of call() (which must raise)."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 (any class: it is compared with torch's)
        log.append(f"{type(e).__name__}: {e}")
    else:
        log.append("no error")


def lin(lib, i, o=2):
    return lib.nn.Linear(i, o)


def describe(module, log):
    log.append(repr(module))
    log.append(len(module))
    log.append([name for name, _ in module.named_children()])
    log.append(list(module.state_dict().keys()))


def test_sequential_building_and_forward():
    def scenario(lib, log):
        nn = lib.nn
        seq = nn.Sequential(lin(lib, 3, 4), nn.Flatten(), lin(lib, 4, 2))
        describe(seq, log)
        named = nn.Sequential(OrderedDict([("first", lin(lib, 3, 4)), ("second", nn.Identity())]))
        describe(named, log)
        log.append(named.first.in_features)
        lib.manual_seed(0)
        x = lib.ones(2, 3)
        log.append(tuple(seq(x).shape))
        log.append(list(seq[0](x).shape) == list(seq[:1](x).shape))
        log.append(repr(nn.Sequential()))
    run_scenario(scenario)


def test_sequential_indexing_and_mutation():
    def scenario(lib, log):
        nn = lib.nn
        seq = nn.Sequential(*[lin(lib, i) for i in range(1, 6)])
        log.append(seq[-1].in_features)
        log.append(seq[2].in_features)
        sub = seq[1:4]
        log.append(type(sub).__name__)
        describe(sub, log)                 # keys of the slice are the original ones
        log.append(sub[0] is seq[1])
        raises(log, lambda: seq[5])
        raises(log, lambda: seq[-6])
        seq[0] = lin(lib, 10)
        log.append(seq[0].in_features)
        del seq[1]
        describe(seq, log)                 # renumbered
        del seq[::2]
        describe(seq, log)
        seq.append(lin(lib, 20))
        seq.insert(0, lin(lib, 30))
        seq.insert(-1, lin(lib, 40))
        seq.extend([lin(lib, 50), nn.Identity()])
        describe(seq, log)
        raises(log, lambda: seq.insert(10, lin(lib, 1)))
        raises(log, lambda: seq.insert(0, 3))
        popped = seq.pop(1)
        log.append(popped.in_features)
        describe(seq, log)
        log.append([m.in_features for m in seq if isinstance(m, nn.Linear)])
        log.append("0" in dir(seq))
    run_scenario(scenario)


def test_sequential_operators():
    def scenario(lib, log):
        nn = lib.nn
        a = nn.Sequential(lin(lib, 1), lin(lib, 2))
        b = nn.Sequential(lin(lib, 3))
        c = a + b
        describe(c, log)
        log.append(c[2] is b[0])
        raises(log, lambda: a + nn.ModuleList([lin(lib, 4)]))
        a += b
        describe(a, log)
        d = b * 3
        describe(d, log)
        log.append(d[0] is d[2])
        describe(2 * b, log)
        raises(log, lambda: b * 0)
        raises(log, lambda: b * 1.5)
        b *= 2
        describe(b, log)
    run_scenario(scenario)


def test_module_list():
    def scenario(lib, log):
        nn = lib.nn
        ml = nn.ModuleList([lin(lib, 1), lin(lib, 2)])
        describe(ml, log)
        ml.append(lin(lib, 3))
        ml.extend([lin(lib, 4), lin(lib, 5)])
        ml += [lin(lib, 6)]
        ml.insert(1, lin(lib, 7))
        describe(ml, log)
        log.append([m.in_features for m in ml])
        log.append(ml[-1].in_features)
        sl = ml[1:5:2]
        log.append(type(sl).__name__)
        describe(sl, log)
        ml[0] = lin(lib, 8)
        del ml[2]
        del ml[-2:]
        describe(ml, log)
        log.append(ml.pop(0).in_features)
        describe(ml, log)
        both = ml + nn.ModuleList([lin(lib, 9)])
        describe(both, log)
        raises(log, lambda: ml[10])
        raises(log, lambda: ml.extend(3))
        raises(log, lambda: ml.__setitem__(-10, lin(lib, 1)))
        log.append(repr(nn.ModuleList()))
        log.append(len(list(ml.parameters())))
    run_scenario(scenario)


def test_module_list_repr_folds_repeats_like_current_torch():
    # torch >= 2.0 prints runs of identical children once; 1.13 printed them all.
    nn = tessera.nn
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2), nn.Flatten(),
                        nn.Sequential(nn.Linear(1, 1)), nn.Sequential(nn.Linear(1, 1))])
    assert repr(ml) == ("ModuleList(\n"
                        "  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
                        "  (3): Flatten(start_dim=1, end_dim=-1)\n"
                        "  (4-5): 2 x Sequential(\n"
                        "    (0): Linear(in_features=1, out_features=1, bias=True)\n"
                        "  )\n"
                        ")")


def test_module_dict():
    def scenario(lib, log):
        nn = lib.nn
        md = nn.ModuleDict({"b": lin(lib, 1), "a": lin(lib, 2)})
        describe(md, log)
        md["c"] = lin(lib, 3)
        md.update([("d", lin(lib, 4)), ("a", lin(lib, 5))])
        md.update(OrderedDict([("e", nn.Identity())]))
        md.update(nn.ModuleDict({"f": nn.Flatten()}))
        describe(md, log)
        log.append(list(md.keys()))
        log.append([k for k in md])
        log.append([type(v).__name__ for v in md.values()])
        log.append([k for k, _ in md.items()])
        log.append(("a" in md, "z" in md))
        log.append(md["a"].in_features)
        log.append(type(md.pop("b")).__name__)
        del md["c"]
        describe(md, log)
        raises(log, lambda: md.update(3))
        raises(log, lambda: md.update([("x", lin(lib, 1), 3)]))
        raises(log, lambda: md.update([3]))
        raises(log, lambda: md.__setitem__("x.y", lin(lib, 1)))
        raises(log, lambda: md.__setitem__("g", 3))
        md.clear()
        describe(md, log)
    run_scenario(scenario)


def test_parameter_list():
    def scenario(lib, log):
        nn = lib.nn
        pl = nn.ParameterList([lib.ones(2, 3), nn.Parameter(lib.zeros(4))])
        pl.append(lib.ones(1, dtype=lib.float64))
        pl.extend([nn.Parameter(lib.ones(2, 2), requires_grad=False)])
        pl += [lib.ones(5)]
        describe(pl, log)
        log.append([type(p).__name__ for p in pl])
        log.append([p.requires_grad for p in pl])
        log.append(len(list(pl.parameters())))
        sl = pl[1:4]
        log.append(type(sl).__name__)
        describe(sl, log)
        log.append(sl[0] is pl[1])
        pl[0] = lib.zeros(7)
        log.append(tuple(pl[0].shape))
        log.append(type(pl[-1]).__name__)
        raises(log, lambda: pl[5])
        raises(log, lambda: pl.extend(lib.ones(2)))
        raises(log, lambda: pl.extend(3))
        raises(log, lambda: pl(1))
        mixed = nn.ParameterList([lib.ones(1), "text", 3])
        describe(mixed, log)
    run_scenario(scenario)


def test_parameter_dict():
    def scenario(lib, log):
        nn = lib.nn
        pd = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(3, 1))})
        describe(pd, log)                  # a plain dict is taken in sorted order
        pd["c"] = lib.ones(1, dtype=lib.float64)
        pd.update(OrderedDict([("z", lib.ones(1)), ("d", lib.ones(2))]))
        pd.update([("e", lib.ones(3))])
        describe(pd, log)
        log.append(list(pd.keys()))
        log.append(list(reversed(pd)))
        log.append([type(v).__name__ for v in pd.values()])
        log.append([k for k, _ in pd.items()])
        log.append(("a" in pd, "q" in pd, pd.get("q") is None))
        log.append(tuple(pd.pop("b").shape))
        log.append(pd.popitem()[0])
        log.append(tuple(pd.setdefault("f", lib.ones(4)).shape))
        log.append(tuple(pd.setdefault("a", lib.ones(9)).shape))
        copy = pd.copy()
        log.append(list(copy.keys()))
        log.append(copy["a"] is pd["a"])
        merged = pd | nn.ParameterDict({"g": lib.ones(1)})
        log.append(list(merged.keys()))
        pd |= nn.ParameterDict({"h": lib.ones(1)})
        log.append(list(pd.keys()))
        log.append(list(pd.fromkeys(["x", "y"]).keys()))
        raises(log, lambda: pd[3])
        raises(log, lambda: pd.update(3))
        raises(log, lambda: pd.update([("x", 1, 2)]))
        raises(log, lambda: pd(1))
        del pd["a"]
        describe(pd, log)
        pd.clear()
        describe(pd, log)
        log.append(repr(nn.ParameterDict({"o": "text"})))
    run_scenario(scenario)


def test_nested_containers_traversal():
    def scenario(lib, log):
        nn = lib.nn
        net = nn.Sequential(OrderedDict([
            ("features", nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.MaxPool2d(2))),
            ("heads", nn.ModuleDict({"cls": nn.Linear(2, 3), "box": nn.ModuleList([nn.Linear(2, 4)])})),
            ("extra", nn.ParameterList([lib.ones(2)])),
        ]))
        describe(net, log)
        log.append([n for n, _ in net.named_modules()])
        log.append([n for n, _ in net.named_parameters()])
        log.append([n for n, _ in net.named_buffers()])
        log.append(sum(p.numel() for p in net.parameters()))
    run_scenario(scenario)


@pytest.mark.parametrize("cls", ["ModuleList", "Sequential"])
def test_dir_hides_indices(cls):
    layer = tessera.nn.Identity()
    m = tessera.nn.ModuleList([layer]) if cls == "ModuleList" else tessera.nn.Sequential(layer)
    assert not any(k.isdigit() for k in dir(m))
