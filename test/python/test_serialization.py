"""tessera.save / tessera.load against real torch both ways: every dtype, views and shared
storages, containers, state dicts and Parameters, map_location, file objects and paths,
the weights-only unpickler against crafted pickles, and corrupt or truncated files."""
import collections
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch

import tessera
from tessera.nn.parameter import Parameter

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
          "complex64", "complex128"]


def _values(name, shape, seed=0):
    """Values every dtype holds exactly (quarters in [-8, 8) for floats)."""
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name.startswith("complex"):
        return (rng.integers(-32, 32, shape) / 4 + 1j * rng.integers(-32, 32, shape) / 4).astype(name)
    if name in ("float16", "bfloat16", "float32", "float64"):
        return (rng.integers(-32, 32, shape) / 4).astype("float32" if name == "bfloat16" else name)
    low = 0 if name == "uint8" else -100
    return rng.integers(low, 100, shape).astype(name)


def _pair(name, shape, seed=0):
    """The same values as a torch tensor and a tessera tensor."""
    arr = _values(name, shape, seed)
    th, ts = torch.from_numpy(arr.copy()), tessera.from_numpy(arr.copy())
    if name == "bfloat16":
        th, ts = th.to(torch.bfloat16), ts.to(tessera.bfloat16)
    return th, ts


def _np(t):
    """A tessera or torch tensor's values as numpy (bfloat16 widened exactly to float32)."""
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.detach().numpy()


def assert_same(ts, th):
    assert isinstance(ts, tessera.Tensor) and isinstance(th, torch.Tensor)
    assert str(ts.dtype).split(".")[1] == str(th.dtype).split(".")[1]
    assert tuple(ts.shape) == tuple(th.shape)
    assert tuple(ts.stride()) == tuple(th.stride()) and ts.storage_offset() == th.storage_offset()
    assert ts.requires_grad == th.requires_grad
    np.testing.assert_array_equal(_np(ts), _np(th))


def _torch_saved(obj, **kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf, **kwargs)
    return buf.getvalue()


def _tessera_saved(obj):
    buf = io.BytesIO()
    tessera.save(obj, buf)
    return buf.getvalue()


def _ts_load(data, **kwargs):
    return tessera.load(io.BytesIO(data), **kwargs)


def _torch_load(data, **kwargs):
    return torch.load(io.BytesIO(data), **kwargs)


def _zip(records, archive="archive"):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in records.items():
            z.writestr(f"{archive}/{name}", data)
    return buf.getvalue()


class _StorageId:
    def __init__(self, storage_class, location, numel):
        self.storage_class, self.location, self.numel = storage_class, location, numel


class _TensorOn:
    """Pickles as torch pickles a 1-D tensor over the storage record '0'."""

    def __init__(self, storage):
        self.storage = storage

    def __reduce__(self):
        n = self.storage.numel
        return (torch._utils._rebuild_tensor_v2, (self.storage, 0, (n,), (1,), False, collections.OrderedDict()))


def _crafted(data, storage_class=torch.FloatStorage, location="cpu", numel=None, byteorder=None):
    """A checkpoint built by hand: one tensor over record data/0 holding `data`."""
    numel = numel if numel is not None else len(data) // 4
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, 2)
    pickler.persistent_id = lambda o: (("storage", o.storage_class, "0", o.location, o.numel)
                                       if isinstance(o, _StorageId) else None)
    pickler.dump({"w": _TensorOn(_StorageId(storage_class, location, numel))})
    records = {"data.pkl": buf.getvalue(), "data/0": data, "version": b"3\n"}
    if byteorder:
        records["byteorder"] = byteorder
    return _zip(records)


# ---------------------------------------------------------------------------- dtypes and shapes

@pytest.mark.parametrize("name", DTYPES)
def test_dtype_tessera_to_torch(name):
    th, ts = _pair(name, (2, 3), seed=1)
    loaded = _torch_load(_tessera_saved(ts))
    assert loaded.dtype == th.dtype and torch.equal(loaded, th)
    assert_same(_ts_load(_tessera_saved(ts)), th)


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_torch_to_tessera(name):
    th, _ = _pair(name, (3, 2), seed=2)
    assert_same(_ts_load(_torch_saved(th)), th)


