"""The pickle half of tessera.save/load: a Pickler that writes tessera objects under the
names torch's unpickler resolves (torch._utils._rebuild_tensor_v2, torch.FloatStorage, ...),
and Unpicklers that resolve those names, and tessera's own, to tessera objects; the
weights-only one refuses every global outside a fixed allowlist, and every call or state
change on anything but the allowed rebuild functions and instances of allowed types."""
import builtins
import collections
import importlib
import math
import pickle
import struct

from . import _C
from ._utils import (INT_DTYPE_OF_QUANTIZED, NAMED_PICKLE_ERROR, QSCHEME_NAMES, SUB_BYTE_QUANTIZED, _rebuild_qtensor,
                     _rebuild_sparse_csr_tensor, _rebuild_sparse_tensor, get_tensor_metadata, qscheme, quantizer_params,
                     rebuild_qtensor_from_ints)
from .storage import TypedStorage, _physical

# torch's storage class for each dtype torch 1.13 writes typed storages for.
STORAGE_CLASS_OF = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
    "complex128": "ComplexDoubleStorage", "complex64": "ComplexFloatStorage",
}
DTYPE_OF_STORAGE_CLASS = {cls: name for name, cls in STORAGE_CLASS_OF.items()}
# Dtypes current torch writes over an UntypedStorage with _rebuild_tensor_v3 (torch 1.13
# cannot load these at all).
V3_DTYPES = ("float8_e4m3fn", "float8_e5m2")
# torch's storage class for each quantized dtype, and the integer dtype its records hold.
QUANTIZED_STORAGE_CLASS_OF = {"qint8": "QInt8Storage", "quint8": "QUInt8Storage", "qint32": "QInt32Storage",
                              "quint4x2": "QUInt4x2Storage", "quint2x4": "QUInt2x4Storage"}
QUANTIZED_OF_STORAGE_CLASS = {cls: name for name, cls in QUANTIZED_STORAGE_CLASS_OF.items()}


def dtype_name(dtype):
    return str(dtype).split(".", 1)[1]


# ---------------------------------------------------------------------------- saving

class TorchGlobal:
    """A name in torch's namespace, written as a GLOBAL opcode. Only the pickler uses it:
    tessera cannot hand pickle torch's real object, and pickle would refuse a stand-in
    that is not the object its module/name resolves to."""

    _interned = {}

    def __new__(cls, module, name):
        key = (module, name)
        if key not in cls._interned:  # one object per name, so pickle's memo reuses it
            self = super().__new__(cls)
            self.module, self.name = module, name
            cls._interned[key] = self
        return cls._interned[key]

    def __call__(self, *args, **kwargs):
        # pickle's save_reduce insists on a callable; nothing is ever meant to call it.
        raise TypeError(f"{self!r} only stands for torch's {self.module}.{self.name} in a pickle")

    def __repr__(self):
        return f"TorchGlobal({self.module}.{self.name})"


class StorageRef:
    """A storage as the pickler meets it: persistent_id turns it into torch's storage record."""

    def __init__(self, flat, key, storage_class, location, numel):
        self.flat, self.key, self.storage_class = flat, key, storage_class
        self.location, self.numel = location, numel


