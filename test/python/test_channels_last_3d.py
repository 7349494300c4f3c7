"""tessera.channels_last_3d (NDHWC) against torch 1.13: the strides factories and
conversions give, contiguity, which ops keep the format and which give contiguous results
(as torch's do), the rank errors, and the format object itself."""
import pickle

import pytest
import torch
import torch.nn.functional as TF

import tessera
import tessera.nn.functional as F

from opinfo import assert_raises_like_torch, to_tessera

CL3 = {torch: torch.channels_last_3d, tessera: tessera.channels_last_3d}
SHAPES = [(2, 3, 4, 5, 6), (0, 3, 1, 1, 1), (2, 0, 3, 4, 5), (2, 3, 0, 4, 5), (1, 1, 1, 1, 1), (3, 1, 2, 1, 2)]


def _x(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g)


def test_the_format_object():
    assert repr(tessera.channels_last_3d) == "tessera.channels_last_3d"
    assert pickle.loads(pickle.dumps(tessera.channels_last_3d)) is tessera.channels_last_3d


@pytest.mark.parametrize("shape", SHAPES)
def test_empty_and_factories_lay_out_ndhwc(shape):
    for make in (lambda lib: lib.empty(shape, memory_format=CL3[lib]),
                 lambda lib: lib.zeros(shape).contiguous(memory_format=CL3[lib]),
                 lambda lib: lib.zeros(shape).to(memory_format=CL3[lib]),
                 lambda lib: lib.empty_like(lib.zeros(shape), memory_format=CL3[lib]),
                 lambda lib: lib.zeros(shape).clone(memory_format=CL3[lib]),
                 lambda lib: lib.empty(0).resize_(shape, memory_format=CL3[lib])):
        want, got = make(torch), make(tessera)
        assert got.stride() == want.stride(), shape
        for fmt in ("contiguous_format", "channels_last_3d"):
            assert got.is_contiguous(memory_format=getattr(tessera, fmt)) == \
                want.is_contiguous(memory_format=getattr(torch, fmt)), (shape, fmt)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5, 6), (1, 3, 1, 2, 1), (2, 3, 2, 2, 2)])
def test_contiguity_of_views(shape):
    x = _x(shape)
    for view in (lambda t: t, lambda t: t.permute(0, 2, 3, 4, 1), lambda t: t.contiguous(memory_format=CL3[torch]),
                 lambda t: t.transpose(2, 4), lambda t: t[:, :, ::2]):
        want = view(x)
        got = to_tessera(want)
        assert got.is_contiguous(memory_format=tessera.channels_last_3d) == \
            want.is_contiguous(memory_format=torch.channels_last_3d)
        assert got.is_contiguous() == want.is_contiguous()


def test_to_and_contiguous_return_self_when_already_ndhwc():
    y = tessera.zeros(2, 3, 4, 5, 6).contiguous(memory_format=tessera.channels_last_3d)
    assert y.contiguous(memory_format=tessera.channels_last_3d) is y
    assert y.to(memory_format=tessera.channels_last_3d) is y
    # a 4-d channels_last tensor is not NDHWC: 5-d is required
    assert not tessera.zeros(2, 3, 4, 5).is_contiguous(memory_format=tessera.channels_last_3d)


@pytest.mark.parametrize("expr", [
    "lib.empty(2, 3, 4, 5, memory_format=lib.channels_last_3d)",
    "lib.zeros(2, 3, 4, 5).contiguous(memory_format=lib.channels_last_3d)",
    "lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last_3d)",
    "lib.zeros(2, 3).clone(memory_format=lib.channels_last_3d)",
    "lib.empty_like(lib.zeros(2, 3), memory_format=lib.channels_last_3d)",
    "lib.empty(2, 3, 4, 5).resize_(2, 3, 4, 5, memory_format=lib.channels_last_3d)",
    "lib.empty(2, 3, 4, 5).resize_(2, 3, 4, 5, 6, memory_format=lib.channels_last)",
    "lib.empty(2).resize_(3, memory_format=lib.preserve_format)",
])
def test_rank_errors_match_torch(expr):
    assert_raises_like_torch(expr)


def _ops(lib):
    nn = F if lib is tessera else TF
    return {
        "relu": lambda x: lib.relu(x),
        "add scalar": lambda x: x + 1,
        "mul self": lambda x: x * x,
        "clone": lambda x: x.clone(),
        "zeros_like": lambda x: lib.zeros_like(x),
        "empty_like": lambda x: lib.empty_like(x),
        "cat dim 1": lambda x: lib.cat([x, x], 1),
        "cat dim 0": lambda x: lib.cat([x, x], 0),
        "batch_norm": lambda x: nn.batch_norm(x, None, None, training=True),
        "group_norm": lambda x: nn.group_norm(x, 3),
        "constant pad": lambda x: nn.pad(x, (1, 1)),
        "instance_norm": lambda x: nn.instance_norm(x),
        "conv3d": lambda x: nn.conv3d(x, lib.ones(4, 3, 1, 1, 1)),
        "avg_pool3d": lambda x: nn.avg_pool3d(x, 2),
        "max_pool3d": lambda x: nn.max_pool3d(x, 2),
        "adaptive_avg_pool3d": lambda x: nn.adaptive_avg_pool3d(x, 2),
        "resize_as_ preserve": lambda x: lib.empty(0).resize_as_(x, memory_format=lib.preserve_format),
    }


@pytest.mark.parametrize("name", sorted(_ops(torch)))
def test_which_ops_keep_the_format(name):
    x = _x((2, 3, 4, 6, 6)).contiguous(memory_format=torch.channels_last_3d)
    want = _ops(torch)[name](x)
    got = _ops(tessera)[name](to_tessera(x))
    assert got.stride() == want.stride(), name
    if name not in ("empty_like", "resize_as_ preserve"):
        torch.testing.assert_close(torch.tensor(got.tolist()), want, rtol=1e-5, atol=1e-5)


def test_cat_of_mixed_formats_is_contiguous_like_torch():
    a = _x((1, 2, 2, 2, 2))
    for lib, t in ((torch, a), (tessera, to_tessera(a))):
        mixed = lib.cat([t.contiguous(memory_format=CL3[lib]), t], 1)
        assert mixed.is_contiguous()


def test_suggested_format_survives_elementwise_binary_ops():
    a = _x((2, 3, 2, 2, 2)).contiguous(memory_format=torch.channels_last_3d)
    b = _x((2, 3, 2, 2, 2), 1)
    assert (to_tessera(a) + to_tessera(b)).stride() == (a + b).stride()
    assert (to_tessera(b) + to_tessera(a)).stride() == (b + a).stride()


@pytest.mark.parametrize("shape,fmt", [((2, 0, 4, 5), "channels_last"), ((2, 3, 0, 5), "channels_last"),
                                       ((2, 3, 0, 4, 5), "channels_last_3d"), ((2, 0, 3, 4, 5), "channels_last_3d")])
def test_clone_of_an_empty_channels_last_tensor_keeps_its_strides(shape, fmt):
    want = torch.empty(shape, memory_format=getattr(torch, fmt)).clone()
    got = tessera.empty(shape, memory_format=getattr(tessera, fmt)).clone()
    assert got.stride() == want.stride()
    assert got.is_contiguous(memory_format=getattr(tessera, fmt)) == \
        want.is_contiguous(memory_format=getattr(torch, fmt))
