// Conversions between the layouts: strided <-> COO <-> CSR/CSC/BSR/BSC, to_dense of the
// compressed layouts, sparse_mask, and transpose of sparse tensors. Every conversion goes
// through COO: a compressed tensor expands to COO entries in its storage order; COO
// compresses after coalescing (sorted by batch, compressed index, plain index).
#include <aten/core/TensorOperators.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/index/IndexingUtils.h>
#include <aten/native/sparse/SparseKernels.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <numeric>

namespace at::inline tessera::native {

using namespace sparse;

DEFINE_DISPATCH(nonzero_entries_stub);

namespace {


// A compressed tensor's entries as COO over its grid: indices [batch + 2, nbatch * nnz] in
// storage order (batch, row, col; rows and cols count blocks for BSR/BSC), values
// [nbatch * nnz, *block, *dense].
struct Entries {
  Tensor indices;
  Tensor values;
  std::vector<int64_t> grid;  // [*batch, rows, cols] in blocks
  int64_t block_rows = 1, block_cols = 1;
};

Entries compressed_entries(const Tensor& t) {
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(t, "to_sparse");
  refuse_meta(t, "reading a compressed tensor's entries (conversions, sparse_mask, add)");
  // The members may come from an unchecked constructor: they are read through each other
  // below, so they are checked first (one pass, as cheap as the expansion itself).
  at::_validate_sparse_compressed_tensor_args(impl->compressed_indices(), impl->plain_indices(), impl->values(),
                                              t.sizes(), t.layout());
  const int64_t batch = impl->batch_dim();
  const bool blocked = is_blocked(t.layout());
  Entries e;
  if (blocked) {
    e.block_rows = impl->values().size(batch + 1);
    e.block_cols = impl->values().size(batch + 2);
  }
  e.grid.assign(t.sizes().begin(), t.sizes().begin() + batch + 2);
  e.grid[static_cast<size_t>(batch)] /= e.block_rows;
  e.grid[static_cast<size_t>(batch + 1)] /= e.block_cols;
  const int64_t nbatch = numel_of(IntArrayRef(e.grid).slice(0, static_cast<size_t>(batch)));
  const int64_t nnz = impl->nnz();
  const int64_t ncompressed = impl->compressed_indices().size(-1) - 1;
  const Tensor comp = impl->compressed_indices().to(c10::kLong).contiguous();
  const Tensor pl = impl->plain_indices().to(c10::kLong).contiguous();
  const int64_t* c = static_cast<const int64_t*>(comp.data_ptr());
  const int64_t* p = static_cast<const int64_t*>(pl.data_ptr());
  const int64_t total = nbatch * nnz;
  e.indices = make_empty({batch + 2, total}, c10::kLong, c10::Device(c10::DeviceType::CPU));
  int64_t* out = static_cast<int64_t*>(e.indices.data_ptr());
  const bool rows_first = compresses_rows(t.layout());
  for (int64_t b = 0; b < nbatch; ++b) {
    // batch coordinates of b, row-major
    int64_t rest = b;
    for (int64_t d = batch; d-- > 0;) {
      const int64_t size = e.grid[static_cast<size_t>(d)];
      for (int64_t k = 0; k < nnz; ++k) out[d * total + b * nnz + k] = rest % size;
      rest /= size;
    }
    const int64_t* cb = c + b * (ncompressed + 1);
    for (int64_t i = 0; i < ncompressed; ++i) {
      for (int64_t k = cb[i]; k < cb[i + 1]; ++k) {
        TORCH_CHECK(k >= 0 && k < nnz, "compressed indices out of range: ", k, " for nnz ", nnz);
        out[(batch + (rows_first ? 0 : 1)) * total + b * nnz + k] = i;
        out[(batch + (rows_first ? 1 : 0)) * total + b * nnz + k] = p[b * nnz + k];
      }
    }
  }
  e.values = impl->values().flatten(0, batch);
  return e;
}

// The COO tensor of a compressed one: elements for CSR/CSC; BSR/BSC blocks expand into
// their elements (explicit zeros inside blocks kept, as torch does).
Tensor compressed_to_coo(const Tensor& t) {
  Entries e = compressed_entries(t);
  const int64_t batch = static_cast<int64_t>(e.grid.size()) - 2;
  Tensor indices = e.indices, values = e.values;
  if (is_blocked(t.layout())) {
    const int64_t n = indices.size(1), br = e.block_rows, bc = e.block_cols;
    const TensorOptions longs = TensorOptions().dtype(c10::kLong);
    Tensor rows = indices.select(0, batch).view({n, 1, 1}) * br + at::arange(br, longs).view({1, br, 1});
    Tensor cols = indices.select(0, batch + 1).view({n, 1, 1}) * bc + at::arange(bc, longs).view({1, 1, bc});
    std::vector<Tensor> parts;
    for (int64_t d = 0; d < batch; ++d) parts.push_back(indices.select(0, d).view({n, 1, 1}).expand({n, br, bc}).reshape({-1}));
    parts.push_back(rows.expand({n, br, bc}).reshape({-1}));
    parts.push_back(cols.expand({n, br, bc}).reshape({-1}));
    indices = at::stack(parts, 0);
    std::vector<int64_t> vsizes{n * br * bc};
    for (int64_t d = 3; d < values.dim(); ++d) vsizes.push_back(values.size(d));
    values = values.reshape(vsizes);
  }
  Tensor coo = make_sparse_coo(t.sizes(), indices, values, false);
  return (t.layout() == c10::kSparseCsr && batch == 0) ? coo._coalesced_(true) : at::_coalesce(coo);
}

// Dense -> COO over the first sparse_dim dims: an entry for every position where the
// dense sub-tensor there has a nonzero element.
Tensor dense_to_coo(const Tensor& self, int64_t sparse_dim) {
  TORCH_CHECK(sparse_dim >= 0 && sparse_dim <= self.dim(), "sparse_dim must be less than or equal to self.dim()");
  refuse_meta(self, "to_sparse of a strided tensor");
  const IntArrayRef sparse_sizes = self.sizes().slice(0, static_cast<size_t>(sparse_dim));
  if (sparse_dim == self.dim() && sparse_kernels_take(self.scalar_type()) && self.numel() > 0 &&
      self.device().type() == c10::DeviceType::CPU) {
    auto [linear, values] = nonzero_entries_stub(c10::DeviceType::CPU, self.contiguous().view({-1}));
    return make_sparse_coo(self.sizes(), unflatten_indices(linear, sparse_sizes), values, true);
  }
  std::vector<int64_t> flat{numel_of(sparse_sizes)};
  for (int64_t d = sparse_dim; d < self.dim(); ++d) flat.push_back(self.size(d));
  const Tensor rows = self.reshape(flat);
  Tensor nonzero_rows = rows.ne(0);
  if (rows.dim() > 1) nonzero_rows = nonzero_rows.flatten(1).any(1);
  const Tensor linear = nonzero_rows.nonzero().view({-1});
  Tensor values = rows.index_select(0, linear);
  return make_sparse_coo(self.sizes(), unflatten_indices(linear, sparse_sizes), values, true);
}

// COO -> compressed, with `batch` leading sparse dims as batch dims. Every batch must hold
// the same number of entries (torch's rule).
Tensor coo_to_compressed(const Tensor& coo_in, Layout layout, int64_t batch, int64_t block_rows, int64_t block_cols,
                         IntArrayRef result_size) {
  refuse_meta(coo_in, "conversion to a compressed layout");
  const Tensor coo = coo_in.coalesce();
  const SparseTensorImpl* impl = get_sparse_impl(coo);
  const bool rows_first = compresses_rows(layout);
  const IntArrayRef grid = coo.sizes().slice(0, static_cast<size_t>(batch + 2));
  check_indices_in_bounds(impl->indices(), grid);
  const int64_t nbatch = numel_of(grid.slice(0, static_cast<size_t>(batch)));
  const int64_t ncompressed = grid[static_cast<size_t>(batch + (rows_first ? 0 : 1))];
  const int64_t nplain = grid[static_cast<size_t>(batch + (rows_first ? 1 : 0))];
  const int64_t total = impl->nnz();
  const Tensor idx = impl->indices().contiguous();
  const int64_t* in = static_cast<const int64_t*>(idx.data_ptr());
  // (batch, compressed, plain) key of each entry, and the order that sorts by it.
  std::vector<int64_t> bkey(static_cast<size_t>(total), 0), key(static_cast<size_t>(total));
  for (int64_t k = 0; k < total; ++k) {
    int64_t b = 0;
    for (int64_t d = 0; d < batch; ++d) b = b * grid[static_cast<size_t>(d)] + in[d * total + k];
    const int64_t r = in[batch * total + k], c = in[(batch + 1) * total + k];
    bkey[static_cast<size_t>(k)] = b;
    key[static_cast<size_t>(k)] = (b * ncompressed + (rows_first ? r : c)) * std::max<int64_t>(nplain, 1) + (rows_first ? c : r);
  }
  std::vector<int64_t> order(static_cast<size_t>(total));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (!rows_first) std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key[a] < key[b]; });
  std::vector<int64_t> per_batch(static_cast<size_t>(nbatch), 0);
  for (int64_t k = 0; k < total; ++k) ++per_batch[static_cast<size_t>(bkey[static_cast<size_t>(k)])];
  const int64_t nnz = nbatch > 0 ? per_batch[0] : 0;
  for (int64_t b = 0; b < nbatch; ++b) {
    TORCH_CHECK(per_batch[static_cast<size_t>(b)] == nnz, "Expect the same number of specified elements per batch.");
  }
  std::vector<int64_t> compressed(static_cast<size_t>(nbatch * (ncompressed + 1)), 0), plain_idx(static_cast<size_t>(total));
  for (int64_t j = 0; j < total; ++j) {
    const int64_t k = order[static_cast<size_t>(j)];
    const int64_t b = bkey[static_cast<size_t>(k)];
    const int64_t r = in[batch * total + k], c = in[(batch + 1) * total + k];
    ++compressed[static_cast<size_t>(b * (ncompressed + 1) + (rows_first ? r : c) + 1)];
    plain_idx[static_cast<size_t>(j)] = rows_first ? c : r;
  }
  for (int64_t b = 0; b < nbatch; ++b) {
    int64_t* cb = compressed.data() + b * (ncompressed + 1);
    for (int64_t i = 1; i <= ncompressed; ++i) cb[i] += cb[i - 1];
  }
  std::vector<int64_t> csize(grid.begin(), grid.begin() + batch), psize = csize;
  csize.push_back(ncompressed + 1);
  psize.push_back(nnz);
  Tensor values = rows_first ? impl->values() : impl->values().index_select(0, tensor_from_vector(order));
  std::vector<int64_t> vsize = psize;
  for (int64_t d = 1; d < values.dim(); ++d) vsize.push_back(values.size(d));
  (void)block_rows;
  (void)block_cols;
  return make_sparse_compressed(layout, result_size, tensor_from_vector(compressed).view(csize),
                                tensor_from_vector(plain_idx).view(psize), values.reshape(vsize));
}

