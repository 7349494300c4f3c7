// Sparse COO tensors (SparseCPU): construction and validation, the members (indices,
// values, nnz, dims, the coalesced flag), coalesce, to_dense, clone/copy_/zero_/resize.
// The impl is in aten/core/SparseTensorImpl.h; arithmetic is in SparseOps.cpp.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <numeric>

namespace at::inline tessera::native {

using namespace sparse;

namespace {

// Indices as torch's constructors take them: any integer (or float, as torch's Python
// binding converts) tensor becomes int64.
Tensor as_long_indices(const Tensor& indices) {
  TORCH_CHECK(indices.layout() == c10::kStrided, "indices must be a strided tensor, got ", indices.layout());
  return indices.scalar_type() == c10::kLong ? indices : indices.to(c10::kLong);
}

}  // namespace

Tensor new_with_dims_and_tensor_sparse(int64_t sparse_dim, int64_t dense_dim, IntArrayRef size, const Tensor& indices,
                                       const Tensor& values, std::optional<c10::ScalarType> dtype,
                                       std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                       std::optional<bool> pin_memory, std::optional<bool> is_coalesced) {
  check_factory_options(layout, device, pin_memory, c10::kSparse, "sparse_coo_tensor");
  TORCH_CHECK(sparse_dim >= 0 && dense_dim >= 0 && sparse_dim + dense_dim == static_cast<int64_t>(size.size()),
              "number of dimensions must be sparse_dim (", sparse_dim, ") + dense_dim (", dense_dim, "), but got ",
              size.size());
  TORCH_CHECK(indices.dim() == 2 && indices.size(0) == sparse_dim, "indices must be sparse_dim x nnz, but got: ",
              indices.sizes());
  TORCH_CHECK(indices.scalar_type() == c10::kLong, "indices must be an int64 tensor");
  TORCH_CHECK(values.dim() == dense_dim + 1, "values has incorrect number of dimensions: expected ", dense_dim + 1,
              ", got ", values.dim());
  TORCH_CHECK(indices.size(1) == values.size(0), "indices and values must have same nnz, but got nnz from indices: ",
              indices.size(1), ", nnz from values: ", values.size(0));
  for (int64_t d = 0; d < dense_dim; ++d) {
    TORCH_CHECK(values.size(d + 1) == size[static_cast<size_t>(sparse_dim + d)], "values has incorrect size, expected ",
                size.slice(static_cast<size_t>(sparse_dim)), " for the dense dims, got ", values.sizes());
  }
  Tensor v = dtype && *dtype != values.scalar_type() ? values.to(*dtype) : plain(values);
  Tensor idx = plain(indices);
  // (the members move to the requested device, as torch's constructors move them)
  if (device && device->type() != v.device().type()) v = v.to(*device, v.scalar_type());
  if (idx.device() != v.device()) idx = idx.to(v.device(), c10::kLong);
  return make_sparse_coo(size, std::move(idx), std::move(v), is_coalesced.value_or(false));
}

Tensor _sparse_coo_tensor_unsafe(const Tensor& indices, const Tensor& values, IntArrayRef size,
                                 std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                                 std::optional<c10::Device> device, std::optional<bool> pin_memory,
                                 std::optional<bool> is_coalesced) {
  const Tensor idx = as_long_indices(indices);
  TORCH_CHECK(idx.dim() == 2, "indices must be sparse_dim x nnz, but got: ", idx.sizes());
  const int64_t sparse_dim = idx.size(0);
  return at::_sparse_coo_tensor_with_dims_and_tensors(sparse_dim, static_cast<int64_t>(size.size()) - sparse_dim, size,
                                                      idx, values, dtype, layout, device, pin_memory, is_coalesced);
}

namespace {
// With is_coalesced=True the caller promises sorted indices without duplicates: checked.
void check_claimed_coalesced(const Tensor& indices, IntArrayRef size) {
  if (indices.size(1) < 2) return;
  const Tensor lin = flatten_indices(indices, size.slice(0, static_cast<size_t>(indices.size(0))));
  const int64_t* l = static_cast<const int64_t*>(lin.data_ptr());
  for (int64_t i = 1; i < lin.numel(); ++i) {
    TORCH_CHECK(l[i - 1] < l[i], "`is_coalesced` is True, but the indices are not sorted or contain duplicates");
  }
}
}  // namespace

void _validate_sparse_coo_tensor_args(const Tensor& indices, const Tensor& values, IntArrayRef size) {
  TORCH_CHECK(indices.scalar_type() == c10::kLong, "indices must be an int64 tensor");
  TORCH_CHECK(indices.dim() == 2, "indices must be sparse_dim x nnz, but got: ", indices.sizes());
  TORCH_CHECK(values.dim() >= 1, "values must have at least one dimension (nnz), but got a 0-dim tensor");
  const int64_t sparse_dim = indices.size(0), dense_dim = values.dim() - 1;
  TORCH_CHECK(sparse_dim + dense_dim == static_cast<int64_t>(size.size()), "number of dimensions must be sparse_dim (",
              sparse_dim, ") + dense_dim (", dense_dim, "), but got ", size.size());
  TORCH_CHECK(indices.size(1) == values.size(0), "indices and values must have same nnz, but got nnz from indices: ",
              indices.size(1), ", nnz from values: ", values.size(0));
  std::vector<int64_t> expected{values.size(0)};
  for (int64_t d = sparse_dim; d < static_cast<int64_t>(size.size()); ++d) expected.push_back(size[static_cast<size_t>(d)]);
  TORCH_CHECK(values.sizes().equals(expected), "values has incorrect size, expected ", IntArrayRef(expected), ", got ",
              values.sizes());
  if (!indices.is_meta()) check_indices_in_bounds(indices, size);  // (meta indices hold no values to check)
}

Tensor sparse_coo_tensor_size(IntArrayRef size, std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                              std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  const int64_t sparse_dim = static_cast<int64_t>(size.size());
  const c10::ScalarType type = dtype.value_or(c10::get_default_dtype());
  const c10::Device where = device.value_or(c10::kCPU);
  return at::_sparse_coo_tensor_with_dims_and_tensors(
      sparse_dim, 0, size, at::empty({sparse_dim, 0}, TensorOptions().dtype(c10::kLong).device(where)),
      at::empty({0}, TensorOptions().dtype(type).device(where)), std::nullopt, layout, device, pin_memory, true);
}

Tensor sparse_coo_tensor_indices(const Tensor& indices, const Tensor& values, std::optional<c10::ScalarType> dtype,
                                 std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                 std::optional<bool> pin_memory, std::optional<bool> is_coalesced) {
  const Tensor idx = as_long_indices(indices);
  TORCH_CHECK(idx.dim() == 2, "indices must be sparse_dim x nnz, but got: ", idx.sizes());
  // The size is the smallest that holds every index: max + 1 per sparse dim.
  const int64_t sparse_dim = idx.size(0), nnz = idx.size(1);
  std::vector<int64_t> size(static_cast<size_t>(sparse_dim), 0);
  if (nnz > 0) refuse_meta(idx, "sparse_coo_tensor without a size");
  if (nnz > 0) {
    const Tensor c = idx.contiguous();
    const int64_t* p = static_cast<const int64_t*>(c.data_ptr());
    for (int64_t d = 0; d < sparse_dim; ++d) {
      int64_t hi = -1;
      for (int64_t i = 0; i < nnz; ++i) {
        TORCH_CHECK(p[d * nnz + i] >= 0, "found negative index ", p[d * nnz + i], " for dim ", d);
        hi = std::max(hi, p[d * nnz + i]);
      }
      size[static_cast<size_t>(d)] = hi + 1;
    }
  }
  for (int64_t d = 1; d < values.dim(); ++d) size.push_back(values.size(d));
  return at::sparse_coo_tensor(idx, values, size, dtype, layout, device, pin_memory, is_coalesced);
}

Tensor sparse_coo_tensor_indices_size(const Tensor& indices, const Tensor& values, IntArrayRef size,
                                      std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                                      std::optional<c10::Device> device, std::optional<bool> pin_memory,
                                      std::optional<bool> is_coalesced) {
  const Tensor idx = as_long_indices(indices);
  at::_validate_sparse_coo_tensor_args(idx, values, size);
  if (is_coalesced.value_or(false) && !idx.is_meta()) check_claimed_coalesced(idx, size);
  return at::_sparse_coo_tensor_unsafe(idx, values, size, dtype, layout, device, pin_memory, is_coalesced);
}

// empty(size, layout=...): no specified elements. COO takes every dim as sparse; CSR and
// CSC take the last two as the matrix and the others as batch dims (current torch's rule;
// the block layouts need a blocksize, which empty does not take).
Tensor empty_sparse(IntArrayRef size, std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                    std::optional<c10::Device> device, std::optional<bool> pin_memory,
                    std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(!memory_format || *memory_format == c10::MemoryFormat::Preserve ||
                  *memory_format == c10::MemoryFormat::Contiguous,
              "memory format option is only supported by strided tensors");
  const c10::Layout l = layout.value_or(c10::kSparse);
  for (int64_t s : size) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  if (l == c10::kSparse) return at::sparse_coo_tensor(size, dtype, l, device, pin_memory);
  TORCH_CHECK_NOT_IMPLEMENTED(l == c10::kSparseCsr || l == c10::kSparseCsc, "empty: the ", layout_word(l),
                              " layout needs a blocksize; build it with sparse_compressed_tensor");
  TORCH_CHECK(size.size() >= 2, "torch.empty: Only batched sparse compressed (non-block) tensors are supported, but "
              "got size ", size);
  check_factory_options(std::nullopt, device, pin_memory, l, "empty");
  const c10::Device where = device.value_or(c10::kCPU);
  const TensorOptions longs = TensorOptions().dtype(c10::kLong).device(where);
  std::vector<int64_t> compressed(size.begin(), size.end() - 2), plain_sizes = compressed;
  compressed.push_back(size[size.size() - (l == c10::kSparseCsr ? 2 : 1)] + 1);
  plain_sizes.push_back(0);
  return make_sparse_compressed(l, size, at::zeros(compressed, longs), at::empty(plain_sizes, longs),
                                at::empty(plain_sizes, TensorOptions().dtype(dtype.value_or(c10::get_default_dtype()))
                                                           .device(where)));
}

// ---- members

int64_t sparse_dim(const Tensor& self) {
  if (self.layout() == c10::kSparse) return get_sparse_impl(self)->sparse_dim();
  if (c10::isSparseCompressed(self.layout())) return 2;
  return 0;
}

int64_t dense_dim(const Tensor& self) {
  if (self.layout() == c10::kSparse) return get_sparse_impl(self)->dense_dim();
  if (c10::isSparseCompressed(self.layout())) return get_sparse_csr_impl(self)->dense_dim();
  return self.dim();
}

int64_t nnz_sparse(const Tensor& self) {
  if (self.layout() == c10::kSparse) return get_sparse_impl(self)->nnz();
  return get_sparse_csr_impl(self)->nnz();
}

bool is_coalesced_sparse(const Tensor& self) { return get_sparse_impl(self, "is_coalesced")->coalesced(); }

Tensor& coalesced_sparse_(Tensor& self, bool coalesced) {
  get_sparse_impl(self, "_coalesced_")->set_coalesced(coalesced);
  return self;
}

Tensor _indices_sparse(const Tensor& self) { return plain(get_sparse_impl(self, "_indices")->indices()); }

Tensor _values_sparse(const Tensor& self) { return plain(get_sparse_impl(self, "_values")->values()); }

Tensor indices_sparse(const Tensor& self) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "indices");
  TORCH_CHECK(impl->coalesced(), "Cannot get indices on an uncoalesced tensor, please call .coalesce() first");
  return plain(impl->indices());
}

