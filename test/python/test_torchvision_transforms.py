"""torchvision 0.14's tensor transforms, unmodified, on tessera: the same expression runs
here on PyTorch and in torchvision_child.py's process on tessera (``import torch`` there
is tessera), on the same float and uint8 images.

Tessera's generator is a counter-based one (Philox), not torch's Mersenne Twister, so a
seed does not give torch's numbers. The random transforms are therefore compared through
their own parameter draw: on tessera, the transform's get_params runs under a seed, then
the transform itself under the same seed (so it draws the same parameters); here, torch
applies the deterministic function with those parameters. The policies that draw inside
(AutoAugment, RandAugment, TrivialAugmentWide, AugMix) are checked to run, to give torch's
shape and dtype, and to repeat under a seed."""
import os
import pathlib
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
import torchvision.transforms as T  # noqa: E402,N812
import torchvision.transforms.functional as F  # noqa: E402,N812

CHILD = pathlib.Path(__file__).with_name("torchvision_child.py")

# expression over x (a float image batch [2, 3, 20, 24] in [0, 1]) or u (the same as uint8)
CASES = {
    "resize_bilinear": "F.resize(x, [13, 17], antialias=False)",
    "resize_bilinear_antialias": "F.resize(x, [9, 11], antialias=True)",
    "resize_bicubic": "F.resize(x, [31, 29], interpolation=T.InterpolationMode.BICUBIC)",
    "resize_nearest": "F.resize(x, 12, interpolation=T.InterpolationMode.NEAREST)",
    "resize_uint8": "F.resize(u, [10, 30], antialias=False)",
    "center_crop": "F.center_crop(x, [10, 11])",
    "center_crop_pad": "F.center_crop(x, [26, 30])",
    "crop": "F.crop(x, 3, 4, 9, 10)",
    "resized_crop": "F.resized_crop(x, 2, 3, 12, 14, [8, 8])",
    "five_crop": "torch.stack(F.five_crop(x, [7, 9]))",
    "hflip": "F.hflip(x)",
    "vflip": "F.vflip(u)",
    "normalize": "F.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])",
    "pad_constant": "F.pad(x, [2, 3, 1, 4], fill=0.5)",
    "pad_reflect": "F.pad(x, [2, 3], padding_mode='reflect')",
    "pad_edge": "F.pad(x, [3, 1, 2, 2], padding_mode='edge')",
    "pad_symmetric": "F.pad(x, [2, 1, 3, 2], padding_mode='symmetric')",
    "grayscale": "F.rgb_to_grayscale(x, num_output_channels=3)",
    "brightness": "F.adjust_brightness(x, 1.3)",
    "contrast": "F.adjust_contrast(u, 0.7)",
    "saturation": "F.adjust_saturation(x, 1.5)",
    "hue": "F.adjust_hue(x, 0.1)",
    "gamma": "F.adjust_gamma(x, 0.8, 1.1)",
    "sharpness": "F.adjust_sharpness(x, 2.0)",
    "posterize": "F.posterize(u, 3)",
    "solarize": "F.solarize(x, 0.6)",
    "autocontrast": "F.autocontrast(x)",
    "equalize": "F.equalize(u)",
    "invert": "F.invert(u)",
    "gaussian_blur": "F.gaussian_blur(x, [5, 3], [1.5, 0.8])",
    "rotate": "F.rotate(x, 30.0)",
    "rotate_expand": "F.rotate(x, 17.0, interpolation=T.InterpolationMode.BILINEAR, expand=True)",
    "affine": "F.affine(x, angle=10.0, translate=[2, -1], scale=1.1, shear=[5.0, 3.0])",
    "perspective": "F.perspective(x, [[0, 0], [23, 0], [23, 19], [0, 19]], [[1, 2], [20, 1], [22, 18], [2, 17]])",
    "elastic": "F.elastic_transform(x, torch.linspace(-1, 1, 2 * 20 * 24).reshape(1, 20, 24, 2))",
    "convert_dtype": "F.convert_image_dtype(u, torch.float32)",
    "convert_dtype_back": "F.convert_image_dtype(x, torch.uint8)",
    "compose": "T.Compose([T.CenterCrop(16), T.Resize(12, antialias=True), T.Normalize([0.5] * 3, [0.25] * 3)])(x)",
}