int64_t dense_dim_arg(std::optional<int64_t> dense_dim, const Tensor& self, const char* op) {
  const int64_t d = dense_dim.value_or(0);
  TORCH_CHECK(d >= 0 && d <= self.dim() - 2, op, ": dense_dim argument must be non-negative and at most ",
              self.dim() - 2, ", got ", d);
  return d;
}

// Strided -> compressed (any of the four), with batch dims and dense dims.
Tensor dense_to_compressed(const Tensor& self, Layout layout, std::optional<IntArrayRef> blocksize,
                           std::optional<int64_t> dense_dim_opt, const char* op) {
  TORCH_CHECK(self.dim() >= 2, op, ": expected a tensor with at least 2 dimensions, got ", self.dim());
  const int64_t dense = dense_dim_arg(dense_dim_opt, self, op);
  const int64_t batch = self.dim() - 2 - dense;
  if (!is_blocked(layout)) return coo_to_compressed(dense_to_coo(self, batch + 2), layout, batch, 1, 1, self.sizes());
  TORCH_CHECK(blocksize && blocksize->size() == 2, op, ": blocksize must be a tuple of two integers");
  const int64_t br = (*blocksize)[0], bc = (*blocksize)[1];
  TORCH_CHECK(br > 0 && bc > 0, op, ": blocksize must be positive, got ", *blocksize);
  const int64_t rows = self.size(batch), cols = self.size(batch + 1);
  TORCH_CHECK(rows % br == 0, "Tensor size(-2) ", rows, " needs to be divisible by blocksize[0] ", br);
  TORCH_CHECK(cols % bc == 0, "Tensor size(-1) ", cols, " needs to be divisible by blocksize[1] ", bc);
  // [*batch, R/br, br, C/bc, bc, *dense] -> [*batch, R/br, C/bc, br, bc, *dense]: blocks as dense dims.
  std::vector<int64_t> split(self.sizes().begin(), self.sizes().begin() + batch);
  split.insert(split.end(), {rows / br, br, cols / bc, bc});
  split.insert(split.end(), self.sizes().begin() + batch + 2, self.sizes().end());
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < batch; ++d) perm.push_back(d);
  perm.insert(perm.end(), {batch, batch + 2, batch + 1, batch + 3});
  for (int64_t d = batch + 4; d < static_cast<int64_t>(split.size()); ++d) perm.push_back(d);
  const Tensor blocks = self.reshape(split).permute(perm);
  return coo_to_compressed(dense_to_coo(blocks, batch + 2), layout, batch, br, bc, self.sizes());
}