Tensor values_sparse(const Tensor& self) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "values");
  TORCH_CHECK(impl->coalesced(), "Cannot get values on an uncoalesced tensor, please call .coalesce() first");
  return plain(impl->values());
}

// ---- coalesce

Tensor coalesce(const Tensor& self) {
  TORCH_CHECK(self.layout() == c10::kSparse, "coalesce expected sparse coordinate tensor layout but got ", self.layout());
  if (self.is_coalesced()) return self;
  return at::_coalesce(self);
}

// Note [Coalescing]: entries are ordered by their row-major linear position over the sparse
// dims with a stable radix sort (radix_order; duplicates keep their order), and each run of
// equal positions becomes one entry whose value is the run's sum, added in that order (a
// lone entry keeps its value, -0.0 included). Float and double values are summed by one
// parallel loop over the runs; other dtypes through index_add_ into zeros.
Tensor coalesce_sparse(const Tensor& self) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "coalesce");
  const IntArrayRef sparse_sizes = self.sizes().slice(0, static_cast<size_t>(impl->sparse_dim()));
  const int64_t nnz = impl->nnz();
  if (nnz < 2) return make_sparse_coo(self.sizes(), impl->indices().clone(), impl->values().clone(), true);
  refuse_meta(self, "coalesce");
  check_indices_in_bounds(impl->indices(), sparse_sizes);
  const Tensor lin = flatten_indices(impl->indices(), sparse_sizes);
  std::vector<int64_t> keys;
  const std::vector<int64_t> order =
      radix_order(static_cast<const int64_t*>(lin.data_ptr()), nnz, std::max<int64_t>(numel_of(sparse_sizes) - 1, 0), keys);
  std::vector<int64_t> starts;  // where each run of equal keys begins, then nnz
  for (int64_t i = 0; i < nnz; ++i) {
    if (i == 0 || keys[static_cast<size_t>(i)] != keys[static_cast<size_t>(i - 1)]) starts.push_back(i);
  }
  const int64_t runs = static_cast<int64_t>(starts.size());
  starts.push_back(nnz);
  std::vector<int64_t> unique_keys(static_cast<size_t>(runs));
  for (int64_t u = 0; u < runs; ++u) unique_keys[static_cast<size_t>(u)] = keys[static_cast<size_t>(starts[static_cast<size_t>(u)])];
  const Tensor source = impl->values().contiguous();
  std::vector<int64_t> value_sizes = source.sizes().vec();
  value_sizes[0] = runs;
  Tensor values;
  if (source.scalar_type() == c10::kFloat || source.scalar_type() == c10::kDouble) {
    values = at::empty(value_sizes, source.options());
    const int64_t inner = nnz > 0 ? source.numel() / nnz : 0;
    dispatch_types<kFloating>(source.scalar_type(), "coalesce", [&]<typename T>() {
      const T* in = static_cast<const T*>(source.data_ptr());
      T* out = static_cast<T*>(values.data_ptr());
      at::parallel_for(0, runs, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u) {
          T* o = out + u * inner;
          const T* first = in + order[static_cast<size_t>(starts[static_cast<size_t>(u)])] * inner;
          for (int64_t j = 0; j < inner; ++j) o[j] = first[j];
          for (int64_t i = starts[static_cast<size_t>(u)] + 1; i < starts[static_cast<size_t>(u + 1)]; ++i) {
            const T* v = in + order[static_cast<size_t>(i)] * inner;
            for (int64_t j = 0; j < inner; ++j) o[j] = o[j] + v[j];
          }
        }
      });
    });
  } else {
    std::vector<int64_t> segment(static_cast<size_t>(nnz));
    for (int64_t u = 0; u < runs; ++u) {
      for (int64_t i = starts[static_cast<size_t>(u)]; i < starts[static_cast<size_t>(u + 1)]; ++i) {
        segment[static_cast<size_t>(i)] = u;
      }
    }
    values = at::zeros(value_sizes, source.options());
    values.index_add_(0, tensor_from_vector(segment), source.index_select(0, tensor_from_vector(order)));
  }
  return make_sparse_coo(self.sizes(), unflatten_indices(tensor_from_vector(unique_keys), sparse_sizes), values, true);
}

