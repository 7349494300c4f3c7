// Index lookups of nn.functional: embedding (rows of a weight matrix; its backward adds
// the grads of repeated indices together), embedding_renorm_ (max_norm) and one_hot.
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <vector>

namespace at::inline tessera::native {

namespace {

void check_indices(const Tensor& indices, const char* op) {
  const c10::ScalarType t = indices.scalar_type();
  TORCH_CHECK(t == c10::kLong || t == c10::kInt, "Expected tensor for argument #1 'indices' to have one of the "
              "following scalar types: Long, Int; but got ", tensor_type_string(indices), " instead (while checking arguments "
              "for ", op, ")");
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  TORCH_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_indices(indices, "embedding");
  if (indices.dim() == 1) return weight.index_select(0, indices);
  std::vector<int64_t> shape = indices.sizes().vec();
  shape.push_back(weight.size(1));
  return weight.index_select(0, indices.reshape({-1})).view(shape);
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx,
                          bool scale_grad_by_freq, bool sparse) {
  if (sparse) return at::embedding_sparse_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq);
  return at::embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq);
}

// grad rows added into their indices' rows; padding_idx's row gets none; with
// scale_grad_by_freq each row is divided by how often its index occurs.
Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq) {
  check_indices(indices, "embedding_backward");
  const int64_t dim = grad_output.size(-1);
  Tensor flat = indices.reshape({-1}).to(c10::kLong);
  Tensor grad = grad_output.reshape({-1, dim});
  if (scale_grad_by_freq) {
    Tensor counts = at::zeros({num_weights}, grad.options()).index_add(0, flat, at::ones(flat.sizes(), grad.options()));
    grad = grad / counts.index_select(0, flat).unsqueeze(1);
  }
  if (padding_idx >= 0) grad = grad.masked_fill(flat.eq(padding_idx).unsqueeze(1), 0);
  return at::zeros({num_weights, dim}, grad.options()).index_add(0, flat, grad);
}

// The same sum kept sparse (nn.Embedding(sparse=True)): an uncoalesced COO tensor of
// one entry per looked-up index, its values the grad rows; the optimizer (or coalesce)
// adds repeated rows up. padding_idx's entries are left out.
Tensor embedding_sparse_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                 int64_t padding_idx, bool scale_grad_by_freq) {
  check_indices(indices, "embedding_backward");
  TORCH_CHECK(!scale_grad_by_freq, "embedding_backward: scale_grad_by_freq not supported with sparse gradients");
  const int64_t dim = grad_output.size(-1);
  // Copies, not views: the grad outlives this call (AccumulateGrad keeps it), and must not
  // change when the caller reuses its index tensor or alias an expanded grad_output.
  Tensor flat = indices.reshape({-1});
  Tensor grad = grad_output.reshape({flat.numel(), dim});
  if (padding_idx != -1) {  // (index_select copies)
    const Tensor kept = flat.ne(padding_idx).nonzero().squeeze(1);
    flat = flat.index_select(0, kept).to(c10::kLong);
    grad = grad.index_select(0, kept);
  } else {
    flat = flat.to(c10::kLong, /*non_blocking=*/false, /*copy=*/true);
    grad = grad.clone(c10::MemoryFormat::Contiguous);
  }
  return at::_sparse_coo_tensor_unsafe(flat.unsqueeze(0), grad, {num_weights, dim}, grad.scalar_type(),
                                       c10::kSparse, grad.device(), std::nullopt, std::nullopt);
}

// Rows that the indices name and whose norm exceeds max_norm are scaled down to it.
Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  TORCH_CHECK(self.dim() == 2, "embedding_renorm_: 'self' must be 2-D");
  check_indices(indices, "embedding_renorm_");
  c10::AutoGradMode no_grad(false);
  Tensor rows = std::get<0>(at::_unique2(indices.reshape({-1}).to(c10::kLong), true, false, false));
  Tensor selected = self.index_select(0, rows);
  Tensor norms = at::linalg_vector_norm(selected, norm_type, std::vector<int64_t>{1}, true, std::nullopt);
  Tensor scale = at::where(norms.gt(max_norm), max_norm / (norms + 1e-7), at::ones_like(norms));
  const std::vector<std::optional<Tensor>> at_rows{rows};
  self.index_put_(at_rows, selected * scale);
  return self;
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  TORCH_CHECK(self.scalar_type() == c10::kLong, "one_hot is only applicable to index tensor.");
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.numel() == 0) {
    TORCH_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return at::empty(shape, self.options());
  }
  if (!self.is_meta()) {
    TORCH_CHECK(self.min().item().toLong() >= 0, "Class values must be non-negative.");
    const int64_t largest = self.max().item().toLong();
    if (num_classes == -1) num_classes = largest + 1;
    TORCH_CHECK(num_classes > largest, "Class values must be smaller than num_classes.");
  } else {
    TORCH_CHECK(num_classes >= 0, "one_hot on meta tensors needs num_classes");
  }
  shape.push_back(num_classes);
  return at::zeros(shape, self.options()).scatter_(-1, self.unsqueeze(-1), 1);
}

}  // namespace at::inline tessera::native