Tensor to_compressed(const Tensor& self, Layout layout, std::optional<IntArrayRef> blocksize,
                     std::optional<int64_t> dense_dim, const char* op) {
  if (self.layout() == layout) {
    const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self);
    if (is_blocked(layout)) {
      const bool same_blocks = !blocksize || ((*blocksize)[0] == impl->values().size(impl->batch_dim() + 1) &&
                                              (*blocksize)[1] == impl->values().size(impl->batch_dim() + 2));
      TORCH_CHECK(same_blocks, op, ": conversion from ", sparse::layout_word(layout),
                  " to a different blocksize is not supported");
    }
    TORCH_CHECK(!dense_dim || *dense_dim == impl->dense_dim(), op, ": conversion with a different dense_dim is not supported");
    return self;
  }
  if (self.layout() == c10::kStrided) return dense_to_compressed(self, layout, blocksize, dense_dim, op);
  if (self.layout() == c10::kSparse && !is_blocked(layout)) {
    TORCH_CHECK(self.sparse_dim() == 2, "Only tensors with two sparse dimensions can be converted to the ",
                sparse::layout_word(layout), " layout, got self with ", self.sparse_dim(), " sparse dimensions.");
    TORCH_CHECK(!dense_dim || *dense_dim == self.dense_dim(), op, ": dense_dim must equal the COO tensor's dense_dim (",
                self.dense_dim(), ")");
    return coo_to_compressed(self, layout, 0, 1, 1, self.sizes());
  }
  // Compressed -> another compressed layout, or COO -> blocks: through the dense tensor
  // (values are equal; entries that are explicitly zero are not carried over).
  return dense_to_compressed(self.to_dense(), layout, blocksize,
                             dense_dim ? dense_dim : std::optional<int64_t>(self.dense_dim()), op);
}

}  // namespace