class StorageTable:
    """The storages a save writes, keyed like torch ("0", "1", ...): views of one storage
    map to one key, so they reload sharing memory."""

    def __init__(self):
        self.refs = {}       # key -> StorageRef
        self._by_block = {}  # (device, storage start, nbytes) -> (key, dtype, storage class)

    def ref_for(self, t, untyped=False, storage_class=None):
        """The record of t's storage; storage_class names torch's class for its elements when
        it is not t's dtype's own (a quantized tensor's integers are a torch.QInt8Storage...)."""
        if t.is_quantized:
            raise NotImplementedError("tessera.save: the storage of a quantized tensor cannot be saved on its own; "
                                      "save the tensor itself")
        storage_class = storage_class or ("UntypedStorage" if untyped else STORAGE_CLASS_OF[dtype_name(t.dtype)])
        nbytes, elsize = t._storage_nbytes(), t.element_size()
        start = t.data_ptr() - t.storage_offset() * elsize
        # Views of one storage share its start and size; unallocated storages are never shared.
        block = (str(t.device), start, nbytes) if start else None
        if block in self._by_block:
            key, dtype, cls = self._by_block[block]
            if dtype != t.dtype or cls != storage_class:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
            return self.refs[key]
        key = str(len(self.refs))
        flat = _C.as_strided(_physical(t), (nbytes // elsize,), (1,), 0)
        if untyped:
            flat = flat.view(_C.uint8)
            ref = StorageRef(flat, key, TorchGlobal("torch.storage", "UntypedStorage"), _location(t), nbytes)
        else:
            ref = StorageRef(flat, key, TorchGlobal("torch", storage_class), _location(t), flat.numel())
        self.refs[key] = ref
        if block is not None:
            self._by_block[block] = (key, t.dtype, storage_class)
        return ref


def _location(t):
    dev = t.device
    return "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"


def _reduce_tensor(t, table):
    from .nn.parameter import Parameter
    if isinstance(t, Parameter):
        return (TorchGlobal("torch._utils", "_rebuild_parameter"), (t.data, t.requires_grad, collections.OrderedDict()))
    if type(t) is not _C.Tensor:
        raise NotImplementedError(f"tessera.save: tensor subclasses other than Parameter ({type(t).__name__}) "
                                  "are not supported")
    if t.is_sparse or t.is_sparse_csr:
        from ._utils import sparse_reduce_args
        name, args = sparse_reduce_args(t)
        return (TorchGlobal("torch._utils", name), args)
    if t.layout != _C.strided:
        raise NotImplementedError(f"tessera.save: tensors with layout {t.layout} are not supported")
    if t.has_names():
        raise RuntimeError(NAMED_PICKLE_ERROR)
    if t.is_quantized:
        if t.device.type == "meta":
            # torch writes a meta tensor's dtype and shape only, which would drop the qparams
            raise NotImplementedError("tessera.save: quantized tensors on the meta device are not supported")
        return _reduce_qtensor(t, table)
    name = dtype_name(t.dtype)
    geometry = (t.storage_offset(), tuple(t.size()), t.stride())
    if t.device.type == "meta":
        return (TorchGlobal("torch._utils", "_rebuild_meta_tensor_no_storage"),
                (t.dtype, tuple(t.size()), t.stride(), t.requires_grad))
    # Current torch's last argument: the conj/neg bits over the raw storage; absent without
    # bits, so such files stay byte-identical (and loadable by torch 1.13).
    metadata = get_tensor_metadata(t)
    extra = (metadata,) if metadata else ()
    if name in V3_DTYPES:
        ref = table.ref_for(t, untyped=True)
        return (TorchGlobal("torch._utils", "_rebuild_tensor_v3"),
                (ref,) + geometry + (t.requires_grad, collections.OrderedDict(), t.dtype) + extra)
    if name not in STORAGE_CLASS_OF:
        raise NotImplementedError(f"tessera.save: tensors of dtype {t.dtype} are not supported")
    ref = table.ref_for(t)
    return (TorchGlobal("torch._utils", "_rebuild_tensor_v2"),
            (ref,) + geometry + (t.requires_grad, collections.OrderedDict()) + extra)


def _reduce_qtensor(q, table):
    """torch's _rebuild_qtensor record: q's integers in a torch.QInt8Storage (QUInt8, QInt32,
    QUInt4x2, QUInt2x4), then q's quantizer params. The integers are q.int_repr(), made for
    this save: views of one quantized storage are written (and reload) apart. For 8- and
    32-bit dtypes it is a dense tensor with q's shape and memory format, recorded with its own
    geometry; for the sub-byte ones it is the packed bytes, recorded with q's geometry, as
    torch writes them."""
    name = dtype_name(q.dtype)
    if name not in QUANTIZED_STORAGE_CLASS_OF:
        raise NotImplementedError(f"tessera.save: quantized tensors of dtype {q.dtype} are not supported")
    ints = q.int_repr()
    ref = table.ref_for(ints, storage_class=QUANTIZED_STORAGE_CLASS_OF[name])
    params = quantizer_params(q, lambda scheme: TorchGlobal("torch", scheme))
    # A sub-byte tensor's int_repr() is its packed bytes; torch records the tensor's own geometry.
    geometry = ((0, tuple(q.size()), q.stride()) if name in SUB_BYTE_QUANTIZED
                else (ints.storage_offset(), tuple(ints.size()), ints.stride()))
    return (TorchGlobal("torch._utils", "_rebuild_qtensor"),
            (ref,) + geometry + (params, q.requires_grad, collections.OrderedDict()))


def _save_as_torch_global(pickler, obj, module, name):
    pickler.write(pickle.GLOBAL + f"{module}\n{name}\n".encode("utf-8"))
    pickler.memoize(obj)


def make_pickler(pickle_module):
    """A Pickler class over pickle_module's pure-Python Pickler (its dispatch table is
    what lets us write GLOBALs for names this process cannot import)."""
    base = getattr(pickle_module, "_Pickler", pickle_module.Pickler)
    if not isinstance(getattr(base, "dispatch", None), dict):
        raise TypeError(f"tessera.save: pickle_module {getattr(pickle_module, '__name__', pickle_module)!r} needs a "
                        "pure-Python Pickler with a dispatch table, like the standard pickle module's _Pickler")

    class TorchNamesPickler(base):
        dispatch = dict(base.dispatch)
        dispatch[TorchGlobal] = lambda self, g: _save_as_torch_global(self, g, g.module, g.name)
        dispatch[_C.dtype] = lambda self, d: _save_as_torch_global(self, d, "torch", dtype_name(d))
        dispatch[_C.memory_format] = lambda self, m: _save_as_torch_global(self, m, "torch", dtype_name(m))
        dispatch[_C.qscheme] = lambda self, q: _save_as_torch_global(self, q, "torch", dtype_name(q))

        def __init__(self, file, protocol, table):
            super().__init__(file, protocol)
            self.table = table

        def persistent_id(self, obj):
            if isinstance(obj, TypedStorage):  # a storage saved on its own, as torch allows
                # (a quantized storage tessera.load read holds its integers, under its quantized dtype)
                quantized_class = QUANTIZED_STORAGE_CLASS_OF.get(dtype_name(obj.dtype))
                obj = self.table.ref_for(obj._tensor, storage_class=quantized_class)
            if type(obj) is StorageRef:
                return ("storage", obj.storage_class, obj.key, obj.location, obj.numel)
            return None

        def reducer_override(self, obj):
            if isinstance(obj, _C.Tensor):
                return _reduce_tensor(obj, self.table)
            if type(obj) is _C.device:
                args = (obj.type,) if obj.index is None else (obj.type, obj.index)
                return (TorchGlobal("torch", "device"), args)
            if type(obj) is _C.Size:
                return (TorchGlobal("torch", "Size"), (tuple(obj),))
            if type(obj) is _C.layout:
                return (TorchGlobal("torch.serialization", "_get_layout"), ("torch." + dtype_name(obj),))
            return NotImplemented

    return TorchNamesPickler


# ---------------------------------------------------------------------------- loading

class StorageType:
    """What a torch.*Storage global unpickles to: the storage's dtype (None for UntypedStorage,
    whose records are bytes), and data_dtype, the dtype its records hold: the same but for a
    quantized storage, whose records hold integers (int8 for a torch.QInt8Storage, ...)."""

    def __init__(self, name):
        self.name = name
        if name in QUANTIZED_OF_STORAGE_CLASS:
            quantized = QUANTIZED_OF_STORAGE_CLASS[name]
            self.dtype = getattr(_C, quantized)
            self.data_dtype = getattr(_C, INT_DTYPE_OF_QUANTIZED[quantized])
        else:
            self.dtype = getattr(_C, DTYPE_OF_STORAGE_CLASS[name]) if name in DTYPE_OF_STORAGE_CLASS else None
            self.data_dtype = self.dtype


def is_quantized_dtype(dtype):
    return isinstance(dtype, _C.dtype) and dtype_name(dtype) in QUANTIZED_STORAGE_CLASS_OF


def _check_storage(storage, fn):
    if not isinstance(storage, TypedStorage):
        raise RuntimeError(f"{fn}: expected a storage from the checkpoint, got {type(storage).__name__}")


def _check_dense_storage(storage, fn):
    _check_storage(storage, fn)
    if is_quantized_dtype(storage.dtype):
        raise RuntimeError(f"{fn}: a quantized storage ({storage.dtype}) can only be read by _rebuild_qtensor")


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    from ._utils import _rebuild_tensor_v2
    _check_dense_storage(storage, "_rebuild_tensor_v2")
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad, backward_hooks):
    """torch._utils._rebuild_qtensor: the integers, a dense tensor over the loaded storage made
    (and checked against the storage's bounds) as any dense tensor is, then the quantized
    tensor with those values, which is a copy (see rebuild_qtensor_from_ints)."""
    from ._utils import _rebuild_tensor_v2
    _check_storage(storage, "_rebuild_qtensor")
    name = dtype_name(storage.dtype)
    if name not in QUANTIZED_STORAGE_CLASS_OF or dtype_name(storage._tensor.dtype) != INT_DTYPE_OF_QUANTIZED[name]:
        raise RuntimeError(f"_rebuild_qtensor: expected a quantized storage (torch.QInt8Storage, QUInt8Storage, "
                           f"QInt32Storage, QUInt4x2Storage or QUInt2x4Storage), got one of {storage.dtype}")
    if name in SUB_BYTE_QUANTIZED:
        return _rebuild_packed_qtensor(storage, name, storage_offset, size, stride, quantizer_params, requires_grad)
    ints = TypedStorage(storage._tensor, storage._tensor.dtype)
    ints = _rebuild_tensor_v2(ints, storage_offset, size, stride, False, backward_hooks)
    return rebuild_qtensor_from_ints(ints, quantizer_params, requires_grad)


def _rebuild_packed_qtensor(storage, name, storage_offset, size, stride, quantizer_params, requires_grad):
    """A quint4x2 or quint2x4 record: the storage holds the packed bytes of a tensor that
    starts at the storage's start and is contiguous (the only geometry such a tensor has
    here, Note [Sub-byte quantized tensors] in aten/core/QTensorImpl.h)."""
    size = tuple(size)
    expected = []
    step = 1
    for n in reversed(size):
        expected.append(step)
        step *= n
    contiguous = all(n == 1 or s == e for n, s, e in zip(size, tuple(stride), reversed(expected)))
    if storage_offset != 0 or not contiguous or len(tuple(stride)) != len(size):
        raise RuntimeError(f"_rebuild_qtensor: a {name} tensor must start at its storage's start and be contiguous "
                           f"(got offset {storage_offset}, size {size}, stride {tuple(stride)})")
    bits = 4 if name == "quint4x2" else 2
    nbytes = (math.prod(size) * bits + 7) // 8
    packed = storage._tensor
    if packed.numel() < nbytes:
        raise RuntimeError(f"_rebuild_qtensor: {nbytes} bytes hold a {name} tensor of size {size}, but the storage "
                           f"has {packed.numel()}")
    return rebuild_qtensor_from_ints(packed[:nbytes].contiguous(), quantizer_params, requires_grad,
                                     (getattr(_C, name), size))


def rebuild_tensor(storage, storage_offset, size, stride):
    return rebuild_tensor_v2(storage, storage_offset, size, stride, False, None)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    _check_dense_storage(storage, "_rebuild_tensor_v3")
    if not isinstance(dtype, _C.dtype) or is_quantized_dtype(dtype):
        raise RuntimeError(f"_rebuild_tensor_v3: expected a dtype, got {type(dtype).__name__}")
    typed = TypedStorage(storage._tensor.view(_C.uint8).view(dtype), dtype)
    return rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    t = _C.empty_strided(tuple(size), tuple(stride), dtype=dtype, device="meta")
    return t.requires_grad_(True) if requires_grad else t


def rebuild_parameter(data, requires_grad, backward_hooks):
    from .nn.parameter import Parameter
    if not isinstance(data, _C.Tensor):
        raise RuntimeError(f"_rebuild_parameter: expected a tensor, got {type(data).__name__}")
    return Parameter(data, requires_grad)


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = rebuild_parameter(data, requires_grad, backward_hooks)
    # current torch pickles Python attributes set on a Parameter as (dict, slots) or a dict
    set_attribute_state(param, state)
    return param


def get_layout(name):
    layout = getattr(_C, str(name).rsplit(".", 1)[-1], None)
    if not isinstance(layout, _C.layout):
        raise RuntimeError(f"unknown layout {name!r}")
    return layout


def codecs_encode(text, encoding):
    # protocol-2 pickles spell bytes as _codecs.encode(latin-1 text, "latin1")
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise RuntimeError("_codecs.encode is only allowed to rebuild bytes from latin-1 text")
    return text.encode("latin1")


def rebuild_bytearray(*args):
    # pickle writes bytearray(text, "latin-1") or bytearray(bytes); bytearray(n) from a
    # file would zero-fill n bytes whatever the file's size.
    if args and not isinstance(args[0], (str, bytes, bytearray)):
        raise RuntimeError(f"bytearray may only be rebuilt from text or bytes, not {type(args[0]).__name__}")
    return bytearray(*args)


def _torch_globals():
    from .nn.parameter import Parameter
    table = {
        ("torch._utils", "_rebuild_tensor"): rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor_v3"): rebuild_tensor_v3,
        ("torch._utils", "_rebuild_parameter"): rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): rebuild_parameter_with_state,
        ("torch._utils", "_rebuild_meta_tensor_no_storage"): rebuild_meta_tensor_no_storage,
        ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
        ("torch._utils", "_rebuild_sparse_csr_tensor"): _rebuild_sparse_csr_tensor,
        ("tessera._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
        ("tessera._utils", "_rebuild_sparse_csr_tensor"): _rebuild_sparse_csr_tensor,
        ("torch._utils", "_rebuild_qtensor"): rebuild_qtensor,
        ("tessera._utils", "_rebuild_qtensor"): _rebuild_qtensor,
        ("torch.nn.parameter", "Parameter"): Parameter,
        ("torch.serialization", "_get_layout"): get_layout,
        ("torch", "Size"): _C.Size,
        ("torch", "device"): _C.device,
        # tessera's own pickling of tensors and storages (tessera._utils, tessera.storage)
        ("tessera._utils", "_rebuild_tensor_v2"): rebuild_tensor_v2,
        ("tessera.storage", "_load_from_bytes"): _load_storage_from_bytes,
        ("tessera.nn.parameter", "_rebuild_parameter"): lambda data, requires_grad: rebuild_parameter(
            data, requires_grad, None),
        ("tessera.nn.parameter", "Parameter"): Parameter,
        ("tessera", "Size"): _C.Size,
        ("tessera", "device"): _C.device,
        # plain data
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "Counter"): collections.Counter,  # MultiStepLR's milestones, as current torch allows
        ("_codecs", "encode"): codecs_encode,
    }
    for name in QSCHEME_NAMES:  # qschemes, pickled by name
        table[("torch", name)] = table[("tessera", name)] = qscheme(name)
    for name in ("set", "frozenset", "complex", "slice"):
        table[("builtins", name)] = table[("__builtin__", name)] = getattr(builtins, name)
    table[("builtins", "bytearray")] = table[("__builtin__", "bytearray")] = rebuild_bytearray
    return table