@pytest.mark.parametrize("make", [
    lambda x: x[0, 0],                    # 0-d view with an offset
    lambda x: x.new_zeros((0, 3)),        # empty
    lambda x: x.t(),                      # transposed
    lambda x: x[1:, ::2],                 # strided with an offset
    lambda x: x.reshape(-1)[3:7],         # slice of a flat view
], ids=["scalar", "empty", "transposed", "strided", "slice"])
def test_views_both_ways(make):
    th, ts = _pair("float32", (3, 4), seed=3)
    ts_view = tessera.as_strided(ts, tuple(make(th).shape), make(th).stride(), make(th).storage_offset())
    assert_same(_ts_load(_torch_saved(make(th))), make(th))
    loaded = _torch_load(_tessera_saved(ts_view))
    assert loaded.stride() == make(th).stride() and loaded.storage_offset() == make(th).storage_offset()
    assert torch.equal(loaded, make(th))


def test_0d_tensor_both_ways():
    th, ts = torch.tensor(2.5), tessera.tensor(2.5)
    assert_same(_ts_load(_torch_saved(th)), th)
    assert torch.equal(_torch_load(_tessera_saved(ts)), th)


def test_shared_storage_torch_to_tessera():
    th, _ = _pair("float32", (3, 4), seed=4)
    loaded = _ts_load(_torch_saved({"a": th, "v": th[1:, ::2], "t": th.t()}))
    assert_same(loaded["v"], th[1:, ::2])
    loaded["a"][1, 2] = 100.0
    assert loaded["v"][0, 1].item() == 100.0 and loaded["t"][2, 1].item() == 100.0


def test_shared_storage_tessera_to_torch():
    _, ts = _pair("float32", (3, 4), seed=5)
    data = _tessera_saved([ts, ts[1:, ::2]])
    assert len([n for n in zipfile.ZipFile(io.BytesIO(data)).namelist() if "/data/" in n]) == 1
    a, v = _torch_load(data)
    a[1, 2] = 100.0
    assert v[0, 1].item() == 100.0
    a2, v2 = _ts_load(data)
    a2[2, 0] = -7.0
    assert v2[1, 0].item() == -7.0


def test_same_storage_as_two_dtypes_is_refused():
    x = tessera.zeros(4)
    with pytest.raises(RuntimeError, match="different types"):
        tessera.save([x, x.view(tessera.int32)], io.BytesIO())
    y = torch.zeros(4)
    with pytest.raises(RuntimeError, match="different types"):
        torch.save([y, y.view(torch.int32)], io.BytesIO())


def test_data_pkl_matches_torch_byte_for_byte():
    arr = _values("float32", (2, 3))
    th, ts = torch.from_numpy(arr), tessera.from_numpy(arr)
    obj = lambda t, m: {"w": t, "v": t[1], "n": [1, "x", None, (True,)],  # noqa: E731
                        "od": collections.OrderedDict(b=m.ones(2, dtype=m.int64))}
    ours, theirs = zipfile.ZipFile(io.BytesIO(_tessera_saved(obj(ts, tessera)))), \
        zipfile.ZipFile(io.BytesIO(_torch_saved(obj(th, torch))))
    assert ours.read("archive/data.pkl") == theirs.read("archive/data.pkl")
    assert ours.read("archive/version") == theirs.read("archive/version") == b"3\n"
    assert ours.read("archive/byteorder") == b"little"
    for z in (ours, theirs):  # every record's bytes start on a 64-byte boundary, as torch writes them
        for info in z.infolist():
            z.fp.seek(info.header_offset)
            name_len, extra_len = struct.unpack("<HH", z.fp.read(30)[26:30])
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename


# ---------------------------------------------------------------------------- containers, modules, Parameters

def test_nested_containers_both_ways():
    th, ts = _pair("int64", (2,), seed=6)
    plain = {"i": 3, "f": -1.5, "s": "text", "none": None, "b": True, "bytes": b"\x00\xff", "set": {1, 2},
             "c": 1 + 2j, "nested": {"l": [1, [2, ("x", 4.0)]], "t": (5, "six")}}
    loaded = _ts_load(_torch_saved({**plain, "tensors": [th, (th, {"k": th})]}))
    assert {k: v for k, v in loaded.items() if k != "tensors"} == plain
    assert_same(loaded["tensors"][1][1]["k"], th)
    assert loaded["tensors"][0] is loaded["tensors"][1][0]  # one object saved once stays one object
    back = _torch_load(_tessera_saved({**plain, "tensors": [ts, (ts, {"k": ts})]}))
    assert {k: v for k, v in back.items() if k != "tensors"} == plain
    assert torch.equal(back["tensors"][1][1]["k"], th)


