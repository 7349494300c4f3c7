"""Geometry that would reach outside a tensor's storage, from every entry point that accepts
sizes, strides and offsets: each case is a reproducer of a hole found by hand or by fuzzing,
checked to fail cleanly (never to read or write another allocation's bytes). Runs under
ASan/UBSan too (test/python/CMakeLists.txt).

Reference: current PyTorch's computeStorageNbytes, which checks the storage offset for
overflow as well (torch 1.13 does not: its as_strided accepts the first case below, the
same hole)."""
import collections
import io

import numpy as np
import pytest
import torch

import tessera

OVERFLOW = "Storage size calculation overflowed"


@pytest.mark.parametrize("offset", [2**62 - 64, 2**62, 2**63 - 1, 2**61 + 3])
def test_as_strided_offset_overflow_is_refused(offset):
    # (offset + 64) * 4 bytes wraps around 2**64: the bounds check used to pass and fill_
    # wrote before the storage.
    x = tessera.arange(10.)
    with pytest.raises(RuntimeError, match=OVERFLOW):
        tessera.as_strided(x, (64,), (1,), offset).fill_(-7.)
    with pytest.raises(RuntimeError, match=OVERFLOW):
        x.as_strided_((64,), (1,), offset)
    assert x.tolist() == list(map(float, range(10)))


@pytest.mark.parametrize("size,stride,offset,torch_refuses", [
    ((2,), (2**62,), 0, True),      # the span overflows: torch 1.13 refuses these as well
    ((3, 3), (2**61, 2**61), 0, True),
    ((2**32, 2**32), (2**31, 1), 0, True),
    ((1,), (1,), 2**63 - 1, False),  # offset + 1 overflows: torch 1.13 does not look
])
def test_as_strided_span_overflow(size, stride, offset, torch_refuses):
    libs = (torch, tessera) if torch_refuses else (tessera,)
    for lib in libs:
        with pytest.raises(RuntimeError, match=OVERFLOW):
            lib.as_strided(lib.arange(10.), size, stride, offset)


def test_as_strided_in_bounds_still_works_as_torch():
    cases = [((3,), (2,), 1), ((2, 2), (1, 2), 4), ((1,), (2**60,), 9), ((0,), (5,), 0), ((2, 0), (2**40, 1), 3)]
    for size, stride, offset in cases:
        th = torch.as_strided(torch.arange(10.), size, stride, offset)
        ts = tessera.as_strided(tessera.arange(10.), size, stride, offset)
        assert list(ts.shape) == list(th.shape) and ts.tolist() == th.tolist()
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match="out of bounds for storage of size 40"):
            lib.as_strided(lib.arange(10.), (4,), (3,), 1)


def test_empty_geometry_that_overflows_is_refused():
    # torch accepts an empty tensor whatever its offset, and a size-1 dim whatever its
    # stride; tessera requires every tensor's farthest offset, and each stride in bytes, to
    # fit in int64, so views derived from it (select, diagonal, view as another dtype) and
    # kernels' byte steps cannot overflow.
    x = tessera.arange(10.)
    with pytest.raises(RuntimeError, match=OVERFLOW):
        tessera.as_strided(x, (0,), (1,), 2**62)
    with pytest.raises(RuntimeError, match=OVERFLOW):
        tessera.as_strided(x, (0, 5), (1, 2**62), 0)
    with pytest.raises(RuntimeError, match=OVERFLOW):
        tessera.as_strided(x, (1,), (2**62,), 0)  # 2**62 floats are 2**64 bytes
    assert tessera.as_strided(x, (1,), (2**61 - 1,), 4).tolist() == [4.0]