// ---- to_dense, clone, copy_, zero_, resize

Tensor sparse_to_dense(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "to_dense");
  const c10::ScalarType type = dtype.value_or(self.scalar_type());
  Tensor out = at::zeros(self.sizes(), TensorOptions().dtype(type).device(self.device()));
  if (impl->nnz() == 0 || out.numel() == 0 || out.is_meta()) return out;
  const IntArrayRef sparse_sizes = self.sizes().slice(0, static_cast<size_t>(impl->sparse_dim()));
  check_indices_in_bounds(impl->indices(), sparse_sizes);
  std::vector<int64_t> flat_sizes{numel_of(sparse_sizes)};
  for (int64_t d = impl->sparse_dim(); d < self.dim(); ++d) flat_sizes.push_back(self.size(d));
  const Tensor values = type == impl->values().scalar_type() ? impl->values() : impl->values().to(type);
  out.view(flat_sizes).index_add_(0, flatten_indices(impl->indices(), sparse_sizes), values);
  return out;
}

Tensor clone_sparse(const Tensor& self, std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(!memory_format || *memory_format == c10::MemoryFormat::Preserve ||
                  *memory_format == c10::MemoryFormat::Contiguous,
              "unsupported memory format option ", *memory_format);
  const SparseTensorImpl* impl = get_sparse_impl(self, "clone");
  return make_sparse_coo(self.sizes(), impl->indices().clone(), impl->values().clone(), impl->coalesced());
}

