"""tessera.save / tessera.load: checkpoints in PyTorch's zip format (torch >= 1.6), so files
move both ways between tessera and torch. The archive holds <name>/data.pkl (the object,
with tensors as torch's _rebuild_tensor_v2 calls), one <name>/data/<key> record of raw
bytes per storage, <name>/byteorder and <name>/version."""
import contextlib
import io
import os
import pickle
import stat
import secrets
import struct
import sys
import zipfile
import zlib

import numpy

from . import _C
from . import _torch_pickle as tp
from .storage import TypedStorage

DEFAULT_PROTOCOL = 2
_ALIGNMENT = 64          # torch's writer starts every record's bytes on a 64-byte boundary
_PAD_FIELD_ID = 0x4246   # the zip extra-field id ("FB") torch pads with
_LEGACY_MAGIC = (0x1950a86a20f9469cfc6c).to_bytes(10, "little")  # first pickle of a pre-1.6 file
# What zipfile raises on a damaged archive (a bad offset in the central directory is a
# ValueError "negative seek value"; an odd size an OverflowError or struct.error).
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError, ValueError,
               OverflowError, struct.error, zlib.error, KeyError, IndexError)

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals"]


# ---------------------------------------------------------------------------- safe globals

def add_safe_globals(safe_globals):
    """Allow these functions/classes (or (obj, "module.name") pairs) in weights-only loads."""
    for entry in safe_globals:
        obj, name = entry if isinstance(entry, tuple) else (entry, f"{entry.__module__}.{entry.__qualname__}")
        tp.USER_SAFE_GLOBALS[name] = obj


def get_safe_globals():
    return list(tp.USER_SAFE_GLOBALS.values())


def clear_safe_globals():
    tp.USER_SAFE_GLOBALS.clear()


# ---------------------------------------------------------------------------- saving

