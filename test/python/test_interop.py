"""numpy, DLPack and pickling against torch: memory shared both ways (checked by writing
through one side and reading the other), torch's refusals, every dtype, and pickle round
trips through torch's reduce protocol."""
import copy
import pickle

import numpy as np
import pytest
import torch
import torch.utils.dlpack

import tessera

NUMPY_DTYPES = ["float64", "float32", "float16", "complex64", "complex128", "int64", "int32", "int16", "int8",
                "uint8", "bool"]


def _sample(dtype, shape=(2, 3)):
    return (np.arange(np.prod(shape)).reshape(shape) % 3).astype(dtype)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_shares_memory_both_ways(dtype):
    t = tessera.from_numpy(_sample(dtype))
    a = t.numpy()
    assert a.dtype == np.dtype(dtype) and a.shape == (2, 3)
    assert np.shares_memory(a, t.numpy())
    a[1, 2] = 1
    assert t[1, 2].item() == a[1, 2].item()
    b = _sample(dtype)
    s = tessera.from_numpy(b)
    b[0, 1] = 2 if dtype != "bool" else True
    assert s[0, 1].item() == b[0, 1].item()
    assert str(s.dtype) == "tessera." + dtype
    assert s.tolist() == torch.from_numpy(b).tolist()


def test_numpy_views_keep_strides_and_owners():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = base[1:, ::2]
    s = tessera.from_numpy(view)
    assert tuple(s.shape) == (3, 3) and s.stride() == (6, 2)
    s[0, 0] = -1
    assert base[1, 0] == -1
    t = tessera.arange(12.0).reshape(3, 4).t()
    a = t.numpy()
    assert a.strides == (4, 16)
    del t
    assert a[1, 2] == 9.0  # the array keeps the tensor's memory alive
    e = tessera.empty(0, 3)
    assert e.numpy().shape == (0, 3)