Tensor sparse_compressed_to_dense(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  if (self.is_meta()) {
    get_sparse_csr_impl(self, "to_dense");
    return at::zeros(self.sizes(), TensorOptions().dtype(dtype.value_or(self.scalar_type())).device(self.device()));
  }
  return compressed_to_coo(self).to_dense(dtype);
}

Tensor to_sparse_coo_dims(const Tensor& self, int64_t sparse_dim) {
  if (self.layout() == c10::kStrided) return dense_to_coo(self, sparse_dim);
  if (self.layout() == c10::kSparse) {
    TORCH_CHECK(sparse_dim == self.sparse_dim(), "to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=",
                "self.sparse_dim() is not supported");
    return self;
  }
  TORCH_CHECK(sparse_dim == 2, "sparse dim argument for to_sparse must be 2 for a compressed tensor, got ", sparse_dim);
  return compressed_to_coo(self);
}

Tensor to_sparse_layout(const Tensor& self, std::optional<c10::Layout> layout, std::optional<IntArrayRef> blocksize,
                        std::optional<int64_t> dense_dim) {
  const Layout target = layout.value_or(c10::kSparse);
  if (blocksize) {
    TORCH_CHECK(is_blocked(target), "to_sparse for ", self.layout(), " to ", target, " conversion does not use the ",
                "specified blocksize ", *blocksize, ".");
  }
  switch (target) {
    case c10::kSparse:
      if (self.layout() == c10::kSparse) {
        TORCH_CHECK(!dense_dim || *dense_dim == self.dense_dim(), "to_sparse: conversion from Sparse to Sparse with ",
                    "dense_dim argument != self.dense_dim() is not supported");
        return self;
      }
      if (self.layout() == c10::kStrided) return dense_to_coo(self, self.dim() - dense_dim.value_or(0));
      TORCH_CHECK(!dense_dim || *dense_dim == self.dense_dim(), "to_sparse: dense_dim must be ", self.dense_dim());
      return compressed_to_coo(self);
    case c10::kSparseCsr: return self.to_sparse_csr(dense_dim);
    case c10::kSparseCsc: return self.to_sparse_csc(dense_dim);
    case c10::kSparseBsr:
      TORCH_CHECK(blocksize, "to_sparse for ", self.layout(), " to SparseBsr conversion requires blocksize specified.");
      return self.to_sparse_bsr(*blocksize, dense_dim);
    case c10::kSparseBsc:
      TORCH_CHECK(blocksize, "to_sparse for ", self.layout(), " to SparseBsc conversion requires blocksize specified.");
      return self.to_sparse_bsc(*blocksize, dense_dim);
    default:
      TORCH_CHECK(false, "to_sparse: expected a sparse layout, got ", target);
  }
}

