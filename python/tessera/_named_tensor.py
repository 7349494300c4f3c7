"""Named tensors' Python API, as torch keeps it on the Python side of its Tensor:
``rename`` / ``rename_`` (positional names or a keyword rename map), ``refine_names`` and
``align_to`` with their ``'...'`` forms. The C++ primitives (``Tensor._rename``,
``_refine_names``, ``_align_to``) check the names, build the views and give torch's
warn-once on first use; name propagation through operators is the Named key's fallback
(aten/native/named).

Importing this module installs the methods on ``tessera.Tensor``.
"""
import collections

from . import _C


def _is_ellipsis(item):
    return item is Ellipsis or item == "..."


def _single_ellipsis_index(names, fn_name):
    found = [i for i, name in enumerate(names) if _is_ellipsis(name)]
    if len(found) >= 2:
        raise RuntimeError(f"{fn_name}: More than one Ellipsis ('...') found in names ({names}). "
                           "This function supports up to one Ellipsis.")
    return found[0] if found else None


def _check_name_types(names, fn_name):
    """torch's parser: a first element that is no name fails the signature; a later one
    fails its conversion."""
    for i, name in enumerate(names):
        if name is not None and not isinstance(name, str):
            if i == 0:
                raise TypeError(f"{fn_name}(): argument 'names' (position 1) must be tuple of names, not tuple")
            raise TypeError(f"expected None or string for Dimname but got {type(name).__name__}")


def _names_str(names):
    return "[" + ", ".join("None" if n is None else repr(n) for n in names) + "]"


def _resolve_ellipsis(names, tensor_names, fn_name):
    """names with its '...' replaced by the tensor's names at those positions."""
    idx = _single_ellipsis_index(names, fn_name)
    if idx is None:
        return tuple(names)
    after = len(names) - idx - 1
    globbed = tensor_names[idx:len(tensor_names) - after]
    return tuple(names[:idx]) + tuple(globbed) + tuple(names[idx + 1:])


def _update_names(tensor, names, rename_map, inplace):
    fn_name = "rename_" if inplace else "rename"
    if names and rename_map:
        raise RuntimeError(f"{fn_name}: This function takes either positional args or keyword args, but not both. "
                           f"Use tensor.{fn_name}(*names) to name dims and tensor.{fn_name}(**rename_map) to "
                           "rename dims.")
    if rename_map:
        # Every old name is looked up in the tensor's names as they were: swaps and chains
        # (A='B', B='A') rename simultaneously, as torch's map does.
        current = tensor.names
        new_names = list(current)
        for old, new in rename_map.items():
            if old not in current:
                raise RuntimeError(f"{fn_name}: Tried to rename dim '{old}' to dim {new} in Tensor[{current}] "
                                   f"but dim '{old}' does not exist")
            new_names[current.index(old)] = new
        resolved = tuple(new_names)
        _check_name_types(resolved, fn_name)
    elif len(names) == 1 and names[0] is None:
        resolved = None
    else:
        resolved = _resolve_ellipsis(names, tensor.names, fn_name)
        _check_name_types(resolved, fn_name)
    return tensor._rename_(resolved) if inplace else tensor._rename(resolved)


def rename(self, *names, **rename_map):
    """rename(*names, **rename_map) -> Tensor

    A view of self with its dims named ``names`` (``None`` for an unnamed dim, ``'...'``
    for self's names at those positions; ``rename(None)`` drops every name), or with the
    dims named in ``rename_map`` renamed."""
    return _update_names(self, names, rename_map, inplace=False)


def rename_(self, *names, **rename_map):
    """rename_(*names, **rename_map) -> Tensor

    In-place rename: sets self's names and returns self."""
    return _update_names(self, names, rename_map, inplace=True)


def refine_names(self, *names):
    """refine_names(*names) -> Tensor

    A view of self whose unnamed dims take the given names; named dims must keep theirs.
    ``'...'`` stands for self's names at those positions."""
    resolved = _resolve_ellipsis(names, self.names, "refine_names")
    _check_name_types(resolved, "refine_names")
    return self._refine_names(resolved)


def align_to(self, *names):
    """align_to(*names) -> Tensor

    A view of self with its dims permuted into the order of ``names``; names self lacks
    become size-1 dims. With ``'...'``, self's dims not listed keep their order there."""
    idx = _single_ellipsis_index(names, "align_to")
    if idx is None:
        _check_name_types(names, "align_to")
        return self._align_to(tuple(names))
    order = tuple(name for name in names if not _is_ellipsis(name))
    _check_name_types(order, "align_to")
    if any(name is None for name in order):
        raise RuntimeError(f"align_to: the desired order of dimensions cannot contain a None name, got "
                           f"{_names_str(order)}")
    return self._align_to(order, idx)


_unflatten_overloads = _C.Tensor.__dict__["unflatten"]


def unflatten(self, dim, sizes):
    """unflatten(dim, sizes) -> Tensor

    Expands dim ``dim`` into the shape ``sizes`` (one entry may be -1). For a named tensor,
    ``dim`` may be a name and ``sizes`` a named shape: pairs ``(('A', 2), ('B', 3))`` or an
    OrderedDict, whose names the new dims take."""
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if isinstance(sizes, collections.OrderedDict) or (
            isinstance(sizes, (tuple, list)) and isinstance(sizes[0], (tuple, list))):
        names, sizes = _unzip_named_shape(sizes)
        return _unflatten_overloads(self, dim, sizes, names)
    return _unflatten_overloads(self, dim, sizes)


def _unzip_named_shape(named_shape):
    if isinstance(named_shape, collections.OrderedDict):
        named_shape = named_shape.items()
    if not hasattr(named_shape, "__iter__") and not isinstance(named_shape, tuple):
        raise RuntimeError(f"Expected namedshape to be OrderedDict or iterable of tuples, got: {type(named_shape)}")
    pairs = list(named_shape)
    if not pairs:
        raise RuntimeError("Expected namedshape to non-empty.")
    return tuple(name for name, _ in pairs), tuple(size for _, size in pairs)


_C._add_tensor_methods({
    "unflatten": unflatten,
    "rename": rename,
    "rename_": rename_,
    "refine_names": refine_names,
    "align_to": align_to,
})
