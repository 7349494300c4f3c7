// Shape operators on sparse COO tensors: permute, unsqueeze, cat, index_select, select and
// narrow_copy (cat and select take the compressed layouts too). Each
// rewrites the indices of the sparse dims and applies the dense form of the op to the
// values for the dense dims, as torch's sparse kernels do; none of them densifies.
#include <aten/core/TensorOperators.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/index/IndexingUtils.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>

namespace at::inline tessera::native {

using namespace sparse;

namespace {

int64_t wrap_dim(int64_t dim, int64_t n) {
  TORCH_CHECK_INDEX(dim >= -n && dim < n, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                    "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

}  // namespace

Tensor permute_sparse_coo(const Tensor& self, IntArrayRef dims) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "permute");
  const int64_t n = self.dim(), sd = impl->sparse_dim();
  TORCH_CHECK(static_cast<int64_t>(dims.size()) == n, "permute(sparse_coo): number of dimensions in the tensor input "
              "does not match the length of the desired ordering of dimensions i.e. input.dim() = ", n,
              " is not equal to len(dims) = ", dims.size());
  std::vector<int64_t> wrapped(dims.size());
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    wrapped[i] = wrap_dim(dims[i], n);
    TORCH_CHECK(!seen[static_cast<size_t>(wrapped[i])], "permute(): duplicate dims are not allowed.");
    seen[static_cast<size_t>(wrapped[i])] = true;
  }
  for (int64_t i = 0; i < sd; ++i) {
    TORCH_CHECK(wrapped[static_cast<size_t>(i)] < sd, "permute(sparse_coo): transpositions between sparse and dense "
                "dimensions are not allowed.Only transpositions within sparse and dense dimensions are allowed.");
  }
  std::vector<int64_t> size(static_cast<size_t>(n)), value_dims{0};
  for (int64_t i = 0; i < n; ++i) size[static_cast<size_t>(i)] = self.size(wrapped[static_cast<size_t>(i)]);
  for (int64_t i = sd; i < n; ++i) value_dims.push_back(wrapped[static_cast<size_t>(i)] - sd + 1);
  const std::vector<int64_t> sparse_order(wrapped.begin(), wrapped.begin() + sd);
  bool identity = true;
  for (int64_t i = 0; i < sd; ++i) identity = identity && sparse_order[static_cast<size_t>(i)] == i;
  // (entries stay sorted only while the sparse dims keep their order)
  return make_sparse_coo(size, impl->indices().index_select(0, index_tensor(sparse_order, self)),
                         impl->values().permute(value_dims), impl->coalesced() && identity);
}

Tensor unsqueeze_sparse(const Tensor& self, int64_t dim) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "unsqueeze");
  const int64_t sd = impl->sparse_dim();
  dim = wrap_dim(dim, self.dim() + 1);
  std::vector<int64_t> size = self.sizes().vec();
  size.insert(size.begin() + dim, 1);
  const Tensor& indices = impl->indices();
  if (dim <= sd) {
    const Tensor zero_row = at::zeros({1, indices.size(1)}, indices.options());
    const Tensor grown = at::cat({indices.narrow(0, 0, dim), zero_row, indices.narrow(0, dim, sd - dim)}, 0);
    return make_sparse_coo(size, grown, impl->values(), impl->coalesced());
  }
  return make_sparse_coo(size, indices, impl->values().unsqueeze(dim - sd + 1), impl->coalesced());
}