def _load_storage_from_bytes(data, dtype_name_):
    from .storage import _load_from_bytes
    if not isinstance(getattr(_C, str(dtype_name_), None), _C.dtype) or not isinstance(data, (bytes, bytearray)):
        raise RuntimeError(f"_load_from_bytes: bad storage record (dtype {dtype_name_!r})")
    return _load_from_bytes(data, dtype_name_)


_SAFE_GLOBALS = None
USER_SAFE_GLOBALS = {}  # "module.qualname" -> object, filled by serialization.add_safe_globals


def resolve_safe(module, name):
    """The tessera object for an allowed global, or None."""
    global _SAFE_GLOBALS
    if _SAFE_GLOBALS is None:
        _SAFE_GLOBALS = _torch_globals()
    if (module, name) in _SAFE_GLOBALS:
        return _SAFE_GLOBALS[(module, name)]
    if module in ("torch", "tessera"):
        obj = getattr(_C, name, None)
        if isinstance(obj, (_C.dtype, _C.layout, _C.memory_format)):
            return obj
    if module in ("torch", "torch.cuda", "torch.storage") and name.endswith("Storage"):
        if name in DTYPE_OF_STORAGE_CLASS or name in QUANTIZED_OF_STORAGE_CLASS or name == "UntypedStorage":
            return StorageType(name)
    return USER_SAFE_GLOBALS.get(f"{module}.{name}")


