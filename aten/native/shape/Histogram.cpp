// Counting into bins: bincount (non-negative integers, optionally weighted) and histc
// (equal-width bins over [min, max]). bincount's length depends on the largest value, so
// its Meta kernel raises NotImplementedError; histc's length is `bins` and its Meta kernel
// gives the shape. histc bins a value by the same arithmetic as torch's, in the input's
// dtype, so values on an edge land where torch puts them.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace at::inline tessera::native {

namespace {

Tensor bincount_impl(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength, bool meta) {
  const bool weighted = weights && weights->defined();
  if (!c10::isIntegralType(self.scalar_type(), false)) dtype_not_implemented("bincount_cpu", self.scalar_type());
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  if (weighted) {
    TORCH_CHECK(weights->dim() == 1 && weights->size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
  }
  // float weights sum in float, any other weights in double; counts are int64
  const c10::ScalarType dtype =
      !weighted ? c10::kLong : (weights->scalar_type() == c10::kFloat ? c10::kFloat : c10::kDouble);
  if (meta) {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "aten::bincount: the output's length depends on the input's values, which a ",
                                "meta tensor does not have (a data-dependent operator)");
  }
  Tensor x = self.to(c10::kLong).contiguous();
  const int64_t* v = x.data_ptr<int64_t>();
  const int64_t n = x.numel();
  int64_t largest = -1;
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK(v[i] >= 0, "bincount only supports 1-d non-negative integral inputs.");
    largest = std::max(largest, v[i]);
  }
  TORCH_CHECK(largest < std::numeric_limits<int64_t>::max(), "bincount: the largest value leaves no room for its bin");
  const int64_t length = std::max(largest + 1, minlength);
  Tensor out = at::zeros({length}, dtype);
  if (!weighted) {
    int64_t* o = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) ++o[v[i]];
    return out;
  }
  Tensor w = weights->to(dtype).contiguous();
  dispatch_types<kFloating>(dtype, "bincount_cpu", [&]<typename T>() {
    const T* wv = w.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) o[v[i]] += wv[i];
  });
  return out;
}

Tensor histc_impl(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max, bool meta) {
  const c10::ScalarType dtype = self.scalar_type();
  if (!c10::isFloatingType(dtype)) dtype_not_implemented("histogram_cpu", dtype);
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  TORCH_CHECK(bins < std::numeric_limits<int64_t>::max(), "torch.histc: ", bins, " bins are too many");
  Tensor out = make_empty({bins}, dtype, self.device());
  if (meta) return out;
  if (dtype == c10::kHalf) {
    // torch 1.13 has no Half histc: counted in float as current PyTorch does, stored back
    out.copy_(histc_impl(self.to(c10::kFloat), bins, min, max, false));
    return out;
  }
  out.zero_();
  double lo = min.toDouble(), hi = max.toDouble();
  Tensor x = self.reshape({-1}).contiguous();
  if (lo == hi && x.numel() > 0) {
    // no range given: the data's own, computed in the input's dtype as torch does
    lo = at::min(x).item().toDouble();
    hi = at::max(x).item().toDouble();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(!(lo > hi), "torch.histc: max must be larger than min");
  TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  // The outer edges as torch makes them (linspace in the input's dtype); a value's bin is
  // (value - left) / (right - left) * bins in the input's dtype, as torch's histc computes
  // it (no search against the inner edges), the right edge in the last bin.
  Tensor edges = at::linspace(lo, hi, bins + 1, dtype).contiguous();
  dispatch_types<kFloating | kReducedFloat>(dtype, "histogram_cpu", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* v = x.data_ptr<T>();
    const T* e = edges.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const O left = O(e[0]), right = O(e[bins]);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const O val = O(v[i]);
      if (!(val >= left && val <= right)) continue;  // outside, or NaN
      // (value - left) / (right - left) * bins, each step rounded to T as torch's does
      const O p = O(T(O(T(O(T(val - left)) / O(T(right - left)))) * O(T(static_cast<O>(bins)))));
      // compared in O first: casting a value past int64's range would be undefined
      const int64_t pos = p >= O(bins - 1) ? bins - 1 : std::max<int64_t>(0, static_cast<int64_t>(p));
      o[pos] = T(O(o[pos]) + O(1));
    }
  });
  return out;
}

}  // namespace

Tensor bincount_cpu(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  return bincount_impl(self, weights, minlength, false);
}
Tensor bincount_meta(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  return bincount_impl(self, weights, minlength, true);
}

Tensor histc_cpu(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  return histc_impl(self, bins, min, max, false);
}
Tensor histc_meta(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  return histc_impl(self, bins, min, max, true);
}

}  // namespace at::inline tessera::native