def test_torch_state_dict_loads_in_tessera():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    state = _ts_load(_torch_saved(lin.state_dict()))
    assert type(state) is collections.OrderedDict and list(state) == ["weight", "bias"]
    for key, value in lin.state_dict().items():
        assert_same(state[key], value)


def test_tessera_state_dict_loads_in_torch():
    arrays = collections.OrderedDict(weight=_values("float32", (2, 3), 7), bias=_values("float32", (2,), 8))
    state = collections.OrderedDict((k, tessera.from_numpy(v)) for k, v in arrays.items())
    data = _tessera_saved(state)
    lin = torch.nn.Linear(3, 2)
    lin.load_state_dict(_torch_load(data))
    np.testing.assert_array_equal(lin.weight.detach().numpy(), arrays["weight"])
    # torch 1.13's own weights-only unpickler accepts the file as well
    assert torch.equal(_torch_load(data, weights_only=True)["bias"], torch.from_numpy(arrays["bias"]))


@pytest.mark.parametrize("requires_grad", [True, False])
def test_parameters_both_ways(requires_grad):
    th, ts = _pair("float32", (2, 2), seed=9)
    loaded = _ts_load(_torch_saved({"p": torch.nn.Parameter(th, requires_grad)}))["p"]
    assert isinstance(loaded, Parameter) and loaded.requires_grad == requires_grad
    np.testing.assert_array_equal(_np(loaded), th.numpy())
    back = _torch_load(_tessera_saved({"p": Parameter(ts, requires_grad)}))["p"]
    assert isinstance(back, torch.nn.Parameter) and back.requires_grad == requires_grad
    assert torch.equal(back.detach(), th)


def test_requires_grad_tensors_both_ways():
    th, ts = _pair("float64", (3,), seed=10)
    loaded = _ts_load(_torch_saved(th.requires_grad_()))
    assert loaded.requires_grad and loaded.is_leaf and type(loaded) is tessera.Tensor
    back = _torch_load(_tessera_saved(ts.requires_grad_() * 2))  # non-leaf: saved as a leaf, as torch does
    assert back.requires_grad and back.is_leaf
    assert torch.equal(back.detach(), th.detach() * 2)


def test_dtype_device_size_layout_objects_both_ways():
    obj = lambda m: [m.float16, m.bfloat16, m.device("cpu"), m.Size([2, 3]), m.strided]  # noqa: E731
    assert _ts_load(_torch_saved(obj(torch))) == obj(tessera)
    assert _torch_load(_tessera_saved(obj(tessera))) == obj(torch)


def test_storages_both_ways():
    th, ts = _pair("int32", (4,), seed=11)
    storage = _ts_load(_torch_saved(th.storage()))
    assert isinstance(storage, tessera.TypedStorage) and storage.dtype == tessera.int32
    assert storage.tolist() == th.tolist()
    back = _torch_load(_tessera_saved(tessera.TypedStorage.of(ts)))
    assert back.dtype == torch.int32 and back.tolist() == th.tolist()


def test_meta_tensors_both_ways():
    loaded = _ts_load(_torch_saved(torch.empty(2, 3, device="meta")))
    assert loaded.device.type == "meta" and tuple(loaded.shape) == (2, 3)
    back = _torch_load(_tessera_saved(tessera.empty(4, 1, device="meta")))
    assert back.device.type == "meta" and back.shape == (4, 1)


def test_float8_round_trip():
    # current torch writes float8 over an UntypedStorage via _rebuild_tensor_v3 (torch 1.13 has no float8)
    x = tessera.tensor([1.0, -2.0, 0.5, 448.0]).to(tessera.float8_e4m3fn)[1:]
    data = _tessera_saved(x)
    assert b"_rebuild_tensor_v3" in zipfile.ZipFile(io.BytesIO(data)).read("archive/data.pkl")
    loaded = _ts_load(data)
    assert loaded.dtype == tessera.float8_e4m3fn and loaded.storage_offset() == 1
    assert loaded.view(tessera.uint8).tolist() == x.view(tessera.uint8).tolist()


