"""torchvision's operator namespace on tessera (extensions/vision, libtessera_torchvision):
loaded by tessera.ops.load_library when given torchvision's own extension, each operator
is compared with torchvision 0.14's kernel on PyTorch in this process (same inputs,
forward and gradients), gradchecked in float64, run on the Meta device, and given bad
inputs."""
import pytest

import tessera

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
from torchvision.extension import _get_extension_path  # noqa: E402

tv = torch.ops.torchvision


@pytest.fixture(scope="module")
def ops():
    # torchvision's _C is built for PyTorch: tessera loads its own build of the namespace
    tessera.ops.load_library(_get_extension_path("_C"))
    return tessera.ops.torchvision


def to_tessera(t, requires_grad=False):
    out = tessera.tensor(t.detach().numpy())
    return out.requires_grad_() if requires_grad else out


def to_torch(t):
    return torch.from_numpy(t.detach().numpy().copy())


def close(a, b, rtol=1e-5, atol=1e-5):
    torch.testing.assert_close(to_torch(a), b, rtol=rtol, atol=atol, equal_nan=True)


def make_rois(gen, n_images, count, height, width, dtype=torch.float32):
    # boxes inside, across and outside the image, degenerate ones, and one on the edge
    x1 = torch.rand(count, generator=gen) * (width + 4) - 3
    y1 = torch.rand(count, generator=gen) * (height + 4) - 3
    w = torch.rand(count, generator=gen) * width * 0.8
    h = torch.rand(count, generator=gen) * height * 0.8
    batch = torch.randint(0, n_images, (count,), generator=gen).float()
    rois = torch.stack([batch, x1, y1, x1 + w, y1 + h], 1)
    extra = torch.tensor([[0, 1.5, 2.5, 1.5, 2.5], [n_images - 1, 0, 0, width - 1, height - 1],
                          [0, width - 0.5, height - 0.5, width + 2, height + 2]])
    return torch.cat([rois, extra]).to(dtype)


def test_load_library_gives_tessera_build_of_torchvision_namespace(ops):
    assert ops._cuda_version() == -1
    names = {"nms", "roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool", "deform_conv2d"}
    for name in names:
        assert str(getattr(ops, name).default._schema) == str(getattr(tv, name).default._schema)
    tessera.ops.load_library(_get_extension_path("_C"))  # again, as a second import would


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nms_matches_torchvision(ops, dtype):
    gen = torch.Generator().manual_seed(1)
    xy = torch.rand(200, 2, generator=gen) * 50
    boxes = torch.cat([xy, xy + 2 + torch.rand(200, 2, generator=gen) * 20], 1).to(dtype)
    scores = torch.rand(200, generator=gen).to(dtype)
    for threshold in (0.0, 0.3, 0.5, 0.9, 1.0):
        got = ops.nms(to_tessera(boxes), to_tessera(scores), threshold)
        assert got.dtype == tessera.int64
        assert got.tolist() == tv.nms(boxes, scores, threshold).tolist()
    assert ops.nms(tessera.zeros(0, 4), tessera.zeros(0), 0.5).tolist() == []


def test_nms_errors(ops):
    cases = [((tessera.rand(4), tessera.rand(4)), "boxes should be a 2d tensor, got 1D"),
             ((tessera.rand(4, 3), tessera.rand(4)), "boxes should have 4 elements in dimension 1, got 3"),
             ((tessera.rand(4, 4), tessera.rand(4, 1)), "scores should be a 1d tensor, got 2D"),
             ((tessera.rand(4, 4), tessera.rand(3)), "same number of elements in dimension 0, got 4 and 3"),
             ((tessera.rand(4, 4), tessera.rand(4).double()), "dets should have the same type as scores")]
    for args, message in cases:
        with pytest.raises(RuntimeError, match=message):
            ops.nms(*args, 0.5)
    with pytest.raises(RuntimeError, match="not implemented for 'Int'"):
        ops.nms(tessera.ones(4, 4, dtype=tessera.int32), tessera.ones(4, dtype=tessera.int32), 0.5)
    with pytest.raises(NotImplementedError, match="depends on their values"):
        ops.nms(tessera.empty(4, 4, device="meta"), tessera.empty(4, device="meta"), 0.5)


ALIGN_CASES = [(1.0, 2, 2, -1, False), (0.5, 3, 4, 2, True), (0.25, 7, 7, 0, False), (1.0, 1, 3, 3, True)]


