// The compressed sparse layouts (SparseCsrCPU): CSR, CSC, BSR and BSC tensors, their
// construction with torch's invariants checked, size inference, the members
// (crow/col/ccol/row indices, values) and clone. Conversions are in SparseConversions.cpp.
#include <aten/core/TensorUtils.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

using namespace sparse;

namespace {

const char* compressed_name(Layout layout) { return compresses_rows(layout) ? "crow_indices" : "ccol_indices"; }
const char* plain_name(Layout layout) { return compresses_rows(layout) ? "col_indices" : "row_indices"; }

void check_layout_options(std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                          std::optional<bool> pin_memory) {
  TORCH_CHECK_NOT_IMPLEMENTED(!device || device->is_cpu() || device->is_meta(),
                              "sparse compressed tensors live on the CPU or the meta device here, not on ", *device);
  TORCH_CHECK_NOT_IMPLEMENTED(!pin_memory.value_or(false), "pin_memory=True needs CUDA");
  TORCH_CHECK(!layout || c10::isSparseCompressed(*layout),
              "sparse_compressed_tensor expected sparse compressed tensor layout but got ", *layout);
}

Layout required_layout(std::optional<c10::Layout> layout, const char* op) {
  TORCH_CHECK(layout.has_value(), op, ": layout must be specified (one of torch.sparse_csr, torch.sparse_csc, "
              "torch.sparse_bsr, torch.sparse_bsc)");
  return *layout;
}

// torch's inferred size: the compressed dim from compressed_indices' length, the plain dim
// from the largest plain index (times the block size for BSR/BSC), batch and dense dims
// from the members' shapes.
std::vector<int64_t> infer_size(const Tensor& compressed, const Tensor& plain_idx, const Tensor& values, Layout layout) {
  TORCH_CHECK(compressed.dim() >= 1, compressed_name(layout), " must have dimensionality >= 1 but got ",
              compressed.dim());
  const int64_t batch = compressed.dim() - 1;
  TORCH_CHECK(compressed.size(-1) >= 1, compressed_name(layout), " must have at least one element in its last dimension");
  const int64_t ncompressed = compressed.size(-1) - 1;
  if (plain_idx.numel() > 0) refuse_meta(plain_idx, "sparse_compressed_tensor without a size");
  const int64_t nplain = plain_idx.numel() > 0 ? plain_idx.max().item().toLong() + 1 : 0;
  int64_t block_rows = 1, block_cols = 1;
  const bool blocked = is_blocked(layout);
  if (blocked) {
    TORCH_CHECK(values.dim() >= batch + 3, "values must have at least ", batch + 3, " dimensions for ",
                c10::LayoutName(layout), ", got ", values.dim());
    block_rows = values.size(batch + 1);
    block_cols = values.size(batch + 2);
  }
  std::vector<int64_t> size(compressed.sizes().begin(), compressed.sizes().end() - 1);
  if (compresses_rows(layout)) {
    size.push_back(ncompressed * block_rows);
    size.push_back(nplain * block_cols);
  } else {
    size.push_back(nplain * block_rows);
    size.push_back(ncompressed * block_cols);
  }
  for (int64_t d = batch + 1 + (blocked ? 2 : 0); d < values.dim(); ++d) size.push_back(values.size(d));
  return size;
}

}  // namespace

Tensor sparse_compressed_tensor_unsafe(const Tensor& compressed_indices, const Tensor& plain_indices,
                                       const Tensor& values, IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                       std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                       std::optional<bool> pin_memory) {
  check_layout_options(layout, device, pin_memory);
  const Layout l = required_layout(layout, "_sparse_compressed_tensor_unsafe");
  Tensor v = dtype && *dtype != values.scalar_type() ? values.to(*dtype) : plain(values);
  // (the members move to the requested device, as torch's constructors move them)
  if (device && device->type() != v.device().type()) v = v.to(*device, v.scalar_type());
  const auto on_values_device = [&](const Tensor& t) { return t.device() == v.device() ? plain(t) : t.to(v.device(), t.scalar_type()); };
  Tensor compressed = on_values_device(compressed_indices), plain_idx = on_values_device(plain_indices);
  return make_sparse_compressed(l, size, std::move(compressed), std::move(plain_idx), std::move(v));
}

