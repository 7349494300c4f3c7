"""torch.masked's reductions on sparse COO and CSR inputs (and sparse masks), as torch 1.13
defines them.

A sparse input given no mask counts its specified elements as the unmasked ones. With a
mask, ``where`` keeps the masked-in positions: the input's value where it specifies one,
0 where it does not; masked-out positions become unspecified. A reduction groups the
entries by the coordinates the reduced dims leave, so its result is sparse again: COO
for a COO input (a full reduction of the sparse dims gives the dense result made sparse,
as torch), 2-D CSR with keepdim=True for a CSR input.
"""
import tessera as _T

_SCATTER = {"sum": "sum", "prod": "prod", "amax": "amax", "amin": "amin", "mean": "mean"}


def _flat_keys(indices, sizes):
    """Row-major linear position of each column of ``indices`` over ``sizes``."""
    keys = _T.zeros(indices.shape[1], dtype=_T.int64, device=indices.device)
    for d, n in enumerate(sizes):
        keys = keys * n + indices[d]
    return keys


def _unflatten_keys(keys, sizes):
    rows = []
    for n in reversed(sizes):
        rows.append(keys % n)
        keys = keys.div(n, rounding_mode="floor")
    return _T.stack(rows[::-1]) if rows else keys.new_zeros((0, keys.numel()))


def coo_where(mask, input, fill_value):
    """where(mask, input, fill_value) for a COO mask and input of one shape and sparse dim."""
    input, mask = input.coalesce(), mask.coalesce()
    if mask.sparse_dim() != input.sparse_dim():
        raise ValueError(f"_where expects a mask with the input's sparse dims ({input.sparse_dim()}), got "
                         f"{mask.sparse_dim()}")
    sizes = tuple(input.shape[:input.sparse_dim()])
    mask_values = mask.values()
    masked_in = mask_values if mask_values.ndim == 1 else mask_values.flatten(1).any(1)
    kept = masked_in.nonzero().flatten()
    indices = mask.indices().index_select(1, kept)
    keys, input_keys = _flat_keys(indices, sizes), _flat_keys(input.indices(), sizes)
    values = input.values()
    entry_shape = tuple(values.shape[1:])
    if input_keys.numel() and keys.numel():
        # both key lists are sorted (coalesced operands): each kept key's entry in the input
        at = _T.searchsorted(input_keys, keys).clamp(max=input_keys.numel() - 1)
        found = input_keys.index_select(0, at) == keys
        picked = values.index_select(0, at)
        zero = _T.zeros((), dtype=values.dtype, device=values.device)
        out = _T.where(found.reshape((-1,) + (1,) * len(entry_shape)), picked, zero)
    else:
        out = values.new_zeros((keys.numel(),) + entry_shape)
    if mask_values.ndim > 1:  # the dense part of a hybrid tensor takes fill_value where masked out
        out = _T.where(mask_values.index_select(0, kept), out, fill_value)
    return _T.sparse_coo_tensor(indices, out, input.shape, is_coalesced=True)


def csr_where(mask, input, fill_value):
    return coo_where(mask.to_sparse(), input.to_sparse(), fill_value).to_sparse_csr()


def _reduce_dim0(name, values):
    if name in ("amax", "amin") and values.shape[0] == 0:
        # (amax and amin of nothing have no value: the identity stands in, as torch's)
        from tessera.masked._ops import _reduction_identity
        return _reduction_identity(name, values).expand(values.shape[1:])
    return getattr(values, name)(0)


def coo_reduce(name, input, dims, keepdim, dtype):
    """The reduction ``name`` of a COO tensor's entries over ``dims`` (sorted, nonnegative)."""
    x = input.coalesce()
    values, indices = x.values(), x.indices()
    if dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    sd = x.sparse_dim()
    reduced_sparse = [d for d in dims if d < sd]
    reduced_dense = [d - sd + 1 for d in dims if d >= sd]
    if keepdim:
        out_shape = [1 if d in dims else n for d, n in enumerate(x.shape)]
    else:
        out_shape = [n for d, n in enumerate(x.shape) if d not in dims]
    if reduced_dense:
        if name != "sum":
            raise NotImplementedError(f"masked {name} of a sparse COO tensor over its dense dims (torch has none)")
        values = values.sum(reduced_dense, keepdim=keepdim)
    if len(reduced_sparse) == sd:
        out = _reduce_dim0(name, values)
        for _ in range(sd if keepdim else 0):
            out = out.unsqueeze(0)
        return out.to(dtype if dtype is not None else out.dtype).to_sparse()
    kept = [d for d in range(sd) if d not in reduced_sparse]
    if keepdim:
        reduced = _T.tensor(reduced_sparse, dtype=_T.int64, device=indices.device)
        grouped = indices.index_fill(0, reduced, 0) if reduced_sparse else indices
        group_sizes = [out_shape[d] for d in range(sd)]
    else:
        grouped = indices.index_select(0, _T.tensor(kept, dtype=_T.int64, device=indices.device))
        group_sizes = [x.shape[d] for d in kept]
    keys = _flat_keys(grouped, group_sizes)
    unique_keys, slot = _T.unique(keys, sorted=True, return_inverse=True)
    out = values.new_zeros((unique_keys.numel(),) + tuple(values.shape[1:]))
    if keys.numel():
        index = slot.reshape((-1,) + (1,) * (values.ndim - 1)).expand(values.shape)
        out = out.scatter_reduce(0, index, values, _SCATTER[name], include_self=False)
    return _T.sparse_coo_tensor(_unflatten_keys(unique_keys, group_sizes), out, out_shape, is_coalesced=True)


def csr_reduce(name, input, dims, keepdim, dtype):
    """The reduction of a 2-D CSR tensor over ``dims``: a CSR result, so keepdim=True only.
    Over both dims the result is one specified element (if any entry was), kept even where
    it is 0, as torch's."""
    if not keepdim:
        raise RuntimeError(f"masked {name} of a sparse CSR tensor needs keepdim=True (the result is a 2-D CSR tensor)")
    if input.dim() != 2 or input.dense_dim() != 0:
        raise RuntimeError(f"masked {name} expects a 2-D sparse CSR tensor without dense dims, got {input.dim()} dims")
    if len(dims) == 2:
        values = input.values()
        if dtype is not None and values.dtype != dtype:
            values = values.to(dtype)
        count = min(values.numel(), 1)
        out = _reduce_dim0(name, values).reshape(1)[:count]
        crow = _T.tensor([0, count], dtype=_T.int64, device=values.device)
        return _T.sparse_csr_tensor(crow, _T.zeros(count, dtype=_T.int64, device=values.device), out, (1, 1))
    return coo_reduce(name, input.to_sparse(), dims, True, dtype).to_sparse_csr()
