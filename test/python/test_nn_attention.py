"""scaled_dot_product_attention (torch 1.13 has none; the reference is the composite
torch documents, written here in torch ops): the fused CPU kernel and the math form,
values and grads against the reference, gradcheck and gradgradcheck, masks, causal,
grouped-query heads, dropout, meta shapes, errors, and memory linear in the sequence."""
import math
import os
import subprocess
import sys

import pytest
import torch

import tessera
from opinfo import make_torch, to_tessera, to_torch

F = tessera.nn.functional


def reference(q, k, v, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T scale + mask) v, as torch.nn.functional.scaled_dot_product_attention defines it."""
    if enable_gqa:
        k = k.repeat_interleave(q.size(-3) // k.size(-3), -3)
        v = v.repeat_interleave(q.size(-3) // v.size(-3), -3)
    s = q @ k.transpose(-2, -1) * (1 / math.sqrt(q.size(-1)) if scale is None else scale)
    if is_causal:
        s = s.masked_fill(torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).tril().logical_not(), float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(attn_mask.logical_not(), float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
    return s.softmax(-1) @ v


def rand(shape, seed):
    return make_torch(shape, "float64", seed, -1.5, 1.5)


CASES = [
    ("4d", (2, 3, 20, 8), (2, 3, 300, 8), (2, 3, 300, 5), {}),
    ("3d", (4, 17, 6), (4, 9, 6), (4, 9, 6), {}),
    ("causal", (2, 2, 290, 8), (2, 2, 290, 8), (2, 2, 290, 8), {"is_causal": True}),
    ("causal_short_keys", (1, 2, 30, 4), (1, 2, 20, 4), (1, 2, 20, 4), {"is_causal": True}),
    ("bool_mask", (2, 2, 12, 4), (2, 2, 270, 4), (2, 2, 270, 4), {"attn_mask": torch.rand(12, 270, generator=torch.Generator().manual_seed(1)) > 0.3}),
    ("float_mask", (2, 2, 12, 4), (2, 2, 30, 4), (2, 2, 30, 4), {"attn_mask": rand((2, 1, 12, 30), 7)}),
    ("scale", (1, 2, 10, 4), (1, 2, 10, 4), (1, 2, 10, 4), {"scale": 0.3}),
    ("gqa", (2, 4, 10, 4), (2, 2, 10, 4), (2, 2, 10, 4), {"enable_gqa": True}),
]


def _inputs(qs, ks, vs):
    return rand(qs, 1), rand(ks, 2), rand(vs, 3)


@pytest.mark.parametrize("name,qs,ks,vs,kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_attention_matches_the_reference(name, qs, ks, vs, kw, dtype):
    q, k, v = (t.to(dtype) for t in _inputs(qs, ks, vs))
    kw_t = {key: (val.to(dtype) if isinstance(val, torch.Tensor) and val.is_floating_point() else val)
            for key, val in kw.items()}
    tq, tk, tv = (t.clone().requires_grad_() for t in (q, k, v))
    sq, sk, sv = (to_tessera(t).requires_grad_() for t in (q, k, v))
    want = reference(tq, tk, tv, **kw_t)
    got = F.scaled_dot_product_attention(sq, sk, sv, **{key: to_tessera(val) if isinstance(val, torch.Tensor) else val
                                                        for key, val in kw_t.items()})
    assert got.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(to_torch(got), want, **tol)
    upstream = rand(tuple(want.shape), 4).to(dtype)
    want.backward(upstream)
    got.backward(to_tessera(upstream))
    for mine, theirs in ((sq, tq), (sk, tk), (sv, tv)):
        torch.testing.assert_close(to_torch(mine.grad), theirs.grad, **tol)


@pytest.mark.parametrize("name,qs,ks,vs,kw", CASES[:3] + CASES[5:6], ids=[c[0] for c in CASES[:3] + CASES[5:6]])
def test_gradcheck_and_gradgradcheck(name, qs, ks, vs, kw):
    small = lambda s: tuple(min(d, 6) for d in s[:-2]) + (min(s[-2], 7), s[-1])  # noqa: E731
    q, k, v = (to_tessera(t).requires_grad_() for t in _inputs(small(qs), small(ks), small(vs)))
    mask = kw.get("attn_mask")
    mask = None if mask is None else to_tessera(mask[..., :7, :7])
    fn = lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=mask, is_causal=kw.get("is_causal", False))  # noqa: E731
    assert tessera.autograd.gradcheck(fn, (q, k, v))
    assert tessera.autograd.gradgradcheck(fn, (q, k, v))


def test_math_form_for_reduced_precision_and_a_mask_that_needs_grad():
    q, k, v = _inputs((1, 2, 9, 4), (1, 2, 11, 4), (1, 2, 11, 4))
    for dtype in (torch.bfloat16, torch.float16):
        want = reference(q.float(), k.float(), v.float()).to(dtype)
        got = F.scaled_dot_product_attention(*(to_tessera(t.to(dtype)) for t in (q, k, v)))
        assert got.dtype == getattr(tessera, str(dtype).split(".")[1])
        torch.testing.assert_close(to_torch(got).float(), want.float(), rtol=2e-2, atol=2e-2)
    m = rand((9, 11), 5)
    tm, sm = m.clone().requires_grad_(), to_tessera(m).requires_grad_()
    reference(q, k, v, attn_mask=tm).sum().backward()
    out = F.scaled_dot_product_attention(to_tessera(q), to_tessera(k), to_tessera(v), attn_mask=sm)
    assert out.grad_fn.name() != "ScaledDotProductFlashAttentionForCpuBackward0"
    out.sum().backward()
    torch.testing.assert_close(to_torch(sm.grad), tm.grad)


def test_dropout_is_seeded_and_drops_probabilities():
    q, k, v = (to_tessera(t) for t in _inputs((1, 1, 64, 8), (1, 1, 64, 8), (1, 1, 64, 8)))
    tessera.manual_seed(0)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    tessera.manual_seed(0)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert to_torch(a).equal(to_torch(b))
    assert not to_torch(a).equal(to_torch(F.scaled_dot_product_attention(q, k, v)))
    assert to_torch(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)).abs().max().item() == 0


def test_meta_shapes():
    out = F.scaled_dot_product_attention(tessera.empty(2, 3, 5, 4, device="meta"), tessera.empty(2, 3, 7, 4, device="meta"),
                                         tessera.empty(2, 3, 7, 6, device="meta"))
    assert out.is_meta and tuple(out.shape) == (2, 3, 5, 6)
    o, lse = tessera._scaled_dot_product_flash_attention_for_cpu(tessera.empty(2, 3, 5, 4, device="meta"),
                                                                  tessera.empty(2, 3, 7, 4, device="meta"),
                                                                  tessera.empty(2, 3, 7, 6, device="meta"))
    assert tuple(o.shape) == (2, 3, 5, 6) and tuple(lse.shape) == (2, 3, 5)
    # its backward is an operator too (aten/native/nn/Attention.cpp), so Meta reaches it
    q, k, v = (tessera.empty(*s, device="meta") for s in [(2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6)])
    grads = tessera.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(o, q, k, v, o, lse, 0.0, False)
    assert [tuple(g.shape) for g in grads] == [(2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6)]
    assert all(g.is_meta for g in grads)


def test_errors():
    with pytest.raises(RuntimeError, match="same dtype"):
        F.scaled_dot_product_attention(tessera.ones(1, 2, 4), tessera.ones(1, 2, 4, dtype=tessera.float64),
                                       tessera.ones(1, 2, 4))
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(tessera.ones(1, 2, 4), tessera.ones(1, 2, 4), tessera.ones(1, 2, 4),
                                       attn_mask=tessera.ones(2, 2, dtype=tessera.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="embedding size"):
        F.scaled_dot_product_attention(tessera.ones(1, 2, 4), tessera.ones(1, 2, 3), tessera.ones(1, 2, 4))


PEAK_SCRIPT = """
import resource, sys, tessera
tessera.set_num_threads(1)
L = int(sys.argv[1])
q, k, v = (tessera.randn(1, 8, L, 64, requires_grad=True) for _ in range(3))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tessera.nn.functional.scaled_dot_product_attention(q, k, v).sum().backward()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def test_fused_attention_memory_is_linear_in_the_sequence():
    # 8 heads x 4096 tokens: an L x L score matrix would be 512 MB (float32); the fused
    # forward + backward holds L x 256 blocks
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", PEAK_SCRIPT, "4096"], capture_output=True, text=True, env=env,
                         check=True, timeout=300)
    grown_kb = int(out.stdout.strip().splitlines()[-1])
    assert grown_kb < 200 * 1024, f"peak RSS grew by {grown_kb} kB"
