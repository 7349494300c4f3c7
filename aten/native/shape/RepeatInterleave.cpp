// repeat_interleave: element i repeated repeats[i] times. The counts-to-indices form
// (repeat_interleave.Tensor) is the one kernel; with a self, an int count is a broadcast
// view flattened (no kernel at all), and a tensor of counts an index_select by it, so
// autograd and Meta come from those operators.
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <vector>

namespace at::inline tessera::native {

namespace {

std::vector<int64_t> checked_counts(const Tensor& repeats) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeats.scalar_type() == c10::kLong || repeats.scalar_type() == c10::kInt,
              "repeats has to be Long or Int tensor");
  const Tensor counts = repeats.to(c10::kLong).contiguous();
  std::vector<int64_t> out(counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel());
  for (int64_t c : out) TORCH_CHECK(c >= 0, "repeats can not be negative");
  return out;
}

}  // namespace

// [0, 0, 1, 2, 2, 2] from [2, 1, 3].
Tensor repeat_interleave_cpu(const Tensor& repeats, std::optional<int64_t> output_size) {
  const std::vector<int64_t> counts = checked_counts(repeats);
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  TORCH_CHECK(!output_size || *output_size == total, "allocated size does not match required size");
  std::vector<int64_t> indices;
  indices.reserve(static_cast<size_t>(total));
  for (size_t i = 0; i < counts.size(); ++i) indices.insert(indices.end(), static_cast<size_t>(counts[i]), static_cast<int64_t>(i));
  return tensor_from_vector(indices, repeats.device()).to(repeats.scalar_type());
}

// The counts' values decide the length: a meta tensor of counts needs output_size.
Tensor repeat_interleave_meta(const Tensor& repeats, std::optional<int64_t> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK_NOT_IMPLEMENTED(output_size.has_value(), "repeat_interleave on meta tensors needs output_size: "
                              "the result's length depends on the values of repeats");
  return at::empty({*output_size}, repeats.options());
}

Tensor repeat_interleave_self_Tensor(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                                     std::optional<int64_t> output_size) {
  const Tensor input = dim ? self : self.reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, self.dim()) : 0;
  Tensor counts = repeats;
  if (repeats.dim() == 0 || (repeats.dim() == 1 && repeats.size(0) == 1)) {
    counts = repeats.reshape({1}).expand({input.size(d)});
  }
  TORCH_CHECK(counts.dim() == 1 && counts.size(0) == input.size(d),
              "repeats must have the same size as input along dim, but got repeats.size(0) = ",
              counts.dim() == 1 ? counts.size(0) : counts.numel(), " and input.size(", d, ") = ", input.size(d));
  return input.index_select(d, at::repeat_interleave(counts, output_size));
}

Tensor repeat_interleave_self_int(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                                  std::optional<int64_t> output_size) {
  TORCH_CHECK(repeats >= 0, "repeats can not be negative");
  const Tensor input = dim ? self : self.reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, std::max<int64_t>(self.dim(), 1)) : 0;
  const Tensor x = input.dim() == 0 ? input.reshape({1}) : input;
  std::vector<int64_t> expanded = x.sizes().vec();
  expanded.insert(expanded.begin() + d + 1, repeats);
  std::vector<int64_t> result = x.sizes().vec();
  result[static_cast<size_t>(d)] *= repeats;
  TORCH_CHECK(!output_size || *output_size == result[static_cast<size_t>(d)],
              "allocated size does not match required size");
  return x.unsqueeze(d + 1).expand(expanded).reshape(result);
}

}  // namespace at::inline tessera::native