// The inverse of unsqueeze: a size-1 sparse dim (every coordinate 0) leaves the indices,
// a size-1 dense dim the values; another size leaves the tensor as it is (torch's rule).
Tensor squeeze_dim_sparse(const Tensor& self, int64_t dim) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "squeeze");
  dim = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  if (self.dim() == 0 || self.size(dim) != 1) return sparse_alias(self);
  const int64_t sd = impl->sparse_dim();
  std::vector<int64_t> size = self.sizes().vec();
  size.erase(size.begin() + dim);
  if (dim >= sd) return make_sparse_coo(size, impl->indices(), impl->values().squeeze(dim - sd + 1), impl->coalesced());
  TORCH_CHECK_NOT_IMPLEMENTED(sd > 1, "squeeze: the only sparse dim of a COO tensor cannot be squeezed in tessera");
  const Tensor& indices = impl->indices();
  const Tensor kept = at::cat({indices.narrow(0, 0, dim), indices.narrow(0, dim + 1, sd - dim - 1)}, 0);
  return make_sparse_coo(size, kept, impl->values(), impl->coalesced());
}

// Along a sparse dim, entries keep their values and move by the sizes before them; along
// a dense dim, each operand's values are placed in their slice of zero-padded values.
namespace {

// Compressed matrices (no batch dims) of one layout joined along matrix dim `dim` (0 rows,
// 1 columns), member by member, so every stored entry (an explicit zero, a whole block)
// stays: along the compressed dim the compressed indices follow one another, offset by the
// entries before; along the plain dim each compressed slot takes every part's entries in
// part order, their plain indices offset by the widths of the parts before.
Tensor cat_matrices(const std::vector<Tensor>& parts, int64_t dim, IntArrayRef size, c10::ScalarType index_type) {
  const Layout layout = parts[0].layout();
  const bool along_compressed = (dim == 0) == compresses_rows(layout);
  const int64_t plain_dim = compresses_rows(layout) ? 1 : 0;
  std::vector<Tensor> ci, pi, v;
  for (const Tensor& p : parts) {
    const SparseCsrTensorImpl* impl = get_sparse_csr_impl(p);
    ci.push_back(impl->compressed_indices().to(c10::kLong));
    pi.push_back(impl->plain_indices().to(c10::kLong));
    v.push_back(impl->values());
  }
  const Tensor values = at::cat(v, 0);
  Tensor compressed, plain, joined_values;
  if (along_compressed) {
    std::vector<Tensor> pieces{ci[0]};
    int64_t offset = pi[0].size(0);
    for (size_t t = 1; t < parts.size(); ++t) {
      pieces.push_back(ci[t].narrow(0, 1, ci[t].size(0) - 1) + offset);
      offset += pi[t].size(0);
    }
    compressed = at::cat(pieces);
    plain = at::cat(pi);
    joined_values = values;
  } else {
    const int64_t slots = ci[0].size(0) - 1;
    const TensorOptions longs = ci[0].options();
    const auto counts_of = [&](size_t t) { return ci[t].narrow(0, 1, slots) - ci[t].narrow(0, 0, slots); };
    Tensor total = at::zeros({slots}, longs);
    for (size_t t = 0; t < parts.size(); ++t) total = total + counts_of(t);
    compressed = at::cat({at::zeros({1}, longs), total.cumsum(0)});
    // entry e of part t in slot r lands at compressed[r] + (part t's predecessors' entries in
    // slot r) + (e - ci_t[r])
    Tensor before = at::zeros({slots}, longs);
    std::vector<Tensor> positions, shifted;
    int64_t shift = 0;
    for (size_t t = 0; t < parts.size(); ++t) {
      const Tensor counts = counts_of(t);
      const Tensor slot = at::repeat_interleave(at::arange(slots, longs), counts, std::nullopt);
      const Tensor start = compressed.narrow(0, 0, slots) + before - ci[t].narrow(0, 0, slots);
      positions.push_back(at::arange(pi[t].size(0), longs) + start.index_select(0, slot));
      shifted.push_back(pi[t] + shift);
      const int64_t block = is_blocked(layout) ? v[t].size(1 + plain_dim) : 1;
      shift += parts[t].size(plain_dim) / block;
      before = before + counts;
    }
    const Tensor position = at::cat(positions);
    plain = at::empty_like(position).index_copy_(0, position, at::cat(shifted));
    joined_values = at::empty_like(values).index_copy_(0, position, values);
  }
  return make_sparse_compressed(layout, size, compressed.to(index_type), plain.to(index_type), joined_values);
}

// cat of compressed tensors of one layout (current torch's operation; 1.13 has none): every
// part has the first's shape but along `dim`, its dense dims and blocksize. Along a batch
// dim the members are joined (one nnz per batch, so the parts need the same nnz); along a
// matrix dim, batch by batch.
Tensor cat_compressed(ArrayRef<Tensor> tensors, int64_t dim) {
  const Tensor& first = tensors[0];
  const Layout layout = first.layout();
  const SparseCsrTensorImpl* head = get_sparse_csr_impl(first);
  const int64_t dense = head->dense_dim(), batch = head->batch_dim();
  dim = wrap_dim(dim, first.dim());
  std::vector<int64_t> size = first.sizes().vec();
  size[static_cast<size_t>(dim)] = 0;
  bool narrow_indices = true;
  for (size_t pos = 0; pos < tensors.size(); ++pos) {
    const Tensor& t = tensors[pos];
    TORCH_CHECK(t.layout() == layout, "torch.cat(): expected every tensor in the ", layout_word(layout),
                " layout, but the one at position ", pos, " is ", layout_word(t.layout()));
    bool same = t.dim() == first.dim() && t.dense_dim() == dense;
    for (int64_t d = 0; same && d < first.dim(); ++d) same = d == dim || t.size(d) == first.size(d);
    TORCH_CHECK(same, "torch.cat(): all tensors must have the same shape ", first.sizes(), " (except in the "
                "concatenating dimension) and dense dims, but found shape ", t.sizes(), " with ", t.dense_dim(),
                " dense dims at position ", pos);
    const SparseCsrTensorImpl* impl = get_sparse_csr_impl(t);
    if (is_blocked(layout)) {
      TORCH_CHECK(impl->values().size(batch + 1) == head->values().size(batch + 1) &&
                      impl->values().size(batch + 2) == head->values().size(batch + 2),
                  "torch.cat(): all tensors must have the same blocksize, but the one at position ", pos, " differs");
    }
    refuse_meta(t, "cat of compressed tensors");
    narrow_indices = narrow_indices && impl->compressed_indices().scalar_type() == c10::kInt;
    size[static_cast<size_t>(dim)] += t.size(dim);
  }
  // int32 indices stay int32 while the result's entries and sizes fit them
  int64_t total_nnz = 0;
  for (const Tensor& t : tensors) total_nnz += get_sparse_csr_impl(t)->nnz();
  const int64_t limit = std::numeric_limits<int32_t>::max();
  const c10::ScalarType index_type =
      narrow_indices && total_nnz <= limit && *std::max_element(size.begin(), size.end()) <= limit ? c10::kInt
                                                                                                    : c10::kLong;
  const auto member = [&](const Tensor& t, int which) {
    const SparseCsrTensorImpl* impl = get_sparse_csr_impl(t);
    return which == 0 ? impl->compressed_indices().to(index_type)
                      : which == 1 ? impl->plain_indices().to(index_type) : impl->values();
  };
  if (dim < batch) {
    std::vector<Tensor> parts[3];
    for (const Tensor& t : tensors) {
      TORCH_CHECK(t._nnz() == first._nnz(), "torch.cat(): every batch of a compressed tensor has one nnz, so the "
                  "tensors joined along a batch dim need the same nnz, got ", first._nnz(), " and ", t._nnz());
      for (int which = 0; which < 3; ++which) parts[which].push_back(member(t, which));
    }
    return make_sparse_compressed(layout, size, at::cat(parts[0], dim), at::cat(parts[1], dim),
                                  at::cat(parts[2], dim));
  }
  const IntArrayRef matrix_size = IntArrayRef(size).slice(static_cast<size_t>(batch));
  const std::vector<int64_t> batch_sizes(size.begin(), size.begin() + batch);
  const int64_t count = numel_of(batch_sizes);
  if (batch == 0) return cat_matrices(std::vector<Tensor>(tensors.begin(), tensors.end()), dim, matrix_size, index_type);
  // (each operand's members converted and flattened to one batch dim once, then sliced)
  std::vector<std::array<Tensor, 3>> flat;
  for (const Tensor& t : tensors) {
    flat.push_back({member(t, 0).flatten(0, batch - 1), member(t, 1).flatten(0, batch - 1),
                    member(t, 2).flatten(0, batch - 1)});
  }
  std::vector<Tensor> joined;
  for (int64_t b = 0; b < count; ++b) {
    std::vector<Tensor> matrices;
    for (size_t i = 0; i < tensors.size(); ++i) {
      matrices.push_back(make_sparse_compressed(layout, tensors[i].sizes().slice(static_cast<size_t>(batch)),
                                                flat[i][0].select(0, b), flat[i][1].select(0, b),
                                                flat[i][2].select(0, b)));
    }
    joined.push_back(cat_matrices(matrices, dim - batch, matrix_size, index_type));
  }
  const auto batched = [&](int which) {
    std::vector<Tensor> parts;
    for (const Tensor& m : joined) parts.push_back(member(m, which));
    if (parts.empty()) {  // (no batches: members of the right rank, empty)
      Tensor like = member(first, which);
      std::vector<int64_t> shape = like.sizes().vec();
      for (int64_t d = 0; d < batch; ++d) shape[static_cast<size_t>(d)] = batch_sizes[static_cast<size_t>(d)];
      if (which == 0) {
        const int64_t compressed_dim = batch + (compresses_rows(layout) ? 0 : 1);
        const int64_t block = is_blocked(layout) ? head->values().size(batch + 1 + (compressed_dim - batch)) : 1;
        shape.back() = size[static_cast<size_t>(compressed_dim)] / block + 1;
      }
      return at::zeros(shape, like.options());
    }
    const Tensor stacked = at::stack(parts);
    std::vector<int64_t> shape = batch_sizes;
    shape.insert(shape.end(), stacked.sizes().begin() + 1, stacked.sizes().end());
    return stacked.reshape(shape);
  };
  return make_sparse_compressed(layout, size, batched(0), batched(1), batched(2));
}

}  // namespace