Tensor to_sparse_csr(const Tensor& self, std::optional<int64_t> dense_dim) {
  return to_compressed(self, c10::kSparseCsr, std::nullopt, dense_dim, "to_sparse_csr");
}
Tensor to_sparse_csc(const Tensor& self, std::optional<int64_t> dense_dim) {
  return to_compressed(self, c10::kSparseCsc, std::nullopt, dense_dim, "to_sparse_csc");
}
Tensor to_sparse_bsr(const Tensor& self, IntArrayRef blocksize, std::optional<int64_t> dense_dim) {
  return to_compressed(self, c10::kSparseBsr, blocksize, dense_dim, "to_sparse_bsr");
}
Tensor to_sparse_bsc(const Tensor& self, IntArrayRef blocksize, std::optional<int64_t> dense_dim) {
  return to_compressed(self, c10::kSparseBsc, blocksize, dense_dim, "to_sparse_bsc");
}

// ---- sparse_mask and the values of a gradient at a sparse pattern

namespace {
// Values of `source` (any layout, converted to dense) at the pattern's entries, in the
// pattern's storage order (grid blocks for BSR/BSC): [n, *block, *dense].
Tensor gather_at(const Tensor& source, const Tensor& pattern) {
  const Tensor dense = source.layout() == c10::kStrided ? source : source.to_dense();
  TORCH_CHECK(dense.sizes().equals(pattern.sizes()), "sparse_mask(): operands have incompatible sizes; self has size ",
              dense.sizes(), " but mask has size ", pattern.sizes());
  if (pattern.layout() == c10::kSparse) {
    const SparseTensorImpl* impl = get_sparse_impl(pattern);
    const IntArrayRef sparse_sizes = pattern.sizes().slice(0, static_cast<size_t>(impl->sparse_dim()));
    std::vector<int64_t> flat{numel_of(sparse_sizes)};
    for (int64_t d = impl->sparse_dim(); d < pattern.dim(); ++d) flat.push_back(pattern.size(d));
    return dense.reshape(flat).index_select(0, flatten_indices(impl->indices(), sparse_sizes));
  }
  Entries e = compressed_entries(pattern);
  const int64_t batch = static_cast<int64_t>(e.grid.size()) - 2;
  Tensor grid_view = dense;
  if (is_blocked(pattern.layout())) {
    std::vector<int64_t> split(dense.sizes().begin(), dense.sizes().begin() + batch);
    split.insert(split.end(), {e.grid[static_cast<size_t>(batch)], e.block_rows, e.grid[static_cast<size_t>(batch + 1)],
                               e.block_cols});
    split.insert(split.end(), dense.sizes().begin() + batch + 2, dense.sizes().end());
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < batch; ++d) perm.push_back(d);
    perm.insert(perm.end(), {batch, batch + 2, batch + 1, batch + 3});
    for (int64_t d = batch + 4; d < static_cast<int64_t>(split.size()); ++d) perm.push_back(d);
    grid_view = dense.reshape(split).permute(perm);
  }
  std::vector<int64_t> flat{numel_of(e.grid)};
  for (int64_t d = batch + 2; d < grid_view.dim(); ++d) flat.push_back(grid_view.size(d));
  return grid_view.reshape(flat).index_select(0, flatten_indices(e.indices, e.grid));
}
}  // namespace