Tensor _sparse_csr_tensor_unsafe(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& values,
                                 IntArrayRef size, std::optional<c10::ScalarType> dtype,
                                 std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                 std::optional<bool> pin_memory) {
  return at::_sparse_compressed_tensor_unsafe(crow_indices, col_indices, values, size, dtype,
                                              layout.value_or(c10::kSparseCsr), device, pin_memory);
}

// Note [Compressed invariants]: what torch's _validate_sparse_compressed_tensor_args checks,
// in its words: matching index dtypes and batch shapes, member shapes that fit `size`,
// compressed_indices that start at 0, end at nnz and never decrease, and plain indices in
// range and strictly increasing within each compressed slice.
void _validate_sparse_compressed_tensor_args(const Tensor& compressed_indices, const Tensor& plain_indices,
                                             const Tensor& values, IntArrayRef size, Layout layout) {
  TORCH_CHECK(c10::isSparseCompressed(layout), "_validate_sparse_compressed_tensor_args: expected a compressed layout, got ",
              layout);
  const char* cname = compressed_name(layout);
  const char* pname = plain_name(layout);
  for (int64_t s : size) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  const auto index_type = compressed_indices.scalar_type();
  TORCH_CHECK(index_type == c10::kInt || index_type == c10::kLong, cname,
              " and ", pname, " must be an int32 or int64 tensor, got ", index_type);
  TORCH_CHECK(plain_indices.scalar_type() == index_type, cname, " and ", pname,
              " must have the same dtype, but got ", index_type, " and ", plain_indices.scalar_type());
  TORCH_CHECK(compressed_indices.dim() >= 1 && compressed_indices.dim() == plain_indices.dim(), cname,
              " and ", pname, " must have the same number of dimensions (>= 1), but got ", compressed_indices.dim(),
              " and ", plain_indices.dim());
  const int64_t batch = compressed_indices.dim() - 1;
  TORCH_CHECK(compressed_indices.size(-1) >= 1, cname, " must have at least one element in its last dimension");
  TORCH_CHECK(compressed_indices.sizes().slice(0, static_cast<size_t>(batch)).equals(
                  plain_indices.sizes().slice(0, static_cast<size_t>(batch))),
              "Batch dimensions of ", cname, " and ", pname, " must be the same.");
  const bool blocked = is_blocked(layout);
  const int64_t block_dims = blocked ? 2 : 0;
  TORCH_CHECK(values.dim() >= batch + 1 + block_dims, "values must have at least ", batch + 1 + block_dims,
              " dimensions, but got ", values.dim());
  const int64_t dense = values.dim() - batch - 1 - block_dims;
  TORCH_CHECK(static_cast<int64_t>(size.size()) == batch + 2 + dense, "tensor dimensionality must be sum of batch, ",
              "base, and dense dimensionalities (=", batch, " + 2 + ", dense, ") but got ", size.size());
  TORCH_CHECK(values.sizes().slice(0, static_cast<size_t>(batch)).equals(size.slice(0, static_cast<size_t>(batch))) &&
                  compressed_indices.sizes().slice(0, static_cast<size_t>(batch)).equals(
                      size.slice(0, static_cast<size_t>(batch))),
              "Batch dimensions of the members and of size must be the same, got size ", size);
  const int64_t nnz = plain_indices.size(-1);
  TORCH_CHECK(values.size(batch) == nnz, "number of ", pname, " (", nnz, ") must be equal to the number of values (",
              values.size(batch), ")");
  int64_t block_rows = 1, block_cols = 1;
  if (blocked) {
    block_rows = values.size(batch + 1);
    block_cols = values.size(batch + 2);
    TORCH_CHECK(block_rows > 0 && block_cols > 0, "blocksize must be positive, got (", block_rows, ", ", block_cols, ")");
  }
  const int64_t rows = size[static_cast<size_t>(batch)], cols = size[static_cast<size_t>(batch + 1)];
  TORCH_CHECK(rows % block_rows == 0 && cols % block_cols == 0, "tensor shape[", batch, "] (", rows, ") and shape[",
              batch + 1, "] (", cols, ") must be divisible by the blocksize (", block_rows, ", ", block_cols, ")");
  for (int64_t d = 0; d < dense; ++d) {
    TORCH_CHECK(values.size(batch + 1 + block_dims + d) == size[static_cast<size_t>(batch + 2 + d)],
                "values dense dimensions must match size's, got values of shape ", values.sizes(), " and size ", size);
  }
  const bool rows_first = compresses_rows(layout);
  const int64_t ncompressed = (rows_first ? rows / block_rows : cols / block_cols);
  const int64_t nplain = (rows_first ? cols / block_cols : rows / block_rows);
  TORCH_CHECK(compressed_indices.size(-1) == ncompressed + 1, cname, ".shape[-1] must be equal to the number of ",
              rows_first ? "rows" : "columns", " + 1 (=", ncompressed + 1, "), but got ", compressed_indices.size(-1));
  // (meta members hold no indices to check: their shapes are all there is)
  if (compressed_indices.is_meta() || plain_indices.is_meta()) return;
  const Tensor comp = compressed_indices.to(c10::kLong).contiguous();
  const Tensor pl = plain_indices.to(c10::kLong).contiguous();
  const int64_t nbatch = numel_of(compressed_indices.sizes().slice(0, static_cast<size_t>(batch)));
  const int64_t* c = static_cast<const int64_t*>(comp.data_ptr());
  const int64_t* p = static_cast<const int64_t*>(pl.data_ptr());
  // The compressed indices are checked in full before any plain index is read through them.
  for (int64_t b = 0; b < nbatch; ++b) {
    const int64_t* cb = c + b * (ncompressed + 1);
    TORCH_CHECK(cb[0] == 0, "`", cname, "[..., 0] == 0` is not satisfied.");
    TORCH_CHECK(cb[ncompressed] == nnz, "`", cname, "[..., -1] == nnz` is not satisfied.");
    for (int64_t i = 1; i <= ncompressed; ++i) {
      TORCH_CHECK(cb[i] - cb[i - 1] >= 0 && cb[i] - cb[i - 1] <= nplain, "`0 <= ", cname, "[..., 1:] - ", cname,
                  "[..., :-1] <= ", rows_first ? "ncols" : "nrows", "` is not satisfied.");
    }
  }
  for (int64_t b = 0; b < nbatch; ++b) {
    const int64_t* cb = c + b * (ncompressed + 1);
    const int64_t* pb = p + b * nnz;
    for (int64_t i = 1; i <= ncompressed; ++i) {
      for (int64_t k = cb[i - 1]; k < cb[i]; ++k) {
        TORCH_CHECK(pb[k] >= 0 && pb[k] < nplain, "`0 <= ", pname, " < ", rows_first ? "ncols" : "nrows",
                    "` is not satisfied.");
        TORCH_CHECK(k == cb[i - 1] || pb[k - 1] < pb[k], "`", pname, "[..., ", cname, "[..., i - 1]:", cname,
                    "[..., i]] for all i = 1, ..., ", rows_first ? "nrows" : "ncols",
                    " are sorted and distinct along the last dimension values` is not satisfied.");
      }
    }
  }
}