Tensor cat_sparse(ArrayRef<Tensor> tensors, int64_t dim) {
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const Tensor& first = tensors[0];
  if (c10::isSparseCompressed(first.layout())) return cat_compressed(tensors, dim);
  TORCH_CHECK(first.layout() == c10::kSparse, "Concatenating sparse tensors, but a dense tensor was found at position 0.");
  const int64_t n = first.dim(), sd = first.sparse_dim(), dd = first.dense_dim();
  dim = wrap_dim(dim, n);
  std::vector<int64_t> size = first.sizes().vec();
  size[static_cast<size_t>(dim)] = 0;
  c10::ScalarType type = first.scalar_type();
  for (size_t pos = 0; pos < tensors.size(); ++pos) {
    const Tensor& t = tensors[pos];
    TORCH_CHECK(t.layout() == c10::kSparse, "Concatenating sparse tensors, but a dense tensor was found at position ",
                pos, ".");
    bool same = t.dim() == n;
    for (int64_t d = 0; same && d < n; ++d) same = d == dim || t.size(d) == first.size(d);
    TORCH_CHECK(same, "All tensors must have the same shape: ", first.sizes(), " (except in the concatenating "
                "dimension), but found shape: ", t.sizes(), " at position ", pos, ".");
    TORCH_CHECK(t.sparse_dim() == sd && t.dense_dim() == dd, "All tensors must have the same sparse_dim and dense_dim: ",
                sd, ", ", dd, ", but tensor at position ", pos, " has ", t.sparse_dim(), ", ", t.dense_dim(), ".");
    size[static_cast<size_t>(dim)] += t.size(dim);
    type = c10::promoteTypes(type, t.scalar_type());
    check_same_device("cat", first, {&t});
  }
  std::vector<Tensor> indices, values;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    const SparseTensorImpl* impl = get_sparse_impl(t);
    Tensor idx = impl->indices(), val = impl->values().to(type);
    if (dim < sd) {
      idx = idx.clone();
      idx.select(0, dim).add_(offset);
    } else {
      std::vector<int64_t> padded = val.sizes().vec();
      const int64_t vdim = dim - sd + 1;
      padded[static_cast<size_t>(vdim)] = size[static_cast<size_t>(dim)];
      Tensor wide = at::zeros(padded, val.options());
      wide.narrow(vdim, offset, val.size(vdim)).copy_(val);
      val = wide;
    }
    indices.push_back(idx);
    values.push_back(val);
    offset += t.size(dim);
  }
  return make_sparse_coo(size, at::cat(indices, 1), at::cat(values, 0), false);
}

