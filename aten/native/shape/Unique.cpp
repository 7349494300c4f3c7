// unique (torch.unique maps onto _unique2, or unique_dim with a dim) and
// unique_consecutive: the distinct elements (or slices along a dim), with the inverse map
// and counts on request. Output is always sorted, which is also a valid answer to
// sorted=False. NaN equals nothing, so each NaN is its own entry (sorted last), as in
// current PyTorch. The output size depends on the data, so Meta raises
// NotImplementedError as torch's data-dependent ops do.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/shape/SortingKernels.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <memory>
#include <numeric>
#include <tuple>

namespace at::inline tessera::native {

namespace {

using Result = std::tuple<Tensor, Tensor, Tensor>;

[[noreturn]] void data_dependent(const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "aten::", op,
                              ": the output's shape depends on the input's values, which a meta tensor does not "
                              "have (a data-dependent operator)");
  __builtin_unreachable();
}

void check_dtype(const Tensor& self, const char* op) {
  if (c10::isComplexType(self.scalar_type())) dtype_not_implemented(op, self.scalar_type());
}

template <typename T>
bool same(T a, T b) {
  return !sorting::is_nan(a) && !sorting::is_nan(b) && opmath_t<T>(a) == opmath_t<T>(b);
}

// Distinct elements of the flattened self. `consecutive`: only runs of equal neighbours
// merge, in input order; otherwise elements are sorted first.
Result unique_flat(const Tensor& self, bool consecutive, bool return_inverse, bool return_counts, const char* op) {
  check_dtype(self, op);
  const int64_t n = self.numel();
  Tensor flat = self.reshape({-1}).contiguous();
  Tensor inverse = make_empty(return_inverse ? self.sizes() : IntArrayRef{0}, c10::kLong, self.device());
  Tensor values, counts;
  dispatch_types<kIntegral | kBoolType | kFloating | kReducedFloat>(self.scalar_type(), op, [&]<typename T>() {
    const T* x = flat.data_ptr<T>();
    // a plain array: std::vector<bool> has no data()
    std::unique_ptr<T[]> sorted(new T[static_cast<size_t>(std::max<int64_t>(n, 1))]);
    std::vector<int64_t> order(static_cast<size_t>(n));
    if (consecutive) {
      std::copy(x, x + n, sorted.get());
      std::iota(order.begin(), order.end(), int64_t{0});
    } else if (n > 0) {
      sorting::sort_row(x, n, false, sorted.get(), order.data());
    }
    std::vector<T> out;
    std::vector<int64_t> group_counts;
    int64_t* inv = return_inverse ? inverse.data_ptr<int64_t>() : nullptr;
    for (int64_t i = 0; i < n; ++i) {
      const T v = sorted[static_cast<size_t>(i)];
      if (out.empty() || !same<T>(out.back(), v)) {
        out.push_back(v);
        group_counts.push_back(0);
      }
      ++group_counts.back();
      if (inv) inv[order[static_cast<size_t>(i)]] = static_cast<int64_t>(out.size()) - 1;
    }
    const int64_t m = static_cast<int64_t>(out.size());
    values = make_empty({m}, self.scalar_type(), self.device());
    std::copy(out.begin(), out.end(), values.data_ptr<T>());
    counts = make_empty({return_counts ? m : 0}, c10::kLong, self.device());
    if (return_counts) std::copy(group_counts.begin(), group_counts.end(), counts.data_ptr<int64_t>());
  });
  return {values, inverse, counts};
}

// Distinct slices along `dim`: self as [size(dim), rest] rows compared lexicographically.
Result unique_slices(const Tensor& self, int64_t dim, bool consecutive, bool return_inverse, bool return_counts,
                     const char* op) {
  check_dtype(self, op);
  const int64_t d = wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(self.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  const int64_t n = self.size(d);
  Tensor moved = self.movedim(d, 0).contiguous();
  const int64_t width = n == 0 ? 0 : moved.numel() / n;
  if (self.numel() == 0 && n > 0) {
    // torch: slices of no elements are all equal, but it refuses when another dim is 0
    TORCH_CHECK(false, "Number of zero sized dimensions is more than one, so unique cannot be applied ");
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::vector<int64_t> firsts, group_counts;
  Tensor inverse = make_empty({return_inverse ? n : 0}, c10::kLong, self.device());
  dispatch_types<kIntegral | kBoolType | kFloating | kReducedFloat>(self.scalar_type(), op, [&]<typename T>() {
    const T* x = moved.data_ptr<T>();
    auto row = [&](int64_t r) { return x + r * width; };
    if (!consecutive) {
      // lexicographic, NaN last per element: a strict weak ordering of slices
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const T *ra = row(a), *rb = row(b);
        for (int64_t j = 0; j < width; ++j) {
          if (sorting::less_nan_last(ra[j], rb[j])) return true;
          if (sorting::less_nan_last(rb[j], ra[j])) return false;
        }
        return false;
      });
    }
    auto equal_rows = [&](int64_t a, int64_t b) {
      for (int64_t j = 0; j < width; ++j) {
        if (!same<T>(row(a)[j], row(b)[j])) return false;
      }
      return true;
    };
    int64_t* inv = return_inverse ? inverse.data_ptr<int64_t>() : nullptr;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = order[static_cast<size_t>(i)];
      if (firsts.empty() || !equal_rows(firsts.back(), r)) {
        firsts.push_back(r);
        group_counts.push_back(0);
      }
      ++group_counts.back();
      if (inv) inv[r] = static_cast<int64_t>(firsts.size()) - 1;
    }
  });
  const int64_t m = static_cast<int64_t>(firsts.size());
  Tensor index = make_empty({m}, c10::kLong, self.device());
  std::copy(firsts.begin(), firsts.end(), index.data_ptr<int64_t>());
  std::vector<int64_t> out_sizes = moved.sizes().vec();
  out_sizes[0] = m;
  Tensor picked = make_empty(out_sizes, self.scalar_type(), self.device());
  for (int64_t i = 0; i < m; ++i) picked.select(0, i).copy_(moved.select(0, firsts[static_cast<size_t>(i)]));
  Tensor counts = make_empty({return_counts ? m : 0}, c10::kLong, self.device());
  if (return_counts) std::copy(group_counts.begin(), group_counts.end(), counts.data_ptr<int64_t>());
  return {picked.movedim(0, d).contiguous(), inverse, counts};
}

}  // namespace

