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
