"""Lazy conjugation and negation against torch 1.13: the dispatcher's fallthrough
registrations for the Conjugate and Negative keys, and the registry sweep (every OpInfo
entry fed inputs that carry a bit; the quick tier, TESSERA_QUICK=1, samples one dtype per
entry).
"""
import os
import warnings

import pytest
import torch

import tessera

import opinfo
from opinfo import REDUCED, assert_same, outcome, to_tessera, torch_reference
from math_bits_common import bits


# ---------------------------------------------------------------- 9. registrations

def _fallthroughs_torch(key):
    return {name.split("::", 1)[1] for name in torch._C._dispatch_get_registrations_for_dispatch_key(key)
            if "fallthrough" in next(line for line in torch._C._dispatch_dump(name).splitlines()
                                     if line.startswith(key + ":"))}


def _op_names():
    import yaml
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2]
    return {e["func"].split("(")[0] for e in yaml.safe_load((root / "ops.yaml").read_text())}


def _fallthroughs_tessera(key, names):
    found = set()
    for name in names:
        try:
            dump = tessera._C._dispatch_dump("aten::" + name)
        except RuntimeError:
            continue  # (an ops.yaml entry with no dispatcher operator)
        for line in dump.splitlines():
            if line.startswith(key + ":") and line.endswith("[fallthrough]"):
                found.add(name)
    return found


# Kernels that ignore the bits, so they go through the fallback in phase 1 (torch lets them
# read the bits: conj-aware BLAS, conj_physical and neg_ of a view).
NOT_YET = {"dot", "dot.out", "vdot", "vdot.out", "mm", "mm.out", "addmm", "addmm.out", "addmm_", "bmm", "bmm.out",
           "baddbmm", "baddbmm.out", "baddbmm_", "linalg_solve_triangular", "linalg_solve_triangular.out",
           "linalg_svd", "linalg_svd.U", "conj_physical", "conj_physical_", "_conj_physical", "neg_",
           # its CPU kernel reads the counts raw; a negative view of them is resolved first
           "repeat_interleave.Tensor"}
# Beyond torch's lists, all harmless: views and in-place metadata changes that torch
# reaches through the fallback's view path, tessera's overloads of torch's (set_ with a
# tensor source and an offset), the manual autograd-state operators, and the bit queries.
EXTRAS = {"slice.Tensor", "squeeze.dim", "squeeze_.dim", "swapaxes_", "swapdims_", "resize_as_",
          "set_.source_Tensor_storage_offset", "data", "set_data", "retain_grad", "retains_grad", "is_leaf",
          "output_nr", "_version", "_backward", "is_conj", "is_neg", "_neg_view"}


@pytest.mark.parametrize("key", ["Conjugate", "Negative"])
def test_fallthroughs_are_torchs_less_the_bit_aware_kernels(key):
    names = _op_names()
    assert (EXTRAS | NOT_YET) <= names, sorted((EXTRAS | NOT_YET) - names)
    want = ((_fallthroughs_torch(key) & names) - NOT_YET) | EXTRAS
    got = _fallthroughs_tessera(key, names)
    assert sorted(got - want) == [] and sorted(want - got) == [], \
        f"{key}: extra {sorted(got - want)}, missing {sorted(want - got)}"
    for name in got:
        dump = tessera._C._dispatch_dump("aten::" + name)
        assert f"schema: aten::{name}(" in dump, name  # every fallthrough names a defined operator


def test_dispatch_dump_shows_the_math_bit_keys():
    dump = tessera._C._dispatch_dump("aten::view")
    for key in ("Conjugate", "Negative"):
        assert any(line.startswith(key + ": registered at ") and line.endswith("[fallthrough]")
                   for line in dump.splitlines()), dump
    add = tessera._C._dispatch_dump("aten::add.Tensor")
    assert not any(line.startswith(("Conjugate:", "Negative:")) for line in add.splitlines()), add


# ---------------------------------------------------------------- 8. the registry sweep

# The sweep runs every OpInfo entry in function, method, in-place and out= forms on inputs
# that carry a bit (a conj view of conjugated memory for complex dtypes, a negative view of
# negated memory for floating ones: the same logical values) and compares with torch fed
# the same. It costs as much as test_ops' forward half, so the quick tier (TESSERA_QUICK=1:
# ctest's python_math_bits_quick) takes one dtype per entry, alternating the two bits.
QUICK = os.environ.get("TESSERA_QUICK") == "1"
SWEEP_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")
REGISTRY = opinfo.load_all()


def _sweep_dtypes(index, info):
    dtypes = [d for d in SWEEP_DTYPES if d in info.dtypes]
    if not QUICK or not dtypes:
        return dtypes
    complex_ = [d for d in dtypes if d.startswith("complex")]
    floating = [d for d in dtypes if not d.startswith("complex")]
    if complex_ and (index % 2 == 0 or not floating):
        return ["complex64" if "complex64" in complex_ else complex_[0]]
    return ["float32" if "float32" in floating else floating[0]]


# set_ onto a bit view shares its memory without its bit, so it reads the raw values in
# both libraries, and is_set_to of a bit view compares a materialised copy in torch: the
# sample's logical-value comparison does not apply (the bit table covers set_).
NOT_SWEPT = {"set_"}
SWEEP = [(info, dtype) for k, info in enumerate(REGISTRY)
         if info.compare == "values" and "CPU" in info.backends and info.name not in NOT_SWEPT
         for dtype in _sweep_dtypes(k, info)]


