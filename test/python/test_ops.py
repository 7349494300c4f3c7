"""Differential tests of every operator in the OpInfo registry against torch 1.13:
function, method, in-place and out= forms, every dtype, 0-dim / empty / broadcast /
non-contiguous inputs, and the meta backend's shapes and dtypes."""
import pytest
import torch

import tessera

import importlib
import pathlib

import opinfo
from opinfo import REGISTRY, REDUCED, assert_same, to_tessera

# Every opinfo_<family>.py beside this file registers its family's entries.
for _path in sorted(pathlib.Path(__file__).parent.glob("opinfo_*.py")):
    importlib.import_module(_path.stem)


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return "error", e


def torch_reference(info, dtype, tensors, kwargs):
    """torch's result, or for Half/BFloat16 that torch 1.13 lacks, torch's float32 result
    rounded to the dtype (current PyTorch computes these ops in float for reduced types)."""
    status, want = outcome(lambda: info.call(torch, *tensors, **kwargs))
    if status == "error" and dtype in REDUCED and info.reduced_via_float:
        status, want32 = outcome(lambda: info.call(torch, *[t.float() for t in tensors], **kwargs))
        if status == "ok":
            target = opinfo.torch_dtype(dtype)
            want = want32.to(target) if want32.is_floating_point() else want32
            return "ok", want
    return status, want


CASES = [(info, dtype) for info in REGISTRY for dtype in info.dtypes]


@pytest.mark.parametrize("info,dtype", CASES, ids=[f"{i.name}-{d}" for i, d in CASES])
def test_forward(info, dtype):
    for label, tensors, kwargs in info.samples(dtype):
        status, want = torch_reference(info, dtype, tensors, kwargs)
        ours = [to_tessera(t) for t in tensors]
        got_status, got = outcome(lambda: info.call(tessera, *ours, **kwargs))
        context = f"{info.name} {dtype} {label}"
        if status == "error":
            # Tessera may support more dtypes than torch 1.13 ("at least torch's"); where both
            # refuse, they refuse with the same exception class.
            if got_status == "error":
                assert type(got).__name__ == type(want).__name__, f"{context}: {got!r} vs {want!r}"
            continue
        assert got_status == "ok", f"{context}: tessera raised {got!r}"
        assert_same(got, want, info, dtype, context)
        if info.method:
            assert_same(getattr(ours[0], info.method)(*ours[1:], **kwargs), want, info, dtype, context + " (method)")


@pytest.mark.parametrize("info,dtype", [c for c in CASES if c[0].inplace], ids=lambda c: str(c))
def test_inplace(info, dtype):
    for label, tensors, kwargs in info.samples(dtype):
        if any(s == 0 for s in tensors[0].stride()) and tensors[0].numel() > 1:
            continue  # expanded targets: covered by test_inplace_overlap
        context = f"{info.name}_ {dtype} {label}"
        target = tensors[0].clone()
        status, want = outcome(lambda: getattr(target, info.inplace)(*tensors[1:], **kwargs))
        if status == "error" and dtype in REDUCED and info.reduced_via_float:
            continue  # torch 1.13 lacks the kernel; the functional test covers the values
        mine = to_tessera(tensors[0].clone())
        got_status, got = outcome(lambda: getattr(mine, info.inplace)(*[to_tessera(t) for t in tensors[1:]], **kwargs))
        if status == "error":
            # As in test_forward: more dtypes than torch 1.13 is fine; a shared refusal
            # uses torch's exception class.
            if got_status == "error":
                assert type(got).__name__ == type(want).__name__, f"{context}: {got!r} vs {want!r}"
            continue
        assert got_status == "ok", f"{context}: tessera raised {got!r}"
        assert got is mine, f"{context}: in-place must return self"
        assert_same(mine, target, info, dtype, context)


@pytest.mark.parametrize("info", [i for i in REGISTRY if i.inplace], ids=lambda i: i.name)
def test_inplace_overlap(info):
    t = torch.zeros(1, 3, dtype=torch.float64).expand(2, 3)
    kwargs = info.kwargs[0]
    with pytest.raises(RuntimeError) as want:
        getattr(t, info.inplace)(*[torch.ones(2, 3, dtype=torch.float64)] * (info.arity - 1), **kwargs)
    mine = to_tessera(t)
    with pytest.raises(RuntimeError) as got:
        getattr(mine, info.inplace)(*[to_tessera(torch.ones(2, 3, dtype=torch.float64))] * (info.arity - 1), **kwargs)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("info,dtype", [c for c in CASES if c[0].supports_out], ids=lambda c: str(c))
def test_out(info, dtype):
    for label, tensors, kwargs in list(info.samples(dtype))[:4]:
        status, want = torch_reference(info, dtype, tensors, kwargs)
        if status == "error":
            continue
        context = f"{info.name}(out=) {dtype} {label}"
        out = tessera.empty(0, dtype=opinfo.tessera_dtype(str(want.dtype).split(".")[1]))
        got = info.call(tessera, *[to_tessera(t) for t in tensors], out=out, **kwargs)
        assert got is out, f"{context}: out= must return the out tensor"
        assert_same(out, want, info, dtype, context)


@pytest.mark.parametrize("info,dtype", CASES, ids=[f"{i.name}-{d}" for i, d in CASES])
def test_meta(info, dtype):
    for label, tensors, kwargs in info.samples(dtype):
        status, want = torch_reference(info, dtype, tensors, kwargs)
        metas = [tessera.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=opinfo.tessera_dtype(dtype),
                                       device="meta") for t in tensors]
        got_status, got = outcome(lambda: info.call(tessera, *metas, **kwargs))
        context = f"{info.name} meta {dtype} {label}"
        if status == "error":
            continue  # dtype support is the CPU kernels' business, checked by test_forward
        assert got_status == "ok", f"{context}: meta raised {got!r}"
        wants = want if isinstance(want, (tuple, list)) else [want]
        gots = got if isinstance(got, (tuple, list)) else [got]
        for g, w in zip(gots, wants):
            assert g.is_meta, context
            assert tuple(g.shape) == tuple(w.shape), context
            assert str(g.dtype).split(".")[1] == str(w.dtype).split(".")[1], context