class LoadRefusal(pickle.UnpicklingError):
    """Something a weights-only load will not do: resolve a global outside the allowlist,
    call what is not an allowed rebuild function or class, or set state on anything but an
    instance of an allowed type."""


class GlobalRefusal(LoadRefusal):
    """A global the unpickler will not resolve: outside the weights-only allowlist, or a
    torch name with no tessera equivalent."""


def weights_only_message(detail):
    return ("Weights only load failed. tessera.load runs with weights_only=True by default, which rebuilds only "
            "tensors, parameters, storages, containers and plain values. Re-running it with weights_only=False "
            "will likely succeed, but that can run arbitrary code from the file: do it only if you trust its "
            f"source. WeightsUnpickler error: {detail}")


def _short_repr(obj):
    text = repr(obj)
    return text if len(text) <= 80 else text[:77] + "..."


def _refuse(detail):
    raise LoadRefusal(weights_only_message(detail))


def _check_attr_name(name, owner):
    # A dunder name (__class__, __dict__, __reduce_ex__, ...) would change what the object
    # is or how it behaves, not just hold a value; torch's state never uses one.
    if type(name) is not str or not name.isidentifier() or name.startswith("__"):
        _refuse(f"refusing to set attribute {name!r} on {owner}: only plain attribute names are allowed")


