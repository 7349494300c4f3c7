// Writing a source into chosen positions of a tensor: the functional view scatters
// (slice_scatter, select_scatter, diagonal_scatter: self with src written into a view of a
// copy), put / put_ (by flat index, optionally accumulating) and masked_scatter(_) (the
// positions a mask selects, filled from the source in order). Written over copy_ and
// index_put_, so autograd and every dtype come from those.
#include <aten/core/TensorOperators.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

namespace at::inline tessera::native {

namespace {

template <typename View>
Tensor scatter_into_view(const Tensor& self, const Tensor& src, View view) {
  Tensor out = self.clone();
  Tensor slot = view(out);
  TORCH_CHECK(slot.sizes() == src.sizes(), "expected src to have a size equal to the slice of self. src size = ",
              src.sizes(), ", slice size = ", slot.sizes());
  slot.copy_(src);
  return out;
}

}  // namespace

Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  return scatter_into_view(self, src, [&](const Tensor& t) {
    return at::slice(t, dim, start.value_or(0), end.value_or(std::numeric_limits<int64_t>::max()), step);
  });
}

Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  return scatter_into_view(self, src, [&](const Tensor& t) { return t.select(dim, index); });
}

Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1, int64_t dim2) {
  return scatter_into_view(self, src, [&](const Tensor& t) { return t.diagonal(offset, dim1, dim2); });
}

// self.flatten()[index] = source (+= with accumulate), indices wrapping from the end.
Tensor& put_(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  TORCH_CHECK(index.scalar_type() == c10::kLong, "put_(): Expected a long tensor for index, but got ",
              index.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "put_(): self and source expected to have the same dtype, "
              "but got self.dtype = ", self.scalar_type(), " and source.dtype = ", source.scalar_type());
  TORCH_CHECK_INDEX(source.numel() == index.numel(), "put_(): Expected source and index to have the same number of "
                    "elements, but got source.numel() = ", source.numel(), ", index.numel() = ", index.numel());
  TORCH_CHECK_INDEX(self.numel() > 0 || index.numel() == 0, "put_(): Tried to put elements into an empty tensor");
  TORCH_CHECK(self.scalar_type() != c10::kComplexHalf, "\"take_put_cpu\" not implemented for 'ComplexHalf'");
  if (index.numel() == 0) return self;
  if (!index.is_meta()) {
    const Tensor flat = index.reshape({-1});
    const int64_t n = self.numel();
    const int64_t low = flat.min().item().toLong(), high = flat.max().item().toLong();
    const int64_t bad = low < -n ? low : high;
    TORCH_CHECK_INDEX(low >= -n && high < n, "out of range: tried to access index ", bad, " on a tensor of ", n,
                      " elements.");
  }
  const Tensor positions = at::remainder(index.reshape({-1}), self.numel());
  if (self.is_contiguous()) {
    self.view({-1}).index_put_({positions}, source.reshape({-1}), accumulate);
  } else {
    Tensor dense = self.contiguous();
    dense.view({-1}).index_put_({positions}, source.reshape({-1}), accumulate);
    self.copy_(dense);
  }
  return self;
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  Tensor out = self.clone();
  return put_(out, index, source, accumulate);
}

// The positions where mask (broadcast to self) is true take source's first elements in order.
Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  TORCH_CHECK(mask.scalar_type() == c10::kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "masked_scatter: expected self and source to have same "
              "dtypes but got", self.scalar_type(), " and ", source.scalar_type());
  const Tensor full_mask = mask.expand(self.sizes());
  const int64_t count = full_mask.sum().item().toLong();
  TORCH_CHECK(source.numel() >= count, "Number of elements of source < number of ones in mask");
  self.index_put_({full_mask}, source.reshape({-1}).narrow(0, 0, count));
  return self;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const auto sizes = infer_size(self.sizes(), mask.sizes());
  Tensor out = self.expand(sizes).clone();
  return masked_scatter_(out, mask, source);
}

// src written at the storage positions the as_strided view would read, counting them in a
// copy of self laid out as self is (dense): the copy is taken in self's memory order and
// index_put out of place, so the gradients come from index_put and the permutations.
Tensor as_strided_scatter(const Tensor& self, const Tensor& src, IntArrayRef size, IntArrayRef stride,
                          std::optional<int64_t> storage_offset) {
  std::vector<int64_t> order(static_cast<size_t>(self.dim()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return self.stride(a) > self.stride(b); });
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  const Tensor in_memory_order = self.permute(order).contiguous();
  const Tensor positions = at::arange(self.numel(), c10::kLong, std::nullopt, self.device(), std::nullopt)
                               .as_strided(size, stride, storage_offset.value_or(0));
  TORCH_CHECK(positions.sizes() == src.sizes(), "expected src to have a size equal to the slice of self. src size = ",
              src.sizes(), ", slice size = ", positions.sizes());
  const Tensor written = in_memory_order.reshape({-1}).index_put({positions.reshape({-1})}, src.reshape({-1}));
  return written.view(in_memory_order.sizes()).permute(inverse);
}

}  // namespace at::inline tessera::native