// Along a sparse dim, each entry appears once for every position of `index` naming its
// coordinate there (entries in order, then index positions); along a dense dim, the
// values are selected.
Tensor index_select_sparse(const Tensor& self, int64_t dim, const Tensor& index) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "index_select");
  dim = wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == c10::kLong || index.scalar_type() == c10::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  const int64_t sd = impl->sparse_dim(), size_d = self.size(dim);
  check_same_device("index_select", self, {&index});
  std::vector<int64_t> size = self.sizes().vec();
  size[static_cast<size_t>(dim)] = index.numel();
  if (dim >= sd && self.is_meta()) {  // (a meta index has no values to check)
    return make_sparse_coo(size, impl->indices(), impl->values().index_select(dim - sd + 1, index.reshape({-1})),
                           impl->coalesced());
  }
  refuse_meta(self, "index_select along a sparse dim");
  const std::vector<int64_t> picks = host_int64_values(index.reshape({-1}));
  for (int64_t p : picks) {
    TORCH_CHECK_INDEX(p >= -size_d && p < size_d, "index out of range in self");
  }
  if (dim >= sd) {
    return make_sparse_coo(size, impl->indices(), impl->values().index_select(dim - sd + 1, index.reshape({-1})),
                           impl->coalesced());
  }
  // positions of `index` by the coordinate they pick (a map: the dim may be huge)
  std::unordered_map<int64_t, std::vector<int64_t>> at_coordinate;
  for (size_t k = 0; k < picks.size(); ++k) {
    const int64_t p = picks[k] < 0 ? picks[k] + size_d : picks[k];
    at_coordinate[p].push_back(static_cast<int64_t>(k));
  }
  const std::vector<int64_t> coordinate = host_int64_values(impl->indices().select(0, dim));
  std::vector<int64_t> entries, positions;
  for (size_t e = 0; e < coordinate.size(); ++e) {
    const auto found = at_coordinate.find(coordinate[e]);
    if (found == at_coordinate.end()) continue;
    for (int64_t k : found->second) {
      entries.push_back(static_cast<int64_t>(e));
      positions.push_back(k);
    }
  }
  const Tensor chosen = tensor_from_vector(entries);
  Tensor indices = impl->indices().index_select(1, chosen);
  indices.select(0, dim).copy_(tensor_from_vector(positions));
  return make_sparse_coo(size, indices, impl->values().index_select(0, chosen), false);
}