def set_attribute_state(obj, state):
    """Applies a pickled (dict) or (dict, slots) attribute state to the instance obj, with
    plain attribute names only."""
    parts = state if isinstance(state, tuple) else (state,)
    if isinstance(state, tuple) and len(state) != 2 or any(part is not None and not isinstance(part, dict)
                                                             for part in parts):
        _refuse(f"unsupported state of type {type(state).__name__} for {type(obj).__name__}")
    for part in parts:
        for name, value in (part or {}).items():
            _check_attr_name(name, f"a {type(obj).__name__}")
            setattr(obj, name, value)


class WeightsOnlyUnpickler(pickle._Unpickler):
    """The pure-Python unpickler with every opcode that calls, instantiates or mutates
    restricted: only allowed globals are called or instantiated, state is applied only to
    instances of allowed types, and items go only into real lists, dicts and sets."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, **kwargs):
        super().__init__(file, **kwargs)
        self._handed_out = {}  # id -> each allowed global find_class returned in this load

    def find_class(self, module, name):
        obj = resolve_safe(module, name)
        if obj is None:
            raise GlobalRefusal(weights_only_message(
                f"Unsupported global: GLOBAL {module}.{name} was not an allowed global by default. Use "
                "tessera.serialization.add_safe_globals([...]) to allow it if you trust it."))
        self._handed_out[id(obj)] = obj
        return obj

    def _line(self):
        line = self.readline()
        if not line.endswith(b"\n"):  # a cut-off name must read as truncation, not as another name
            raise pickle.UnpicklingError("pickle data was truncated")
        return line[:-1]

    def _load_global(self):
        module = self._line().decode("utf-8")
        self.append(self.find_class(module, self._line().decode("utf-8")))
    dispatch[pickle.GLOBAL[0]] = _load_global

    def _load_inst(self):
        module = self._line().decode("ascii")
        klass = self.find_class(module, self._line().decode("ascii"))
        self._instantiate(klass, self.pop_mark())
    dispatch[pickle.INST[0]] = _load_inst

    def _allowed_callable(self, func, opcode):
        if not callable(func) or self._handed_out.get(id(func)) is not func:
            _refuse(f"{opcode} of {type(func).__name__} {_short_repr(func)}, which is not an allowed rebuild "
                    "function or class")

    def _load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        self._allowed_callable(func, "REDUCE")
        if type(args) is not tuple:
            raise pickle.UnpicklingError(f"REDUCE arguments must be a tuple, got {type(args).__name__}")
        self.stack[-1] = func(*args)
    dispatch[pickle.REDUCE[0]] = _load_reduce

    def _load_newobj(self, with_kwargs=False):
        kwargs = self.stack.pop() if with_kwargs else {}
        args = self.stack.pop()
        cls = self.stack.pop()
        if not isinstance(cls, type):
            _refuse(f"NEWOBJ of {_short_repr(cls)}, which is not a class")
        self._allowed_callable(cls, "NEWOBJ")
        if type(args) is not tuple or type(kwargs) is not dict:
            raise pickle.UnpicklingError("NEWOBJ arguments must be a tuple (and a dict)")
        self.append(cls.__new__(cls, *args, **kwargs))
    dispatch[pickle.NEWOBJ[0]] = _load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = lambda self: self._load_newobj(with_kwargs=True)

    def _instantiate(self, klass, args):  # INST and OBJ
        self._allowed_callable(klass, "INST/OBJ")
        self.append(klass(*args))

    def _load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        from .nn.parameter import Parameter
        kind = type(inst)
        if kind is collections.OrderedDict or kind is _C.Tensor or kind is Parameter:
            # a state dict's _metadata, or Python attributes of a tensor (current torch)
            set_attribute_state(inst, state)
        elif not isinstance(inst, type) and any(kind is g for g in USER_SAFE_GLOBALS.values()):
            # an instance of a class the user allowed: its own __setstate__, or plain attributes
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
            else:
                set_attribute_state(inst, state)
        else:
            _refuse(f"BUILD (setting state) on {kind.__name__} {_short_repr(inst)}: only instances of allowed types "
                    "(OrderedDict, Tensor, Parameter, classes passed to add_safe_globals) take state")
    dispatch[pickle.BUILD[0]] = _load_build

    def _container(self, kind, opcode):
        target = self.stack[-1]
        if not isinstance(target, kind):
            _refuse(f"{opcode} on {type(target).__name__}: only a {kind.__name__} takes items")
        return target

    def _load_append(self):
        value = self.stack.pop()
        self._container(list, "APPEND").append(value)
    dispatch[pickle.APPEND[0]] = _load_append

    def _load_appends(self):
        items = self.pop_mark()
        self._container(list, "APPENDS").extend(items)
    dispatch[pickle.APPENDS[0]] = _load_appends

    def _load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        self._container(dict, "SETITEM")[key] = value
    dispatch[pickle.SETITEM[0]] = _load_setitem

    def _load_setitems(self):
        items = self.pop_mark()
        target = self._container(dict, "SETITEMS")
        if len(items) % 2:
            raise pickle.UnpicklingError("SETITEMS needs key/value pairs")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]
    dispatch[pickle.SETITEMS[0]] = _load_setitems

    def _load_additems(self):
        items = self.pop_mark()
        self._container(set, "ADDITEMS").update(items)
    dispatch[pickle.ADDITEMS[0]] = _load_additems

    def _load_bytearray8(self):
        # Read first, then copy: a corrupt length must not allocate more than the file holds.
        n, = struct.unpack("<Q", self.read(8))
        data = self.read(n)
        if len(data) != n:
            raise pickle.UnpicklingError(f"BYTEARRAY8 of {n} bytes runs past the end of the pickle")
        self.append(bytearray(data))
    dispatch[pickle.BYTEARRAY8[0]] = _load_bytearray8

    def _refuse_extension(self):
        # the copyreg extension cache would hand out objects find_class never saw
        _refuse("extension-registry opcodes (EXT1/EXT2/EXT4) are not allowed")
    for _op in (pickle.EXT1, pickle.EXT2, pickle.EXT4):
        dispatch[_op[0]] = _refuse_extension
    del _op


def make_unpickler(pickle_module, weights_only, persistent_load):
    if weights_only:
        base = WeightsOnlyUnpickler
    else:
        # The standard module's pure-Python unpickler keeps its memo in a dict: the C one
        # grows an array to the largest index a (corrupt) PUT names, gigabytes for 4 bytes.
        class base(pickle._Unpickler if pickle_module is pickle else pickle_module.Unpickler):
            def find_class(self, module, name):
                obj = resolve_safe(module, name)
                if obj is not None:
                    return obj
                if module == "torch" or module.startswith("torch."):
                    return _tessera_equivalent(module, name)
                return super().find_class(module, name)

    def make(file, **kwargs):
        unpickler = base(file, **kwargs)
        unpickler.persistent_load = persistent_load
        return unpickler
    return make


def _tessera_equivalent(module, name):
    # Unrestricted loads resolve torch.X.y to tessera.X.y; real torch is never imported.
    target = "tessera" + module[len("torch"):]
    try:
        obj = importlib.import_module(target)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise GlobalRefusal(f"tessera.load: the checkpoint refers to {module}.{name}, which has no "
                                     f"tessera equivalent (looked for {target}.{name})") from None
    return obj
