"""The _mkldnn layout against torch 1.13: to_mkldnn / to_dense, what an mkldnn tensor
answers and refuses (with torch's messages), the mkldnn_* operators on dense and mkldnn
inputs, and gradients through the conversions. Values are compared in the registry
(opinfo_layouts.py); this file checks the layout's rules."""
import pickle

import pytest
import torch

import tessera

from opinfo import assert_raises_like_torch, to_tessera, to_torch


def _x(shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def test_an_mkldnn_tensor_describes_itself_like_torch():
    x = _x((2, 3))
    want, got = x.to_mkldnn(), to_tessera(x).to_mkldnn()
    assert got.layout == tessera._mkldnn and repr(tessera._mkldnn) == "tessera._mkldnn"
    assert got.is_mkldnn and not to_tessera(x).is_mkldnn
    assert tuple(got.shape) == tuple(want.shape) and got.dim() == want.dim() and got.numel() == want.numel()
    assert got.is_contiguous() == want.is_contiguous() and got.device.type == "cpu"
    assert got.size(1) == want.size(1) and got.element_size() == want.element_size()
    assert repr(got).replace("tessera.", "torch.") == repr(want)
    assert repr(to_tessera(x).to(tessera.bfloat16).to_mkldnn()).replace("tessera.", "torch.") == \
        repr(x.to(torch.bfloat16).to_mkldnn())
    assert repr(tessera.zeros(0, 3).to_mkldnn()).replace("tessera.", "torch.") == repr(torch.zeros(0, 3).to_mkldnn())


def test_to_dense_round_trips_and_copies():
    x = _x((3, 4))
    m = to_tessera(x).to_mkldnn()
    d = m.to_dense()
    assert d.layout == tessera.strided and not d.is_mkldnn
    torch.testing.assert_close(to_torch(d), x)
    assert to_torch(m.to_dense(tessera.bfloat16)).dtype == torch.bfloat16
    dense = to_tessera(x)
    assert dense.to_dense() is dense
    assert dense.to_dense(tessera.float64).dtype == tessera.float64
    # the mkldnn tensor owns its memory: writing the source changes nothing
    dense.zero_()
    torch.testing.assert_close(to_torch(m.to_dense()), x)


@pytest.mark.parametrize("expr", [
    "lib.zeros(2, 3, dtype=lib.float64).to_mkldnn()",
    "lib.zeros(2, 3).to_mkldnn(lib.float64)",
    "lib.zeros(2, 3).to_mkldnn().to_dense(lib.float64)",
    "lib.zeros(1, 1, 1, 1, 1, 1).to_mkldnn()",
    "lib.zeros(2, 3).to_mkldnn().data_ptr()",
    "lib.zeros(2, 3).to_mkldnn().tolist()",
    "lib.zeros(2, 3).to_mkldnn().numpy()",
    "lib.zeros(2, 3).to_mkldnn().storage()",
    "lib.mkldnn_convolution(lib.zeros(1, 2, 3, 3, dtype=lib.float64), lib.zeros(1, 2, 2, 2, dtype=lib.float64), "
    "None, [0, 0], [1, 1], [1, 1], 1)",
    "lib.mkldnn_convolution(lib.zeros(1, 2, 3, 3), lib.zeros(1, 2, 2, 2, dtype=lib.float64), None, [0, 0], [1, 1], "
    "[1, 1], 1)",
    "lib.mkldnn_max_pool2d(lib.zeros(1, 1, 4, 4).to_mkldnn(), [2, 2], dilation=[2, 2])",
    "lib.mkldnn_max_pool2d(lib.zeros(1, 1, 4).to_mkldnn(), [2, 2])",
    "lib.mkldnn_adaptive_avg_pool2d(lib.zeros(1, 4, 4).to_mkldnn(), [2, 2])",
    "lib.mkldnn_adaptive_avg_pool2d(lib.zeros(1, 1, 5, 4).to_mkldnn(), [2, 2])",
    "lib.mkldnn_linear_backward_weights(lib.zeros(2, 3), lib.zeros(2, 4).to_mkldnn(), lib.zeros(3, 4), True)",
    # the dense operators' mkldnn kernels check what torch's oneDNN kernels check
    "lib.zeros(2, 3).to_mkldnn() + 1", "lib.zeros(2, 3).to_mkldnn() + lib.zeros(2, 3)",
    "lib.zeros(2, 3) + lib.zeros(2, 3).to_mkldnn()", "lib.zeros(2, 3).to_mkldnn() + lib.zeros(3).to_mkldnn()",
    "lib.zeros(2, 3).to_mkldnn() * lib.zeros(1, 3).to_mkldnn()", "lib.zeros(2, 3).to_mkldnn() * lib.zeros(2, 3)",
    "lib.mul(lib.zeros(2, 3).to_mkldnn(), lib.zeros(2, 3).to_mkldnn(), out=lib.zeros(0).to_mkldnn())",
    "lib.mul(lib.zeros(2, 3).to_mkldnn(), lib.zeros(2, 3).to_mkldnn(), out=lib.zeros(0))",
    "lib.add(lib.zeros(2, 3).to_mkldnn(), lib.zeros(2, 3).to_mkldnn(), out=lib.zeros(2, 3))",
    "lib.zeros(2, 3).to_mkldnn().clone(memory_format=lib.contiguous_format)",
    "lib.zeros(2, 3).to_mkldnn().clone(memory_format=lib.preserve_format)",
    "lib.zeros(2, 3).to_mkldnn().view(6)", "lib.zeros(2, 3).to_mkldnn().reshape(4, -1)",
    "lib.zeros(2, 3).to_mkldnn().copy_(lib.zeros(3).to_mkldnn())",
    "lib.nn.functional.adaptive_avg_pool2d(lib.zeros(1, 1, 4, 4).to_mkldnn(), [2])",
])
def test_refusals_match_torch(expr):
    assert_raises_like_torch(expr)


def test_pickling_refuses_like_torch():
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match="Cannot access data pointer of Tensor that doesn't have storage"):
            pickle.dumps(lib.zeros(2).to_mkldnn())