def test_views_of_geometry_at_the_limits_do_not_overflow():
    # A size-1 dim may carry any stride (as in torch); views that scale or add such strides
    # must not overflow (UBSan checks this when the suite runs sanitized). torch 1.13 itself
    # overflows on some of these (diagonal's stride sum), so the expected values come from
    # the definition: every view below reads storage elements starting at the offset.
    x = tessera.as_strided(tessera.arange(10.), (1, 1), (2**60, 2**60), 3)
    assert x.diagonal().tolist() == [3.0]  # 2**61 floats of stride overflow in bytes
    assert x[:, ::2**62].tolist() == [[3.0]]
    y = tessera.as_strided(tessera.arange(10.), (1, 4), (2**60, 1), 2)
    assert y.view(tessera.uint8).shape == (1, 16)
    assert y.view(tessera.uint8).view(tessera.float32).tolist() == [[2.0, 3.0, 4.0, 5.0]]
    assert y[:, ::2**62].tolist() == [[2.0]]
    assert y.unfold(1, 2, 2**62).tolist() == [[[2.0, 3.0]]]
    assert (y[:, ::2**62] + 1).tolist() == [[3.0]]  # kernels step by the kept strides
    c = tessera.as_strided(tessera.arange(8.).view(tessera.complex64), (1, 2), (2**59, 1), 1)
    assert tessera.view_as_real(c).tolist() == [[[2.0, 3.0], [4.0, 5.0]]]
    assert tessera.view_as_real(c[:, ::2**62]).tolist() == [[[2.0, 3.0]]]
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError):
            lib.arange(10.).unfold(0, -2**63, 1)


def test_empty_strided_overflow_matches_torch():
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match=OVERFLOW):
            lib.empty_strided((2,), (2**62,))
    with pytest.raises(RuntimeError, match="overflow"):
        tessera.empty_strided((2**40, 2**30), (2**30, 1))
    assert tessera.empty_strided((1,), (2**60,)).shape == (1,)


def test_out_resize_counts_the_storage_offset():
    # out= resizes an empty out tensor that sits at an offset in its storage: the new
    # storage must cover offset + elements.
    base = tessera.zeros(8)
    out = base[5:5]
    a = tessera.arange(6.)
    tessera.add(a, a, out=out)
    assert out.tolist() == [2.0 * i for i in range(6)]
    assert out.storage_offset() == 5 and out._storage_nbytes() >= (5 + 6) * 4


def test_load_refuses_a_checkpoint_whose_offset_wraps(tmp_path):
    # torch 1.13 itself builds this tensor (its as_strided has the hole) and saves it: the
    # file carries a 10-float storage and offset 2**62 - 64. Loading it used to give a tensor
    # reading the bytes before its storage.
    evil = torch.as_strided(torch.arange(10.), (64,), (1,), 2**62 - 64)
    path = tmp_path / "evil.pt"
    torch.save({"w": evil}, path)
    for weights_only in (True, False):
        with pytest.raises(RuntimeError, match=OVERFLOW):
            tessera.load(path, weights_only=weights_only)
    buf = io.BytesIO()
    torch.save(evil, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match=OVERFLOW):
        tessera.load(buf)


class _View:
    """Pickles as torch's _rebuild_tensor_v2 call with whatever geometry it is given."""

    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride, False, collections.OrderedDict())

    def __reduce_ex__(self, proto):
        return (torch._utils._rebuild_tensor_v2, self.args)


def test_load_refuses_out_of_bounds_offsets(tmp_path):
    # In range for int64 but past the storage: a hand-made checkpoint (torch itself refuses
    # to build such a tensor) must fail the ordinary bounds check, with either unpickler.
    storage = torch.arange(10.).storage()
    path = tmp_path / "oob.pt"
    torch.save({"ok": _View(storage, 6, (4,), (1,))}, path)
    assert tessera.load(path)["ok"].tolist() == [6.0, 7.0, 8.0, 9.0]
    for offset, size, stride in [(7, (4,), (1,)), (2**20, (4,), (3,)), (0, (2, 2), (1, 9))]:
        torch.save({"w": _View(storage, offset, size, stride)}, path)
        for weights_only in (True, False):
            with pytest.raises(RuntimeError, match="out of bounds for storage of size 40"):
                tessera.load(path, weights_only=weights_only)


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_from_numpy_geometry():
    # numpy's own arrays are always in bounds; odd but valid geometry imports as torch does.
    cases = [np.zeros((5, 0, 2), np.float32), np.zeros((3, 4))[::2, ::3], np.broadcast_to(np.arange(3.), (4, 3)),
             np.zeros((0,), np.int64)]
    for arr in cases:
        th, ts = torch.from_numpy(arr), tessera.from_numpy(arr)
        assert list(ts.shape) == list(th.shape) and ts.stride() == th.stride()
    with pytest.raises(ValueError, match="negative"):
        tessera.from_numpy(np.arange(4.)[::-1])


