#include <aten/core/SparseTensorImpl.h>

namespace at::inline tessera {

namespace {
// A sparse tensor lives where its values live: on the CPU or, with meta members, on the
// meta device (SparseMeta / SparseCsrMeta: shapes without data).
c10::DispatchKeySet sparse_keys(const Tensor& values, c10::Layout layout) {
  const c10::DeviceType device = values.defined() ? values.device().type() : c10::DeviceType::CPU;
  return c10::DispatchKeySet(c10::backendDispatchKey(device, layout));
}
}  // namespace

SparseTensorImpl::SparseTensorImpl(IntArrayRef size, Tensor indices, Tensor values, bool coalesced)
    : c10::TensorImpl(c10::Storage(), sparse_keys(values, c10::kSparse), values.scalar_type(), c10::kSparse) {
  set_members(size, std::move(indices), std::move(values), coalesced);
}

void SparseTensorImpl::set_members(IntArrayRef size, Tensor indices, Tensor values, bool coalesced) {
  TORCH_INTERNAL_ASSERT(indices.dim() == 2 && values.dim() >= 1 && indices.size(1) == values.size(0),
                        "a COO tensor's indices are [sparse_dim, nnz] and its values [nnz, ...]");
  TORCH_INTERNAL_ASSERT(indices.size(0) + values.dim() - 1 == static_cast<int64_t>(size.size()),
                        "sparse_dim + dense_dim must equal the number of dims");
  set_sizes_contiguous(size);
  sparse_dim_ = indices.size(0);
  dense_dim_ = values.dim() - 1;
  indices_ = std::move(indices);
  values_ = std::move(values);
  // At most one entry cannot hold a duplicate, so such a tensor is coalesced whatever it says.
  coalesced_ = coalesced || values_.size(0) < 2;
}

SparseCsrTensorImpl::SparseCsrTensorImpl(Layout layout, IntArrayRef size, Tensor compressed_indices,
                                         Tensor plain_indices, Tensor values)
    : c10::TensorImpl(c10::Storage(), sparse_keys(values, layout), values.scalar_type(), layout),
      compressed_indices_(std::move(compressed_indices)),
      plain_indices_(std::move(plain_indices)),
      values_(std::move(values)) {
  TORCH_INTERNAL_ASSERT(c10::isSparseCompressed(layout), "a compressed tensor needs a compressed layout");
  set_sizes_contiguous(size);
}

void SparseCsrTensorImpl::set_members(IntArrayRef size, Tensor compressed_indices, Tensor plain_indices,
                                      Tensor values) {
  set_sizes_contiguous(size);
  compressed_indices_ = std::move(compressed_indices);
  plain_indices_ = std::move(plain_indices);
  values_ = std::move(values);
}

int64_t SparseCsrTensorImpl::dense_dim() const {
  const bool blocked = layout() == c10::kSparseBsr || layout() == c10::kSparseBsc;
  return values_.dim() - batch_dim() - 1 - (blocked ? 2 : 0);
}

SparseTensorImpl* get_sparse_impl(const Tensor& t, const char* op) {
  TORCH_CHECK(t.defined() && t.layout() == c10::kSparse, op, " expected a sparse COO tensor, but got ",
              t.defined() ? c10::LayoutName(t.layout()) : "an undefined tensor");
  auto* impl = dynamic_cast<SparseTensorImpl*>(t.unsafeGetTensorImpl());
  TORCH_INTERNAL_ASSERT(impl != nullptr, "a tensor with the sparse_coo layout is not a SparseTensorImpl");
  return impl;
}

SparseCsrTensorImpl* get_sparse_csr_impl(const Tensor& t, const char* op) {
  TORCH_CHECK(t.defined() && c10::isSparseCompressed(t.layout()), op,
              " expected a sparse compressed (CSR, CSC, BSR or BSC) tensor, but got ",
              t.defined() ? c10::LayoutName(t.layout()) : "an undefined tensor");
  auto* impl = dynamic_cast<SparseCsrTensorImpl*>(t.unsafeGetTensorImpl());
  TORCH_INTERNAL_ASSERT(impl != nullptr, "a tensor with a compressed layout is not a SparseCsrTensorImpl");
  return impl;
}

Tensor make_sparse_coo(IntArrayRef size, Tensor indices, Tensor values, bool coalesced) {
  return Tensor(c10::make_intrusive<SparseTensorImpl>(size, std::move(indices), std::move(values), coalesced));
}

Tensor make_sparse_compressed(Layout layout, IntArrayRef size, Tensor compressed_indices, Tensor plain_indices,
                              Tensor values) {
  return Tensor(c10::make_intrusive<SparseCsrTensorImpl>(layout, size, std::move(compressed_indices),
                                                         std::move(plain_indices), std::move(values)));
}

Tensor sparse_alias(const Tensor& sparse) {
  Tensor alias;
  if (sparse.layout() == c10::kSparse) {
    const SparseTensorImpl* impl = get_sparse_impl(sparse);
    alias = make_sparse_coo(sparse.sizes(), impl->indices(), impl->values(), impl->coalesced());
  } else {
    const SparseCsrTensorImpl* impl = get_sparse_csr_impl(sparse);
    alias = make_sparse_compressed(sparse.layout(), sparse.sizes(), impl->compressed_indices(),
                                   impl->plain_indices(), impl->values());
  }
  alias.unsafeGetTensorImpl()->set_version_counter(sparse.unsafeGetTensorImpl()->version_counter());
  return alias;
}

}  // namespace at::inline tessera