def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True):
    """save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True)

    Saves obj to f (a path or a writable binary file object) as torch.save does; torch.load
    reads the result. Tensors viewing one storage are written once and reload sharing it."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("tessera.save: the legacy (pre-1.6, non-zip) torch.save format is not supported; "
                                  "use the default zip format")
    # Everything is pickled before the file is touched, so an unpicklable object leaves f alone.
    table = tp.StorageTable()
    buf = io.BytesIO()
    tp.make_pickler(pickle_module)(buf, pickle_protocol, table).dump(obj)
    if _is_path(f):
        _save_to_path(os.fspath(f), buf.getvalue(), table)
    else:
        if not hasattr(f, "write"):
            raise AttributeError(f"tessera.save: f must be a path or a file object with write(), got {type(f).__name__}")
        _write_archive(f, "archive", buf.getvalue(), table)
        if hasattr(f, "flush"):
            f.flush()


def _save_to_path(path, data_pkl, table):
    """Writes a temporary file beside path, then renames it over path: a save that fails
    (disk full, an error while writing) never leaves a truncated file where a good one was."""
    target = os.path.realpath(path)  # through a symlink, as open(path, "wb") would write
    directory, base = os.path.split(target)
    fd, tmp = _create_beside(directory, base)
    try:
        with os.fdopen(fd, "wb") as fileobj:
            _write_archive(fileobj, _archive_name(path), data_pkl, table)
            fileobj.flush()
            os.fsync(fileobj.fileno())
        with contextlib.suppress(FileNotFoundError):  # a file replaced keeps its permissions
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create_beside(directory, base):
    """A new file in directory, created as open(..., "wb") would (mode 0o666 less the umask)."""
    while True:
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def _archive_name(path):
    # torch names the archive's top folder after the file, without its last extension
    base = os.path.basename(str(path).replace("\\", "/"))
    stem = base.rsplit(".", 1)[0] if "." in base else base
    return stem or "archive"


def _write_archive(fileobj, archive, data_pkl, table):
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_record(zf, f"{archive}/data.pkl", data_pkl)
        _write_record(zf, f"{archive}/byteorder", sys.byteorder.encode("ascii"))
        for key in sorted(table.refs):
            flat = table.refs[key].flat
            if flat.device.type != "cpu":
                flat = flat.to("cpu")
            raw = flat.view(_C.uint8).numpy() if flat.numel() else b""
            _write_record(zf, f"{archive}/data/{key}", raw)
        _write_record(zf, f"{archive}/version", b"3\n")


def _write_record(zf, name, data):
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = nbytes = len(data) if isinstance(data, bytes) else data.nbytes
    try:
        name_len = len(name.encode("ascii"))
    except UnicodeEncodeError:
        name_len = len(name.encode("utf-8"))
    zip64 = nbytes * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule for a zip64 local header
    header = 30 + name_len + (20 if zip64 else 0)
    pad = -(zf.start_dir + header + 4) % _ALIGNMENT + 4  # 4 bytes: the extra field's id and length
    info.extra = struct.pack("<HH", _PAD_FIELD_ID, pad - 4) + b"Z" * (pad - 4)
    with zf.open(info, "w") as out:
        out.write(memoryview(data).cast("B") if nbytes else b"")


# ---------------------------------------------------------------------------- loading

def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args)

    Loads an object saved by tessera.save or torch.save (zip format) from f (a path or a
    readable, seekable binary file object). weights_only=True, the default as in current
    torch, rebuilds only tensors, parameters, containers and plain values and refuses any
    other global with pickle.UnpicklingError. map_location is a device or string, a dict
    from saved locations to new ones, or a callable(storage, location) returning a storage
    or None. mmap=True maps storages from the file (f must be a path) copy-on-write."""
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    pickle_module = pickle_module or pickle
    pickle_load_args.setdefault("encoding", "utf-8")
    restore = _restore_location(map_location)
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    label = repr(os.fspath(f)) if _is_path(f) else f"<{type(f).__name__}>"
    if _is_path(f):
        with open(f, "rb") as fileobj:
            return _load_file(fileobj, label, os.fspath(f) if mmap else None, restore, pickle_module, weights_only,
                              pickle_load_args)
    for method in ("read", "seek", "tell"):
        if not hasattr(f, method):
            raise AttributeError(f"tessera.load: f must be a path or a binary file object with read/seek/tell; "
                                 f"{type(f).__name__} has no {method}()")
    return _load_file(f, label, None, restore, pickle_module, weights_only, pickle_load_args)


def _check_format(fileobj, label):
    start = fileobj.tell()
    head = fileobj.read(64)
    fileobj.seek(start)
    if not isinstance(head, bytes):
        raise TypeError(f"tessera.load: {label} must be opened in binary mode")
    if head[:4] == b"PK\x03\x04":
        return
    if not head:
        raise RuntimeError(f"tessera.load: {label} is empty")
    if _LEGACY_MAGIC in head:
        raise RuntimeError(f"tessera.load: {label} is in torch's legacy (pre-1.6, non-zip) checkpoint format, which "
                           "tessera does not read; re-save it with torch.save from torch >= 1.6 (zip format)")
    raise RuntimeError(f"tessera.load: {label} is not a torch.save/tessera.save checkpoint (no zip header at its start)")


def _load_file(fileobj, label, mmap_path, restore, pickle_module, weights_only, pickle_load_args):
    _check_format(fileobj, label)
    try:
        zf = zipfile.ZipFile(fileobj)
    except _ZIP_ERRORS as e:
        raise RuntimeError(f"tessera.load: {label} is corrupt or truncated: {e}") from None
    with zf:
        names = zf.namelist()
        if not names or "/" not in names[0]:
            raise RuntimeError(f"tessera.load: {label}: archive records are not inside a top-level folder")
        archive = names[0].split("/", 1)[0]
        if f"{archive}/constants.pkl" in names:
            raise RuntimeError(f"tessera.load: {label} is a TorchScript archive (torch.jit.save), which tessera "
                               "cannot load")
        reader = _RecordReader(zf, archive, label, mmap_path)
        data_pkl = reader.read("data.pkl")
        storages = {}
        from_map_location = []  # errors of the caller's map_location, which go out as they are

        def persistent_load(pid):
            return _load_storage(pid, storages, reader, restore, label, from_map_location)

        unpickler = tp.make_unpickler(pickle_module, weights_only, persistent_load)(io.BytesIO(data_pkl),
                                                                                   **pickle_load_args)
        try:
            return unpickler.load()
        except tp.LoadRefusal:
            raise
        except Exception as e:
            # Anything else a damaged data.pkl sets off (a bad opcode argument, a wrong type
            # handed to a rebuild function, an absurd length) is a corrupt file; only
            # deliberate refusals, unsupported features and map_location's errors keep their type.
            if isinstance(e, NotImplementedError) or any(e is err for err in from_map_location):
                raise
            if isinstance(e, RuntimeError) and str(e).startswith("tessera.load"):
                raise
            raise RuntimeError(f"tessera.load: {label}: data.pkl is corrupt: {type(e).__name__}: {e}") from None


