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


NAMED_PICKLE_ERROR = ("NYI: Named tensors don't support serialization. Please drop names via "
                      "`tensor = tensor.rename(None)` before serialization.")


def _reduce_ex(self, proto):
    """Tensor.__reduce_ex__: (_rebuild_tensor_v2, (storage, offset, size, stride, requires_grad, hooks[, metadata]))."""
    from .storage import TypedStorage
    if self.is_mkldnn:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")
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
