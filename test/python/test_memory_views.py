"""Changing what memory a tensor views, and making tensors over other objects' memory:
resize_ / resize_as_ / set_ / is_set_to and the deprecated resize / resize_as, asarray,
frombuffer, from_file and to_dlpack, each against torch 1.13 (values, sharing, errors)."""
import array
import warnings

import numpy as np
import pytest
import torch

import tessera
from torch_compare import outcome, tn


def test_resize_grows_keeping_bytes_and_shrinks_in_place():
    for lib in (torch, tessera):
        t = lib.arange(6.0)
        ptr = t.data_ptr()
        assert t.resize_(2, 2) is t and t.tolist() == [[0.0, 1.0], [2.0, 3.0]] and t.data_ptr() == ptr
        t.resize_(4, 5)
        assert t.shape == (4, 5) and t.reshape(-1)[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        assert t.is_contiguous()
        t.resize_(2, 3, 4, 5, memory_format=lib.channels_last)
        assert t.stride() == (60, 1, 15, 3)
        u = lib.zeros(2, 3).resize_as_(lib.empty(3, 1))
        assert u.shape == (3, 1) and u.reshape(-1).tolist() == [0.0, 0.0, 0.0]


def test_resize_of_a_view_grows_the_shared_storage():
    for lib in (torch, tessera):
        base = lib.arange(4.0)
        view = base[1:]
        view.resize_(5)
        assert view.reshape(-1)[:3].tolist() == [1.0, 2.0, 3.0]
        assert view.untyped_storage().nbytes() if hasattr(view, "untyped_storage") else True


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(3, requires_grad=True).resize_(4),
    lambda L: L.zeros(3, requires_grad=True).resize_as_(L.zeros(2)),
    lambda L: L.zeros(3).resize_(2, memory_format=L.preserve_format),
    lambda L: L.zeros(3).resize_(2, 2, memory_format=L.channels_last),
    lambda L: L.from_numpy(np.zeros(3, dtype=np.float32)).resize_(10),
    lambda L: L.zeros(3, requires_grad=True).set_(L.ones(3)),
])
def test_resize_and_set_refuse_like_torch(call):
    want, got = outcome(lambda: call(torch)), outcome(lambda: call(tessera))
    assert want[0] == got[0] != "ok"


def test_from_numpy_storage_is_not_resizable_message():
    t = tessera.from_numpy(np.zeros(3, dtype=np.float32))
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        t.resize_(10)
    assert t.resize_(2).shape == (2,)  # shrinking needs no new memory


def test_set_forms_share_memory_like_torch():
    for lib in (torch, tessera):
        src = lib.arange(6.0)
        t = lib.zeros(2)
        t.set_(src)
        assert t.is_set_to(src) and t.data_ptr() == src.data_ptr() and t.shape == (6,)
        t.set_(src, 2, (2, 2), (1, 2))
        assert t.tolist() == [[2.0, 4.0], [3.0, 5.0]] and not t.is_set_to(src)
        t.set_(src.storage())
        assert t.tolist() == src.tolist() and t.data_ptr() == src.data_ptr()
        t.set_(src.storage(), 1, (2,))
        assert t.tolist() == [1.0, 2.0]
        t[0] = 40.0
        assert src[1].item() == 40.0
        t.set_(source=src, storage_offset=3, size=(3,), stride=(1,))
        assert t.tolist() == [3.0, 4.0, 5.0]
        t.set_()
        assert t.shape == (0,) and not t.is_set_to(src)
        assert src.is_set_to(src) and not src.is_set_to(src[1:]) and not src.is_set_to(src.view(2, 3))


def test_set_checks_dtype_and_source_grad():
    with pytest.raises(RuntimeError, match="Expected a Storage of type"):
        tessera.zeros(3).set_(tessera.ones(3, dtype=tessera.float64).storage())
    with pytest.raises(RuntimeError, match="scalar type"):
        tessera.zeros(3).set_(tessera.ones(3, dtype=tessera.float64))
    with pytest.raises(NotImplementedError, match="detach"):
        tessera.zeros(3).set_(tessera.ones(3, requires_grad=True))


def test_deprecated_out_of_place_resize():
    for lib in (torch, tessera):
        x = lib.arange(6.0, requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = x.resize(2, 3)
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            z = x.resize_as(lib.empty(3, 2))
        (y * lib.arange(6.0).view(2, 3)).sum().backward()
        (z.sum() * 2).backward()
        assert y.shape == (2, 3) and z.shape == (3, 2)
        assert x.grad.tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="autograd's resize can only change the shape"):
                x.resize(4)


# ---------------------------------------------------------------- asarray, frombuffer, from_file, to_dlpack

