// The impls behind sparse tensors: SparseTensorImpl (COO: an index matrix and a values
// tensor, hybrid dims) and SparseCsrTensorImpl (the compressed layouts CSR, CSC, BSR, BSC).
// Neither has storage of its own; kernels registered for SparseCPU / SparseCsrCPU read the
// member tensors, which are ordinary dense CPU tensors.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera {

// Note [Sparse tensor geometry]: the base TensorImpl holds the sparse tensor's full shape
// (sizes; strides are the contiguous ones and never read: the Python bridge refuses
// stride() as torch does) and no storage, so data() raises and a dense kernel that somehow
// received one cannot touch memory. numel() is the dense element count, as in torch.
class TORCH_API SparseTensorImpl final : public c10::TensorImpl {
 public:
  // indices: int64 [sparse_dim, nnz]; values: [nnz, *size[sparse_dim:]]. Callers have
  // validated the shapes (sparse_coo_tensor does; internal callers build them right).
  SparseTensorImpl(IntArrayRef size, Tensor indices, Tensor values, bool coalesced);

  const Tensor& indices() const { return indices_; }
  const Tensor& values() const { return values_; }
  int64_t sparse_dim() const { return sparse_dim_; }
  int64_t dense_dim() const { return dense_dim_; }
  int64_t nnz() const { return values_.size(0); }
  bool coalesced() const { return coalesced_; }
  void set_coalesced(bool value) { coalesced_ = value; }
  // Replaces shape, dims and members at once (sparse_resize_, copy_, zero_, set_data).
  void set_members(IntArrayRef size, Tensor indices, Tensor values, bool coalesced);

 private:
  Tensor indices_;
  Tensor values_;
  int64_t sparse_dim_ = 0;
  int64_t dense_dim_ = 0;
  bool coalesced_ = false;
};

// CSR/CSC/BSR/BSC. compressed_indices: [*batch, n_compressed + 1], plain_indices:
// [*batch, nnz] (both int32 or both int64); values: [*batch, nnz, *dense] for CSR/CSC and
// [*batch, nnz, blockrows, blockcols, *dense] for BSR/BSC. CSR and BSR compress rows (the
// first of the two sparse dims), CSC and BSC columns.
class TORCH_API SparseCsrTensorImpl final : public c10::TensorImpl {
 public:
  SparseCsrTensorImpl(Layout layout, IntArrayRef size, Tensor compressed_indices, Tensor plain_indices,
                      Tensor values);

  const Tensor& compressed_indices() const { return compressed_indices_; }
  const Tensor& plain_indices() const { return plain_indices_; }
  const Tensor& values() const { return values_; }
  int64_t batch_dim() const { return compressed_indices_.dim() - 1; }
  int64_t dense_dim() const;
  int64_t nnz() const { return plain_indices_.size(-1); }
  // Replaces shape and members at once (set_data); the layout stays.
  void set_members(IntArrayRef size, Tensor compressed_indices, Tensor plain_indices, Tensor values);

 private:
  Tensor compressed_indices_;
  Tensor plain_indices_;
  Tensor values_;
};

// The impl behind a COO / compressed tensor; raises (naming `op`) for any other layout.
TORCH_API SparseTensorImpl* get_sparse_impl(const Tensor& t, const char* op = "this operator");
TORCH_API SparseCsrTensorImpl* get_sparse_csr_impl(const Tensor& t, const char* op = "this operator");

// A second sparse tensor over the same members, sharing the version counter, with no
// autograd state: what make_view gives for a sparse tensor (detach, .data, saved tensors).
TORCH_API Tensor sparse_alias(const Tensor& sparse);

// Builders that skip validation: for kernels whose results are right by construction.
TORCH_API Tensor make_sparse_coo(IntArrayRef size, Tensor indices, Tensor values, bool coalesced);
TORCH_API Tensor make_sparse_compressed(Layout layout, IntArrayRef size, Tensor compressed_indices,
                                        Tensor plain_indices, Tensor values);

}  // namespace at::inline tessera
