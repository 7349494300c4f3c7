"""What unpickling a tensor calls: torch's _rebuild_tensor_v2 protocol over tessera's
storages (tessera.storage)."""
import copyreg
from collections import OrderedDict

from . import _C


def get_tensor_metadata(t):
    """The bits a storage does not hold, as current torch pickles them: {"conj": True} and/or
    {"neg": True}; empty without bits."""
    metadata = {}
    if t.is_conj():
        metadata["conj"] = True
    if t.is_neg():
        metadata["neg"] = True
    return metadata


def set_tensor_metadata(t, metadata):
    """Sets the bits get_tensor_metadata recorded on t (a view of the raw storage)."""
    for key, value in metadata.items():
        if key == "conj":
            t._set_conj(bool(value))
        elif key == "neg":
            t._set_neg(bool(value))
        else:
            raise RuntimeError(f"Unexpected key `{key}` passed to setTensorMetadata.")


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """The tensor viewing `storage` with the given geometry, as torch rebuilds one."""
    t = _C.as_strided(storage._tensor, tuple(size), tuple(stride), storage_offset)
    if metadata:
        set_tensor_metadata(t, metadata)  # before requires_grad_: a leaf then has its final bits
    if requires_grad:
        t.requires_grad_(True)
    # Hooks are not pickled (torch warns about them and drops them as well).
    del backward_hooks
    return t


_COMPRESSED_LAYOUTS = ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")


def _rebuild_sparse_tensor(layout, data):
    """Unpickling a sparse tensor, as torch's protocol writes it: (indices, values, size)
    for COO, (compressed_indices, plain_indices, values, size) for the compressed layouts.
    The members are checked as the public constructors check them, so that a hostile file
    cannot make indices that point outside the tensor."""
    if layout == _C.sparse_coo:
        # torch 1.13 writes (indices, values, size), current torch adds is_coalesced
        if len(data) == 4:
            indices, values, size, is_coalesced = data
            return _C.sparse_coo_tensor(indices, values, tuple(size), is_coalesced=bool(is_coalesced) or None)
        indices, values, size = data
        return _C.sparse_coo_tensor(indices, values, tuple(size))
    if any(layout == getattr(_C, name) for name in _COMPRESSED_LAYOUTS):
        compressed, plain, values, size = data
        return _C.sparse_compressed_tensor(compressed, plain, values, tuple(size), layout=layout)
    raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")


def _rebuild_sparse_csr_tensor(layout, data):
    """torch 1.13's name for unpickling a CSR tensor."""
    if layout != _C.sparse_csr:
        raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")
    return _rebuild_sparse_tensor(layout, data)


def sparse_reduce_args(t):
    """(rebuild function name, args) for a sparse tensor, as torch pickles one: COO and CSR
    with the functions torch 1.13 reads too, the other compressed layouts with current
    torch's _rebuild_sparse_tensor."""
    if t.layout == _C.sparse_coo:
        return "_rebuild_sparse_tensor", (t.layout, (t._indices(), t._values(), t.size()))
    if t.layout in (_C.sparse_csr, _C.sparse_bsr):
        members = (t.crow_indices(), t.col_indices(), t.values(), t.size())
    else:
        members = (t.ccol_indices(), t.row_indices(), t.values(), t.size())
    return ("_rebuild_sparse_csr_tensor" if t.layout == _C.sparse_csr else "_rebuild_sparse_tensor"), (t.layout, members)


# ---------------------------------------------------------------------------- quantized tensors

QSCHEME_NAMES = ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
                 "per_channel_affine_float_qparams")
# The integer dtype whose values each quantized dtype holds. The sub-byte ones pack two or four
# values into each uint8: they save and load as their packed bytes, as torch writes them.
INT_DTYPE_OF_QUANTIZED = {"qint8": "int8", "quint8": "uint8", "qint32": "int32", "quint4x2": "uint8",
                          "quint2x4": "uint8"}
SUB_BYTE_QUANTIZED = ("quint4x2", "quint2x4")


def qscheme(name):
    """tessera's qscheme object called name (tessera.per_tensor_affine, ...)."""
    return getattr(_C, name)


def qscheme_name(obj):
    """'per_tensor_affine' (...) for one of tessera's qscheme objects, None for anything else."""
    return str(obj).rsplit(".", 1)[-1] if isinstance(obj, _C.qscheme) else None


