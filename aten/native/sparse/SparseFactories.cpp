// Sparse factories over other tensors: empty_like of a sparse tensor (zeros_like, ones_like
// and full_like build on it), and torch.sparse.spdiags (_spdiags), which places rows of a
// matrix along diagonals.
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <unordered_set>

namespace at::inline tessera::native {

using namespace sparse;

// empty_like of a sparse tensor: COO gives no specified elements over the same sparse and
// dense dims; a compressed layout keeps the pattern (copied) with uninitialised values,
// as torch's. zeros_like zeroes that (nnz 0 in every layout); another sparse layout, or
// strided from a compressed tensor, is torch's error.
Tensor empty_like_sparse(const Tensor& self, std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> pin_memory,
                         std::optional<c10::MemoryFormat> memory_format) {
  const c10::Layout want = layout.value_or(self.layout());
  const TensorOptions options = TensorOptions().dtype(dtype.value_or(self.scalar_type())).device(device.value_or(self.device()));
  if (want == c10::kStrided && self.layout() == c10::kSparse) {
    return at::empty(self.sizes(), options.dtype(), c10::kStrided, options.device(), pin_memory, memory_format);
  }
  TORCH_CHECK(want == self.layout(), "empty_like with different sparse layout is not supported (self is ",
              layout_word(self.layout()), " but you requested ", layout_word(want), ")");
  TORCH_CHECK(!memory_format || *memory_format == c10::MemoryFormat::Preserve,
              "memory format option is only supported by strided tensors");
  check_factory_options(std::nullopt, options.device(), pin_memory, want, "empty_like");
  if (want == c10::kSparse) {
    const SparseTensorImpl* impl = get_sparse_impl(self);
    std::vector<int64_t> value_sizes{0};
    for (int64_t d = impl->sparse_dim(); d < self.dim(); ++d) value_sizes.push_back(self.size(d));
    return make_sparse_coo(self.sizes(), at::empty({impl->sparse_dim(), 0}, options.dtype(c10::kLong)),
                           at::empty(value_sizes, options), true);
  }
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self);
  const auto copied = [&](const Tensor& t) { return t.to(options.device(), t.scalar_type(), false, true); };
  return make_sparse_compressed(want, self.sizes(), copied(impl->compressed_indices()), copied(impl->plain_indices()),
                                at::empty(impl->values().sizes(), options));
}

// _spdiags: diagonals[k, j] goes to (j - offsets[k], j), for the columns j where that
// position is inside the shape and j < diagonals.size(1) (scipy.sparse.spdiags' rule, which
// current torch documents; 1.13 indexes past a non-square shape). Entries come diagonal by
// diagonal in the offsets' order, as torch's, so the COO result is not marked coalesced.
Tensor _spdiags(const Tensor& diagonals, const Tensor& offsets, IntArrayRef shape, std::optional<c10::Layout> layout) {
  TORCH_CHECK(shape.size() == 2, "Output shape must be 2d");
  TORCH_CHECK(diagonals.dim() == 1 || diagonals.dim() == 2, "Diagonals must be vector or matrix");
  TORCH_CHECK(offsets.dim() <= 1, "Offsets must be scalar or vector");
  TORCH_CHECK(offsets.scalar_type() == c10::kLong, "Offset Tensor must have dtype Long but got ",
              offsets.scalar_type());
  const Tensor diags = diagonals.dim() == 2 ? diagonals : diagonals.unsqueeze(0);
  const Tensor offs = offsets.reshape({-1});
  TORCH_CHECK(diags.size(0) == offs.size(0), "Number of diagonals (", diags.size(0),
              ") does not match the number of offsets (", offs.size(0), ")");
  const c10::Layout out = layout.value_or(c10::kSparse);
  TORCH_CHECK(out == c10::kSparse || out == c10::kSparseCsr || out == c10::kSparseCsc,
              "Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, got ", layout_word(out));
  for (int64_t s : shape) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape);
  refuse_meta(diagonals.is_meta() ? diagonals : offsets, "spdiags");
  const std::vector<int64_t> offset = host_int64_values(offs);
  TORCH_CHECK(std::unordered_set<int64_t>(offset.begin(), offset.end()).size() == offset.size(),
              "Offset tensor contains duplicate values");
  const int64_t rows = shape[0], cols = shape[1], length = diags.size(1);
  std::vector<int64_t> row, col, taken;
  for (size_t k = 0; k < offset.size(); ++k) {
    const int64_t d = offset[k];
    const int64_t stop = std::min({cols, rows + d, length});
    for (int64_t j = std::max<int64_t>(0, d); j < stop; ++j) {
      row.push_back(j - d);
      col.push_back(j);
      taken.push_back(static_cast<int64_t>(k) * length + j);
    }
  }
  const c10::Device device = diagonals.device();
  const Tensor indices = at::stack({tensor_from_vector(row, device), tensor_from_vector(col, device)});
  const Tensor values = diags.reshape({-1}).index_select(0, tensor_from_vector(taken, device));
  const Tensor result = at::sparse_coo_tensor(indices, values, {rows, cols});
  if (out == c10::kSparseCsr) return result.to_sparse_csr();
  return out == c10::kSparseCsc ? result.to_sparse_csc() : result;
}

}  // namespace at::inline tessera::native