def test_dlpack_round_trip_of_views():
    x = tessera.arange(24.).view(4, 6)[1:, ::2]
    y = tessera.from_dlpack(x)
    assert y.tolist() == x.tolist() and y.stride() == x.stride()
    z = tessera.from_dlpack(torch.arange(6.).view(2, 3).t())
    assert z.tolist() == torch.arange(6.).view(2, 3).t().tolist()


VERSION_CASES = [
    ("fill_", lambda lib, t: t.fill_(2)),
    ("copy_", lambda lib, t: t.copy_(lib.ones(3, 4))),
    ("add_", lambda lib, t: t.add_(1)),
    ("transpose_", lambda lib, t: t.transpose_(0, 1)),
    ("t_", lambda lib, t: t.t_()),
    ("squeeze_", lambda lib, t: t.unsqueeze_(0).squeeze_()),
    ("as_strided_", lambda lib, t: t.as_strided_((2,), (1,), 1)),
    ("tril_", lambda lib, t: t.tril_()),
    ("uniform_", lambda lib, t: t.uniform_()),
    ("normal_", lambda lib, t: t.normal_()),
    ("random_", lambda lib, t: t.random_(0, 5)),
    ("bernoulli_", lambda lib, t: t.bernoulli_(0.5)),
    ("index_put_", lambda lib, t: t.index_put_((lib.tensor([0]),), lib.tensor(1.0))),
    ("cat out", lambda lib, t: lib.cat([lib.ones(1, 4), lib.ones(2, 4)], out=t)),
    ("arange out", lambda lib, t: lib.arange(3.0, out=t)),
    ("linspace out", lambda lib, t: lib.linspace(0, 1, 5, out=t)),
    ("mul out", lambda lib, t: lib.mul(lib.ones(3, 4), 2, out=t)),
]


@pytest.mark.parametrize("name,op", VERSION_CASES, ids=[c[0] for c in VERSION_CASES])
def test_in_place_and_out_ops_bump_the_version_once_as_torch(name, op):
    # The version counter is what saved tensors check (a stale save is an error): each
    # write counts once, as in torch, not once per layer that handled it.
    deltas = []
    for lib in (torch, tessera):
        t = lib.zeros(3, 4)
        before = t._version
        op(lib, t)
        deltas.append(t._version - before)
    assert deltas[1] == deltas[0]


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_from_numpy_checks_in_torchs_order():
    # Found by the input fuzzer: an array that is wrong in several ways gets torch's error.
    for make in [lambda: np.zeros(3, np.dtype(">f4"))[::-1], lambda: np.zeros(3, np.dtype(">u2")),
                 lambda: np.zeros(3, np.uint16)[::-1], lambda: np.zeros(3, np.uint16)]:
        with pytest.raises(Exception) as want:
            torch.from_numpy(make())
        with pytest.raises(Exception) as got:
            tessera.from_numpy(make())
        assert got.type is want.type and str(got.value)[:40] == str(want.value)[:40]


def test_corrupt_bool_bytes_load_as_true(tmp_path):
    # Found by the loader fuzzer under UBSan: a bool storage holding the byte 17 made
    # tolist() load an invalid bool. The loader maps nonzero bytes to True (1).
    path = tmp_path / "bools.pt"
    torch.save(torch.tensor([True, False, True]), path)
    data = bytearray(path.read_bytes())
    import zipfile
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        records = {i.filename: zf.read(i) for i in zf.infolist()}
    key = next(n for n in records if n.endswith("data/0"))
    records[key] = bytes([17, 0, 255])
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name, blob in records.items():
            zf.writestr(name, blob)
    loaded = tessera.load(io.BytesIO(out.getvalue()))
    assert loaded.tolist() == [True, False, True]
    assert loaded.view(tessera.uint8).tolist() == [1, 0, 1]
    assert loaded.sum().item() == 2
