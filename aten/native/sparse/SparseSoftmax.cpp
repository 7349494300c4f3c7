// torch.sparse.softmax / log_softmax on COO tensors: the softmax along `dim` of the
// specified elements only (unspecified ones count as -inf, so they stay unspecified),
// and the backward of each. Along a dense dim it is the dense softmax of the values;
// along a sparse dim the entries that differ only in that coordinate form one group.
#include <aten/core/TensorOperators.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/index/IndexingUtils.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>

#include <limits>

namespace at::inline tessera::native {

using namespace sparse;

namespace {

struct Lines {
  Tensor group;       // int64 [nnz]: the line (group) of each entry, for a sparse dim
  int64_t count = 0;  // number of groups
  int64_t value_dim = -1;  // the values' dim to reduce over, for a dense dim
};

// The groups softmax reduces over, for a coalesced COO tensor.
Lines lines_of(const Tensor& coalesced, int64_t dim) {
  const SparseTensorImpl* impl = get_sparse_impl(coalesced);
  const int64_t sd = impl->sparse_dim();
  Lines lines;
  if (dim >= sd) {
    lines.value_dim = dim - sd + 1;
    return lines;
  }
  std::vector<int64_t> rows, sizes;
  for (int64_t d = 0; d < sd; ++d) {
    if (d == dim) continue;
    rows.push_back(d);
    sizes.push_back(coalesced.size(d));
  }
  const int64_t nnz = impl->nnz();
  if (rows.empty()) {
    lines.group = at::zeros({nnz}, TensorOptions().dtype(c10::kLong));
    lines.count = nnz > 0 ? 1 : 0;
    return lines;
  }
  const Tensor others = impl->indices().index_select(0, index_tensor(rows, coalesced));
  const auto [unique, inverse, counts] = at::_unique2(flatten_indices(others, sizes), true, true, false);
  lines.group = inverse;
  lines.count = unique.numel();
  return lines;
}

// Sum of x over each line, brought back to x's entries.
Tensor line_sum(const Tensor& x, const Lines& lines) {
  if (lines.value_dim >= 0) return x.sum(lines.value_dim, true);
  std::vector<int64_t> size = x.sizes().vec();
  size[0] = lines.count;
  return at::zeros(size, x.options()).index_add(0, lines.group, x).index_select(0, lines.group);
}

Tensor line_max(const Tensor& x, const Lines& lines) {
  if (lines.value_dim >= 0) return std::get<0>(x.max(lines.value_dim, true));
  std::vector<int64_t> size = x.sizes().vec();
  size[0] = lines.count;
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[0] = x.size(0);
  const Tensor index = lines.group.view(shape).expand(x.sizes());
  const Tensor lowest = at::full(size, -std::numeric_limits<double>::infinity(), x.options());
  return lowest.scatter_reduce(0, index, x, "amax", true).index_select(0, lines.group);
}

int64_t checked_dim(const Tensor& self, int64_t dim, const char* op) {
  get_sparse_impl(self, op);
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()), "\"", op, "\" not implemented for '",
              c10::toString(self.scalar_type()), "'");
  const int64_t n = self.dim();
  TORCH_CHECK_INDEX(dim >= -n && dim < n, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                    "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

Tensor softmax_forward(const Tensor& self, int64_t dim, bool half_to_float, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  dim = checked_dim(self, dim, op);
  TORCH_CHECK(!half_to_float, op, ": with half to float conversion is not supported on CPU");
  const Tensor input = self.coalesce();
  const SparseTensorImpl* impl = get_sparse_impl(input);
  const Tensor& values = impl->values();
  if (impl->nnz() == 0) return make_sparse_coo(self.sizes(), impl->indices().clone(), values.clone(), true);
  if (self.is_meta()) {  // the input's pattern, new values (Note [Sparse meta tensors])
    return make_sparse_coo(self.sizes(), impl->indices().clone(), at::empty_like(values), true);
  }
  const Lines lines = lines_of(input, dim);
  // (a line whose entries are all -inf has max -inf: its results are NaN, as dense softmax's)
  const Tensor shifted = values - line_max(values, lines);
  const Tensor exps = shifted.exp();
  const Tensor out = log ? shifted - line_sum(exps, lines).log() : exps / line_sum(exps, lines);
  return make_sparse_coo(self.sizes(), impl->indices().clone(), out, true);
}

// grad_output's values at output's entries (zero where grad_output has none).
Tensor grad_values_at(const Tensor& grad_output, const Tensor& output) {
  const SparseTensorImpl* out = get_sparse_impl(output);
  const IntArrayRef sparse_sizes = output.sizes().slice(0, static_cast<size_t>(out->sparse_dim()));
  const Tensor keys = flatten_indices(out->indices(), sparse_sizes);
  if (grad_output.layout() == c10::kStrided) {
    std::vector<int64_t> flat{numel_of(sparse_sizes)};
    for (int64_t d = out->sparse_dim(); d < output.dim(); ++d) flat.push_back(output.size(d));
    return grad_output.reshape(flat).index_select(0, keys);
  }
  const Tensor grad = grad_output.coalesce();
  const SparseTensorImpl* g = get_sparse_impl(grad);
  TORCH_CHECK(g->sparse_dim() == out->sparse_dim(), "softmax backward: expected grad_output and output to have the "
              "same sparse dims, got ", g->sparse_dim(), " and ", out->sparse_dim());
  if (g->nnz() == 0) return at::zeros_like(out->values());
  const Tensor gkeys = flatten_indices(g->indices(), sparse_sizes);
  const Tensor pos = at::searchsorted(gkeys, keys, false, false, std::nullopt, std::nullopt).clamp_max(g->nnz() - 1);
  Tensor found = gkeys.index_select(0, pos).eq(keys);
  std::vector<int64_t> shape(static_cast<size_t>(out->values().dim()), 1);
  shape[0] = keys.numel();
  return at::where(found.view(shape), g->values().index_select(0, pos), at::zeros({}, g->values().options()));
}

Tensor softmax_backward(const Tensor& grad_output, const Tensor& output, int64_t dim, bool log) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  dim = checked_dim(output, dim, op);
  const Tensor out = output.coalesce();
  const SparseTensorImpl* impl = get_sparse_impl(out);
  TORCH_CHECK(grad_output.sizes().equals(output.sizes()), op, ": expected grad_output of size ", output.sizes(),
              ", got ", grad_output.sizes());
  check_same_device(op, grad_output, {&output});
  if (output.is_meta()) return make_sparse_coo(output.sizes(), impl->indices().clone(), at::empty_like(impl->values()), true);
  const Tensor g = grad_values_at(grad_output, out).to(out.scalar_type());
  const Tensor& y = impl->values();
  if (impl->nnz() == 0) return make_sparse_coo(output.sizes(), impl->indices().clone(), y.clone(), true);
  const Lines lines = lines_of(out, dim);
  const Tensor grad_in = log ? g - y.exp() * line_sum(g, lines) : y * (g - line_sum(g * y, lines));
  return make_sparse_coo(output.sizes(), impl->indices().clone(), grad_in, true);
}

}  // namespace

Tensor softmax_sparse(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_forward(self, dim, half_to_float, false);
}
Tensor log_softmax_sparse(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_forward(self, dim, half_to_float, true);
}
Tensor softmax_backward_sparse(const Tensor& grad_output, const Tensor& output, int64_t dim, const Tensor&) {
  return softmax_backward(grad_output, output, dim, false);
}
Tensor log_softmax_backward_sparse(const Tensor& grad_output, const Tensor& output, int64_t dim, const Tensor&) {
  return softmax_backward(grad_output, output, dim, true);
}

// The dtype= forms: the input converted first, as torch does on CPU.
Tensor _sparse_softmax_int(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  return at::_sparse_softmax(dtype ? self.to(*dtype) : self, dim, false);
}
Tensor _sparse_log_softmax_int(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  return at::_sparse_log_softmax(dtype ? self.to(*dtype) : self, dim, false);
}

}  // namespace at::inline tessera::native