@pytest.mark.parametrize("scale,ph,pw,sampling,aligned", ALIGN_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_roi_align_matches_torchvision(ops, scale, ph, pw, sampling, aligned, dtype):
    gen = torch.Generator().manual_seed(2)
    x = torch.rand(2, 3, 11, 13, generator=gen, dtype=dtype)
    rois = make_rois(gen, 2, 12, int(11 / scale), int(13 / scale), dtype)
    xr = x.clone().requires_grad_()
    ref = tv.roi_align(xr, rois, scale, ph, pw, sampling, aligned)
    g = torch.rand(ref.shape, generator=gen, dtype=dtype)
    ref.backward(g)
    xt = to_tessera(x, requires_grad=True)
    got = ops.roi_align(xt, to_tessera(rois), scale, ph, pw, sampling, aligned)
    close(got, ref.detach())
    got.backward(to_tessera(g))
    close(xt.grad, xr.grad)


@pytest.mark.parametrize("name", ["roi_pool", "ps_roi_pool", "ps_roi_align"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("pooled", [(2, 2), (2, 3)])
def test_pooling_ops_match_torchvision(ops, name, dtype, pooled):
    gen = torch.Generator().manual_seed(3)
    x = torch.rand(2, 12, 10, 9, generator=gen, dtype=dtype)
    rois = make_rois(gen, 2, 10, 20, 18, dtype)
    if name == "ps_roi_pool":
        # torchvision's ps_roi_pool forward never reads a plane's last row and column but
        # its backward writes them (and divides by the larger bin): its gradient is not the
        # forward's. Tessera's backward is the forward's true derivative (gradchecked
        # below), so gradients are compared on rois whose bins stay inside that border.
        inside = torch.tensor([[0, 1.0, 2.0, 9.0, 11.0], [1, 4.0, 0.0, 13.0, 14.0], [0, 0.0, 0.0, 3.0, 2.0]], dtype=dtype)
    args = (0.5, *pooled) + ((-1,) if name == "ps_roi_align" else ())
    ref, ref_index = getattr(tv, name)(x, rois, *args)
    got, got_index = getattr(ops, name)(to_tessera(x), to_tessera(rois), *args)
    close(got, ref)
    assert got_index.dtype == tessera.int32 and got_index.tolist() == ref_index.tolist()
    grad_rois = inside if name == "ps_roi_pool" else rois
    xr = x.clone().requires_grad_()
    ref = getattr(tv, name)(xr, grad_rois, *args)[0]
    g = torch.rand(ref.shape, generator=gen, dtype=dtype)
    g = torch.where(torch.isnan(ref), torch.zeros_like(g), g)  # ps_roi_align's empty rois give NaN
    ref.backward(g)
    xt = to_tessera(x, requires_grad=True)
    getattr(ops, name)(xt, to_tessera(grad_rois), *args)[0].backward(to_tessera(g))
    close(xt.grad, xr.grad)


def test_roi_align_half_runs_as_torchvision(ops):
    gen = torch.Generator().manual_seed(4)
    x = torch.rand(1, 2, 8, 8, generator=gen)
    rois = make_rois(gen, 1, 5, 8, 8)
    ref = tv.roi_align(x.half(), rois.half(), 1.0, 2, 2, -1, True)
    got = ops.roi_align(to_tessera(x).half(), to_tessera(rois).half(), 1.0, 2, 2, -1, True)
    assert got.dtype == tessera.float16
    close(got.float(), ref.float(), rtol=1e-2, atol=2e-3)


DEFORM_CASES = [  # (in, out, groups, offset_groups, kernel, stride, pad, dilation, use_mask)
    (4, 6, 1, 1, (3, 3), (1, 1), (1, 1), (1, 1), True),
    (4, 6, 2, 2, (3, 2), (2, 1), (0, 1), (1, 2), True),
    (6, 4, 2, 3, (2, 2), (1, 2), (2, 0), (2, 1), False),
]


def deform_inputs(gen, cin, cout, groups, og, kernel, stride, pad, dil, dtype):
    x = torch.rand(2, cin, 7, 8, generator=gen, dtype=dtype)
    w = torch.randn(cout, cin // groups, *kernel, generator=gen, dtype=dtype)
    oh = (7 + 2 * pad[0] - (dil[0] * (kernel[0] - 1) + 1)) // stride[0] + 1
    ow = (8 + 2 * pad[1] - (dil[1] * (kernel[1] - 1) + 1)) // stride[1] + 1
    taps = kernel[0] * kernel[1]
    offset = torch.randn(2, 2 * og * taps, oh, ow, generator=gen, dtype=dtype) * 2
    mask = torch.rand(2, og * taps, oh, ow, generator=gen, dtype=dtype)
    bias = torch.randn(cout, generator=gen, dtype=dtype)
    return x, w, offset, mask, bias


@pytest.mark.parametrize("case", DEFORM_CASES)
def test_deform_conv2d_matches_torchvision(ops, case):
    cin, cout, groups, og, kernel, stride, pad, dil, use_mask = case
    gen = torch.Generator().manual_seed(5)
    tensors = deform_inputs(gen, cin, cout, groups, og, kernel, stride, pad, dil, torch.float64)
    if not use_mask:  # what torchvision.ops.deform_conv2d passes for mask=None
        tensors = tensors[:3] + (torch.zeros(2, 1, dtype=torch.float64),) + tensors[4:]
    scalars = (*stride, *pad, *dil, groups, og, use_mask)
    refs = [t.clone().requires_grad_() for t in tensors]
    ref = tv.deform_conv2d(*refs, *scalars)
    g = torch.randn(ref.shape, generator=gen, dtype=torch.float64)
    ref.backward(g)
    mine = [to_tessera(t, requires_grad=True) for t in tensors]
    got = ops.deform_conv2d(*mine, *scalars)
    close(got, ref.detach(), rtol=1e-10, atol=1e-10)
    got.backward(to_tessera(g))
    for name, a, b in zip(["input", "weight", "offset", "mask", "bias"], mine, refs):
        if b.grad is None:
            continue
        assert b.grad is not None and a.grad is not None, name
        close(a.grad, b.grad, rtol=1e-9, atol=1e-9)


def test_gradcheck(ops):
    gen = torch.Generator().manual_seed(6)
    x = to_tessera(torch.rand(1, 4, 6, 7, generator=gen, dtype=torch.float64), requires_grad=True)
    rois = to_tessera(torch.tensor([[0, 0.5, 1.2, 4.3, 5.1], [0, 2.2, 0.3, 5.9, 3.3]], dtype=torch.float64))
    gradcheck = tessera.autograd.gradcheck
    assert gradcheck(lambda t: ops.roi_align(t, rois, 1.0, 2, 3, 2, True), (x,))
    assert gradcheck(lambda t: ops.roi_align(t, rois, 1.0, 2, 2, -1, False), (x,))
    assert gradcheck(lambda t: ops.ps_roi_align(t, rois, 1.0, 2, 2, 2)[0], (x,))
    assert gradcheck(lambda t: ops.ps_roi_pool(t, rois, 1.0, 2, 2)[0], (x,))
    # roi_pool's max: distinct values keep finite differences away from ties
    xd = to_tessera(torch.randperm(168, generator=gen).double().reshape(1, 4, 6, 7) / 10, requires_grad=True)
    assert gradcheck(lambda t: ops.roi_pool(t, rois, 1.0, 2, 2)[0], (xd,))
    tensors = deform_inputs(gen, 4, 2, 2, 2, (2, 2), (1, 1), (1, 0), (1, 1), torch.float64)
    # offsets away from integer sample positions, where bilinear sampling has a kink
    mine = [to_tessera(t, requires_grad=True) for t in tensors]
    mine[2] = to_tessera(torch.round(tensors[2]) + 0.3, requires_grad=True)
    assert gradcheck(lambda *ts: ops.deform_conv2d(*ts, 1, 1, 1, 0, 1, 1, 2, 2, True), tuple(mine))


def test_meta_kernels(ops):
    x = tessera.empty(2, 8, 10, 9, device="meta")
    rois = tessera.empty(5, 5, device="meta")
    out = ops.roi_align(x, rois, 0.5, 3, 2, -1, True)
    assert out.device.type == "meta" and tuple(out.shape) == (5, 8, 3, 2)
    out, idx = ops.roi_pool(x, rois, 0.5, 3, 2)
    assert tuple(out.shape) == (5, 8, 3, 2) and idx.dtype == tessera.int32
    out, idx = ops.ps_roi_align(x, rois, 0.5, 2, 2, -1)
    assert tuple(out.shape) == (5, 2, 2, 2) and idx.dtype == tessera.int32
    out, _ = ops.ps_roi_pool(x, rois, 0.5, 2, 2)
    assert tuple(out.shape) == (5, 2, 2, 2)
    g = tessera.empty(5, 8, 3, 2, device="meta")
    assert tuple(ops._roi_align_backward(g, rois, 0.5, 3, 2, 2, 8, 10, 9, -1, True).shape) == (2, 8, 10, 9)
    w = tessera.empty(6, 4, 3, 3, device="meta")
    offset = tessera.empty(2, 18, 8, 7, device="meta")
    mask = tessera.empty(2, 9, 8, 7, device="meta")
    out = ops.deform_conv2d(x, w, offset, mask, tessera.empty(6, device="meta"), 1, 1, 0, 0, 1, 1, 2, 1, True)
    assert tuple(out.shape) == (2, 6, 8, 7)


def test_roi_errors(ops):
    x = tessera.rand(1, 4, 5, 5)
    with pytest.raises(RuntimeError, match=r"rois must have shape as Tensor\[K, 5\]"):
        ops.roi_align(x, tessera.rand(3, 4), 1.0, 2, 2, -1, False)
    with pytest.raises(RuntimeError, match="to have the same type as tensor for argument #2 'rois'"):
        ops.roi_align(x, tessera.rand(3, 5).double(), 1.0, 2, 2, -1, False)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ops.roi_align(tessera.rand(4, 5, 5), tessera.rand(3, 5), 1.0, 2, 2, -1, False)
    with pytest.raises(RuntimeError, match="multiple of pooling height"):
        ops.ps_roi_align(tessera.rand(1, 3, 5, 5), tessera.rand(3, 5), 1.0, 2, 2, -1)
    with pytest.raises(RuntimeError, match="multiple of pooling height"):
        ops.ps_roi_pool(tessera.rand(1, 3, 5, 5), tessera.rand(3, 5), 1.0, 2, 2)
    # torchvision reads out of bounds for a roi naming an image the batch lacks; tessera refuses
    for name, args in [("roi_align", (1.0, 2, 2, -1, False)), ("roi_pool", (1.0, 2, 2)),
                       ("ps_roi_align", (1.0, 2, 2, -1)), ("ps_roi_pool", (1.0, 2, 2))]:
        with pytest.raises(IndexError, match="roi batch index 3.* out of range for a batch of 1"):
            getattr(ops, name)(x, tessera.tensor([[3.0, 0, 0, 2, 2]]), *args)
    x2 = tessera.rand(1, 2, 5, 5, requires_grad=True)
    y = ops.roi_align(x2, tessera.tensor([[0.0, 0, 0, 3, 3]]), 1.0, 2, 2, -1, False)
    (gx,) = tessera.autograd.grad(y.sum(), x2, create_graph=True)
    assert not gx.requires_grad  # roi_align is linear in its input, as with torchvision


def test_deform_conv2d_errors(ops):
    x, w = tessera.rand(1, 4, 5, 5), tessera.rand(6, 2, 3, 3)
    off, mask, b = tessera.rand(1, 18, 3, 3), tessera.rand(1, 9, 3, 3), tessera.rand(6)
    with pytest.raises(RuntimeError, match="offset.shape\\[1\\] is not valid: got: 17 expected: 18"):
        ops.deform_conv2d(x, w, tessera.rand(1, 17, 3, 3), mask, b, 1, 1, 0, 0, 1, 1, 2, 1, True)
    with pytest.raises(RuntimeError, match="mask.shape\\[1\\] is not valid: got: 8 expected: 9"):
        ops.deform_conv2d(x, w, off, tessera.rand(1, 8, 3, 3), b, 1, 1, 0, 0, 1, 1, 2, 1, True)
    with pytest.raises(RuntimeError, match=r"offset output dims: \(4, 3\) - computed output dims: \(3, 3\)"):
        ops.deform_conv2d(x, w, tessera.rand(1, 18, 4, 3), mask, b, 1, 1, 0, 0, 1, 1, 2, 1, True)
    with pytest.raises(RuntimeError, match="stride must be positive"):  # torchvision divides by zero here
        ops.deform_conv2d(x, w, off, mask, b, 0, 1, 0, 0, 1, 1, 2, 1, True)
    with pytest.raises(RuntimeError, match="weight has 2 input channels per group"):
        ops.deform_conv2d(x, w, off, mask, b, 1, 1, 0, 0, 1, 1, 1, 1, True)
    with pytest.raises(RuntimeError, match="do not divide into 3 offset groups"):
        ops.deform_conv2d(x, w, tessera.rand(1, 54, 3, 3), tessera.rand(1, 27, 3, 3), b, 1, 1, 0, 0, 1, 1, 2, 3, True)
    with pytest.raises(RuntimeError, match="invalid batch size of offset"):
        ops.deform_conv2d(tessera.rand(2, 4, 5, 5), w, off, mask, b, 1, 1, 0, 0, 1, 1, 2, 1, True)
    with pytest.raises(RuntimeError, match="not implemented for 'Half'"):
        ops.deform_conv2d(x.half(), w.half(), off.half(), mask.half(), b.half(), 1, 1, 0, 0, 1, 1, 2, 1, True)


def test_torchvision_python_ops_on_tessera(ops):
    # torchvision.ops' Python layer calls torch.ops.torchvision.*: run its functions with
    # tessera tensors by routing that namespace here, and compare with torch's run
    import torchvision.ops.boxes as box_ops
    gen = torch.Generator().manual_seed(7)
    xy = torch.rand(50, 2, generator=gen) * 30
    boxes = torch.cat([xy, xy + 1 + torch.rand(50, 2, generator=gen) * 15], 1)
    scores = torch.rand(50, generator=gen)
    classes = torch.randint(0, 3, (50,), generator=gen)
    ref = box_ops.batched_nms(boxes, scores, classes, 0.4)
    offsets = to_tessera(classes).to(tessera.float32) * (to_tessera(boxes).max() + 1)
    got = ops.nms(to_tessera(boxes) + offsets[:, None], to_tessera(scores), 0.4)
    assert got.tolist() == ref.tolist()


def test_hostile_inputs_give_torchvision_values_or_clear_errors(ops):
    # rois flipped by a negative scale (negative sample counts), empty images, NaN
    # coordinates and scores, pooled sizes whose product overflows: torchvision's values
    # where it has defined ones, never a crash
    x = torch.randn(2, 8, 10, 12)
    flipped = torch.tensor([[0, 8.0, 3.0, 15.0, 20.0]])
    for aligned in (True, False):
        ref = tv.roi_align(x, flipped, -0.5, 3, 2, 0, aligned)
        close(ops.roi_align(to_tessera(x), to_tessera(flipped), -0.5, 3, 2, 0, aligned), ref)
    ref = tv.ps_roi_align(x, flipped, -0.5, 2, 2, 0)[0]
    close(ops.ps_roi_align(to_tessera(x), to_tessera(flipped), -0.5, 2, 2, 0)[0], ref)
    empty = tessera.zeros(1, 4, 0, 5)
    box = tessera.tensor([[0.0, 0, -1, 4, 0]])
    assert ops.roi_align(empty, box, 1.0, 2, 2, 2, False).abs().sum().item() == 0
    assert ops.ps_roi_align(empty, box, 1.0, 2, 2, 2)[0].abs().sum().item() == 0
    assert ops.ps_roi_pool(empty, box, 1.0, 2, 2)[0].abs().sum().item() == 0
    assert ops.roi_pool(empty, box, 1.0, 2, 2)[1].tolist() == [[[[-1, -1], [-1, -1]]] * 4]
    for name, extra in (("ps_roi_pool", ()), ("ps_roi_align", (0,))):
        with pytest.raises(RuntimeError, match="multiple of pooling height"):
            getattr(ops, name)(tessera.randn(1, 4, 5, 5), tessera.tensor([[0, 0, 0, 3, 3.0]]), 1.0, 1 << 32, 1 << 32,
                               *extra)
    nan = float("nan")
    ones = tessera.ones(1, 1, 4, 4)
    assert ops.roi_align(ones, tessera.tensor([[0.0, nan, 1, 1, 3]]), 1.0, 2, 2, 0, False).tolist() == \
        [[[[0.0, 0.0], [0.0, 0.0]]]]
    assert ops.roi_pool(ones, tessera.tensor([[0.0, nan, 1, 1, nan]]), 1.0, 2, 2)[0].abs().sum().item() == 0
    with pytest.raises(IndexError, match="roi batch index nan is out of range"):
        ops.roi_align(ones, tessera.tensor([[nan, 0, 1, 1, 3]]), 1.0, 2, 2, 0, False)
    # a batch index is truncated toward zero, as torchvision reads it
    half = torch.tensor([[-0.5, 0, 1.0, 1.0, 3.0]])
    close(ops.roi_align(to_tessera(torch.ones(1, 1, 4, 4)), to_tessera(half), 1.0, 2, 2, 0, False),
          tv.roi_align(torch.ones(1, 1, 4, 4), half, 1.0, 2, 2, 0, False))
    # NaN scores come first, as torch's descending sort puts them
    boxes = torch.tensor([[0, 0, 1, 1], [10, 10, 11, 11], [0, 0, 1, 1], [20, 20, 21, 21.0]])
    scores = torch.tensor([0.5, nan, 0.9, nan])
    assert ops.nms(to_tessera(boxes), to_tessera(scores), 0.5).tolist() == tv.nms(boxes, scores, 0.5).tolist()
    offset = tessera.full((1, 18, 2, 2), nan)
    out = ops.deform_conv2d(ones, tessera.ones(1, 1, 3, 3), offset, tessera.ones(1, 9, 2, 2), tessera.zeros(1), 1, 1, 0,
                            0, 1, 1, 1, 1, True)
    assert out.abs().sum().item() == 0  # NaN offsets sample nothing