Tensor sparse_mask(const Tensor& self, const Tensor& mask) {
  TORCH_CHECK(c10::isSparseLayout(mask.layout()), "sparse_mask expected a sparse mask, got ", mask.layout());
  check_same_device("sparse_mask", self, {&mask});
  if (mask.is_meta()) {  // the mask's pattern with values of self's dtype (Note [Sparse meta tensors])
    TORCH_CHECK(self.sizes().equals(mask.sizes()), "sparse_mask(): operands have incompatible sizes; self has size ",
                self.sizes(), " but mask has size ", mask.sizes());
    if (mask.layout() == c10::kSparse) {
      const Tensor m = mask.coalesce();
      const SparseTensorImpl* impl = get_sparse_impl(m);
      return make_sparse_coo(mask.sizes(), impl->indices(), at::empty(impl->values().sizes(), impl->values().options()
                                                                          .dtype(self.scalar_type())), true);
    }
    const SparseCsrTensorImpl* impl = get_sparse_csr_impl(mask);
    return make_sparse_compressed(mask.layout(), mask.sizes(), impl->compressed_indices(), impl->plain_indices(),
                                  at::empty(impl->values().sizes(), impl->values().options().dtype(self.scalar_type())));
  }
  if (mask.layout() == c10::kSparse) {
    const Tensor m = mask.coalesce();
    const SparseTensorImpl* impl = get_sparse_impl(m);
    return make_sparse_coo(mask.sizes(), impl->indices(), gather_at(self, m), true);
  }
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(mask);
  Tensor values = gather_at(self, mask);
  std::vector<int64_t> vsize = impl->values().sizes().vec();
  return make_sparse_compressed(mask.layout(), mask.sizes(), impl->compressed_indices(), impl->plain_indices(),
                                values.reshape(vsize));
}

// ---- addition of compressed tensors (here for the block-level COO form it goes through)

// self + alpha * other for compressed operands: dense + compressed gives a dense result;
// two operands of one compressed layout (and block size) give that layout over the union
// of their patterns, as current torch's add does (1.13 needs MKL for it).
Tensor add_sparse_compressed(const Tensor& self, const Tensor& other, const c10::Scalar& alpha) {
  TORCH_CHECK(self.sizes().equals(other.sizes()), "add: expected 'self' and 'other' to have same size, but self has size ",
              self.sizes(), " while other has size ", other.sizes());
  check_same_device("add", self, {&other});
  if (self.layout() == c10::kStrided) return at::add(self, other.to_dense(), alpha);
  TORCH_CHECK(self.layout() == other.layout(), "add(", sparse::layout_word(self.layout()), ", ",
              sparse::layout_word(other.layout()), "): expected both operands in one compressed layout, or a strided "
              "'self'");
  const Entries a = compressed_entries(self), b = compressed_entries(other);
  TORCH_CHECK(a.block_rows == b.block_rows && a.block_cols == b.block_cols, "add: expected the same blocksize, got (",
              a.block_rows, ", ", a.block_cols, ") and (", b.block_rows, ", ", b.block_cols, ")");
  TORCH_CHECK(get_sparse_csr_impl(self)->dense_dim() == get_sparse_csr_impl(other)->dense_dim(),
              "add: expected the same number of dense dimensions");
  const int64_t batch = static_cast<int64_t>(a.grid.size()) - 2;
  std::vector<int64_t> size = a.grid;  // the block grid, then the block and dense dims of the values
  for (int64_t d = 1; d < a.values.dim(); ++d) size.push_back(a.values.size(d));
  const c10::ScalarType type = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  const Tensor sum = at::add(make_sparse_coo(size, a.indices, a.values.to(type), false),
                             make_sparse_coo(size, b.indices, b.values.to(type), false), alpha);
  return coo_to_compressed(sum, self.layout(), batch, a.block_rows, a.block_cols, self.sizes());
}

