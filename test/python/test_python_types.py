"""Printing options and suffixes, and the type queries of torch's top level, against
torch: set_printoptions (precision, threshold, edgeitems, linewidth, profiles, sci_mode),
requires_grad / grad_fn suffixes, every dtype of c10, finfo / iinfo, get/set_default_dtype
(and what follows the default), is_tensor / is_floating_point / is_complex, result_type,
promote_types, can_cast, tessera.Size and tessera.device."""
import pytest
import torch

import tessera


def _norm(s):
    return s.replace("torch.", "tessera.")


@pytest.fixture
def printoptions():
    yield
    torch.set_printoptions(profile="default", sci_mode=None)
    tessera.set_printoptions(profile="default", sci_mode=None)


PRINT_OPTIONS = [
    dict(precision=2), dict(precision=8), dict(threshold=5), dict(threshold=5, edgeitems=1), dict(linewidth=30),
    dict(profile="short"), dict(profile="full"), dict(sci_mode=True), dict(sci_mode=False),
    dict(precision=1, sci_mode=True, linewidth=40),
]
TENSORS = [
    "[1.123456789, -2.5, 3.0]", "[[i * 0.7 for i in range(12)] for _ in range(9)]", "[1e-6, 1.0, 250.0]", "[1, 2, 3]",
    "[[1.5 + 2j, -0.25j]]", "list(range(3000))", "[1e10, 1.0]", "[[0.001, 2.0], [3.5, -4.25]]",
]


@pytest.mark.parametrize("options", PRINT_OPTIONS, ids=[str(o) for o in PRINT_OPTIONS])
def test_set_printoptions_matches_torch(options, printoptions):
    torch.set_printoptions(**options)
    tessera.set_printoptions(**options)
    for data in TENSORS:
        t = eval(f"torch.tensor({data})", {"torch": torch})
        s = eval(f"tessera.tensor({data})", {"tessera": tessera})
        assert repr(s) == _norm(repr(t)), data


def test_edgeitems_zero_prints_the_size(printoptions):
    # Current torch's _str_intern adds size=... when edgeitems is 0 (1.13 does not).
    tessera.set_printoptions(edgeitems=0, threshold=3)
    assert repr(tessera.tensor([1.0, 2.0, 3.0])) == "tensor([1., 2., 3.], size=(3,))"


def test_autograd_suffixes_match_torch():
    exprs = [
        "L.tensor([1.5, 2.0], requires_grad=True)",
        "L.tensor([1.5, 2.0], requires_grad=True) * 2",
        "L.tensor([[1.5, 2.0]], requires_grad=True).sum()",
        "L.tensor([1.5, 2.0], dtype=L.float64, requires_grad=True).exp()",
        "L.tensor([1.5, 2.0], requires_grad=True)[0]",
        "L.tensor([1.5, 2.0], requires_grad=True).detach()",
        "L.zeros(0, 2, requires_grad=True)",
        "L.tensor([float(i) for i in range(40)], requires_grad=True) + 1",
    ]
    for e in exprs:
        assert repr(eval(e, {"L": tessera})) == _norm(repr(eval(e, {"L": torch}))), e