Tensor sparse_compressed_tensor_comp_plain_value_size(const Tensor& compressed_indices, const Tensor& plain_indices,
                                                      const Tensor& values, IntArrayRef size,
                                                      std::optional<c10::ScalarType> dtype,
                                                      std::optional<c10::Layout> layout,
                                                      std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  check_layout_options(layout, device, pin_memory);
  const Layout l = required_layout(layout, "sparse_compressed_tensor");
  at::_validate_sparse_compressed_tensor_args(compressed_indices, plain_indices, values, size, l);
  return at::_sparse_compressed_tensor_unsafe(compressed_indices, plain_indices, values, size, dtype, l, device,
                                              pin_memory);
}

Tensor sparse_compressed_tensor_comp_plain_value(const Tensor& compressed_indices, const Tensor& plain_indices,
                                                 const Tensor& values, std::optional<c10::ScalarType> dtype,
                                                 std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                                 std::optional<bool> pin_memory) {
  check_layout_options(layout, device, pin_memory);
  const Layout l = required_layout(layout, "sparse_compressed_tensor");
  TORCH_CHECK(compressed_indices.scalar_type() == c10::kInt || compressed_indices.scalar_type() == c10::kLong,
              compressed_name(l), " must be an int32 or int64 tensor, got ", compressed_indices.scalar_type());
  const std::vector<int64_t> size = infer_size(compressed_indices, plain_indices, values, l);
  return at::sparse_compressed_tensor(compressed_indices, plain_indices, values, size, dtype, l, device, pin_memory);
}