def test_numpy_refusals_match_torch():
    def both(fn):
        outcomes = []
        for lib in (torch, tessera):
            try:
                fn(lib)
                outcomes.append(None)
            except Exception as e:  # noqa: BLE001
                outcomes.append(type(e).__name__)
        assert outcomes[0] == outcomes[1] and outcomes[0] is not None, outcomes

    both(lambda L: L.tensor([1.0], requires_grad=True).numpy())
    both(lambda L: L.from_numpy(np.arange(3, dtype=np.uint16)))
    both(lambda L: L.from_numpy(np.arange(4.0)[::-1]))
    both(lambda L: L.from_numpy(np.arange(4.0).astype(">f8")))
    both(lambda L: L.from_numpy([1, 2]))
    both(lambda L: L.tensor([1.0], dtype=L.bfloat16).numpy())
    # force=True copies what cannot be shared (current torch's keyword; 1.13 lacks it).
    r = tessera.tensor([1.0, 2.0], requires_grad=True)
    assert r.numpy(force=True).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_tensor_and_as_tensor_from_numpy(dtype):
    a = _sample(dtype)
    t = torch.tensor(a)
    s = tessera.tensor(a)
    assert str(s.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert s.tolist() == t.tolist()
    s[0, 0] = 1
    assert a[0, 0] == _sample(dtype)[0, 0]  # tensor() copies
    shared = tessera.as_tensor(a)
    shared[0, 1] = 1
    assert a[0, 1] == 1  # as_tensor shares when it can
    cast = tessera.as_tensor(a, dtype=tessera.float64)
    assert cast.dtype == tessera.float64 and cast.tolist() == torch.as_tensor(a, dtype=torch.float64).tolist()
    x = tessera.ones(2)
    assert tessera.as_tensor(x) is x
    assert tessera.as_tensor([1, 2]).tolist() == [1, 2]


def test_array_protocol_and_ufuncs():
    s = tessera.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(s)
    assert np.shares_memory(a, s.numpy())
    assert np.asarray(s, dtype=np.float64).dtype == np.float64
    r = np.sin(s)
    t = np.sin(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert isinstance(r, tessera.Tensor) and isinstance(t, torch.Tensor)
    assert r.reshape(-1).tolist() == pytest.approx(t.reshape(-1).tolist())
    g = np.greater(s, 2.0)
    assert g.dtype == tessera.uint8 and g.tolist() == np.greater(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), 2.0).tolist()


DLPACK_DTYPES = ["float64", "float32", "float16", "bfloat16", "complex64", "complex128", "int64", "int32", "int16",
                 "int8", "uint8"]


@pytest.mark.parametrize("dtype", DLPACK_DTYPES)
def test_dlpack_round_trips_with_torch(dtype):
    t = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    s = tessera.from_dlpack(t)  # via t.__dlpack__
    assert s.tolist() == t.tolist() and str(s.dtype) == "tessera." + dtype
    s[0, 0] = 5
    assert t[0, 0].item() == 5
    back = torch.utils.dlpack.from_dlpack(s)  # via s.__dlpack__
    back[1, 2] = 4
    assert s[1, 2].item() == 4 and back.dtype == t.dtype
    capsule = torch.utils.dlpack.to_dlpack(t[:, 1:])
    v = tessera.from_dlpack(capsule)
    assert v.tolist() == t[:, 1:].tolist() and v.stride() == (3, 1)
    with pytest.raises(Exception, match="consumed"):
        tessera.from_dlpack(capsule)  # a capsule is consumed once


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8", "complex128"])
def test_dlpack_round_trips_with_numpy(dtype):
    a = _sample(dtype)
    s = tessera.from_dlpack(a)
    s[0, 0] = 2
    assert a[0, 0] == 2
    b = np.from_dlpack(s)
    assert np.shares_memory(b, s.numpy())
    assert s.__dlpack_device__() == (1, 0)


def test_dlpack_bool_and_lifetime():
    s = tessera.tensor([True, False, True])
    u = tessera.from_dlpack(s)
    assert u.dtype == tessera.bool and u.tolist() == [True, False, True]
    t = torch.arange(4.0)
    s = tessera.from_dlpack(t)
    del t
    assert s.tolist() == [0.0, 1.0, 2.0, 3.0]  # the capsule's owner lives as long as s
    with pytest.raises(RuntimeError, match="require gradient"):
        tessera.ones(2, requires_grad=True).__dlpack__()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "int8", "int64", "bool", "complex64",
                                   "float8_e4m3fn", "float8_e5m2"])
def test_pickle_round_trip(dtype):
    base = tessera.tensor([[1, 0, 2], [3, 1, 0]], dtype=getattr(tessera, dtype))
    for t in (base, base.t(), base[1:, 1:], base.reshape(-1)[::2]):
        u = pickle.loads(pickle.dumps(t))
        assert u.dtype == t.dtype and tuple(u.shape) == tuple(t.shape)
        assert u.stride() == t.stride() and u.storage_offset() == t.storage_offset()
        assert u.to(tessera.float32).tolist() == t.to(tessera.float32).tolist()
        u.fill_(1)  # a copy: the original keeps its values
        assert t.to(tessera.float32).tolist() != u.to(tessera.float32).tolist() or t.eq(1).all().item()


def test_pickle_follows_torchs_reduce_protocol():
    t = torch.arange(6.0).reshape(2, 3)[:, 1:]
    s = tessera.arange(6.0).reshape(2, 3)[:, 1:]
    fn_t, args_t = t.__reduce_ex__(2)
    fn_s, args_s = s.__reduce_ex__(2)
    assert fn_t.__name__ == fn_s.__name__ == "_rebuild_tensor_v2"
    assert args_s[1:5] == args_t[1:5]  # storage offset, size, stride, requires_grad
    assert len(args_s[0]) == len(args_t[0]) == 6  # the whole storage
    r = pickle.loads(pickle.dumps(tessera.tensor([1.0, 2.0], requires_grad=True)))
    assert r.requires_grad and r.is_leaf
    d = copy.deepcopy(s)
    d[0, 0] = 100
    assert s[0, 0].item() == 1.0
