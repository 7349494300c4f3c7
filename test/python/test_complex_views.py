"""view_as_real / view_as_complex against torch: geometry (sizes, strides, offset) of the
views, sharing storage both ways, torch's errors, Meta tensors, and gradients through the
pair (gradcheck in float64 and against torch)."""
import numpy as np
import pytest
import torch

import tessera


def tt(x):
    return tessera.from_numpy(np.array(x.detach().numpy(), order="C"))


def complex_cases():
    g = torch.Generator().manual_seed(0)
    base = torch.randn(4, 6, dtype=torch.complex128, generator=g)
    return {
        "contiguous": lambda lib, b: b,
        "transposed": lambda lib, b: b.t(),
        "sliced": lambda lib, b: b[1:, ::2],
        "scalar": lambda lib, b: b[2, 3],
    }, base


@pytest.mark.parametrize("case", ["contiguous", "transposed", "sliced", "scalar"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_view_as_real_geometry_values_and_sharing(case, dtype):
    cases, base = complex_cases()
    bt = base.to(getattr(torch, dtype))
    bs = tt(bt)
    vt, vs = torch.view_as_real(cases[case](torch, bt)), tessera.view_as_real(cases[case](tessera, bs))
    assert tuple(vs.shape) == tuple(vt.shape) and vs.stride() == vt.stride()
    assert vs.storage_offset() == vt.storage_offset() and str(vs.dtype) == str(vt.dtype).replace("torch", "tessera")
    np.testing.assert_array_equal(vs.numpy(), vt.numpy())
    vs.mul_(2)  # writes reach the complex base
    vt.mul_(2)
    np.testing.assert_array_equal(bs.numpy(), bt.numpy())
    assert vs._base is not None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_view_as_complex_geometry_values_and_sharing(dtype):
    g = torch.Generator().manual_seed(1)
    bt = torch.randn(5, 3, 2, generator=g).to(getattr(torch, dtype))
    bs = tt(bt)
    for make in (lambda b: b, lambda b: b[1:], lambda b: b[::2, 1:], lambda b: b[0]):
        ct, cs = torch.view_as_complex(make(bt)), tessera.view_as_complex(make(bs))
        assert tuple(cs.shape) == tuple(ct.shape) and cs.stride() == ct.stride()
        assert cs.storage_offset() == ct.storage_offset()
        np.testing.assert_array_equal(cs.numpy(), ct.numpy())
    tessera.view_as_complex(bs).mul_(1j)
    torch.view_as_complex(bt).mul_(1j)
    np.testing.assert_array_equal(bs.numpy(), bt.numpy())
    # The round trip is the identity on the same storage.
    back = tessera.view_as_real(tessera.view_as_complex(bs))
    assert back.data_ptr() == bs.data_ptr() and back.stride() == bs.stride()


def test_errors_match_torch():
    def make(lib):
        return [
            lambda: lib.view_as_real(lib.zeros(2)),
            lambda: lib.view_as_complex(lib.zeros(3, 2, dtype=lib.int32)),
            lambda: lib.view_as_complex(lib.zeros(3, 2, dtype=lib.bfloat16)),
            lambda: lib.view_as_complex(lib.zeros(3, 3)),
            lambda: lib.view_as_complex(lib.zeros(())),
            lambda: lib.view_as_complex(lib.zeros(3, 4)[:, ::2]),
            lambda: lib.view_as_complex(lib.zeros(3, 3)[:, :2]),
            lambda: lib.view_as_complex(lib.zeros(9)[1:].view(4, 2)),
        ]
    for want_fn, got_fn in zip(make(torch), make(tessera)):
        with pytest.raises(RuntimeError) as want:
            want_fn()
        with pytest.raises(RuntimeError) as got:
            got_fn()
        assert str(got.value) == str(want.value)
    # Half pairs view as complex32, as in torch
    half = [[1.0, 2.0], [-3.0, 0.5]]
    got = tessera.view_as_complex(tessera.tensor(half, dtype=tessera.float16))
    want = torch.view_as_complex(torch.tensor(half, dtype=torch.float16))
    assert got.dtype == tessera.complex32 and got.cfloat().tolist() == want.to(torch.complex64).tolist()


def test_meta_tensors():
    m = tessera.empty(4, 3, 2, device="meta")
    c = tessera.view_as_complex(m[1:])
    assert c.device.type == "meta" and tuple(c.shape) == (3, 3) and c.stride() == (3, 1)
    assert str(c.dtype) == "tessera.complex64"
    r = tessera.view_as_real(tessera.empty(5, 2, dtype=tessera.complex128, device="meta").t())
    assert tuple(r.shape) == (2, 5, 2) and r.stride() == (2, 4, 1) and str(r.dtype) == "tessera.float64"


def test_grads_through_complex_views_like_torch():
    # view_as_complex then view_as_real: the grads of both Nodes (view_as_real's of the
    # grad, view_as_complex's of it) carry the real and imaginary parts back unchanged.
    def run(lib):
        x = lib.tensor([[0.5, -1.0], [2.0, 0.25], [1.5, 3.0]], dtype=lib.float64, requires_grad=True)
        z = lib.view_as_complex(x)
        y = lib.view_as_real(z * z)
        (y * lib.tensor([1.0, -2.0], dtype=lib.float64)).sum().backward()
        return x.grad
    np.testing.assert_allclose(run(tessera).numpy(), run(torch).numpy(), rtol=1e-12)