def _load_storage(pid, storages, reader, restore, label, from_map_location):
    if not isinstance(pid, tuple) or len(pid) != 5 or _ascii(pid[0]) != "storage":
        raise RuntimeError(f"tessera.load: {label}: unknown persistent id {pid!r} in data.pkl")
    _, storage_type, key, location, numel = pid
    key, location = _ascii(key), _ascii(location)
    if (not isinstance(storage_type, tp.StorageType) or not isinstance(key, str) or not isinstance(location, str)
            or type(numel) is not int or numel < 0):
        raise RuntimeError(f"tessera.load: {label}: bad storage record {pid!r} in data.pkl")
    dtype = storage_type.dtype or _C.uint8  # UntypedStorage: numel counts bytes
    data_dtype = storage_type.data_dtype or _C.uint8  # a quantized storage's records hold integers
    if key not in storages:
        flat = reader.storage_bytes(key, numel * _C.empty(0, dtype=data_dtype).element_size())
        if reader.swap:
            flat = _swap_bytes(flat, data_dtype)
        if dtype == _C.bool and flat.numel() and bool((flat > 1).any()):
            flat = (flat != 0).to(_C.uint8)  # a corrupt file's bool bytes: kernels read only 0 and 1
        storage = TypedStorage(flat.view(data_dtype) if data_dtype != _C.uint8 else flat, dtype)
        try:
            restored = restore(storage, location)
        except Exception as e:
            from_map_location.append(e)
            raise
        storages[key] = restored
    storage = storages[key]
    if storage.dtype != dtype:
        raise RuntimeError(f"tessera.load: {label}: storage {key} is read as both {storage.dtype} and {dtype}")
    return storage


def _ascii(value):
    return value.decode("ascii", "replace") if isinstance(value, bytes) else value