Tensor to_copy_sparse(const Tensor& self, std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                      std::optional<c10::Device> device, std::optional<bool> pin_memory, bool non_blocking,
                      std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK_NOT_IMPLEMENTED(!device || device->is_cpu() || device->is_meta(),
                              "sparse tensors live on the CPU or the meta device here, not on ", *device);
  // (to another device the members move; out of meta there is nothing to copy, as torch says)
  const c10::Device where = device.value_or(self.device());
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_meta() || where.is_meta(), "Cannot copy out of meta tensor; no data!");
  TORCH_CHECK_NOT_IMPLEMENTED(!pin_memory.value_or(false), "pin_memory=True needs CUDA");
  TORCH_CHECK(!memory_format || *memory_format == c10::MemoryFormat::Preserve, "to(options): memory format ",
              *memory_format, " is not supported for sparse tensors");
  const c10::ScalarType type = dtype.value_or(self.scalar_type());
  if (layout && *layout != self.layout()) {
    TORCH_CHECK(*layout == c10::kStrided, "to(): conversion from ", self.layout(), " to ", *layout,
                " is not supported; use to_sparse(layout=...)");
    return self.to_dense(type).to(where, type);
  }
  if (self.layout() == c10::kSparse) {
    const SparseTensorImpl* impl = get_sparse_impl(self);
    return make_sparse_coo(self.sizes(), impl->indices().to(where, c10::kLong, non_blocking, true),
                           impl->values().to(where, type, non_blocking, true), impl->coalesced());
  }
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self);
  return make_sparse_compressed(self.layout(), self.sizes(),
                                impl->compressed_indices().to(where, impl->compressed_indices().scalar_type(),
                                                              non_blocking, true),
                                impl->plain_indices().to(where, impl->plain_indices().scalar_type(), non_blocking, true),
                                impl->values().to(where, type, non_blocking, true));
}

