"""The generated operator bindings and the schema-driven argument parser, with torch as
the oracle: the same calls through both, the same results, the same errors."""
import pytest
import torch

import tessera


def same(t_tessera, t_torch):
    assert t_tessera.tolist() == t_torch.tolist()
    assert str(t_tessera.dtype).split(".")[-1] == str(t_torch.dtype).split(".")[-1]
    assert tuple(t_tessera.shape) == tuple(t_torch.shape)


def pair(data, dtype=None):
    return (tessera.tensor(data, dtype=getattr(tessera, dtype)) if dtype else tessera.tensor(data),
            torch.tensor(data, dtype=getattr(torch, dtype)) if dtype else torch.tensor(data))


@pytest.mark.parametrize("expr", [
    "lib.add(a, b)", "lib.add(a, b, alpha=2)", "lib.add(input=a, other=b)", "a.add(b)", "a.add(b, alpha=3)",
    "lib.mul(a, b)", "a.mul(b)", "lib.add(a, 2)", "a.add(2.5)", "a.mul(True)",
])
def test_functions_and_methods_match_torch(expr):
    ta, pa = pair([[1, 2, 3], [4, 5, 6]])
    tb, pb = pair([10, 20, 30])
    same(eval(expr, {"lib": tessera, "a": ta, "b": tb}), eval(expr, {"lib": torch, "a": pa, "b": pb}))


def test_out_keyword_returns_the_same_object():
    ta, pa = pair([1.0, 2.0])
    out = tessera.empty(0)
    r = tessera.add(ta, ta, out=out)
    assert r is out
    same(out, torch.add(pa, pa))


def test_inplace_methods_return_self_and_share_storage():
    ta, pa = pair([1.0, 2.0, 3.0])
    v = ta.view(3)
    r = ta.add_(ta, alpha=2)
    assert r is ta
    same(ta, pa.add_(pa, alpha=2))
    same(v, pa)
    assert ta.fill_(7) is ta
    assert tessera.fill_(ta, 1) is ta
    same(ta, pa.fill_(1))


@pytest.mark.parametrize("expr", [
    "lib.empty(2, 3).shape", "lib.empty((2, 3)).shape", "lib.empty([4]).shape", "lib.empty(size=(1, 2)).shape",
    "lib.empty(2, dtype=lib.float64).dtype", "lib.empty(2, 3, device='meta').shape",
    "lib.empty_strided((2, 3), (1, 2)).stride()", "lib.empty(2, 3, 4, 5, memory_format=lib.channels_last).stride()",
    "lib.empty(3, dtype=float).dtype", "lib.empty(3, dtype=int).dtype", "lib.empty(3, dtype=bool).dtype",
])
def test_factories_match_torch(expr):
    got = eval(expr, {"lib": tessera})
    want = eval(expr, {"lib": torch})
    assert str(got).replace("tessera", "torch") == str(want)


@pytest.mark.parametrize("expr", [
    "a.view(3, 2)", "a.view(-1)", "a.view((6,))", "a.view([1, 6])", "lib.as_strided(a, (3, 2), (1, 3))",
    "a.as_strided((2, 2), (1, 2), 1)",
])
def test_views_match_torch(expr):
    ta, pa = pair([[1, 2, 3], [4, 5, 6]])
    got, want = eval(expr, {"lib": tessera, "a": ta}), eval(expr, {"lib": torch, "a": pa})
    same(got, want)
    assert got.stride() == want.stride()


# Calls that must fail the same way in both: exception type, and the message where torch's
# parser has a single signature for the function (multi-signature messages list overloads
# Tessera does not have).
BAD_CALLS = [
    ("a.add('x')", True),
    ("lib.as_strided(a, (2,), 'x')", True),
    ("a.view(2, 'x')", True),
    ("lib.as_strided(a, (2, 'x'), (1, 1))", True),
    ("lib.add(a, a, alpha='x')", True),
    ("lib.add(a, a, foo=1)", True),
    ("lib.empty_strided((2,), (1,), (1,))", True),
    ("lib.as_strided(a, (2,))", True),
    ("lib.empty(2, 3, dtype='f')", False),
    ("a.view(-1, -1)", True),
    ("lib.add(a, lib.empty(4))", True),
    ("lib.empty(2, device='gpu')", False),
    ("lib.empty(2, device='cuda:x')", True),
    ("lib.empty(2, dtype=lib.uint8).fill_(300)", True),
]


@pytest.mark.parametrize("expr,exact", BAD_CALLS)
def test_errors_match_torch(expr, exact):
    ta, pa = pair([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(Exception) as want:
        eval(expr, {"lib": torch, "a": pa})
    with pytest.raises(Exception) as got:
        eval(expr, {"lib": tessera, "a": ta})
    assert got.type.__name__ == want.type.__name__, (got.value, want.value)
    if exact:
        assert str(got.value).replace("tessera", "torch") == str(want.value)


def test_device_error_names_tesseras_devices():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, meta device type at start of device string: gpu"):
        tessera.empty(2, device="gpu")


def test_meta_tensors_through_python():
    a = tessera.empty(4, 1, 3, device="meta")
    b = tessera.empty(5, 1, dtype=tessera.float64, device="meta")
    c = a + b
    assert c.is_meta and tuple(c.shape) == (4, 5, 3) and c.dtype == tessera.float64


def test_dispatch_dump_lists_registered_keys():
    dump = tessera._C._dispatch_dump("aten::add.Tensor")
    lines = dump.splitlines()
    assert "schema: aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in lines
    keyed = [line for line in lines if ": registered at " in line and not line.startswith("debug")]
    keys = {line.split(":")[0] for line in keyed}
    assert {"CPU", "Meta"} <= keys
    for line in keyed:
        assert line.split(" registered at ")[1].split(" ")[0].rsplit(":", 1)[1].isdigit()
    with pytest.raises(RuntimeError, match="no operator named aten::nope"):
        tessera._C._dispatch_dump("aten::nope")


def test_aten_ops_through_tessera_ops():
    a = tessera.tensor([1.0, 2.0])
    assert tessera.ops.aten.add(a, a).tolist() == [2.0, 4.0]
    assert tessera.ops.aten.add.Tensor(a, a, alpha=3).tolist() == [4.0, 8.0]
    assert "Tensor" in tessera.ops.aten.add.overloads()
    with pytest.raises(AttributeError):
        tessera.ops.aten.no_such_op
