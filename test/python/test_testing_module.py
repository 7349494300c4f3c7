"""tessera.testing against torch.testing (1.13): assert_close passes and fails on the same
inputs with the same exception type and message, assert_allclose keeps its deprecated
behaviour, make_tensor draws from torch's ranges, and the dtype-list helpers name the
same dtypes."""
import warnings

import numpy as np
import pytest
import torch

import tessera


def _outcome(fn):
    """None when fn passes, else (exception type, message with torch's names)."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001 (the type is part of what is compared)
        return type(err), str(err).replace("tessera.", "torch.")
    return None


def _same_outcome(make, **kwargs):
    """Runs assert_close in both libraries on the inputs make(lib) builds; returns the
    shared outcome after checking they agree."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _outcome(lambda: tessera.testing.assert_close(*make(tessera), **kwargs))
        theirs = _outcome(lambda: torch.testing.assert_close(*make(torch), **kwargs))
    assert ours == theirs
    return ours


NAN, INF = float("nan"), float("inf")

# id -> (inputs built for one library, assert_close's keyword arguments, expected to pass)
CASES = {
    "equal": (lambda L: (L.tensor([1., 2.]), L.tensor([1., 2.])), {}, True),
    "within_float32_default": (lambda L: (L.tensor([1.0000001]), L.tensor([1.])), {}, True),
    "mismatch_1d": (lambda L: (L.tensor([1., 2., 3.]), L.tensor([1., 4., 5.])), {}, False),
    "mismatch_2d_index": (lambda L: (L.tensor([[1., 2.], [3., 4.]]), L.tensor([[1., 2.], [3., 9.]])), {}, False),
    "nan_scalar": (lambda L: (L.tensor(NAN), L.tensor(NAN)), {}, False),
    "nan_scalar_equal_nan": (lambda L: (L.tensor(NAN), L.tensor(NAN)), {"equal_nan": True}, True),
    "nan_in_vector": (lambda L: (L.tensor([1., NAN]), L.tensor([1., 2.])), {}, False),
    "inf_equal": (lambda L: (L.tensor([INF, -INF]), L.tensor([INF, -INF])), {}, True),
    "inf_sign": (lambda L: (L.tensor([INF]), L.tensor([-INF])), {}, False),
    "int_mismatch_is_equality": (lambda L: (L.tensor([1, 2, 3]), L.tensor([1, 2, 4])), {}, False),
    "int_scalar": (lambda L: (L.tensor(3), L.tensor(5)), {}, False),
    "bool_tensors": (lambda L: (L.tensor([True, False]), L.tensor([True, True])), {}, False),
    "dtype_mismatch": (lambda L: (L.tensor([1., 2.]), L.tensor([1., 2.], dtype=L.float64)), {}, False),
    "dtype_unchecked": (lambda L: (L.tensor([1., 2.]), L.tensor([1., 2.], dtype=L.float64)), {"check_dtype": False},
                        True),
    "dtype_unchecked_int_float": (lambda L: (L.tensor([1, 2]), L.tensor([1., 2.5])), {"check_dtype": False}, False),
    "shape_mismatch": (lambda L: (L.ones(2, 3), L.ones(3, 2)), {}, False),
    "stride_ignored": (lambda L: (L.ones(3, 4).t(), L.ones(4, 3)), {}, True),
    "stride_checked": (lambda L: (L.ones(3, 4).t(), L.ones(4, 3)), {"check_stride": True}, False),
    "only_rtol": (lambda L: (L.ones(2), L.ones(2)), {"rtol": 1e-3}, False),
    "only_atol": (lambda L: (L.ones(2), L.ones(2)), {"atol": 1e-3}, False),
    "custom_tolerance_pass": (lambda L: (L.tensor([1.05]), L.tensor([1.])), {"rtol": 0.0, "atol": 0.1}, True),
    "custom_tolerance_fail": (lambda L: (L.tensor([1.05, 1.0]), L.tensor([1., 1.])), {"rtol": 0.01, "atol": 0.01},
                              False),
    "exact_float": (lambda L: (L.tensor([1.0, 2.0]), L.tensor([1.0, 2.001])), {"rtol": 0, "atol": 0}, False),
    "float16_default": (lambda L: (L.tensor([1.0], dtype=L.float16), L.tensor([1.0009765625], dtype=L.float16)), {},
                        True),
    "float16_fail": (lambda L: (L.tensor([1.0], dtype=L.float16), L.tensor([1.01], dtype=L.float16)), {}, False),
    "bfloat16_default": (lambda L: (L.tensor([1.0], dtype=L.bfloat16), L.tensor([1.0078125], dtype=L.bfloat16)), {},
                         True),
    "complex_mismatch": (lambda L: (L.tensor([1 + 1j, 2 + 2j]), L.tensor([1 + 1j, 2 + 3j])), {}, False),
    "complex_close": (lambda L: (L.tensor([1 + 1j], dtype=L.complex128), L.tensor([1 + 1.00000000001j],
                                                                                   dtype=L.complex128)), {}, True),
    "requires_grad_mismatch": (lambda L: (L.ones(3, dtype=L.float64, requires_grad=True),
                                          L.tensor([1., 2., 1.], dtype=L.float64, requires_grad=True)), {}, False),
    "empty": (lambda L: (L.ones(0, 3), L.ones(0, 3)), {}, True),
    "nested_sequence": (lambda L: ([L.ones(2), (L.zeros(1), L.ones(3))], [L.ones(2), (L.zeros(1), L.zeros(3))]), {},
                        False),
    "nested_mapping": (lambda L: ({"b": L.ones(1), "a": [1, L.ones(2)]}, {"a": [1, L.zeros(2)], "b": L.ones(1)}),
                       {}, False),
    "sequence_length": (lambda L: ([L.ones(1)], [L.ones(1), L.ones(1)]), {}, False),
    "mapping_keys": (lambda L: ({"a": 1, "b": 2}, {"a": 1, "c": 2}), {}, False),
    "numbers_equal": (lambda L: (3, 3), {}, True),
    "float_vs_int_checked": (lambda L: (1.0, 1), {}, False),
    "float_vs_int_unchecked": (lambda L: (1.0, 1), {"check_dtype": False}, True),
    "float_numbers_close": (lambda L: (1.0, 1.0 + 1e-9), {}, True),
    "float_numbers_far": (lambda L: (1.0, 1.1), {}, False),
    "float_number_vs_zero": (lambda L: (0.5, 0.0), {}, False),
    "int_numbers_far": (lambda L: (1, 2), {}, False),
    "complex_numbers": (lambda L: (1 + 2j, 1 + 2.5j), {}, False),
    "nan_numbers": (lambda L: (NAN, NAN), {}, False),
    "nan_numbers_equal_nan": (lambda L: (NAN, NAN), {"equal_nan": True}, True),
    "numpy_numbers": (lambda L: (np.float32(1.5), np.float64(1.5)), {}, True),
    "numpy_number_vs_float": (lambda L: (np.float64(1.5), 1.7), {}, False),
    "booleans": (lambda L: (True, False), {}, False),
    "booleans_equal": (lambda L: (np.bool_(True), True), {}, True),
    "none_pair": (lambda L: (None, None), {}, True),
    "none_vs_number": (lambda L: (None, 1), {}, False),
    "tensor_vs_number": (lambda L: (L.ones(()), 1.0), {}, False),
    "strings": (lambda L: ("a", "a"), {}, False),
    "numpy_arrays_equal": (lambda L: (np.arange(4.0), np.arange(4.0)), {}, True),
    "numpy_arrays_differ": (lambda L: (np.arange(4.0), np.arange(4.0) * 2), {}, False),
    "numpy_vs_tensor": (lambda L: (np.ones(2), L.ones(2, dtype=L.float64)), {}, False),
    "msg_string": (lambda L: (L.tensor([1., 2.]), L.tensor([1., 3.])), {"msg": "Argh"}, False),
    "msg_callable": (lambda L: ([L.tensor([1., 2.])], [L.tensor([1., 3.])]),
                     {"msg": lambda m: f"Header\n\n{m}\n\nFooter"}, False),
    "msg_not_used_for_structure": (lambda L: ([1], [1, 2]), {"msg": "custom"}, False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_assert_close_matches_torch(name):
    make, kwargs, passes = CASES[name]
    outcome = _same_outcome(make, **kwargs)
    assert (outcome is None) == passes, outcome


def test_assert_close_message_layout():
    # The key lines of the 1.13 message, spelled out once.
    kind, text = _same_outcome(lambda L: (L.tensor([1., 2., 3.]), L.tensor([1., 4., 5.])))
    assert kind is AssertionError
    assert text.splitlines() == [
        "Tensor-likes are not close!", "",
        "Mismatched elements: 2 / 3 (66.7%)",
        "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)",
        "Greatest relative difference: 0.5 at index (1,) (up to 1.3e-06 allowed)"]
    kind, text = _same_outcome(lambda L: ([{"x": L.ones(1)}], [{"x": L.zeros(1)}]))
    assert text.endswith("The failure occurred for item [0]['x']")


def test_assert_close_parameter_subclass():
    for allow in (True, False):
        _same_outcome(lambda L: (L.nn.Parameter(L.ones(2)), L.ones(2)), allow_subclasses=allow)
    with pytest.raises(TypeError, match="No comparison pair"):
        tessera.testing.assert_close(tessera.nn.Parameter(tessera.ones(2)), tessera.ones(2), allow_subclasses=False)


def test_assert_close_with_grad_and_noncontiguous_views():
    a = tessera.ones(4, 4, requires_grad=True)
    tessera.testing.assert_close(a * 2, tessera.full((4, 4), 2.0))
    base = tessera.arange(16.0).reshape(4, 4)
    tessera.testing.assert_close(base[:, ::2], tessera.tensor([[0., 2.], [4., 6.], [8., 10.], [12., 14.]]))


def _ignore_future(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return _outcome(fn)


@pytest.mark.parametrize("make,kwargs", [
    (lambda L: (L.tensor([1.0]), L.tensor([1.00005])), {}),          # inside allclose's 1e-4, outside close's
    (lambda L: (L.tensor([1.0]), L.tensor([1.001])), {}),
    (lambda L: (L.tensor([NAN, 1.0]), L.tensor([NAN, 1.0])), {}),    # equal_nan defaults to True
    (lambda L: (L.tensor([NAN]), L.tensor([NAN])), {"equal_nan": False}),
    (lambda L: (L.tensor([1.0]), L.tensor([1.0], dtype=L.float64)), {}),  # dtypes may differ
    (lambda L: ([1.0, 2.0], [1.0, 2.0]), {}),                        # non-tensors become tensors
    (lambda L: (L.tensor([1, 2]), [1, 3]), {}),
    (lambda L: (L.tensor([1.0]), 1.5), {"rtol": 0.5, "atol": 0.0}),
    (lambda L: (L.tensor([1.0]), L.tensor([1.2])), {"rtol": 0.1}),    # one tolerance only
    (lambda L: (L.tensor([1.0]), L.tensor([2.0])), {"msg": "custom"}),
], ids=range(10))
def test_assert_allclose_matches_torch(make, kwargs):
    ours = _ignore_future(lambda: tessera.testing.assert_allclose(*make(tessera), **kwargs))
    theirs = _ignore_future(lambda: torch.testing.assert_allclose(*make(torch), **kwargs))
    assert ours == theirs


def test_assert_allclose_warns_only_when_it_passes():
    for lib in (torch, tessera):
        with pytest.warns(FutureWarning, match="assert_close"):
            lib.testing.assert_allclose(lib.ones(2), lib.ones(2))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with pytest.raises(AssertionError):
                lib.testing.assert_allclose(lib.ones(2), lib.zeros(2))
        assert not [w for w in seen if issubclass(w.category, FutureWarning)]


INT_TYPES = ["uint8", "int8", "int16", "int32", "int64"]
FLOAT_TYPES = ["float16", "bfloat16", "float32", "float64"]
COMPLEX_TYPES = ["complex64", "complex128"]


def _values(t):
    return np.asarray(t.detach().to(tessera.float64 if not t.dtype.is_complex else tessera.complex128).tolist()) \
        if isinstance(t, tessera.Tensor) else np.asarray(t.detach().tolist())


# torch 1.13's documented default ranges; each is checked against torch's own output too.
DEFAULT_RANGE = {"bool": (0, 1), "uint8": (0, 9), "int8": (-9, 9), "int16": (-9, 9), "int32": (-9, 9),
                 "int64": (-9, 9), "float16": (-9, 9), "bfloat16": (-9, 9), "float32": (-9, 9), "float64": (-9, 9),
                 "complex64": (-9, 9), "complex128": (-9, 9)}


@pytest.mark.parametrize("name", list(DEFAULT_RANGE))
def test_make_tensor_default_ranges_match_torch(name):
    lo, hi = DEFAULT_RANGE[name]
    for lib in (torch, tessera):
        t = lib.testing.make_tensor((40, 50), dtype=getattr(lib, name), device="cpu")
        assert str(t.dtype).split(".")[1] == name and tuple(t.shape) == (40, 50) and t.is_contiguous()
        v = _values(t).astype(np.complex128 if name.startswith("complex") else np.float64)
        for part in ((v.real, v.imag) if name.startswith("complex") else (v.real,)):
            assert part.min() >= lo and part.max() <= hi, (lib.__name__, part.min(), part.max())
            if name not in ("bool",):
                assert part.max() - part.min() > (hi - lo) / 2  # the whole range is used
        if name in INT_TYPES or name == "bool":
            # integers: every value of the range shows up in 2000 draws
            assert set(np.unique(v.real).astype(int)) == set(range(lo, hi + 1))


# (dtype, low, high, the closed range torch's rules give: clamp to the dtype, then for
# integers floor(low) and ceil(high) with high exclusive)
BOUNDED = [("float32", -1, 1, (-1, 1)), ("float64", 0.5, 0.75, (0.5, 0.75)), ("int64", 0.5, 2.5, (0, 2)),
           ("int8", -1000, 1000, (-128, 126)), ("uint8", -5, 3, (0, 2)), ("float16", -1e6, 1e6, (-65504, 65504)),
           ("complex64", 2, 3, (2, 3))]


@pytest.mark.parametrize("name,low,high,closed", BOUNDED, ids=[b[0] for b in BOUNDED])
def test_make_tensor_bounds_clamped_and_rounded_as_torch(name, low, high, closed):
    for lib in (torch, tessera):
        v = _values(lib.testing.make_tensor(2000, dtype=getattr(lib, name), device="cpu", low=low, high=high))
        for part in ((v.real, v.imag) if name.startswith("complex") else (v.real,)):
            assert np.isfinite(part).all() and part.min() >= closed[0] and part.max() <= closed[1], lib.__name__
        if name.startswith(("int", "uint")):
            span = closed[1] - closed[0] + 1
            if span <= 10:
                assert len(np.unique(v)) == span  # every allowed integer is drawn


def test_make_tensor_errors_match_torch():
    cases = [
        ({"dtype": "int64", "requires_grad": True}, ValueError),
        ({"dtype": "bool", "requires_grad": True}, ValueError),
        ({"dtype": "float32", "low": 2, "high": 1}, ValueError),
        ({"dtype": "float32", "low": NAN}, ValueError),
        ({"dtype": "quint8"}, TypeError),
        ({"dtype": "int32", "low": 5, "high": 5}, RuntimeError),  # randint's empty range
    ]
    for kwargs, kind in cases:
        for lib in (torch, tessera):
            kw = dict(kwargs, dtype=getattr(lib, kwargs["dtype"]))
            with pytest.raises(kind) as info:
                lib.testing.make_tensor(3, device="cpu", **kw)
            if kind is ValueError:
                assert str(info.value).startswith("make_tensor:")
    for lib in (torch, tessera):
        with pytest.raises(TypeError):  # device is required in 1.13
            lib.testing.make_tensor(3, dtype=lib.float32)


@pytest.mark.parametrize("name", FLOAT_TYPES + INT_TYPES + COMPLEX_TYPES + ["bool"])
def test_make_tensor_noncontiguous_and_exclude_zero(name):
    for lib in (torch, tessera):
        t = lib.testing.make_tensor(4, 5, dtype=getattr(lib, name), device="cpu", noncontiguous=True)
        assert not t.is_contiguous() and tuple(t.shape) == (4, 5) and tuple(t.stride()) == (10, 2)
        one = lib.testing.make_tensor(1, dtype=getattr(lib, name), device="cpu", noncontiguous=True)
        assert one.is_contiguous()  # fewer than two elements: left contiguous
    if name in FLOAT_TYPES:
        low, high = 0, 0  # only zeros are drawn, so every element is replaced
    else:
        low, high = 0, 1 if name != "bool" else None
    out = {}
    for lib in (torch, tessera):
        kw = {} if name == "bool" else {"low": low, "high": high}
        t = lib.testing.make_tensor(64, dtype=getattr(lib, name), device="cpu", exclude_zero=True, **kw)
        out[lib.__name__] = _values(t)
        assert (out[lib.__name__] != 0).all()
    if name != "bool" and name not in COMPLEX_TYPES:
        np.testing.assert_array_equal(out["tessera"], out["torch"])  # a constant: 1 or the dtype's tiny


def test_make_tensor_complex_exclude_zero_and_grad():
    for lib in (torch, tessera):
        t = lib.testing.make_tensor(8, dtype=lib.complex64, device="cpu", low=0, high=0, exclude_zero=True)
        tiny = torch.finfo(torch.float32).tiny
        assert np.allclose(_values(t), complex(tiny, tiny), rtol=0, atol=0)
        g = lib.testing.make_tensor(2, 3, dtype=lib.float64, device="cpu", requires_grad=True)
        assert g.requires_grad and g.is_leaf


@pytest.mark.parametrize("shape", [(), 3, (2, 3), [2, 3], "size"])
def test_make_tensor_shape_forms(shape):
    for lib in (torch, tessera):
        s = lib.Size([2, 3]) if shape == "size" else shape
        args = s if isinstance(s, tuple) and not isinstance(s, lib.Size) else (s,)
        t = lib.testing.make_tensor(*args, dtype=lib.float32, device="cpu")
        want = torch.testing.make_tensor(*((torch.Size([2, 3]),) if shape == "size" else args), dtype=torch.float32,
                                         device="cpu").shape
        assert tuple(t.shape) == tuple(want)


def test_make_tensor_memory_format_extension():
    t = tessera.testing.make_tensor(2, 3, 4, 5, dtype=tessera.float32, device="cpu",
                                    memory_format=tessera.channels_last)
    want = torch.empty(2, 3, 4, 5).contiguous(memory_format=torch.channels_last).stride()
    assert tuple(t.stride()) == tuple(want)
    with pytest.raises(ValueError):
        tessera.testing.make_tensor(2, 3, 4, 5, dtype=tessera.float32, device="cpu", noncontiguous=True,
                                    memory_format=tessera.channels_last)


def _names(dtypes):
    return [str(d).replace("tessera.", "torch.") for d in dtypes]


LIST_CALLS = [
    ("all_types", ()), ("all_types_and", ("half", "bool")), ("all_types_and_complex", ()),
    ("all_types_and_complex_and", ("bfloat16",)), ("all_types_and_half", ()), ("complex_types", ()),
    ("double_types", ()), ("empty_types", ()), ("floating_and_complex_types", ()),
    ("floating_and_complex_types_and", ("half",)), ("floating_types", ()), ("floating_types_and", ("bfloat16",)),
    ("floating_types_and_half", ()), ("integral_types", ()), ("integral_types_and", ("bool",)),
    ("get_all_complex_dtypes", ()), ("get_all_dtypes", ()), ("get_all_fp_dtypes", ()), ("get_all_int_dtypes", ()),
]


@pytest.mark.parametrize("name,extra", LIST_CALLS, ids=[c[0] for c in LIST_CALLS])
def test_dtype_lists_match_torch(name, extra):
    got = {}
    for lib in (torch, tessera):
        with pytest.warns(FutureWarning, match="deprecated"):
            got[lib.__name__] = getattr(lib.testing, name)(*(getattr(lib, e) for e in extra))
    assert _names(got["tessera"]) == _names(got["torch"])
    assert type(got["tessera"]).__name__ == type(got["torch"]).__name__
    assert all(isinstance(d, tessera.dtype) for d in got["tessera"])


@pytest.mark.parametrize("kwargs", [dict(include_half=False), dict(include_bfloat16=False, include_bool=False),
                                    dict(include_complex=False), dict(include_half=False, include_complex=False)])
def test_get_all_dtypes_flags(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert _names(tessera.testing.get_all_dtypes(**kwargs)) == _names(torch.testing.get_all_dtypes(**kwargs))
        assert _names(tessera.testing.get_all_math_dtypes("cpu")) == _names(torch.testing.get_all_math_dtypes("cpu"))
        assert _names(tessera.testing.get_all_fp_dtypes(include_half=False)) == _names(
            torch.testing.get_all_fp_dtypes(include_half=False))
        assert tessera.testing.get_all_device_types() == torch.testing.get_all_device_types()
        assert (tessera.testing.floating_types() + (tessera.int8,)).__class__.__name__ == "_dispatch_dtypes"


def test_make_non_contiguous_and_deprecated_factories():
    for lib in (torch, tessera):
        src = lib.arange(24.0).reshape(2, 3, 4)
        with pytest.warns(FutureWarning):
            nc = lib.testing.make_non_contiguous(src)
        assert not nc.is_contiguous() and tuple(nc.shape) == (2, 3, 4)
        assert nc.tolist() == torch.arange(24.0).reshape(2, 3, 4).tolist()
        with pytest.warns(FutureWarning):
            single = lib.testing.make_non_contiguous(lib.ones(1))
        assert single.is_contiguous() and single.tolist() == [1.0]
        with pytest.warns(FutureWarning, match="rand"):
            r = lib.testing.rand(2, 3, dtype=lib.float64)
        assert tuple(r.shape) == (2, 3) and str(r.dtype).endswith("float64")
        with pytest.warns(FutureWarning, match="randn"):
            assert tuple(lib.testing.randn(4).shape) == (4,)


def test_public_names_cover_torch_testing():
    ours = {n for n in dir(tessera.testing) if not n.startswith("_")}
    theirs = {n for n in dir(torch.testing) if not n.startswith("_")} - {"FileCheck"}
    assert theirs <= ours, sorted(theirs - ours)