def quantizer_params(q, scheme):
    """q's quantizer as torch pickles it: (scheme, scale, zero_point) for a per-tensor affine
    tensor, (scheme, scales, zero_points, axis) for a per-channel one; scheme(name) is what
    stands for the qscheme in the pickle. Torch writes per_channel_affine_float_qparams as
    per_channel_affine too: the zero points' dtype (floating) tells them apart on load."""
    name = str(q.qscheme()).rsplit(".", 1)[-1]
    if name == "per_tensor_affine":
        return (scheme(name), q.q_scale(), q.q_zero_point())
    if name in ("per_channel_affine", "per_channel_affine_float_qparams"):
        return (scheme("per_channel_affine"), q.q_per_channel_scales(), q.q_per_channel_zero_points(),
                q.q_per_channel_axis())
    raise RuntimeError(f"Serialization is not supported for tensors of type {q.qscheme()}")


def _check_qparams(ok, what, params):
    if not ok:
        text = repr(params)
        text = text if len(text) <= 200 else text[:197] + "..."
        raise RuntimeError(f"rebuilding a quantized tensor: {what} (quantizer params {text})")


def rebuild_qtensor_from_ints(ints, params, requires_grad=False, packed_as=None):
    """The quantized tensor with ints's values (a dense uint8, int8 or int32 tensor: quint8,
    qint8 or qint32) and the pickled quantizer params, which are checked against ints first.
    _make_per_*_quantized_tensor copy: quantized tensors that shared a storage when saved
    each get their own after loading. packed_as=(dtype, size) reads ints as the packed bytes
    of a quint4x2 or quint2x4 tensor of that size instead."""
    _check_qparams(isinstance(ints, _C.Tensor) and not ints.is_quantized
                   and str(ints.dtype).rsplit(".", 1)[-1] in INT_DTYPE_OF_QUANTIZED.values(),
                   f"expected a uint8, int8 or int32 tensor of values, got {getattr(ints, 'dtype', type(ints))}",
                   params)
    _check_qparams(isinstance(params, tuple) and len(params) in (3, 4), "expected a tuple of 3 or 4", params)
    if packed_as is not None:
        dtype, size = packed_as
        _check_qparams(ints.dtype == _C.uint8 and ints.dim() == 1, "a sub-byte tensor's data are 1-D uint8 bytes",
                       params)
        shape = _C.empty(size, device="meta")  # checks the size; the qparams are checked against it below
    else:
        shape = ints
    name = qscheme_name(params[0])
    if name == "per_tensor_affine":
        _check_qparams(len(params) == 3, "per_tensor_affine takes (qscheme, scale, zero_point)", params)
        _, scale, zero_point = params
        _check_qparams(type(scale) in (float, int) and type(zero_point) is int, "scale must be a float and "
                       "zero_point an int", params)
        if packed_as is not None:
            q = _C._empty_affine_quantized(size, scale=float(scale), zero_point=zero_point, dtype=dtype)
        else:
            q = _C._make_per_tensor_quantized_tensor(ints, float(scale), zero_point)
    elif name in ("per_channel_affine", "per_channel_affine_float_qparams"):
        _check_qparams(len(params) == 4, f"{name} takes (qscheme, scales, zero_points, axis)", params)
        _, scales, zero_points, axis = params
        if type(scales) is list and type(zero_points) is list:  # as torch's _rebuild_qtensor reads lists
            floating = name == "per_channel_affine_float_qparams"
            scales = _C.tensor(scales, dtype=_C.float32 if floating else _C.float64)
            zero_points = _C.tensor(zero_points, dtype=_C.float32 if floating else _C.int64)
        _check_qparams(isinstance(scales, _C.Tensor) and isinstance(zero_points, _C.Tensor) and type(axis) is int,
                       "scales and zero_points must be tensors and axis an int", params)
        _check_qparams(0 <= axis < shape.dim(), f"axis {axis} is out of range for {shape.dim()} dimensions", params)
        _check_qparams(scales.dim() == zero_points.dim() == 1 and scales.numel() == zero_points.numel()
                       == shape.size(axis), f"expected {shape.size(axis)} scales and zero points in 1-D tensors",
                       params)
        _check_qparams(scales.is_floating_point() and not scales.is_quantized and not zero_points.is_quantized
                       and not zero_points.is_complex() and zero_points.dtype != _C.bool,
                       "scales must be floating and zero points real numbers", params)
        if packed_as is not None:
            q = _C._empty_per_channel_affine_quantized(size, scales=scales, zero_points=zero_points, axis=axis,
                                                       dtype=dtype)
        else:
            q = _C._make_per_channel_quantized_tensor(ints, scales, zero_points, axis)
    else:
        raise RuntimeError(f"Can't deserialize quantized tensor with qscheme {params[0]!r}")
    if packed_as is not None:
        _C._set_packed_quantized_(q, ints)
    if requires_grad:
        q.requires_grad_(True)  # refused, as torch refuses it: quantized tensors take no gradients
    return q