@pytest.mark.parametrize("expr", [
    "lib.mkldnn_max_pool2d(lib.zeros(1, 1, 4, 4), [2, 2])",
    "lib.mkldnn_max_pool3d(lib.zeros(1, 1, 4, 4, 4), [2, 2, 2])",
    "lib.mkldnn_adaptive_avg_pool2d(lib.zeros(1, 1, 4, 4), [2, 2])",
    "lib.zeros(2, 3).to_mkldnn() - lib.zeros(2, 3).to_mkldnn()",
    "lib.zeros(2, 3).to_mkldnn().sum()",
    "lib.zeros(2, 3).to_mkldnn().to_mkldnn()",
    "lib.zeros(2, 3).to_mkldnn()[0]",
])
def test_ops_without_an_mkldnn_kernel_refuse(expr):
    # torch's classes differ among these (some RuntimeError, some NotImplementedError):
    # tessera always says NotImplementedError, naming the op and the mkldnn layout.
    with pytest.raises(Exception):
        eval(expr, {"lib": torch})
    with pytest.raises(NotImplementedError):
        eval(expr, {"lib": tessera})


def test_mkldnn_convolution_layouts_follow_torch():
    x, w = _x((2, 3, 5, 5)), _x((4, 3, 3, 3), 1)
    args = (None, [1, 1], [1, 1], [1, 1], 1)
    for xin, win in ((x, w), (x.to_mkldnn(), w), (x.contiguous(memory_format=torch.channels_last), w),
                     (x, w.contiguous(memory_format=torch.channels_last))):
        want = torch.mkldnn_convolution(xin, win, *args)
        mx = to_tessera(xin.to_dense()) if xin.is_mkldnn else to_tessera(xin)
        got = tessera.mkldnn_convolution(mx.to_mkldnn() if xin.is_mkldnn else mx, to_tessera(win), *args)
        assert got.layout.__repr__().replace("tessera", "torch") == repr(want.layout)
        if not want.is_mkldnn:
            assert got.stride() == want.stride()
        torch.testing.assert_close(to_torch(got.to_dense()), want.to_dense(), rtol=1e-4, atol=1e-4)
    x5 = _x((1, 2, 3, 3, 3)).contiguous(memory_format=torch.channels_last_3d)
    w5 = _x((2, 2, 1, 1, 1), 2)
    want = torch.mkldnn_convolution(x5, w5, None, [0, 0, 0], [1, 1, 1], [1, 1, 1], 1)
    got = tessera.mkldnn_convolution(to_tessera(x5), to_tessera(w5), None, [0, 0, 0], [1, 1, 1], [1, 1, 1], 1)
    assert got.stride() == want.stride()