// Along a sparse dim, the entries at `index` lose that coordinate (with a single sparse
// dim the result is their dense sum, as torch gives); along a dense dim, the values are
// selected.
Tensor select_sparse(const Tensor& self, int64_t dim, int64_t index) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "select");
  TORCH_CHECK_INDEX(self.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, self.dim());
  const int64_t size = self.size(dim);
  TORCH_CHECK_INDEX(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
                    self.sizes(), " at dimension ", dim);
  if (index < 0) index += size;
  const int64_t sd = impl->sparse_dim();
  std::vector<int64_t> out_size = self.sizes().vec();
  out_size.erase(out_size.begin() + dim);
  if (dim >= sd) return make_sparse_coo(out_size, impl->indices(), impl->values().select(dim - sd + 1, index), false);
  refuse_meta(self, "select along a sparse dim");
  const Tensor chosen = impl->indices().select(0, dim).eq(index).nonzero().view({-1});
  const Tensor values = impl->values().index_select(0, chosen);
  if (sd == 1) {  // dense: the entries at index, added up in the values' dtype (a lone one as it is)
    if (values.size(0) == 1) return values.select(0, 0);
    if (values.scalar_type() == c10::kBool) return values.any(0);
    return at::sum(values, std::vector<int64_t>{0}, false, values.scalar_type());
  }
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < sd; ++d) {
    if (d != dim) kept.push_back(d);
  }
  const Tensor indices = impl->indices().index_select(0, index_tensor(kept, self)).index_select(1, chosen);
  return make_sparse_coo(out_size, indices, values, false);
}