def test_frombuffer_shares_memory_and_checks_like_torch():
    a = array.array("i", [1, 2, 3])
    t = tessera.frombuffer(a, dtype=tessera.int32)
    a[0] = 9
    assert t.tolist() == [9, 2, 3]
    t[1] = 7
    assert a[1] == 7
    buffer = bytearray(b"\x01\x00\x02\x00\x03\x00")
    for kw in ({"dtype": "int16", "count": 1, "offset": 2}, {"dtype": "int16"}, {"dtype": "int16", "offset": 4},
               {"dtype": "int16", "count": 0}, {"dtype": "int16", "count": 4}, {"dtype": "int16", "offset": 6},
               {"dtype": "int32"}, {"dtype": "bfloat16", "requires_grad": True}):
        def call(lib):
            args = dict(kw, dtype=getattr(lib, kw["dtype"]))
            return lib.frombuffer(bytearray(buffer), **args)
        want, got = outcome(lambda: call(torch)), outcome(lambda: call(tessera))
        assert want[0] == got[0], (kw, want, got)
        if want[0] == "ok":
            torch.testing.assert_close(tn(got[1].detach().float()), want[1].detach().float())
            assert got[1].requires_grad == want[1].requires_grad
        else:
            assert want[1] == got[1]
    with pytest.raises(ValueError, match="buffer protocol"):
        tessera.frombuffer([1, 2], dtype=tessera.int16)
    with pytest.warns(UserWarning, match="not writable"):
        assert tessera.frombuffer(b"\x05\x00", dtype=tessera.int16).tolist() == [5]


def test_asarray_aliases_where_it_can():
    x = tessera.arange(3.0)
    assert tessera.asarray(x) is x
    assert tessera.asarray(x, copy=True).data_ptr() != x.data_ptr()
    assert tessera.asarray(x, dtype=tessera.float64).dtype == tessera.float64
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype 'Long'"):
        tessera.asarray(x, copy=False, dtype=tessera.int64)
    n = np.arange(3.0)
    shared = tessera.asarray(n)
    n[0] = 5.0
    assert shared.tolist() == [5.0, 1.0, 2.0] and shared.dtype == tessera.float64
    grad = tessera.asarray(x, requires_grad=True)
    assert grad.requires_grad and not x.requires_grad
    with pytest.raises(ValueError, match="can't alias arbitrary sequence"):
        tessera.asarray([1, 2], copy=False)
    for obj, kw in (([1, 2.5], {}), ([[1, 2], [3, 4]], {"dtype": "float32"}), (3, {}), (array.array("i", [1, 2]), {}),
                    (array.array("i", [1, 2]), {"dtype": "int32"}), (torch.arange(4) * 1, {"dtype": "float64"})):
        def call(lib):
            k = {key: getattr(lib, v) for key, v in kw.items()}
            return lib.asarray(obj, **k)
        want, got = outcome(lambda: call(torch)), outcome(lambda: call(tessera))
        assert want[0] == got[0] == "ok"
        assert got[1].dtype == getattr(tessera, str(want[1].dtype).split(".")[1])
        torch.testing.assert_close(tn(got[1]), want[1])


def test_asarray_reads_dlpack_producers_without_copying():
    source = torch.arange(4.0)
    shared = tessera.asarray(source)
    source[0] = 9.0
    assert shared.tolist() == [9.0, 1.0, 2.0, 3.0]


def test_from_file_maps_like_torch(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(5, dtype=np.float32).tofile(path)
    for lib in (torch, tessera):
        assert lib.from_file(str(path), size=5).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        assert lib.from_file(str(path), size=2, dtype=lib.float64).tolist() == \
            np.fromfile(path, dtype=np.float64, count=2).tolist()
        assert lib.from_file(str(path)).numel() == 0
        private = lib.from_file(str(path), shared=False, size=5)
        private[1] = -1.0
        assert np.fromfile(path, dtype=np.float32)[1] == 1.0
    mapped = tessera.from_file(str(path), shared=True, size=5)
    mapped[0] = 42.0
    del mapped
    assert np.fromfile(path, dtype=np.float32)[0] == 42.0
    for call in (lambda L: L.from_file(str(path), size=6), lambda L: L.from_file(str(tmp_path / "none.bin"), size=2)):
        want, got = outcome(lambda: call(torch)), outcome(lambda: call(tessera))
        assert want[0] == got[0] == "RuntimeError"
        assert want[1].split("<")[0] == got[1].split("<")[0]


def test_to_dlpack_round_trips_with_torch():
    t = tessera.arange(4.0)
    back = torch.from_dlpack(tessera.to_dlpack(t))
    back[0] = 7.0
    assert t.tolist() == [7.0, 1.0, 2.0, 3.0]
    assert tessera.to_dlpack is tessera.utils.dlpack.to_dlpack