class _RecordReader:
    """Records of one archive, as bytes or as uint8 tensors that own (or copy-on-write map) them."""

    def __init__(self, zf, archive, label, mmap_path):
        self.zf, self.archive, self.label = zf, archive, label
        self.swap = False
        order = f"{archive}/byteorder"
        if order in zf.NameToInfo:  # absent in torch < 2.1 files: native order, like torch assumes
            saved = self.read("byteorder").decode("ascii", "replace").strip()
            if saved not in ("little", "big"):
                raise RuntimeError(f"tessera.load: {label}: unknown byteorder {saved!r}")
            self.swap = saved != sys.byteorder
        self.mapped = numpy.memmap(mmap_path, dtype=numpy.uint8, mode="c") if mmap_path else None

    def _info(self, name):
        info = self.zf.NameToInfo.get(f"{self.archive}/{name}")
        if info is None:
            raise RuntimeError(f"tessera.load: {self.label} has no record {self.archive}/{name} (corrupt checkpoint)")
        return info

    def read(self, name):
        info = self._info(name)
        try:
            return self.zf.read(info)
        except _ZIP_ERRORS as e:
            raise RuntimeError(f"tessera.load: {self.label}: record {info.filename} is corrupt: {e}") from None

    def storage_bytes(self, key, nbytes):
        info = self._info(f"data/{key}")
        if info.file_size < nbytes:
            raise RuntimeError(f"tessera.load: {self.label}: record {info.filename} holds {info.file_size} bytes but "
                               f"its storage needs {nbytes} (truncated or corrupt checkpoint)")
        if not nbytes:
            return _C.empty(0, dtype=_C.uint8)
        if self.mapped is not None and not self.swap and info.compress_type == zipfile.ZIP_STORED:
            start = self._data_offset(info)
            if start % _ALIGNMENT == 0 and start + nbytes <= self.mapped.size:
                return _C.from_numpy(self.mapped[start:start + nbytes])
        self._check_declared_size(info)
        raw = numpy.empty(info.file_size, dtype=numpy.uint8)
        try:
            with self.zf.open(info) as record:
                view, done = memoryview(raw), 0
                while done < info.file_size:  # reading to the end also checks the CRC
                    got = record.readinto(view[done:])
                    if not got:
                        raise EOFError("record ends early")
                    done += got
        except _ZIP_ERRORS as e:
            raise RuntimeError(f"tessera.load: {self.label}: record {info.filename} is corrupt: {e}") from None
        return _C.from_numpy(raw[:nbytes])

    def _check_declared_size(self, info):
        """The sizes in the central directory are the file's word: before allocating what a
        record declares, check that the archive can hold it (its stored bytes lie before the
        central directory, and deflate expands at most 1032 times), so a few hostile bytes
        cannot make the loader allocate gigabytes (found by fuzz_python_entry)."""
        stored_end = info.header_offset + info.compress_size
        limit = info.compress_size if info.compress_type == zipfile.ZIP_STORED else 1032 * info.compress_size + 1024
        if stored_end > self.zf.start_dir or info.file_size > limit:
            raise RuntimeError(f"tessera.load: {self.label}: record {info.filename} declares {info.file_size} bytes, "
                               f"more than its {info.compress_size} stored bytes can hold (corrupt checkpoint)")

    def _data_offset(self, info):
        header = bytes(self.mapped[info.header_offset:info.header_offset + 30])
        if header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"tessera.load: {self.label}: bad local header for {info.filename}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        return info.header_offset + 30 + name_len + extra_len


def _swap_bytes(flat, dtype):
    """Reverse each element's bytes (each component's for complex)."""
    width = _C.empty(0, dtype=dtype).element_size() // (2 if dtype.is_complex else 1)
    if width == 1 or not flat.numel():
        return flat
    raw = flat.numpy().reshape(-1, width)[:, ::-1].copy()
    return _C.from_numpy(raw.reshape(-1))


# ---------------------------------------------------------------------------- map_location

def _restore_location(map_location):
    if map_location is None:
        return _default_restore
    if isinstance(map_location, dict):
        return lambda storage, location: _default_restore(storage, str(map_location.get(location, location)))
    if isinstance(map_location, (str, _C.device)) or hasattr(map_location, "type") and not callable(map_location):
        target = str(map_location)
        return lambda storage, location: _default_restore(storage, target)
    if callable(map_location):
        def restore(storage, location):
            result = map_location(storage, location)
            if result is None:
                return _default_restore(storage, location)
            if not isinstance(result, TypedStorage):
                raise TypeError(f"map_location must return a storage or None, got {type(result).__name__}")
            return result
        return restore
    raise TypeError(f"map_location must be None, a string, a device, a dict or a callable, got "
                    f"{type(map_location).__name__}")


def _default_restore(storage, location):
    try:
        device = _C.device(location)
    except (RuntimeError, TypeError, ValueError) as e:
        raise RuntimeError(f"tessera.load: cannot restore a storage to location {location!r}: {e}") from None
    if device.type == "cpu":
        return storage
    try:
        return TypedStorage(storage._tensor.to(device), storage.dtype)
    except (NotImplementedError, RuntimeError) as e:
        hint = (" tessera's Python build has no CUDA support yet;" if device.type == "cuda" else "")
        raise RuntimeError(f"Attempting to deserialize a storage onto device '{location}', which tessera cannot "
                           f"place it on.{hint} use map_location='cpu' (or a dict/callable) to load it onto the CPU. "
                           f"({type(e).__name__}: {e})") from None
