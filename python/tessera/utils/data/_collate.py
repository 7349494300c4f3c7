"""default_collate (a list of samples -> one batch, stacking along a new first dimension)
and default_convert (numpy data -> tensors, no batching), with torch's rules per type and
its extensible registry (collate(batch, collate_fn_map=...)).
"""
import collections.abc
import copy
import re

import numpy as np

from ... import _C
from . import _worker

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# numpy dtypes of strings and objects, which have no tensor counterpart.
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def _as_tensor(data):
    from ... import as_tensor
    return as_tensor(data)


def default_convert(data):
    """Turns numpy arrays and scalars in `data` (also inside mappings, namedtuples and
    sequences) into tensors; everything else is returned as it is."""
    elem_type = type(data)
    if isinstance(data, _C.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_", "bytes_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return _as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as torch has always returned
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            return elem_type(converted)
        except TypeError:  # a sequence type that cannot be built from a list
            return converted
    return data


def _rebuild_mapping(elem, values):
    """A mapping of elem's type holding `values` (a plain dict when that type cannot be made)."""
    if isinstance(elem, collections.abc.MutableMapping):
        # A copy keeps the type and any attributes of, e.g., an OrderedDict subclass.
        clone = copy.copy(elem)
        clone.update(values)
        return clone
    try:
        return type(elem)(values)
    except TypeError:
        return values


def collate(batch, *, collate_fn_map=None):
    """Collates `batch` (a list of samples), handling containers here and leaf types through
    collate_fn_map ({type or tuple of types: fn(batch, *, collate_fn_map)}): an exact type
    match first, then the first entry the element is an instance of."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(list(samples), collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as torch has always returned
        try:
            return elem_type(columns)
        except TypeError:
            return columns
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _worker.get_worker_info() is not None and elem.device.type == "cpu" and all(
            isinstance(b, _C.Tensor) and b.dtype == elem.dtype for b in batch):
        # In a worker the batch is stacked straight into shared memory, so that sending it
        # to the main process copies nothing more.
        from ...multiprocessing.reductions import new_shared
        out = new_shared((len(batch),) + tuple(elem.size()), elem.dtype)
        return _C.stack(batch, 0, out=out)
    return _C.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return _C.tensor(batch, dtype=_C.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _C.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    _C.Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    (str, bytes): collate_str_fn,
}


def default_collate(batch):
    """Puts a list of samples together into a batch: tensors are stacked (a new first
    dimension), numpy arrays and scalars become tensors, Python floats a float64 tensor,
    ints an int64 tensor (bools a bool tensor), strings stay a list; mappings, namedtuples
    and sequences are collated field by field (tuples and lists come back as lists)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