@pytest.mark.parametrize("protocol", [4, 5])
def test_higher_pickle_protocols(protocol):
    th, ts = _pair("float32", (2, 2), seed=16)
    buf = io.BytesIO()
    tessera.save({"w": ts, "v": ts[1], "d": tessera.float64}, buf, pickle_protocol=protocol)
    loaded = _torch_load(buf.getvalue())
    assert torch.equal(loaded["v"], th[1]) and loaded["d"] is torch.float64
    assert_same(_ts_load(buf.getvalue())["w"], th)


def test_tessera_pickled_tensors_inside_a_checkpoint():
    # data.pkl written by plain pickle of tessera objects (tessera._utils / tessera.storage names)
    th, ts = _pair("float32", (2, 3), seed=17)
    payload = pickle.dumps({"w": ts.t(), "p": Parameter(ts), "d": tessera.int8}, protocol=2)
    for weights_only in (True, False):
        loaded = _ts_load(_with_pickle(payload), weights_only=weights_only)
        assert_same(loaded["w"], th.t())
        assert isinstance(loaded["p"], Parameter) and loaded["d"] is tessera.int8


def test_deflated_archive():
    th, _ = _pair("int64", (5,), seed=18)
    stored = zipfile.ZipFile(io.BytesIO(_torch_saved({"w": th})))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in stored.namelist():
            z.writestr(name, stored.read(name))
    assert_same(_ts_load(buf.getvalue())["w"], th)
    assert torch.equal(_torch_load(buf.getvalue())["w"], th)


def test_big_endian_records():
    values = np.array([1.5, -2.0, 3.25], dtype=np.float32)
    w = _ts_load(_crafted(values.astype(">f4").tobytes(), byteorder=b"big"))["w"]
    np.testing.assert_array_equal(w.numpy(), values)
    cvalues = np.array([1 + 2j, -3.5j], dtype=np.complex64)
    w = _ts_load(_crafted(cvalues.astype(">c8").tobytes(), torch.ComplexFloatStorage, numel=2, byteorder=b"big"))["w"]
    np.testing.assert_array_equal(w.numpy(), cvalues)


# ---------------------------------------------------------------------------- files and map_location

def test_paths_and_archive_name(tmp_path):
    th, ts = _pair("float32", (2,), seed=12)
    ours, theirs = tmp_path / "model.v1.pt", tmp_path / "torch_model.v1.pt"
    tessera.save({"w": ts}, ours)
    torch.save({"w": th}, str(theirs))
    assert zipfile.ZipFile(ours).namelist()[0] == "model.v1/data.pkl"
    assert zipfile.ZipFile(theirs).namelist()[0] == "torch_model.v1/data.pkl"
    assert torch.equal(torch.load(ours)["w"], th)
    assert_same(tessera.load(str(theirs))["w"], th)
    with open(ours, "rb") as f:
        assert_same(tessera.load(f)["w"], th)


def test_mmap(tmp_path):
    th, ts = _pair("float64", (3, 2), seed=13)
    path = tmp_path / "m.pt"
    tessera.save({"w": ts}, path)
    mapped = tessera.load(path, mmap=True)["w"]
    assert_same(mapped, th)
    mapped[0, 0] = 123.0  # copy-on-write: the file keeps its values
    assert_same(tessera.load(path)["w"], th)
    with pytest.raises(ValueError, match="file path"):
        tessera.load(io.BytesIO(_tessera_saved(ts)), mmap=True)


def test_unpicklable_object_leaves_file_alone(tmp_path):
    path = tmp_path / "bad.pt"
    with pytest.raises((pickle.PicklingError, AttributeError)):
        tessera.save({"f": lambda: 0}, path)
    assert not path.exists()
    with pytest.raises(NotImplementedError, match="legacy"):
        tessera.save(tessera.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False)


def _cuda_unavailable():
    try:
        tessera.zeros(1, device="cuda")
    except (NotImplementedError, RuntimeError):
        return True
    return False


@pytest.mark.parametrize("map_location", ["cpu", tessera.device("cpu"), torch.device("cpu"), {"cpu": "cpu"},
                                          lambda s, loc: None, lambda s, loc: s],
                         ids=["str", "tessera_device", "torch_device", "dict", "callable_none", "callable_storage"])