def _rebuild_qtensor(ints, params, requires_grad, packed_as=None):
    """Unpickling a quantized tensor that Tensor.__reduce_ex__ pickled: its int_repr() and its
    quantizer params with the qscheme by name (and, for a sub-byte tensor, whose int_repr() is
    its packed bytes, the dtype's name and the size)."""
    _check_qparams(isinstance(params, tuple) and params and params[0] in QSCHEME_NAMES,
                   "expected the qscheme's name first", params)
    if packed_as is not None:
        _check_qparams(type(packed_as) is tuple and len(packed_as) == 2 and packed_as[0] in SUB_BYTE_QUANTIZED,
                       "expected (sub-byte dtype name, size) after requires_grad", params)
        packed_as = (getattr(_C, packed_as[0]), packed_as[1])
    return rebuild_qtensor_from_ints(ints, (qscheme(params[0]),) + params[1:], requires_grad, packed_as)


NAMED_PICKLE_ERROR = ("NYI: Named tensors don't support serialization. Please drop names via "
                      "`tensor = tensor.rename(None)` before serialization.")


def _reduce_ex(self, proto):
    """Tensor.__reduce_ex__: (_rebuild_tensor_v2, (storage, offset, size, stride, requires_grad, hooks[, metadata]))."""
    from .storage import TypedStorage
    if self.is_mkldnn:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
    if self.is_sparse or self.is_sparse_csr:
        name, args = sparse_reduce_args(self)
        return (globals()[name], args)
    if self.is_nested:
        self.size()  # raises torch's "NestedTensorImpl doesn't support sizes"
    if self.has_names():
        raise RuntimeError(NAMED_PICKLE_ERROR)
    if type(self) is not _C.Tensor and type(self).__torch_dispatch__ is not _C.Tensor.__torch_dispatch__ \
            and self.data_ptr() == 0:
        # A wrapper subclass (no memory of its own): its geometry, then its Python state,
        # as torch pickles one.
        args = (type(self), self.dtype, tuple(self.size()), self.stride(), self.storage_offset(), self.layout,
                self.device, self.requires_grad)
        return (_rebuild_from_type_v2, (_rebuild_wrapper_subclass, type(self), args, _object_state(self)))
    if self.device.type != "cpu":
        raise NotImplementedError(f"pickling tensors on {self.device.type} is not supported yet; move them to the CPU")
    if self.is_quantized:
        # Its integers as a dense tensor (views of one quantized storage pickle apart) and its
        # quantizer, with the scheme by name.
        func, args = _rebuild_qtensor, (self.int_repr(), quantizer_params(self, str), self.requires_grad)
        name = str(self.dtype).rsplit(".", 1)[-1]
        if name in SUB_BYTE_QUANTIZED:
            args += ((name, tuple(self.size())),)
    else:
        args = (TypedStorage.of(self), self.storage_offset(), tuple(self.size()), self.stride(), self.requires_grad,
                OrderedDict())
        metadata = get_tensor_metadata(self)
        func, args = _rebuild_tensor_v2, (args + (metadata,) if metadata else args)
    if type(self) is _C.Tensor:
        return (func, args)
    # A subclass instance comes back as its class with its Python state, as torch's
    # Tensor.__reduce_ex__ pickles it.
    return (_rebuild_from_type_v2, (func, type(self), args, _object_state(self)))


def _rebuild_wrapper_subclass(cls, dtype, size, stride, storage_offset, layout, device, requires_grad):
    """Unpickling a wrapper subclass instance (Tensor._make_wrapper_subclass's)."""
    return _C.Tensor._make_wrapper_subclass(cls, size, strides=stride, storage_offset=storage_offset, dtype=dtype,
                                            layout=layout, device=device, requires_grad=requires_grad)


def _object_state(obj):
    """What object.__reduce_ex__ would save of obj's Python attributes: __getstate__()'s
    answer, else (__dict__, slots) or __dict__."""
    getstate = getattr(obj, "__getstate__", None)
    if getstate is not None:
        return getstate()
    slots = copyreg._slotnames(type(obj))
    if slots:
        return obj.__dict__, {name: getattr(obj, name) for name in slots if hasattr(obj, name)}
    return obj.__dict__


def _rebuild_from_type_v2(func, new_type, args, state):
    """Unpickling a Tensor subclass instance: func(*args) as new_type, with its state set
    through new_type.__setstate__ when it defines one, else attribute by attribute."""
    ret = func(*args)
    if new_type is _C.Tensor:
        return ret
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    if getattr(new_type, "__setstate__", None) is not None:
        ret.__setstate__(state)
        return ret
    dict_state, slots_state = state if isinstance(state, tuple) else (state, None)
    if isinstance(state, tuple) and len(state) != 2:
        raise RuntimeError(f"Invalid serialized state: {state}")
    for key, value in (dict_state or {}).items():
        setattr(ret, key, value)
    for key, value in (slots_state or {}).items():
        setattr(ret, key, value)
    return ret


_C._add_tensor_methods({"__reduce_ex__": _reduce_ex})