Tensor& copy_sparse_(Tensor& self, const Tensor& src, bool non_blocking) {
  SparseTensorImpl* impl = get_sparse_impl(self, "copy_");
  TORCH_CHECK(src.layout() == c10::kSparse, "copy_() between dense and sparse Tensors is not implemented! Found self type = ",
              tensor_type_string(self), " and src type = ", tensor_type_string(src));
  if (self.is_same(src)) return self;
  const SparseTensorImpl* from = get_sparse_impl(src);
  TORCH_CHECK_NOT_IMPLEMENTED(!src.is_meta() || self.is_meta(), "Cannot copy out of meta tensor; no data!");
  Tensor values = from->values().to(self.device(), self.scalar_type(), non_blocking, /*copy=*/true);
  impl->set_members(src.sizes(), from->indices().to(self.device(), c10::kLong, non_blocking, true), std::move(values),
                    from->coalesced());
  return self;
}

// zero_ leaves no specified elements (nnz 0), in every layout, as current torch does; to
// keep the pattern, zero the values instead (t.values().zero_()).
Tensor& zero_sparse_(Tensor& self) {
  if (self.layout() != c10::kSparse) {
    SparseCsrTensorImpl* impl = get_sparse_csr_impl(self, "zero_");
    const int64_t batch = impl->batch_dim();
    std::vector<int64_t> plain_sizes = impl->plain_indices().sizes().vec(), value_sizes = impl->values().sizes().vec();
    plain_sizes[static_cast<size_t>(batch)] = 0;
    value_sizes[static_cast<size_t>(batch)] = 0;
    impl->set_members(self.sizes(), at::zeros_like(impl->compressed_indices()),
                      at::empty(plain_sizes, impl->plain_indices().options()),
                      at::empty(value_sizes, impl->values().options()));
    return self;
  }
  SparseTensorImpl* impl = get_sparse_impl(self, "zero_");
  std::vector<int64_t> value_sizes = impl->values().sizes().vec();
  value_sizes[0] = 0;
  impl->set_members(self.sizes(), at::empty({impl->sparse_dim(), 0}, impl->indices().options()),
                    at::empty(value_sizes, impl->values().options()), true);
  return self;
}