# name: (transform, its parameter draw, torch's deterministic function of those parameters p)
RANDOM_CASES = {
    "random_crop": ("T.RandomCrop(12)(x)", "T.RandomCrop.get_params(x, (12, 12))", "F.crop(x, *p)"),
    "random_resized_crop": ("T.RandomResizedCrop(10, antialias=True)(x)",
                            "T.RandomResizedCrop.get_params(x, [0.08, 1.0], [3 / 4, 4 / 3])",
                            "F.resized_crop(x, *p, [10, 10], antialias=True)"),
    "random_hflip": ("T.RandomHorizontalFlip(0.5)(x)", "bool(torch.rand(1) < 0.5)", "F.hflip(x) if p else x"),
    "color_jitter": ("T.ColorJitter(0.4, 0.4, 0.4, 0.1)(x)",
                     "T.ColorJitter.get_params((0.6, 1.4), (0.6, 1.4), (0.6, 1.4), (-0.1, 0.1))", "jitter(x, p)"),
    "random_rotation": ("T.RandomRotation(25)(x)", "T.RandomRotation.get_params([-25.0, 25.0])",
                        "F.rotate(x, p, fill=[0.0] * 3)"),
    "random_affine": ("T.RandomAffine(20, translate=(0.1, 0.1), scale=(0.9, 1.1))(x)",
                      "T.RandomAffine.get_params([-20.0, 20.0], (0.1, 0.1), (0.9, 1.1), None, [24, 20])",
                      "F.affine(x, *p, fill=[0.0] * 3)"),
    "random_erasing": ("T.RandomErasing(p=1.0)(x)",
                       "(torch.rand(1), T.RandomErasing.get_params(x, (0.02, 0.33), (0.3, 3.3), [0]))",
                       "F.erase(x, *p[1])"),
}
POLICIES = {"autoaugment": "T.AutoAugment()(u)", "randaugment": "T.RandAugment()(u)",
            "trivialaugment": "T.TrivialAugmentWide()(u)", "augmix": "T.AugMix()(u)"}


# torchvision.ops' Python functions (box arithmetic, losses, nms and roi pooling through the
# torchvision:: operators) over boxes b [20, 4] and b2 [15, 4], scores s, classes i and
# feature maps f [2, 8, 16, 16]
OPS_CASES = {
    "box_iou": "ops.box_iou(b, b2)",
    "generalized_box_iou": "ops.generalized_box_iou(b, b2)",
    "distance_box_iou": "ops.distance_box_iou(b, b2)",
    "complete_box_iou": "ops.complete_box_iou(b, b2)",
    "box_area": "ops.box_area(b)",
    "box_convert_cxcywh": "ops.box_convert(b, 'xyxy', 'cxcywh')",
    "box_convert_xywh": "ops.box_convert(ops.box_convert(b, 'xyxy', 'xywh'), 'xywh', 'cxcywh')",
    "clip_boxes": "ops.clip_boxes_to_image(b * 1.5, (20, 25))",
    "remove_small_boxes": "ops.remove_small_boxes(b, 6.0)",
    "nms": "ops.nms(b, s, 0.3)",
    "batched_nms": "ops.batched_nms(b, s, i, 0.5)",
    "masks_to_boxes": "ops.masks_to_boxes(f[0] > 0.8)",
    "sigmoid_focal_loss": "ops.sigmoid_focal_loss(f[0], (f[1] > 0.5).float(), reduction='mean')",
    "generalized_box_iou_loss": "ops.generalized_box_iou_loss(b[:15], b2, reduction='sum')",
    "distance_box_iou_loss": "ops.distance_box_iou_loss(b[:15], b2)",
    "complete_box_iou_loss": "ops.complete_box_iou_loss(b[:15], b2)",
    "roi_align": "ops.roi_align(f, [b[:5] * 0.5, b2[:4] * 0.5], 3, 0.5, sampling_ratio=2, aligned=True)",
    "roi_pool": "ops.roi_pool(f, [b[:5], b2[:4]], (2, 3), 0.5)",
    "ps_roi_align": "ops.ps_roi_align(f, [b[:5], b2[:4]], 2, 0.5)",
    "ps_roi_pool": "ops.ps_roi_pool(f, [b[:5], b2[:4]], 2, 0.5)",
    "deform_conv2d": "ops.deform_conv2d(f, f[:, :8, :14, :14].repeat(1, 3, 1, 1)[:, :18] * 2 - 1, "
                     "f[0, :, :3, :3].unsqueeze(0).repeat(8, 1, 1, 1) - 0.5)",
}


