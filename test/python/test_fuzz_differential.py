"""A differential fuzzer over the OpInfo registry (Hypothesis): for every operator it draws
dtypes, shapes (0-dim, empty, broadcasting), layouts (transposed, stepped, expanded, at a
storage offset inside a larger buffer) and argument values, runs the same call through
torch 1.13 and tessera, and requires the same result or the same exception class: never a
crash, never silent wrong data. CI runs a short derandomized pass (this file); longer runs
come from scripts/fuzz.sh with TESSERA_FUZZ_EXAMPLES and TESSERA_FUZZ_SEED set."""
import os

import pytest
import torch
from hypothesis import HealthCheck, given, seed, settings, strategies as st

import tessera  # noqa: F401 - the registry's calls take the library as an argument

import opinfo

from opinfo import (REDUCED, REGISTRY, Layout, OpInfo, assert_same, make_torch, outcome, same_outcome, to_tessera,
                    torch_reference)

opinfo.load_all()

EXAMPLES = int(os.environ.get("TESSERA_FUZZ_EXAMPLES", "6"))
SEED = int(os.environ.get("TESSERA_FUZZ_SEED", "0"))
LONG_RUN = "TESSERA_FUZZ_EXAMPLES" in os.environ
FUZZ_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=not LONG_RUN, database=None,
                         suppress_health_check=list(HealthCheck), print_blob=True)

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


@st.composite
def operand(draw, shape, dtype, low, high):
    """A torch tensor of `shape` laid out one of several ways; the tessera twin copies its
    sizes, strides and storage offset exactly (to_tessera)."""
    kind = draw(st.sampled_from(["contiguous", "transposed", "stepped", "expanded", "offset"]))
    value_seed = draw(st.integers(0, 2**16))
    if kind == "offset" and shape:
        offset = draw(st.integers(0, 7))
        n = 1
        for s in shape:
            n *= s
        base = make_torch((n + offset,), dtype, value_seed, low, high)
        return base[offset:].view(shape) if n else base[offset:offset].view(shape)
    if kind in ("transposed", "stepped", "expanded") and len(shape) >= 1:
        return Layout(shape, kind).make(dtype, value_seed, low, high)
    return make_torch(shape, dtype, value_seed, low, high)


def broadcastable(draw, shape):
    """Another shape that broadcasts with `shape`: trailing dims kept, set to 1, or dropped."""
    out = [draw(st.sampled_from([s, 1])) for s in shape]
    drop = draw(st.integers(0, len(out)))
    return tuple(out[drop:])


def sample_shapes(info):
    """The operand shapes of the entry's own samples (ops with shape rules of their own:
    matmul, views with fixed arguments, ...), or None where any broadcastable shapes do."""
    if type(info).layouts is OpInfo.layouts and info.arity <= 2:
        return None
    return [tuple(lay.shape for lay in layouts) for layouts in info.layouts()]


@st.composite
def case(draw, info):
    dtypes = [d for d in info.dtypes if d not in REDUCED] or list(info.dtypes)
    dtype = draw(st.sampled_from(dtypes))
    fixed = sample_shapes(info)
    if fixed is not None:
        layouts = list(draw(st.sampled_from(fixed)))
    elif info.arity == 1:
        layouts = [draw(shapes)]
    else:
        first = draw(shapes)
        layouts = [first, broadcastable(draw, first)]
        if draw(st.booleans()):
            layouts.reverse()
    tensors = [draw(operand(s, dtype, info.low, info.high)) for s in layouts]
    kwargs = draw(st.sampled_from(list(info.kwargs)))
    return dtype, tensors, kwargs


def unique_dim_as_current_torch(tensors, kwargs):
    """unique(x, dim=d) as current torch computes it: slices ordered with d moved to the
    front (moveaxis); torch 1.13 swapped d with dim 0 instead, which orders the slices of a
    tensor of 3 or more dims differently."""
    x, d = tensors[0], kwargs["dim"] % max(tensors[0].dim(), 1)
    rest = {k: v for k, v in kwargs.items() if k != "dim"}
    result = torch.unique(x.movedim(d, 0), dim=0, **rest)
    if isinstance(result, tuple):
        return (result[0].movedim(0, d),) + tuple(result[1:])
    return result.movedim(0, d)


# Where torch 1.13 differs from current torch, the reference follows current torch.
CURRENT_TORCH = {"unique[dim]": unique_dim_as_current_torch}


def agree(info, dtype, tensors, kwargs):
    if info.name in CURRENT_TORCH:
        status, want = outcome(lambda: CURRENT_TORCH[info.name](tensors, kwargs))
    else:
        status, want = torch_reference(info, dtype, tensors, kwargs)
    ours = [to_tessera(t) for t in tensors]
    got_status, got = outcome(lambda: info.call(tessera, *ours, **kwargs))
    context = (f"{info.name} {dtype} {[(tuple(t.shape), t.stride(), t.storage_offset()) for t in tensors]} "
               f"{kwargs}")
    same_outcome(status, want, got_status, got, context, lambda g, w: assert_same(g, w, info, dtype, context))


def torch_skips_its_dtype_check(info, dtype, tensors, kwargs):
    """torch 1.13 runs no kernel, so raises no "not implemented for 'Bool'", when the result
    needs no comparison: argmax/argmin along a dim of size 1, searchsorted of empty inputs.
    tessera checks the dtype first, as torch does for every other shape."""
    if info.name.startswith(("argmax", "argmin")):
        return dtype == "bool" or dtype.startswith("complex")
    return dtype == "bool" and info.name.startswith("searchsorted") and any(t.numel() == 0 for t in tensors)


KNOWN_DIVERGENCES = [torch_skips_its_dtype_check]
# The entries whose inputs are the layout sweep: those with their own sample generator
# (nn, index, factory ops) take structured inputs no random shape fits, and random draws
# (compare="meta") have no values to compare.
FUZZED = [info for info in REGISTRY if info.sample_inputs is None and info.compare == "values"]


@pytest.mark.parametrize("info", FUZZED, ids=[i.name for i in FUZZED])
def test_same_result_or_same_error(info):
    @seed(SEED)
    @FUZZ_SETTINGS
    @given(case(info))
    def run(drawn):
        dtype, tensors, kwargs = drawn
        if not any(known(info, dtype, tensors, kwargs) for known in KNOWN_DIVERGENCES):
            agree(info, dtype, tensors, kwargs)
    run()