Result unique2_cpu(const Tensor& self, bool sorted, bool return_inverse, bool return_counts) {
  return unique_flat(self, false, return_inverse, return_counts, "unique");
}
Result unique2_meta(const Tensor& self, bool sorted, bool return_inverse, bool return_counts) {
  data_dependent("_unique2");
}

Result unique_dim_cpu(const Tensor& self, int64_t dim, bool sorted, bool return_inverse, bool return_counts) {
  return unique_slices(self, dim, false, return_inverse, return_counts, "unique_dim");
}
Result unique_dim_meta(const Tensor& self, int64_t dim, bool sorted, bool return_inverse, bool return_counts) {
  data_dependent("unique_dim");
}

Result unique_consecutive_cpu(const Tensor& self, bool return_inverse, bool return_counts, std::optional<int64_t> dim) {
  if (!dim) return unique_flat(self, true, return_inverse, return_counts, "unique_consecutive");
  return unique_slices(self, *dim, true, return_inverse, return_counts, "unique_consecutive");
}
Result unique_consecutive_meta(const Tensor& self, bool return_inverse, bool return_counts, std::optional<int64_t> dim) {
  data_dependent("unique_consecutive");
}

// out= forms (no Python binding in torch either): computed, then each out resized and
// filled in turn.
static void copy_into(const Tensor& result, Tensor& out, const char* op) {
  resize_out_sizes(out, result.sizes(), op);
  out.copy_(result);
}

std::tuple<Tensor&, Tensor&, Tensor&> unique2_out(const Tensor& self, bool sorted, bool return_inverse,
                                                  bool return_counts, Tensor& out0, Tensor& out1, Tensor& out2) {
  auto [values, inverse, counts] = at::_unique2(self, sorted, return_inverse, return_counts);
  copy_into(values, out0, "_unique2");
  copy_into(inverse, out1, "_unique2");
  copy_into(counts, out2, "_unique2");
  return {out0, out1, out2};
}

// The older _unique: _unique2 without counts.
std::tuple<Tensor, Tensor> _unique(const Tensor& self, bool sorted, bool return_inverse) {
  auto [values, inverse, counts] = at::_unique2(self, sorted, return_inverse, false);
  return {values, inverse};
}
std::tuple<Tensor&, Tensor&> unique_out(const Tensor& self, bool sorted, bool return_inverse, Tensor& out0,
                                        Tensor& out1) {
  auto [values, inverse] = at::_unique(self, sorted, return_inverse);
  copy_into(values, out0, "_unique");
  copy_into(inverse, out1, "_unique");
  return {out0, out1};
}

std::tuple<Tensor&, Tensor&, Tensor&> unique_dim_out(const Tensor& self, int64_t dim, bool sorted, bool return_inverse,
                                                     bool return_counts, Tensor& out0, Tensor& out1, Tensor& out2) {
  auto [values, inverse, counts] = at::unique_dim(self, dim, sorted, return_inverse, return_counts);
  copy_into(values, out0, "unique_dim");
  copy_into(inverse, out1, "unique_dim");
  copy_into(counts, out2, "unique_dim");
  return {out0, out1, out2};
}

std::tuple<Tensor&, Tensor&, Tensor&> unique_consecutive_out(const Tensor& self, bool return_inverse,
                                                             bool return_counts, std::optional<int64_t> dim,
                                                             Tensor& out0, Tensor& out1, Tensor& out2) {
  auto [values, inverse, counts] = at::unique_consecutive(self, return_inverse, return_counts, dim);
  copy_into(values, out0, "unique_consecutive");
  copy_into(inverse, out1, "unique_consecutive");
  copy_into(counts, out2, "unique_consecutive");
  return {out0, out1, out2};
}

}  // namespace at::inline tessera::native
