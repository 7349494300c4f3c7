// Building tensors from lists of tensors and index patterns: meshgrid, cartesian_prod,
// combinations, block_diag, concat / concatenate (cat's other names) and take_along_dim.
// All are written over views, cat, copies into slices and gather, so autograd and Meta come
// from those; the checks and messages are torch's.
#include <aten/core/TensorOperators.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace at::inline tessera::native {

std::vector<Tensor> meshgrid_indexing(TensorList tensors, std::string_view indexing) {
  TORCH_CHECK(indexing == "ij" || indexing == "xy", "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
              "received: ", indexing);
  const int64_t n = static_cast<int64_t>(tensors.size());
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK(tensors[i].dim() <= 1, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ",
                tensors[i].sizes());
    if (i > 0) {
      TORCH_CHECK(tensors[i].scalar_type() == tensors[0].scalar_type(),
                  "meshgrid expects all tensors to have the same dtype");
      TORCH_CHECK(tensors[i].device() == tensors[0].device(), "meshgrid expects all tensors to have the same device");
    }
  }
  // "xy" is "ij" with the first two inputs (and outputs) swapped.
  std::vector<Tensor> inputs(tensors.begin(), tensors.end());
  const bool swap = indexing == "xy" && n >= 2;
  if (swap) std::swap(inputs[0], inputs[1]);
  std::vector<int64_t> sizes;
  for (const Tensor& t : inputs) sizes.push_back(t.numel());
  std::vector<Tensor> grids;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> shape(n, 1);
    shape[i] = -1;
    grids.push_back(inputs[i].view(shape).expand(sizes));
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}

std::vector<Tensor> meshgrid(TensorList tensors) { return meshgrid_indexing(tensors, "ij"); }

Tensor cartesian_prod(TensorList tensors) {
  for (const Tensor& t : tensors) {
    TORCH_CHECK(t.dim() == 1, "Expect a 1D vector, but got shape ", t.sizes());
  }
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> columns;
  for (const Tensor& g : meshgrid_indexing(tensors, "ij")) columns.push_back(g.flatten());
  return at::stack(columns, 1);
}

// The r-element combinations of a 1-D tensor's elements in lexicographic order of their
// positions (with_replacement: positions may repeat), one per row.
Tensor combinations(const Tensor& self, int64_t r, bool with_replacement) {
  TORCH_CHECK(self.dim() == 1, "Expect a 1D vector, but got shape ", self.sizes());
  TORCH_CHECK(r >= 0, "Expect a non-negative number, but got ", r);
  if (r == 0) return at::empty({0}, TensorOptions().dtype(self.scalar_type()).device(self.device()));
  const int64_t n = self.size(0);
  std::vector<std::vector<int64_t>> columns(static_cast<size_t>(r));
  std::vector<int64_t> pick(static_cast<size_t>(r), 0);
  if (!with_replacement) {
    for (int64_t j = 0; j < r; ++j) pick[j] = j;
  }
  const bool any = with_replacement ? n > 0 : r <= n;
  while (any) {
    for (int64_t j = 0; j < r; ++j) columns[j].push_back(pick[j]);
    // advance the rightmost position that can still move
    int64_t j = r - 1;
    while (j >= 0 && pick[j] == (with_replacement ? n - 1 : n - r + j)) --j;
    if (j < 0) break;
    ++pick[j];
    for (int64_t k = j + 1; k < r; ++k) pick[k] = with_replacement ? pick[j] : pick[k - 1] + 1;
  }
  if (self.is_meta()) {
    return at::empty({static_cast<int64_t>(columns[0].size()), r},
                     TensorOptions().dtype(self.scalar_type()).device(self.device()));
  }
  std::vector<Tensor> picked;
  for (const auto& column : columns) {
    Tensor index = at::empty({static_cast<int64_t>(column.size())}, TensorOptions().dtype(c10::kLong));
    std::copy(column.begin(), column.end(), index.data_ptr<int64_t>());
    picked.push_back(self.index_select(0, index));
  }
  return at::stack(picked, 1);
}

// A matrix with the inputs (0-D as 1 x 1, 1-D as one row) down its diagonal, zeros elsewhere.
Tensor block_diag(TensorList tensors) {
  c10::ScalarType dtype = tensors.empty() ? c10::kFloat : tensors[0].scalar_type();
  int64_t rows = 0, cols = 0;
  std::vector<Tensor> blocks;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TORCH_CHECK(t.dim() <= 2, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input ", i, " has ",
                t.dim(), " dimensions");
    if (i > 0) dtype = c10::promoteTypes(dtype, t.scalar_type());
    blocks.push_back(t.dim() == 2 ? t : t.reshape({1, -1}));
    rows += blocks.back().size(0);
    cols += blocks.back().size(1);
  }
  const c10::Device device = tensors.empty() ? c10::Device(c10::kCPU) : tensors[0].device();
  Tensor out = at::zeros({tensors.empty() ? 1 : rows, cols}, TensorOptions().dtype(dtype).device(device));
  int64_t r = 0, c = 0;
  for (const Tensor& b : blocks) {
    out.narrow(0, r, b.size(0)).narrow(1, c, b.size(1)).copy_(b);
    r += b.size(0), c += b.size(1);
  }
  return out;
}

Tensor concat(TensorList tensors, int64_t dim) { return at::cat(tensors, dim); }
Tensor concatenate(TensorList tensors, int64_t dim) { return at::cat(tensors, dim); }

// gather along dim with the indices broadcast against self (the dim itself excepted), or
// over the flattened tensor without a dim.
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  TORCH_CHECK(indices.scalar_type() == c10::kLong, "torch.take_along_dim(): dtype of indices should be Long but got ",
              indices.scalar_type());
  if (!dim) return self.reshape({-1}).gather(0, indices.reshape({-1}));
  TORCH_CHECK(self.dim() == indices.dim(), "torch.take_along_dim(): input and indices should have the same number of "
              "dimensions, but got ", self.dim(), " dimensions for input, and ", indices.dim(),
              " dimensions for indices");
  const int64_t d = wrap_dim(*dim, self.dim());
  std::vector<int64_t> self_sizes = self.sizes().vec(), index_sizes = indices.sizes().vec();
  self_sizes[d] = indices.size(d);
  const std::vector<int64_t> index_shape = infer_size(self_sizes, index_sizes);
  std::vector<int64_t> self_shape = index_shape;
  self_shape[d] = self.size(d);
  return self.expand(self_shape).gather(d, indices.expand(index_shape));
}

}  // namespace at::inline tessera::native