namespace {
void resize_sparse(Tensor& self, IntArrayRef size, int64_t sparse_dim, int64_t dense_dim, bool clear, const char* op) {
  SparseTensorImpl* impl = get_sparse_impl(self, op);
  TORCH_CHECK(sparse_dim + dense_dim == static_cast<int64_t>(size.size()), "number of dimensions must be sparse_dim (",
              sparse_dim, ") + dense_dim (", dense_dim, "), but got ", size.size());
  if (!clear && impl->nnz() > 0) {
    TORCH_CHECK(sparse_dim == impl->sparse_dim(), "changing the number of sparse dimensions (from ",
                impl->sparse_dim(), " to ", sparse_dim, ") on a non-empty sparse tensor is not supported.\n",
                "If you want to resize a non-empty sparse tensor, please use sparse_resize_and_clear_() instead.");
    TORCH_CHECK(dense_dim == impl->dense_dim(), "changing the number of dense dimensions (from ", impl->dense_dim(),
                " to ", dense_dim, ") on a non-empty sparse tensor is not supported.\n",
                "If you want to resize a non-empty sparse tensor, please use sparse_resize_and_clear_() instead.");
    for (int64_t d = 0; d < sparse_dim; ++d) {
      TORCH_CHECK(size[static_cast<size_t>(d)] >= self.size(d), "shrinking the size of sparse dimensions (from ",
                  self.sizes(), " to ", size, ") on a non-empty sparse tensor is not supported.\n",
                  "If you want to resize a non-empty sparse tensor, please use sparse_resize_and_clear_() instead.");
    }
    for (int64_t d = sparse_dim; d < self.dim(); ++d) {
      TORCH_CHECK(size[static_cast<size_t>(d)] == self.size(d), "shrinking the size of dense dimensions (from ",
                  self.sizes(), " to ", size, ") on a non-empty sparse tensor is not supported.\n",
                  "If you want to resize a non-empty sparse tensor, please use sparse_resize_and_clear_() instead.");
    }
    impl->set_members(size, impl->indices(), impl->values(), impl->coalesced());
    return;
  }
  std::vector<int64_t> value_sizes{clear ? 0 : impl->nnz()};
  for (int64_t d = sparse_dim; d < static_cast<int64_t>(size.size()); ++d) value_sizes.push_back(size[static_cast<size_t>(d)]);
  impl->set_members(size, at::empty({sparse_dim, value_sizes[0]}, impl->indices().options()),
                    at::zeros(value_sizes, impl->values().options()), true);
}
}  // namespace

Tensor& sparse_resize_(Tensor& self, IntArrayRef size, int64_t sparse_dim, int64_t dense_dim) {
  resize_sparse(self, size, sparse_dim, dense_dim, false, "sparse_resize_");
  return self;
}

Tensor& sparse_resize_and_clear_(Tensor& self, IntArrayRef size, int64_t sparse_dim, int64_t dense_dim) {
  resize_sparse(self, size, sparse_dim, dense_dim, true, "sparse_resize_and_clear_");
  return self;
}

// resize_as_sparse_: the template's shape and sparse and dense dims (kept entries stay, as
// sparse_resize_ keeps them; a tensor of that shape already is left alone).
Tensor& resize_as_sparse_(Tensor& self, const Tensor& the_template) {
  TORCH_CHECK(the_template.layout() == c10::kSparse, "resize_as_sparse_: expected a sparse COO template, got ",
              layout_word(the_template.layout()));
  if (self.sizes().equals(the_template.sizes()) && self.sparse_dim() == the_template.sparse_dim() &&
      self.dense_dim() == the_template.dense_dim()) {
    return self;
  }
  return sparse_resize_(self, the_template.sizes(), the_template.sparse_dim(), the_template.dense_dim());
}

// The *_copy forms of the members: fresh tensors, differentiable as the members are.
Tensor values_copy(const Tensor& self) { return self.values().clone(c10::MemoryFormat::Contiguous); }
Tensor indices_copy(const Tensor& self) { return self.indices().clone(c10::MemoryFormat::Contiguous); }
Tensor crow_indices_copy(const Tensor& self) { return self.crow_indices().clone(c10::MemoryFormat::Contiguous); }
Tensor col_indices_copy(const Tensor& self) { return self.col_indices().clone(c10::MemoryFormat::Contiguous); }
Tensor ccol_indices_copy(const Tensor& self) { return self.ccol_indices().clone(c10::MemoryFormat::Contiguous); }
Tensor row_indices_copy(const Tensor& self) { return self.row_indices().clone(c10::MemoryFormat::Contiguous); }

}  // namespace at::inline tessera::native
