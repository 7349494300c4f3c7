"""Operators the training stack added to the tensor API, against torch 1.13: the
new_empty / new_zeros / new_ones / new_full methods, repeat_interleave (all three
overloads, and Meta), bilinear, Tensor.type() / type_as and typename."""
import numpy as np
import pytest
import torch

import tessera


def _pair(data):
    t = torch.tensor(data)
    return t, tessera.from_numpy(t.numpy().copy())


@pytest.mark.parametrize("dtype", [None, "int64", "float64"])
def test_new_factories_take_self_dtype_unless_given(dtype):
    t, m = _pair([[1.0, 2.0], [3.0, 4.0]])
    kw_t = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    kw_m = {} if dtype is None else {"dtype": getattr(tessera, dtype)}
    for name, args in (("new_zeros", ((2, 3),)), ("new_ones", ((3,),)), ("new_full", ((2, 2), 7))):
        want = getattr(t, name)(*args, **kw_t)
        got = getattr(m, name)(*args, **kw_m)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    e = m.new_empty((4, 1), **kw_m)
    assert tuple(e.shape) == (4, 1) and str(e.dtype).split(".")[1] == str(t.new_empty((4, 1), **kw_t).dtype).split(".")[1]


def test_repeat_interleave_matches_torch():
    t, m = _pair([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    cases = [((2,), {}), ((2,), {"dim": 1}), ((3,), {"dim": 0}), ((torch.tensor([1, 2]),), {"dim": 0}),
             ((torch.tensor([0, 2, 1]),), {"dim": -1}), ((torch.tensor([2]),), {"dim": 1})]
    for args, kw in cases:
        want = t.repeat_interleave(*args, **kw)
        margs = tuple(tessera.from_numpy(a.numpy()) if isinstance(a, torch.Tensor) else a for a in args)
        np.testing.assert_array_equal(m.repeat_interleave(*margs, **kw).numpy(), want.numpy())
    counts = torch.tensor([2, 0, 3])
    np.testing.assert_array_equal(tessera.repeat_interleave(tessera.from_numpy(counts.numpy())).numpy(),
                                  torch.repeat_interleave(counts).numpy())
    with pytest.raises(RuntimeError):
        tessera.repeat_interleave(tessera.tensor([1, -1]))
    meta = tessera.empty(3, dtype=tessera.int64, device="meta")
    assert tuple(tessera.repeat_interleave(meta, output_size=5).shape) == (5,)
    with pytest.raises(NotImplementedError):
        tessera.repeat_interleave(meta)


def test_repeat_interleave_gradcheck():
    x = tessera.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=tessera.float64, requires_grad=True)
    reps = tessera.tensor([1, 3])
    assert tessera.autograd.gradcheck(lambda a: a.repeat_interleave(reps, dim=0), (x,))
    assert tessera.autograd.gradcheck(lambda a: a.repeat_interleave(2, dim=1), (x,))


def test_bilinear_matches_torch_and_gradchecks():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    w, bias = rng.standard_normal((4, 3, 2)), rng.standard_normal(4)
    want = torch.bilinear(*(torch.from_numpy(v) for v in (a, b, w, bias)))
    got = tessera.bilinear(*(tessera.from_numpy(v.copy()) for v in (a, b, w, bias)))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    ins = [tessera.from_numpy(v.copy()).requires_grad_(True) for v in (a[:2], b[:2], w[:2], bias[:2])]
    assert tessera.autograd.gradcheck(tessera.bilinear, tuple(ins))
    with pytest.raises(RuntimeError, match="input1 size does not match weight size"):
        tessera.bilinear(tessera.ones(5, 4), tessera.ones(5, 2), tessera.ones(4, 3, 2))


def test_type_and_typename_follow_torch():
    t, m = _pair([1.5, 2.5])
    assert m.type() == t.type() == "torch.FloatTensor"
    assert m.type("torch.DoubleTensor").dtype == tessera.float64
    assert m.type(tessera.int32).dtype == tessera.int32
    assert m.type_as(tessera.ones(1, dtype=tessera.float64)).dtype == tessera.float64
    assert tessera.typename(m) == torch.typename(t)
    assert tessera.typename(3) == torch.typename(3)
    with pytest.raises(ValueError):
        m.type("torch.NoSuchTensor")


def test_cpu_is_self_on_cpu_and_converts_layouts_like_torch():
    for lib in (torch, tessera):
        t = lib.ones(2, 3, 4, 5)
        assert t.cpu() is t
        c = t.cpu(memory_format=lib.channels_last)
        assert c.stride() == (60, 1, 15, 3) and c.is_contiguous(memory_format=lib.channels_last)
    m = tessera.ones(2, device="meta")
    with pytest.raises(NotImplementedError):
        m.cpu()  # a meta tensor has no data to copy (torch: NotImplementedError too)