def test_every_c10_dtype_is_exposed_with_torchs_names():
    names = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128",
             "bool", "qint8", "quint8", "qint32", "bfloat16", "float8_e5m2", "float8_e4m3fn"]
    aliases = {"half": "float16", "float": "float32", "double": "float64", "cfloat": "complex64",
               "cdouble": "complex128", "short": "int16", "int": "int32", "long": "int64"}
    for n in names:
        d = getattr(tessera, n)
        assert isinstance(d, tessera.dtype) and repr(d) == f"tessera.{n}"
        if hasattr(torch, n):
            assert d.is_floating_point == getattr(torch, n).is_floating_point
            assert d.is_complex == getattr(torch, n).is_complex
    for alias, n in aliases.items():
        assert getattr(tessera, alias) is getattr(tessera, n)


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_finfo_matches_torch(name):
    f, g = tessera.finfo(getattr(tessera, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(f, attr) == getattr(g, attr), attr
    assert repr(f) == repr(g)


def test_finfo_of_float8_from_the_formats_definitions():
    # torch 1.13 has no float8: the OCP FP8 definitions (e4m3fn: no infinities, max 448;
    # e5m2: IEEE-like, max 57344).
    e4 = tessera.finfo(tessera.float8_e4m3fn)
    assert (e4.bits, e4.eps, e4.max, e4.tiny) == (8, 0.125, 448.0, 2.0 ** -6)
    e5 = tessera.finfo(tessera.float8_e5m2)
    assert (e5.bits, e5.eps, e5.max, e5.tiny) == (8, 0.25, 57344.0, 2.0 ** -14)
    assert tessera.finfo().dtype == "float32"
    with pytest.raises(TypeError):
        tessera.finfo(tessera.int32)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(name):
    i, j = tessera.iinfo(getattr(tessera, name)), torch.iinfo(getattr(torch, name))
    assert (i.bits, i.min, i.max, i.dtype) == (j.bits, j.min, j.max, j.dtype)
    with pytest.raises(TypeError):
        tessera.iinfo(tessera.float32)


def test_default_dtype_follows_through_like_torch():
    try:
        for name in ("float64", "float32"):
            torch.set_default_dtype(getattr(torch, name))
            tessera.set_default_dtype(getattr(tessera, name))
            assert repr(tessera.get_default_dtype()) == _norm(repr(torch.get_default_dtype()))
            exprs = ["L.tensor([1.5]).dtype", "L.tensor([1j]).dtype", "L.zeros(2).dtype", "L.ones(1).dtype",
                     "L.rand(2).dtype", "L.arange(0., 2.).dtype", "L.linspace(0, 1, 3).dtype", "L.full((1,), 2.5).dtype",
                     "(L.tensor([1]) / 2).dtype", "(L.tensor([1]) + 1.5).dtype", "L.tensor([1]).sqrt().dtype",
                     "L.empty(1).dtype", "L.tensor([]).dtype", "L.Tensor([1]).dtype", "L.result_type(1, 2.5)",
                     "repr(L.tensor([1.5, 2.0]))", "repr(L.tensor([1.5], dtype=L.float32))"]
            for e in exprs:
                assert _norm(repr(eval(e, {"L": torch}))) == repr(eval(e, {"L": tessera})), (name, e)
        with pytest.raises(TypeError):
            tessera.set_default_dtype(tessera.int64)
    finally:
        torch.set_default_dtype(torch.float32)
        tessera.set_default_dtype(tessera.float32)


def test_type_queries_match_torch():
    dtypes = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
              "complex64", "complex128"]
    for a in dtypes:
        for b in dtypes:
            ta, tb, sa, sb = (getattr(torch, a), getattr(torch, b), getattr(tessera, a), getattr(tessera, b))
            assert repr(tessera.promote_types(sa, sb)) == _norm(repr(torch.promote_types(ta, tb))), (a, b)
            assert tessera.can_cast(sa, sb) == torch.can_cast(ta, tb), (a, b)
    operands = ["L.tensor([1])", "L.tensor([1.5])", "L.tensor(2, dtype=L.uint8)", "L.tensor([1], dtype=L.int8)",
                "1", "2.5", "True", "1j", "L.tensor([True])", "L.tensor(1.5, dtype=L.float64)"]
    for x in operands:
        for y in operands:
            if not (x.startswith("L") or y.startswith("L")):
                continue
            e = f"L.result_type({x}, {y})"
            assert repr(eval(e, {"L": tessera})) == _norm(repr(eval(e, {"L": torch}))), e
    for e in ["L.is_tensor(L.ones(1))", "L.is_tensor([1])", "L.is_floating_point(L.ones(1))",
              "L.is_floating_point(L.ones(1, dtype=L.int32))", "L.is_complex(L.tensor([1j]))", "L.ones(1).is_complex()",
              "L.tensor([1.]).is_floating_point()", "L.tensor([1], dtype=L.uint8).is_signed()", "L.tensor([1]).is_signed()"]:
        assert eval(e, {"L": tessera}) == eval(e, {"L": torch}), e


def test_size_and_device():
    s = tessera.ones(2, 3).shape
    assert isinstance(s, tuple) and isinstance(s, tessera.Size) and s == (2, 3)
    assert repr(s) == "tessera.Size([2, 3])" and s.numel() == 6 and s[1:] == tessera.Size([3])
    assert tessera.Size([1, 2]) + tessera.Size([3]) == (1, 2, 3)
    d = tessera.device("cuda:1")
    assert (d.type, d.index, str(d), repr(d)) == ("cuda", 1, "cuda:1", "device(type='cuda', index=1)")
    assert tessera.device("cpu") == tessera.device("cpu") and hash(tessera.device("cpu")) == hash(tessera.device("cpu"))


def test_printing_a_large_tensor_reads_only_its_edges():
    import time
    t = torch.arange(4_000_000.0).reshape(4000, 1000)
    s = tessera.arange(4_000_000.0).reshape(4000, 1000)
    start = time.perf_counter()
    text = repr(s)
    elapsed = time.perf_counter() - start
    assert text == _norm(repr(t))
    assert elapsed < 0.5, f"repr of a 4M-element tensor took {elapsed:.2f} s"