// ---- transpose

Tensor transpose_sparse(const Tensor& self, int64_t dim0, int64_t dim1) {
  const int64_t n = self.dim();
  TORCH_CHECK_INDEX(dim0 >= -n && dim0 < n && dim1 >= -n && dim1 < n, "Dimension out of range (expected to be in range of [",
                    -n, ", ", n - 1, "], but got ", dim0, " and ", dim1, ")");
  dim0 = dim0 < 0 ? dim0 + n : dim0;
  dim1 = dim1 < 0 ? dim1 + n : dim1;
  std::vector<int64_t> size = self.sizes().vec();
  std::swap(size[static_cast<size_t>(dim0)], size[static_cast<size_t>(dim1)]);
  if (self.layout() == c10::kSparse) {
    const SparseTensorImpl* impl = get_sparse_impl(self);
    const int64_t sd = impl->sparse_dim();
    // (a COO transpose has values of its own, as torch's: an in-place op on either tensor
    // leaves the other)
    if (dim0 == dim1) return self.clone();
    if (dim0 < sd && dim1 < sd) {
      Tensor indices = impl->indices().clone();
      indices.select(0, dim0).copy_(impl->indices().select(0, dim1));
      indices.select(0, dim1).copy_(impl->indices().select(0, dim0));
      return make_sparse_coo(size, indices, impl->values().clone(), false);
    }
    TORCH_CHECK(dim0 >= sd && dim1 >= sd, "transpose(): cannot transpose sparse dim with dense dim");
    return make_sparse_coo(size, impl->indices().clone(),
                           impl->values().transpose(dim0 - sd + 1, dim1 - sd + 1).clone(), impl->coalesced());
  }
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self);
  const int64_t batch = impl->batch_dim();
  if (dim0 == dim1) return sparse_alias(self);
  TORCH_CHECK_NOT_IMPLEMENTED(std::min(dim0, dim1) == batch && std::max(dim0, dim1) == batch + 1,
                              "transpose(): only the two sparse dims of a ", sparse::layout_word(self.layout()),
                              " tensor can be transposed (dims ", batch, " and ", batch + 1, "), got ", dim0, " and ",
                              dim1);
  static constexpr std::pair<Layout, Layout> kSwapped[] = {{c10::kSparseCsr, c10::kSparseCsc},
                                                           {c10::kSparseCsc, c10::kSparseCsr},
                                                           {c10::kSparseBsr, c10::kSparseBsc},
                                                           {c10::kSparseBsc, c10::kSparseBsr}};
  Layout target = self.layout();
  for (const auto& [from, to] : kSwapped) {
    if (from == self.layout()) target = to;
  }
  Tensor values = impl->values();
  if (is_blocked(self.layout())) values = values.transpose(batch + 1, batch + 2);
  return make_sparse_compressed(target, size, impl->compressed_indices(), impl->plain_indices(), values);
}

// In place (COO only, as torch): the transposed members become self's.
Tensor& transpose_sparse_(Tensor& self, int64_t dim0, int64_t dim1) {
  const Tensor t = transpose_sparse(self, dim0, dim1);
  const SparseTensorImpl* impl = get_sparse_impl(t);
  get_sparse_impl(self)->set_members(t.sizes(), impl->indices(), impl->values(), impl->coalesced());
  return self;
}

}  // namespace at::inline tessera::native