// select of a compressed tensor: along a batch dim, the members' slices (the same layout);
// along a matrix dim of CSR or CSC, the COO select of its entries, as torch gives (torch
// refuses the block layouts there, in these words).
Tensor select_sparse_compressed(const Tensor& self, int64_t dim, int64_t index) {
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self, "select");
  dim = wrap_dim(dim, self.dim());
  const int64_t size = self.size(dim);
  TORCH_CHECK_INDEX(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
                    self.sizes(), " at dimension ", dim);
  if (index < 0) index += size;
  if (dim < impl->batch_dim()) {
    std::vector<int64_t> out_size = self.sizes().vec();
    out_size.erase(out_size.begin() + dim);
    return make_sparse_compressed(self.layout(), out_size, impl->compressed_indices().select(dim, index),
                                  impl->plain_indices().select(dim, index), impl->values().select(dim, index));
  }
  TORCH_CHECK(self.layout() == c10::kSparseCsr || self.layout() == c10::kSparseCsc,
              "select(): selecting non-batch dimensions is currently only supported for non-blocked sparse "
              "compressed layouts.");
  return self.to_sparse().select(dim, index);
}

// The entries with start <= coordinate < start + length along a sparse dim (moved down by
// start), or the narrowed values along a dense dim: a new sparse tensor, never a view.
Tensor narrow_copy_sparse(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "narrow_copy");
  // (torch's sparse narrow_copy takes no negative dim or start; narrow wraps them first)
  TORCH_CHECK(dim >= 0 && dim < self.dim(), "Dimension ", dim, " out of range. Expecting 0 <= dim < ", self.dim(), ".");
  const int64_t size = self.size(dim);
  TORCH_CHECK(start >= 0 && length >= 0 && start <= size - length, "Invalid range to narrow. range(start, "
              "start+length) must be a subset of range(0, ", size, ").");
  const int64_t sd = impl->sparse_dim();
  std::vector<int64_t> out_size = self.sizes().vec();
  out_size[static_cast<size_t>(dim)] = length;
  if (dim >= sd) {
    return make_sparse_coo(out_size, impl->indices().clone(),
                           impl->values().narrow(dim - sd + 1, start, length).clone(c10::MemoryFormat::Contiguous),
                           impl->coalesced());
  }
  refuse_meta(self, "narrow_copy along a sparse dim");
  const Tensor coordinate = impl->indices().select(0, dim);
  const Tensor chosen = coordinate.ge(start).logical_and(coordinate.lt(start + length)).nonzero().view({-1});
  Tensor indices = impl->indices().index_select(1, chosen);
  indices.select(0, dim).sub_(start);
  return make_sparse_coo(out_size, indices, impl->values().index_select(0, chosen), impl->coalesced());
}

}  // namespace at::inline tessera::native