#define TESSERA_COMPRESSED_FACTORY(NAME, LAYOUT, A, B)                                                              \
  Tensor NAME##_##A##_##B##_value_size(const Tensor& a, const Tensor& b, const Tensor& values, IntArrayRef size,    \
                                       std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,     \
                                       std::optional<c10::Device> device, std::optional<bool> pin_memory) {         \
    TORCH_CHECK(!layout || *layout == LAYOUT, #NAME ": expected layout ", LAYOUT, ", got ", *layout);               \
    return at::sparse_compressed_tensor(a, b, values, size, dtype, LAYOUT, device, pin_memory);                     \
  }                                                                                                                  \
  Tensor NAME##_##A##_##B##_value(const Tensor& a, const Tensor& b, const Tensor& values,                          \
                                  std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,          \
                                  std::optional<c10::Device> device, std::optional<bool> pin_memory) {              \
    TORCH_CHECK(!layout || *layout == LAYOUT, #NAME ": expected layout ", LAYOUT, ", got ", *layout);               \
    return at::sparse_compressed_tensor(a, b, values, dtype, LAYOUT, device, pin_memory);                           \
  }

TESSERA_COMPRESSED_FACTORY(sparse_csr_tensor, c10::kSparseCsr, crow, col)
TESSERA_COMPRESSED_FACTORY(sparse_csc_tensor, c10::kSparseCsc, ccol, row)
TESSERA_COMPRESSED_FACTORY(sparse_bsr_tensor, c10::kSparseBsr, crow, col)
TESSERA_COMPRESSED_FACTORY(sparse_bsc_tensor, c10::kSparseBsc, ccol, row)
#undef TESSERA_COMPRESSED_FACTORY

// ---- members

Tensor values_sparse_compressed(const Tensor& self) { return plain(get_sparse_csr_impl(self, "values")->values()); }

namespace {
Tensor member(const Tensor& self, bool compressed, bool rows_first, const char* op) {
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self, op);
  TORCH_CHECK(compresses_rows(self.layout()) == rows_first, op, " expected sparse ",
              rows_first ? "row compressed tensor layout (CSR or BSR)" : "column compressed tensor layout (CSC or BSC)",
              " but got ", sparse::layout_word(self.layout()));
  return plain(compressed ? impl->compressed_indices() : impl->plain_indices());
}
}  // namespace

Tensor crow_indices_sparse_compressed(const Tensor& self) { return member(self, true, true, "crow_indices"); }
Tensor col_indices_sparse_compressed(const Tensor& self) { return member(self, false, true, "col_indices"); }
Tensor ccol_indices_sparse_compressed(const Tensor& self) { return member(self, true, false, "ccol_indices"); }
Tensor row_indices_sparse_compressed(const Tensor& self) { return member(self, false, false, "row_indices"); }

Tensor clone_sparse_compressed(const Tensor& self, std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(!memory_format || *memory_format == c10::MemoryFormat::Preserve ||
                  *memory_format == c10::MemoryFormat::Contiguous,
              "unsupported memory format option ", *memory_format);
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self, "clone");
  return make_sparse_compressed(self.layout(), self.sizes(), impl->compressed_indices().clone(),
                                impl->plain_indices().clone(), impl->values().clone());
}

}  // namespace at::inline tessera::native