def test_mkldnn_convolution_refuses_short_parameter_lists():
    # torch 1.13 dies with SIGFPE here; tessera raises (a deliberate divergence).
    with pytest.raises(RuntimeError, match="expected padding to have 2 values"):
        tessera.mkldnn_convolution(tessera.zeros(1, 1, 3, 3), tessera.zeros(1, 1, 2, 2), None, [], [1, 1], [1, 1], 1)


def test_linear_backward_weights_is_the_weight_gradient():
    go, x, w = _x((2, 3, 4)), _x((2, 3, 5), 1), _x((4, 5), 2)
    gw, gb = tessera.mkldnn_linear_backward_weights(to_tessera(go).to_mkldnn(), to_tessera(x).to_mkldnn(),
                                                    to_tessera(w), True)
    torch.testing.assert_close(to_torch(gw), go.reshape(-1, 4).t() @ x.reshape(-1, 5), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(to_torch(gb), go.reshape(-1, 4).sum(0), rtol=1e-5, atol=1e-5)
    assert gw.layout == tessera.strided


def test_grads_flow_through_the_conversions_like_torch():
    x = _x((2, 3))
    got_x = to_tessera(x).requires_grad_()
    m = got_x.to_mkldnn()
    assert m.grad_fn.name() == "ToMkldnnBackward0" and not m.is_leaf
    d = m.to_dense()
    assert d.grad_fn.name() == "ToDenseBackward0"
    (d * to_tessera(x)).sum().backward()
    want_x = x.clone().requires_grad_()
    (want_x.to_mkldnn().to_dense() * x).sum().backward()
    torch.testing.assert_close(to_torch(got_x.grad), want_x.grad)


def test_mkldnn_convolution_records_its_node():
    x = to_tessera(_x((1, 2, 3, 3))).requires_grad_()
    out = tessera.mkldnn_convolution(x, to_tessera(_x((1, 2, 2, 2), 1)), None, [0, 0], [1, 1], [1, 1], 1)
    assert out.grad_fn.name() == "MkldnnConvolutionBackward0"


@pytest.mark.parametrize("expr", ["m.resize_(100)", "lib.zeros(1).set_(m)", "m.set_(lib.zeros(6))",
                                  "m.retain_grad()"])
def test_geometry_changes_are_refused(expr):
    m = tessera.zeros(2, 3, requires_grad="retain_grad" in expr).to_mkldnn()
    with pytest.raises(NotImplementedError):
        exec(expr, {"lib": tessera, "m": m})


def test_set_data_and_grads_keep_the_layout():
    x = tessera.zeros(2, 3)
    with pytest.raises(RuntimeError, match="incompatible tensor type"):
        x.data = tessera.zeros(2, 3).to_mkldnn()
    with pytest.raises(RuntimeError, match="incompatible tensor type"):
        torch.zeros(2, 3).data = torch.zeros(2, 3).to_mkldnn()
    a = tessera.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        a.grad = tessera.ones(2, 3).to_mkldnn()

    class ToMkldnn(tessera.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g.to_mkldnn()

    with pytest.raises(RuntimeError, match="expected layout torch.strided but got torch._mkldnn"):
        ToMkldnn.apply(a).sum().backward()


def test_an_mkldnn_tensor_is_not_an_out_argument():
    m = tessera.ones(2, 3).to_mkldnn()
    alias = m.detach()
    for call in (lambda: tessera.empty((40, 50), out=m), lambda: tessera.zeros((4, 5), out=m)):
        with pytest.raises(NotImplementedError):
            call()
    assert tuple(m.shape) == (2, 3) and alias.to_dense().tolist() == [[1.0] * 3] * 2


def test_hooks_may_not_change_the_layout():
    m = tessera.ones(2, 3).to_mkldnn().requires_grad_()
    m.register_hook(lambda g: tessera.ones(2, 3))
    with pytest.raises(RuntimeError, match="hook 'hook' has changed the type of value"):
        m.to_dense().sum().backward()


def test_copy_between_mkldnn_and_dense_is_refused_like_torch():
    """torch names the two tensors' types ("Mkldnntorch.FloatTensor"); the rest is its message."""
    for lib in (torch, tessera):
        for dst, src in ((lib.zeros(2, 3).to_mkldnn(), lib.zeros(2, 3)), (lib.zeros(2, 3), lib.zeros(2, 3).to_mkldnn())):
            with pytest.raises(RuntimeError, match="copy_mkldnn_: between mkldnn layout and dense Tensors is not "
                                                   "implemented! Found self type = "):
                dst.copy_(src)


def test_mkldnn_kernels_keep_the_layout_dtype_and_identity():
    x, y = _x((2, 3)), _x((2, 3), 1)
    for lib in (torch, tessera):
        m = (x if lib is torch else to_tessera(x)).to_mkldnn()
        b = (y if lib is torch else to_tessera(y)).to(lib.bfloat16).to_mkldnn()
        assert (b + m).dtype == lib.bfloat16 and (m + b).dtype == lib.float32   # self's dtype, as torch
        assert (m * 2).layout == lib._mkldnn and m.relu().layout == lib._mkldnn and m.clone().layout == lib._mkldnn
        assert m.reshape(2, 3) is m and m.reshape(3, 2).layout == lib._mkldnn
        assert lib.nn.functional.max_pool2d(lib.zeros(1, 1, 4, 4).to_mkldnn(), 2).layout == lib._mkldnn
        assert lib.nn.functional.adaptive_avg_pool2d(lib.zeros(1, 1, 4, 4).to_mkldnn(), 1).layout == lib._mkldnn


def test_pool_gradients_take_the_default_stride():
    """torch 1.13's mkldnn_max_pool2d_backward refuses the default (empty) stride that
    F.max_pool2d(x, 2) passes; tessera uses the kernel size, as the forward does, and gives the
    gradient torch gives with the stride spelled out."""
    base = _x((1, 2, 4, 4))
    x = torch.tensor(base.tolist(), requires_grad=True)
    torch.mkldnn_max_pool2d(x.to_mkldnn(), [2, 2], [2, 2]).to_dense().sum().backward()
    t = to_tessera(base).requires_grad_()
    tessera.nn.functional.max_pool2d(t.to_mkldnn(), 2).to_dense().sum().backward()
    torch.testing.assert_close(to_torch(t.grad), x.grad)
    with pytest.raises(RuntimeError, match="expected stride"):
        torch.nn.functional.max_pool2d(x.to_mkldnn(), 2).to_dense().sum().backward()


def test_a_number_scales_an_mkldnn_tensor_on_either_side_rounded_once():
    """oneDNN scales in float and rounds once, bfloat16 included; 2 * m commutes."""
    base = _x((4, 8)) * 10
    for dtype in ("float32", "bfloat16"):
        want_m = base.to_mkldnn(getattr(torch, dtype))
        got_m = to_tessera(base).to_mkldnn(getattr(tessera, dtype))
        for want, got in ((want_m * 2.7, got_m * 2.7), (2.7 * want_m, 2.7 * got_m), (3 * want_m, 3 * got_m),
                          (want_m.clone().mul_(2.7), got_m.clone().mul_(2.7))):
            assert got.layout == tessera._mkldnn
            assert torch.equal(to_torch(got.to_dense()), want.to_dense())
