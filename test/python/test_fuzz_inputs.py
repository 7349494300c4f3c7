"""Fuzzing the entry points that take memory or data from outside: numpy arrays (every
dtype, views with steps, transposes, broadcasts and zero sizes) through from_numpy and
DLPack, and nested Python data through tensor(). Each case runs through torch 1.13 and
tessera: same values, shape, strides and dtype, or the same exception class; never a
crash. A short derandomized pass runs in CI (here and under ASan/UBSan); scripts/fuzz.sh
runs long ones (TESSERA_FUZZ_EXAMPLES, TESSERA_FUZZ_SEED)."""
import math
import os

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, seed, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tessera

from opinfo import outcome, same_outcome

EXAMPLES = int(os.environ.get("TESSERA_FUZZ_EXAMPLES", "60"))
SEED = int(os.environ.get("TESSERA_FUZZ_SEED", "0"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="TESSERA_FUZZ_EXAMPLES" not in os.environ,
                database=None, suppress_health_check=list(HealthCheck), print_blob=True)

NUMPY_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64,
                np.complex64, np.complex128, np.uint16, np.uint32, np.uint64]


def same_tensor(got, want, context):
    """Same dtype, shape, strides, offset and values (NaNs equal)."""
    assert got.stride() == want.stride() and got.storage_offset() == want.storage_offset(), context
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], context
    assert tuple(got.shape) == tuple(want.shape), context
    if want.numel():
        g, w = got.numpy(), want.numpy()
        assert np.array_equal(g, w, equal_nan=w.dtype.kind in "fc"), context


@st.composite
def array_views(draw):
    """A numpy array and a view of it: sliced with steps (also negative ones, which both
    libraries must refuse alike), transposed, broadcast, or empty."""
    dtype = draw(st.sampled_from(NUMPY_DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    base = draw(hnp.arrays(dtype, shape, elements=hnp.from_dtype(np.dtype(dtype), allow_nan=True,
                                                                 allow_infinity=True)))
    view = base
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["slice", "transpose", "broadcast", "newaxis"]))
        if kind == "slice" and view.ndim:
            d = draw(st.integers(0, view.ndim - 1))
            step = draw(st.sampled_from([1, 2, 3, -1, -2]))
            start = draw(st.integers(0, max(view.shape[d], 0)))
            index = [slice(None)] * view.ndim
            index[d] = slice(start, None, step)
            view = view[tuple(index)]
        elif kind == "transpose" and view.ndim:
            view = view.transpose(draw(st.permutations(range(view.ndim))))
        elif kind == "broadcast":
            view = np.broadcast_to(view, (draw(st.integers(0, 3)),) + view.shape)
        elif kind == "newaxis":
            view = view[np.newaxis]
    return view


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
@seed(SEED)
@FUZZ
@given(array_views())
def test_from_numpy_matches_torch(array):
    context = f"{array.dtype} shape {array.shape} strides {array.strides}"
    status, want = outcome(lambda: torch.from_numpy(array))
    got_status, got = outcome(lambda: tessera.from_numpy(array))
    same_outcome(status, want, got_status, got, context, lambda g, w: same_tensor(g, w, context), strict=True)


@seed(SEED)
@FUZZ
@given(array_views())
def test_dlpack_from_numpy_matches_torch(array):
    if not array.flags.writeable or array.dtype == np.bool_:
        return  # numpy 1.24 exports neither read-only arrays nor bools through DLPack
    context = f"{array.dtype} shape {array.shape} strides {array.strides}"
    got_status, got = outcome(lambda: tessera.from_dlpack(array))
    if any(s < 0 for s in array.strides):
        # torch 1.13 aborts the process on these (an exception escapes its capsule deleter);
        # tessera refuses negative strides cleanly, or imports what numpy exports without
        # them (a single element is contiguous whatever its stride): numpy is the reference.
        if got_status == "ok":
            assert tuple(got.shape) == array.shape and np.array_equal(got.numpy(), array, equal_nan=True), context
        return
    status, want = outcome(lambda: torch.from_dlpack(array))
    same_outcome(status, want, got_status, got, context, lambda g, w: same_tensor(g, w, context), strict=True)


scalars = st.one_of(st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
                    st.complex_numbers(max_magnitude=1e6), st.none(), st.text(max_size=2))
nested = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner), max_leaves=24)
DTYPES = [None, "float32", "float64", "int64", "int32", "uint8", "bool", "complex64", "float16"]


@seed(SEED)
@FUZZ
@given(nested, st.sampled_from(DTYPES))
def test_tensor_of_nested_data_matches_torch(data, dtype):
    context = f"tensor({data!r}, dtype={dtype})"
    status, want = outcome(lambda: torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None))
    got_status, got = outcome(lambda: tessera.tensor(data, dtype=getattr(tessera, dtype) if dtype else None))
    same_outcome(status, want, got_status, got, context, lambda g, w: same_listed(g, w, context), strict=True)


def same_listed(got, want, context):
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], context
    assert tuple(got.shape) == tuple(want.shape), context
    g, w = got.tolist(), want.tolist()
    assert _same_values(g, w), f"{context}: {g} vs {w}"


def _same_values(a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same_values(x, y) for x, y in zip(a, b))
    if isinstance(a, complex) or isinstance(b, complex):
        return _same_values(complex(a).real, complex(b).real) and _same_values(complex(a).imag, complex(b).imag)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b