def ops_inputs():
    gen = torch.Generator().manual_seed(4)
    xy = torch.rand(20, 2, generator=gen) * 18
    b = torch.cat([xy, xy + 1 + torch.rand(20, 2, generator=gen) * 10], 1)
    xy2 = torch.rand(15, 2, generator=gen) * 18
    b2 = torch.cat([xy2, xy2 + 1 + torch.rand(15, 2, generator=gen) * 10], 1)
    return [b, b2, torch.rand(20, generator=gen), torch.randint(0, 3, (20,), generator=gen),
            torch.rand(2, 8, 16, 16, generator=gen)]


def wrap_ops(expr):
    return f"(lambda b, b2, s, i, f: {expr})(*x)"


def jitter(x, params):
    """ColorJitter's forward with its drawn parameters."""
    order, b, c, s, h = params
    for fn_id in order.tolist():
        x = [F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue][fn_id](x, [b, c, s, h][fn_id])
    return x


def images():
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(2, 3, 20, 24, generator=gen)
    return x, (x * 255).round().to(torch.uint8)


def wrap(expr):
    # the child evaluates with x bound to the job's input; u derives from it the same way
    return f"(lambda x, u: {expr})(x[0], x[1])"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    x, u = images()
    env = {"T": T, "F": F, "torch": torch, "x": [x, u]}
    jobs, refs = {}, {}
    for key, expr in CASES.items():
        jobs[key] = {"kind": "transform", "expr": wrap(expr), "input": [x, u]}
        refs[key] = eval(wrap(expr), env)  # noqa: S307
    for seed, (key, (expr, params, _)) in enumerate(RANDOM_CASES.items()):
        jobs[key] = {"kind": "random_transform", "expr": wrap(expr), "params": wrap(params), "input": [x, u],
                     "seed": seed}
    for seed, (key, expr) in enumerate(POLICIES.items()):
        jobs[key] = {"kind": "random_transform", "expr": wrap(expr), "params": wrap(expr), "input": [x, u],
                     "seed": seed}
        refs[key] = eval(wrap(expr), env)  # noqa: S307  (torch's own draw: shape and dtype only)
    import torchvision.ops as ops
    for key, expr in OPS_CASES.items():
        jobs[key] = {"kind": "transform", "expr": wrap_ops(expr), "input": ops_inputs()}
        refs[key] = eval(wrap_ops(expr), {"ops": ops, "torch": torch, "x": ops_inputs()})  # noqa: S307
    tmp = tmp_path_factory.mktemp("transforms")
    torch.save(jobs, tmp / "jobs.pt")
    proc = subprocess.run([sys.executable, str(CHILD), str(tmp / "jobs.pt"), str(tmp / "results.pt")],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = torch.load(tmp / "results.pt")
    assert bool(got.pop("__torch_is_tessera__"))
    return refs, got


def assert_same_image(out, ref, key):
    assert out.dtype == ref.dtype and out.shape == ref.shape
    if ref.dtype == torch.uint8:
        # Blends of uint8 pixels are rounded from float: where torch's value is exactly .5
        # (a 2:1 downscale averages pairs), its kernel's fused multiply-adds and tessera's
        # separate products can land on either side of it, one step apart.
        assert (out.int() - ref.int()).abs().max() <= 1, key
        assert (out != ref).float().mean() < 0.05, key
    else:
        torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("key", sorted(CASES))
def test_transform_matches_torch(results, key):
    refs, got = results
    assert "error" not in got[key], got[key].get("error")
    assert_same_image(got[key]["output"], refs[key], key)


@pytest.mark.parametrize("key", sorted(RANDOM_CASES))
def test_random_transform_applies_its_draw_as_torch(results, key):
    _, got = results
    assert "error" not in got[key], got[key].get("error")
    x, u = images()
    expected = eval(wrap(RANDOM_CASES[key][2]), {"T": T, "F": F, "torch": torch, "x": [x, u], "p": got[key]["params"],
                                                 "jitter": jitter})  # noqa: S307
    assert_same_image(got[key]["output"], expected, key)


@pytest.mark.parametrize("key", sorted(POLICIES))
def test_augmentation_policy_runs_and_repeats_under_a_seed(results, key):
    refs, got = results
    assert "error" not in got[key], got[key].get("error")
    out, again = got[key]["output"], got[key]["params"]  # the same transform twice under one seed
    assert out.dtype == refs[key].dtype == torch.uint8 and out.shape == refs[key].shape
    assert torch.equal(out, again)


@pytest.mark.parametrize("key", sorted(OPS_CASES))
def test_torchvision_ops_function_matches_torch(results, key):
    refs, got = results
    assert "error" not in got[key], got[key].get("error")
    out, ref = got[key]["output"], refs[key]
    assert out.dtype == ref.dtype and out.shape == ref.shape
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