def test_map_location_cpu(map_location):
    th, _ = _pair("int16", (3,), seed=14)
    assert_same(_ts_load(_torch_saved({"w": th}), map_location=map_location)["w"], th)


def test_map_location_from_cuda_location():
    values = np.array([1.0, 2.0], dtype=np.float32)
    data = _crafted(values.tobytes(), location="cuda:0")
    expected = _torch_load(data, map_location="cpu")["w"]  # torch's reading of the same file
    seen = []
    assert_same(_ts_load(data, map_location=lambda s, loc: seen.append(loc) or s)["w"], expected)
    assert seen == ["cuda:0"]
    assert_same(_ts_load(data, map_location={"cuda:0": "cpu"})["w"], expected)
    assert_same(_ts_load(data, map_location="cpu")["w"], expected)
    if _cuda_unavailable():
        with pytest.raises(RuntimeError, match="map_location"):
            _ts_load(data)
        with pytest.raises(RuntimeError, match="map_location"):
            _ts_load(_tessera_saved(tessera.ones(1)), map_location="cuda")
    with pytest.raises(TypeError, match="map_location"):
        _ts_load(data, map_location=lambda s, loc: "not a storage")


# ---------------------------------------------------------------------------- weights_only

MARKER_CALLS = []


def _marker(arg):
    MARKER_CALLS.append(arg)
    return "marker-called"


class _CallsMarker:
    def __reduce__(self):
        return (_marker, ("arg",))


def _with_pickle(data_pkl):
    return _zip({"data.pkl": data_pkl, "version": b"3\n"})


@pytest.mark.parametrize("payload,name,unsafe_result", [
    (b"\x80\x02cos\ngetcwd\n)R.", "os.getcwd", os.getcwd()),
    (b"\x80\x02c__builtin__\neval\nX\x03\x00\x00\x001+1\x85R.", "__builtin__.eval", 2),
], ids=["os.getcwd", "builtins.eval"])
def test_weights_only_refuses_globals(payload, name, unsafe_result):
    data = _with_pickle(payload)
    with pytest.raises(pickle.UnpicklingError, match=rf"weights_only.*GLOBAL {name}"):
        _ts_load(data)
    with pytest.raises(pickle.UnpicklingError):  # torch 1.13 refuses it too
        _torch_load(data, weights_only=True)
    assert _ts_load(data, weights_only=False) == unsafe_result


def test_weights_only_does_not_call_refused_function():
    th, _ = _pair("float32", (2,), seed=15)
    data = _with_pickle(pickle.dumps({"w": 1, "evil": _CallsMarker()}, protocol=2))
    MARKER_CALLS.clear()
    with pytest.raises(pickle.UnpicklingError, match=rf"Unsupported global: GLOBAL {__name__}._marker"):
        _ts_load(data)
    assert MARKER_CALLS == []
    assert _ts_load(data, weights_only=False) == {"w": 1, "evil": "marker-called"}
    assert MARKER_CALLS == ["arg"]
    MARKER_CALLS.clear()
    tessera.serialization.add_safe_globals([_marker])
    try:
        assert _ts_load(data)["evil"] == "marker-called"
    finally:
        tessera.serialization.clear_safe_globals()
    with pytest.raises(RuntimeError, match="pickle_module"):
        _ts_load(data, pickle_module=pickle)
    assert _ts_load(_torch_saved(th), pickle_module=pickle, weights_only=False).tolist() == th.tolist()


def test_whole_torch_module_needs_weights_only_false():
    data = _torch_saved(torch.nn.ReLU())
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.activation.ReLU"):
        _ts_load(data)
    # unrestricted loads resolve torch names to tessera's, and say so when there is none
    assert type(_ts_load(data, weights_only=False)).__name__ == "ReLU"
    with pytest.raises(pickle.UnpicklingError, match="torch.no_such_module.thing, which has no tessera equivalent"):
        _ts_load(_with_pickle(b"\x80\x02ctorch.no_such_module\nthing\n."), weights_only=False)


# ---------------------------------------------------------------------------- corrupt files