def _bit_pair(t):
    """(torch, tessera) tensors with t's values and layout, stored conjugated (complex) or
    negated (floating) under the matching bit."""
    span = 0 if t.numel() == 0 else 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    flat = torch.as_strided(t, (span,), (1,), t.storage_offset())
    stored = flat.conj_physical() if t.is_complex() else -flat
    th = torch.as_strided(stored, tuple(t.shape), t.stride(), 0)
    ts = tessera.as_strided(to_tessera(stored), tuple(t.shape), tuple(t.stride()), 0)
    if t.is_complex():
        return th.conj(), ts.conj()
    return torch._neg_view(th), tessera._neg_view(ts)


def _inputs(tensors, dtype):
    """Both libraries' inputs: the swept dtype's tensors with a bit, the others plain."""
    pairs = [_bit_pair(t) if str(t.dtype) == f"torch.{dtype}" else (t, to_tessera(t)) for t in tensors]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _judge(info, dtype, context, want, got, plain):
    """tessera's outcome on bit inputs (got) against torch's on the same (want); where the
    two disagree, tessera may instead match torch on the plain inputs (plain(): torch's
    outcome without bits), which a torch 1.13 bug on bit inputs does not change."""
    same = (lambda g, w: opinfo.assert_same_shapes(g, w, context)) if info.compare == "meta" else \
        (lambda g, w: assert_same(g, w, info, dtype, context))
    want_status, want_value = want
    got_status, got_value = got
    if got_status == "ok" and want_status == "ok":
        try:
            same(got_value, want_value)
            return
        except AssertionError:
            plain_status, plain_value = plain()
            if plain_status != "ok":
                raise
            same(got_value, plain_value)
            return
    if want_status == "error" and got_status == "error":
        assert type(got_value).__name__ == type(want_value).__name__, f"{context}: {got_value!r} vs {want_value!r}"
        return
    if got_status == "error":
        # torch 1.13's fallback sometimes accepts what the plain call refuses (ldexp_ on bit
        # inputs resizes a broadcast target): then tessera must refuse as the plain call does
        plain_status, plain_value = plain()
        if plain_status == "error" and type(plain_value).__name__ == type(got_value).__name__:
            return
        raise AssertionError(f"{context}: tessera raised {got_value!r}, torch gave a result")
    # torch refused the bit inputs: tessera's answer must be the plain inputs' one, if any
    plain_status, plain_value = plain()
    if plain_status == "ok":
        same(got_value, plain_value)


@pytest.mark.parametrize("info,dtype", SWEEP, ids=[f"{i.name}-{d}" for i, d in SWEEP])
def test_registry_with_bit_inputs(info, dtype):
    for label, tensors, kwargs in info.samples(dtype):
        if not any(str(t.dtype) == f"torch.{dtype}" for t in tensors):
            continue
        context = f"{info.name} {dtype} {label} (bits)"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs, ours = _inputs(tensors, dtype)
            want = torch_reference(info, dtype, theirs, kwargs)
            got = outcome(lambda: info.call(tessera, *ours, **kwargs))
            plain = lambda: torch_reference(info, dtype, tensors, kwargs)  # noqa: E731
            _judge(info, dtype, context, want, got, plain)
            if info.method and str(tensors[0].dtype) == f"torch.{dtype}" and got[0] == "ok" and want[0] == "ok":
                theirs, ours = _inputs(tensors, dtype)
                method = outcome(lambda: getattr(ours[0], info.method)(*ours[1:], **kwargs))
                _judge(info, dtype, context + " method", want, method, plain)
            if info.inplace and str(tensors[0].dtype) == f"torch.{dtype}":
                _sweep_inplace(info, dtype, context, tensors, kwargs)
    if info.supports_out:
        _sweep_out(info, dtype)


def _sweep_inplace(info, dtype, context, tensors, kwargs):
    if any(s == 0 for s in tensors[0].stride()) and tensors[0].numel() > 1:
        return  # expanded targets: test_ops' overlap test
    theirs, ours = _inputs(tensors, dtype)
    want = outcome(lambda: (opinfo._run_inplace(info, torch, theirs[0], *theirs[1:], **kwargs), theirs[0])[1])
    got = outcome(lambda: opinfo._run_inplace(info, tessera, ours[0], *ours[1:], **kwargs))
    if want[0] == "error" and dtype in REDUCED and info.reduced_via_float:
        return  # torch 1.13 lacks the kernel; the functional form covers the values
    if got[0] == "ok":
        assert got[1] is ours[0], f"{context} in-place: must return self"
        assert bits(ours[0]) == bits(theirs[0]), f"{context} in-place: the target keeps its bit"
        got = ("ok", ours[0])

    def plain():
        target = tensors[0].clone()
        return outcome(lambda: (opinfo._run_inplace(info, torch, target, *tensors[1:], **kwargs), target)[1])
    _judge(info, dtype, context + " in-place", want, got, plain)


def _sweep_out(info, dtype):
    for label, tensors, kwargs in list(info.samples(dtype))[:4]:
        if not any(str(t.dtype) == f"torch.{dtype}" for t in tensors):
            continue
        status, want = torch_reference(info, dtype, tensors, kwargs)
        if status == "error" or not isinstance(want, torch.Tensor):
            continue
        context = f"{info.name}(out=) {dtype} {label} (bits)"
        _, ours = _inputs(tensors, dtype)
        out = tessera.empty(0, dtype=opinfo.tessera_dtype(str(want.dtype).split(".")[1]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got = info.call(tessera, *ours, out=out, **kwargs)
            except TypeError:
                continue  # no out= overload takes these arguments (test_ops checks torch agrees)
        assert got is out, context
        assert_same(out, want, info, dtype, context)
