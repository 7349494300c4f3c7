#include <aten/native/sparse/SparseUtils.h>

#include <aten/core/TensorUtils.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native::sparse {

int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

Tensor flatten_indices(const Tensor& indices, IntArrayRef sparse_sizes) {
  const Tensor idx = indices.contiguous();
  const int64_t dims = idx.size(0), nnz = idx.size(1);
  Tensor out = make_empty({nnz}, c10::kLong, c10::Device(c10::DeviceType::CPU));
  const int64_t* in = static_cast<const int64_t*>(idx.data_ptr());
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  for (int64_t i = 0; i < nnz; ++i) o[i] = 0;
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t size = sparse_sizes[static_cast<size_t>(d)];
    const int64_t* row = in + d * nnz;
    for (int64_t i = 0; i < nnz; ++i) o[i] = o[i] * size + row[i];
  }
  return out;
}

Tensor unflatten_indices(const Tensor& linear, IntArrayRef sparse_sizes) {
  const Tensor lin = linear.contiguous();
  const int64_t dims = static_cast<int64_t>(sparse_sizes.size()), n = lin.numel();
  Tensor out = make_empty({dims, n}, c10::kLong, c10::Device(c10::DeviceType::CPU));
  const int64_t* in = static_cast<const int64_t*>(lin.data_ptr());
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = in[i];
    for (int64_t d = dims; d-- > 0;) {
      const int64_t size = sparse_sizes[static_cast<size_t>(d)];
      o[d * n + i] = size == 0 ? 0 : rest % size;
      rest = size == 0 ? 0 : rest / size;
    }
  }
  return out;
}

void check_indices_in_bounds(const Tensor& indices, IntArrayRef size) {
  const Tensor idx = indices.contiguous();
  const int64_t dims = idx.size(0), nnz = idx.size(1);
  const int64_t* in = static_cast<const int64_t*>(idx.data_ptr());
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t* row = in + d * nnz;
    int64_t lo = 0, hi = -1;
    for (int64_t i = 0; i < nnz; ++i) {
      lo = i == 0 || row[i] < lo ? row[i] : lo;
      hi = row[i] > hi ? row[i] : hi;
    }
    if (nnz == 0) continue;
    TORCH_CHECK(lo >= 0, "found negative index ", lo, " for dim ", d);
    TORCH_CHECK(hi < size[static_cast<size_t>(d)], "size is inconsistent with indices: for dim ", d, ", size is ",
                size[static_cast<size_t>(d)], " but found index ", hi);
  }
}

Tensor plain(const Tensor& t) { return make_view(t, t.sizes(), t.strides(), t.storage_offset()); }

Tensor as_coo(const Tensor& t) {
  if (t.layout() == c10::kSparse) return t;
  return t.to_sparse();
}

const char* layout_word(Layout layout) {
  switch (layout) {
    case c10::kStrided: return "Strided";
    case c10::kSparse: return "Sparse";
    case c10::kSparseCsr: return "SparseCsr";
    case c10::kSparseCsc: return "SparseCsc";
    case c10::kSparseBsr: return "SparseBsr";
    case c10::kSparseBsc: return "SparseBsc";
    case c10::kMkldnn: return "Mkldnn";
  }
  return "?";
}

}  // namespace at::inline tessera::native::sparse