def test_truncated_file():
    data = _tessera_saved({"w": tessera.arange(64.0)})
    with pytest.raises(RuntimeError, match="corrupt or truncated"):
        _ts_load(data[: len(data) // 2])


@pytest.mark.parametrize("data,match", [
    (np.random.default_rng(0).bytes(256), "not a torch.save"),
    (b"", "empty"),
    (_torch_saved(torch.ones(2), _use_new_zipfile_serialization=False), "legacy"),
], ids=["random", "empty", "legacy"])
def test_not_a_checkpoint(data, match):
    with pytest.raises(RuntimeError, match=match):
        _ts_load(data)


def test_missing_data_pkl():
    with pytest.raises(RuntimeError, match="no record archive/data.pkl"):
        _ts_load(_zip({"data/0": b"\x00" * 8, "version": b"3\n"}))


def test_short_storage_record():
    data = _crafted(np.arange(2, dtype=np.float32).tobytes(), numel=4)
    with pytest.raises(RuntimeError, match="holds 8 bytes but its storage needs 16"):
        _ts_load(data)


def test_corrupt_records():
    data = bytearray(_tessera_saved({"w": tessera.arange(16.0)}))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("archive/data/0")
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    data[info.header_offset + 30 + name_len + extra_len + 5] ^= 0xFF
    with pytest.raises(RuntimeError, match="archive/data/0 is corrupt"):
        _ts_load(bytes(data))
    good = zipfile.ZipFile(io.BytesIO(_tessera_saved({"w": tessera.arange(4.0)}))).read("archive/data.pkl")
    with pytest.raises(RuntimeError, match="data.pkl is corrupt"):
        _ts_load(_with_pickle(good[: len(good) // 2]))


# ---------------------------------------------------------------------------- weights_only: state and calls

def _u(text):
    """A BINUNICODE opcode for text."""
    raw = text.encode("utf-8")
    return b"X" + struct.pack("<I", len(raw)) + raw


def _build_on_global(module, name, attr, value_ops):
    """data.pkl that pushes GLOBAL module.name, then BUILDs it with the state
    (None, {attr: value}), the form pickle applies with setattr."""
    return (b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"N}" + _u(attr) + value_ops + b"s\x86b.")


@pytest.mark.parametrize("module,name,attr,value_ops,owner,", [
    ("torch.nn.parameter", "Parameter", "grad", b"N", Parameter),
    ("torch.nn.parameter", "Parameter", "__new__", b"ctorch\nSize\n", Parameter),
    ("torch._utils", "_rebuild_tensor", "__defaults__", b"K\x01\x85", tessera._torch_pickle.rebuild_tensor),
    ("collections", "OrderedDict", "__init__", b"N", collections.OrderedDict),
], ids=["parameter_grad", "parameter_new", "function_defaults", "ordereddict_init"])
def test_weights_only_build_cannot_modify_allowed_globals(module, name, attr, value_ops, owner):
    before = vars(owner).copy() if isinstance(owner, type) else dict(owner.__dict__, __defaults__=owner.__defaults__)
    with pytest.raises(pickle.UnpicklingError, match="BUILD"):
        _ts_load(_with_pickle(_build_on_global(module, name, attr, value_ops)))
    after = vars(owner).copy() if isinstance(owner, type) else dict(owner.__dict__, __defaults__=owner.__defaults__)
    assert after == before
    p = Parameter(tessera.ones(2))
    (p * 3).sum().backward()
    assert p.grad.tolist() == [3.0, 3.0]  # the class's grad descriptor is untouched


def test_weights_only_state_only_on_allowed_instances():
    # a state dict's _metadata (an OrderedDict attribute) comes through, as torch writes it
    lin = torch.nn.Linear(2, 1)
    assert _ts_load(_torch_saved(lin.state_dict()))._metadata == lin.state_dict()._metadata
    # state with a dunder name is refused even on an allowed instance
    data = _with_pickle(b"\x80\x02ccollections\nOrderedDict\n)R}" + _u("__class__") + b"ccollections\nOrderedDict\nsb.")
    with pytest.raises(pickle.UnpicklingError, match="__class__"):
        _ts_load(data)
    # state on a plain value (a tuple, a dtype) is refused
    with pytest.raises(pickle.UnpicklingError, match="BUILD"):
        _ts_load(_with_pickle(b"\x80\x02)N}" + _u("x") + b"Ns\x86b."))


class _CallableBox:
    calls = []

    def __call__(self, *args):
        _CallableBox.calls.append(args)
        return "called"


def test_weights_only_reduce_only_on_allowed_globals():
    # an instance of an allowed class is not an allowed function, even when it is callable
    data = _with_pickle(b"\x80\x02c" + f"{__name__}\n_CallableBox\n".encode() + b")\x81K\x01\x85R.")
    tessera.serialization.add_safe_globals([_CallableBox])
    _CallableBox.calls.clear()
    try:
        with pytest.raises(pickle.UnpicklingError, match="REDUCE"):
            _ts_load(data)
    finally:
        tessera.serialization.clear_safe_globals()
    assert _CallableBox.calls == []
    assert _ts_load(data, weights_only=False) == "called"
    # a storage class stands for a dtype and cannot be called
    with pytest.raises(pickle.UnpicklingError, match="REDUCE"):
        _ts_load(_with_pickle(b"\x80\x02ctorch\nFloatStorage\n)R."))


class _Rebuilt:
    def __init__(self, x=0):
        self.x = x


def test_weights_only_user_allowed_class_state():
    data = _tessera_saved({"obj": _Rebuilt(5)})
    tessera.serialization.add_safe_globals([_Rebuilt])
    try:
        loaded = _ts_load(data)["obj"]
    finally:
        tessera.serialization.clear_safe_globals()
    assert type(loaded) is _Rebuilt and loaded.x == 5


class _ParameterWithState:
    """Pickles as current torch pickles a Parameter with Python attributes set on it."""

    def __init__(self, data, state):
        self.data, self.state = data, state

    def __reduce__(self):
        fn = tessera._torch_pickle.TorchGlobal("torch._utils", "_rebuild_parameter_with_state")
        return (fn, (self.data, True, collections.OrderedDict(), self.state))


def test_rebuild_parameter_with_state_plain_names_only():
    p = _ts_load(_tessera_saved(_ParameterWithState(tessera.ones(2), ({"tag": "w"}, {"_hf_init": True}))))
    assert isinstance(p, Parameter) and p.tag == "w" and p._hf_init is True
    with pytest.raises(pickle.UnpicklingError, match="__reduce_ex__"):
        _ts_load(_tessera_saved(_ParameterWithState(tessera.ones(2), {"__reduce_ex__": 1})))


def test_weights_only_memo_and_lengths_are_bounded():
    # LONG_BINPUT at index 2**32 - 1: the memo is a dict, nothing is allocated for the index
    for weights_only in (True, False):
        assert _ts_load(_with_pickle(b"\x80\x02}r\xff\xff\xff\xff."), weights_only=weights_only) == {}
    # BYTEARRAY8 claiming a terabyte in a 20-byte pickle
    with pytest.raises(RuntimeError, match="data.pkl is corrupt"):
        _ts_load(_with_pickle(b"\x80\x05\x96" + struct.pack("<Q", 1 << 40) + b"abc."))
    # bytearray(n) would zero-fill n bytes
    with pytest.raises(RuntimeError, match="data.pkl is corrupt"):
        _ts_load(_with_pickle(b"\x80\x02c__builtin__\nbytearray\n\x8a\x06\x00\x00\x00\x00\x00\x01\x85R."))


# ---------------------------------------------------------------------------- fuzzing

def test_corrupt_data_pkl_fails_cleanly():
    # every single-byte corruption of data.pkl (in an archive whose CRCs are valid) either
    # loads or fails with RuntimeError, or UnpicklingError for a refused global / call
    sd = collections.OrderedDict(w=tessera.arange(6.0).view(2, 3), b=tessera.ones(3, dtype=tessera.int64))
    obj = {"sd": sd, "p": Parameter(tessera.zeros(2)), "v": sd["w"][1], "meta": [1, 2.5, "x", (3, None), {4}],
           "d": tessera.float16, "size": tessera.Size([2, 3]), "c": 1 + 2j}
    records = {n[len("archive/"):]: data for n, data in _zip_records(_tessera_saved(obj)).items()}
    pkl = records["data.pkl"]
    rng = np.random.default_rng(1234)
    escaped = []
    for _ in range(200):
        bad = bytearray(pkl)
        bad[int(rng.integers(len(bad)))] = int(rng.integers(256))
        try:
            _ts_load(_zip({**records, "data.pkl": bytes(bad)}))
        except (RuntimeError, pickle.UnpicklingError):
            pass
        except Exception as e:  # noqa: BLE001 - what the test looks for
            escaped.append(f"{type(e).__name__}: {e}")
    assert escaped == []


def _zip_records(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    return {n: z.read(n) for n in z.namelist()}


def test_corrupt_central_directory_offset():
    # the end record says the central directory starts later than it does: zipfile shifts
    # every local header offset below zero ("negative seek value")
    data = bytearray(_tessera_saved({"w": tessera.arange(4.0)}))
    end = data.rindex(b"PK\x05\x06")
    offset = struct.unpack("<I", data[end + 16:end + 20])[0]
    data[end + 16:end + 20] = struct.pack("<I", offset + 100000)
    with pytest.raises(RuntimeError, match="corrupt"):
        _ts_load(bytes(data))


_FILL_DISK = r"""
import resource, signal, sys
import tessera
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
try:
    tessera.save({"w": tessera.ones(1 << 20)}, sys.argv[1])
except OSError as e:
    print("OSError", e.errno)
else:
    print("saved")
"""


def test_save_on_a_full_disk_keeps_the_old_file(tmp_path):
    # The file-size limit stands in for a disk that fills mid-write: the save fails, and the
    # good checkpoint that was there is still there, whole, with no temporary file left.
    import subprocess
    import sys
    path = tmp_path / "ckpt.pt"
    tessera.save({"w": tessera.arange(10.)}, path)
    good = path.read_bytes()
    run = subprocess.run([sys.executable, "-c", _FILL_DISK, str(path)], capture_output=True, text=True, timeout=120,
                         env={**os.environ})
    assert run.stdout.split()[0] == "OSError", run.stdout + run.stderr
    assert path.read_bytes() == good
    assert tessera.load(path)["w"].tolist() == list(map(float, range(10)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


def test_save_error_mid_write_keeps_the_old_file(tmp_path, monkeypatch):
    from tessera import serialization
    path = tmp_path / "ckpt.pt"
    tessera.save(tessera.arange(3.), path)
    good = path.read_bytes()
    calls = []

    def failing_write(zf, name, data):
        calls.append(name)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real_write(zf, name, data)
    real_write = serialization._write_record
    monkeypatch.setattr(serialization, "_write_record", failing_write)
    with pytest.raises(OSError, match="No space left"):
        tessera.save({"a": tessera.ones(5), "b": tessera.zeros(5)}, path)
    assert path.read_bytes() == good and sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


def test_save_keeps_permissions_and_follows_symlinks(tmp_path):
    path = tmp_path / "ckpt.pt"
    tessera.save(tessera.ones(2), path)
    os.chmod(path, 0o640)
    tessera.save(tessera.zeros(2), path)
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o640)
    link = tmp_path / "latest.pt"
    link.symlink_to(path)
    tessera.save(tessera.full((2,), 5.0), link)
    assert link.is_symlink() and tessera.load(path).tolist() == [5.0, 5.0]
    # torch reads what tessera wrote through the rename
    assert torch.load(path).tolist() == [5.0, 5.0]
    # a new file gets what open(path, "wb") would give it under the umask
    old_mask = os.umask(0o027)
    try:
        (tmp_path / "plain").write_bytes(b"")
        tessera.save(tessera.ones(1), tmp_path / "fresh.pt")
    finally:
        os.umask(old_mask)
    assert os.stat(tmp_path / "fresh.pt").st_mode & 0o777 == os.stat(tmp_path / "plain").st_mode & 0o777 == 0o640


@pytest.mark.parametrize("declared", [0xF0000000, 0xFFFFFFF0])
def test_a_record_declaring_more_than_the_archive_holds_allocates_nothing(declared):
    # Found by fuzz_python_entry: a storage record's central-directory entry claimed 2 GB for
    # a few stored bytes, and the loader allocated the claim before reading. Now the claim is
    # checked against what the archive can hold first: RuntimeError, no large allocation.
    import tracemalloc
    buf = io.BytesIO()
    torch.save({"w": torch.arange(6.)}, buf)
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        name = next(n for n in zf.namelist() if n.endswith("/data/0"))
    entry = data.index(b"PK\x01\x02")  # the central directory's first entry
    while data[entry + 46:entry + 46 + len(name)] != name.encode():
        entry = data.index(b"PK\x01\x02", entry + 4)
    data[entry + 24:entry + 28] = struct.pack("<I", declared)  # uncompressed size
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match="declares .* bytes, more than its"):
            tessera.load(io.BytesIO(bytes(data)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
