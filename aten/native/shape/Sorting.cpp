// Ordering along one dim: sort (always stable here, which also satisfies stable=False),
// argsort and msort over it, topk, kthvalue, median and nanmedian, and their out= forms.
// Each op moves its dim last, makes the rows contiguous and runs a row kernel of
// SortingKernels.h on rows in parallel. NaN orders after every number (before, when
// descending or taking the largest), as in torch; median and kthvalue return NaN for a
// row holding one. Meta kernels give the shapes and dtypes of torch's CPU results.
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/shape/SortingKernels.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <limits>
#include <tuple>

namespace at::inline tessera::native {

namespace {

using sorting::Entry;

// self with dim d last and contiguous: rows of self.size(d) elements (a 0-dim tensor is
// one row of one).
Tensor rows_of(const Tensor& self, int64_t d) {
  if (self.dim() == 0) return self.reshape({1}).contiguous();
  return self.movedim(d, -1).contiguous();
}

// A [..., m] result computed row by row back in self's dim order, contiguous.
Tensor from_rows(const Tensor& rows, const Tensor& self, int64_t d) {
  if (self.dim() == 0) return rows.reshape({});
  return rows.movedim(-1, d).contiguous();
}

// Runs body(r, row) for every row, rows spread over threads by their length.
template <typename F>
void each_row(int64_t count, int64_t n, const F& body) {
  parallel_for(0, count, std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) body(r);
  });
}

std::tuple<Tensor, Tensor> sort_impl(const Tensor& self, int64_t dim, bool descending, bool meta) {
  const int64_t d = wrap_dim(dim, self.dim());
  // torch's sort results keep self's layout
  Tensor values = empty_like_impl(self, self.scalar_type(), self.device(), std::nullopt, std::nullopt,
                                  c10::MemoryFormat::Preserve);
  Tensor indices = empty_like_impl(self, c10::kLong, self.device(), std::nullopt, std::nullopt,
                                   c10::MemoryFormat::Preserve);
  // like torch's, the kernel (and its dtype check) runs for every input with a dim
  if (self.dim() > 0 && c10::isComplexType(self.scalar_type())) dtype_not_implemented("sort", self.scalar_type());
  if (meta || self.numel() == 0) return {values, indices};
  if (self.dim() == 0) {  // one element: itself, at index 0 (any dtype, as in torch)
    values.copy_(self);
    indices.fill_(0);
    return {values, indices};
  }
  Tensor rows = rows_of(self, d);
  const int64_t n = rows.size(-1), count = rows.numel() / n;
  Tensor v = make_empty(rows.sizes(), self.scalar_type(), self.device());
  Tensor i = make_empty(rows.sizes(), c10::kLong, self.device());
  dispatch_types<kIntegral | kBoolType | kFloating | kReducedFloat>(self.scalar_type(), "sort", [&]<typename T>() {
    const T* x = rows.data_ptr<T>();
    T* vo = v.data_ptr<T>();
    int64_t* io = i.data_ptr<int64_t>();
    each_row(count, n, [&](int64_t r) { sorting::sort_row(x + r * n, n, descending, vo + r * n, io + r * n); });
  });
  // The rows seen in self's dim order; often already self's layout (a 1-D input, or dim
  // the innermost in memory), else copied into it.
  Tensor v_view = v.movedim(-1, d), i_view = i.movedim(-1, d);
  if (v_view.strides().equals(values.strides())) return {v_view, i_view};
  values.copy_(v_view);
  indices.copy_(i_view);
  return {values, indices};
}

std::tuple<Tensor, Tensor> topk_impl(const Tensor& self, int64_t k, int64_t dim, bool largest, bool meta) {
  const int64_t d = wrap_dim(dim, self.dim());
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  TORCH_CHECK(k >= 0 && k <= n, "selected index k out of range");
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) sizes[static_cast<size_t>(d)] = k;
  Tensor values = make_empty(sizes, self.scalar_type(), self.device());
  Tensor indices = make_empty(sizes, c10::kLong, self.device());
  if (self.dim() == 0) {
    // torch gives a 0-dim input back whole (any dtype, k = 0 included)
    if (!meta) {
      values.copy_(self);
      indices.fill_(0);
    }
    return {values, indices};
  }
  if (self.scalar_type() == c10::kBool || c10::isComplexType(self.scalar_type())) {
    dtype_not_implemented("topk_cpu", self.scalar_type());
  }
  if (meta || values.numel() == 0) return {values, indices};
  Tensor rows = rows_of(self, d);
  const int64_t count = rows.numel() / n;
  std::vector<int64_t> rsizes = rows.sizes().vec();
  rsizes.back() = k;
  Tensor v = make_empty(rsizes, self.scalar_type(), self.device());
  Tensor i = make_empty(rsizes, c10::kLong, self.device());
  dispatch_types<kIntegral | kFloating | kReducedFloat>(self.scalar_type(), "topk_cpu", [&]<typename T>() {
    const T* x = rows.data_ptr<T>();
    T* vo = v.data_ptr<T>();
    int64_t* io = i.data_ptr<int64_t>();
    each_row(count, n, [&](int64_t r) { sorting::topk_row(x + r * n, n, k, largest, vo + r * k, io + r * k); });
  });
  return {from_rows(v, self, d), from_rows(i, self, d)};
}

enum class Pick { Kth, Median, NanMedian };

// One value and index per row: the k-th smallest, or a median. A row holding NaN gives
// NaN and its first NaN's index, except under nanmedian, which takes the lower median of
// the row's numbers (NaN and index 0 when it has none).
template <typename T>
Entry<T> pick_row(const T* row, int64_t n, Pick pick, int64_t k, std::vector<Entry<T>>& scratch) {
  int64_t first_nan = -1, numbers = n;
  if constexpr (!std::is_integral_v<T>) {
    numbers = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (sorting::is_nan(row[i])) {
        if (first_nan < 0) first_nan = i;
      } else {
        ++numbers;
      }
    }
  }
  if (pick == Pick::Median && first_nan >= 0) return {row[first_nan], first_nan};
  if (pick == Pick::NanMedian) {
    if (numbers == 0) return {row[0], 0};
    return sorting::kth_row(row, n, (numbers - 1) / 2, scratch);  // NaNs sort last: out of reach
  }
  if (pick == Pick::Median) return sorting::kth_row(row, n, (n - 1) / 2, scratch);
  return sorting::kth_row(row, n, k, scratch);
}

std::tuple<Tensor, Tensor> pick_dim(const Tensor& self, int64_t dim, bool keepdim, Pick pick, int64_t k, bool meta,
                                    const char* op) {
  const int64_t d = wrap_dim(dim, self.dim());
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  TORCH_CHECK_INDEX(n > 0, op, "(): Expected reduction dim ", d, " to have non-zero size.");
  if (pick == Pick::Kth) TORCH_CHECK(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ", d);
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) {
    if (keepdim) sizes[static_cast<size_t>(d)] = 1;
    else sizes.erase(sizes.begin() + d);
  }
  Tensor values = make_empty(sizes, self.scalar_type(), self.device());
  Tensor indices = make_empty(sizes, c10::kLong, self.device());
  const char* kernel = pick == Pick::Kth ? "kthvalue_cpu" : (pick == Pick::Median ? "median_cpu" : "nanmedian_cpu");
  // torch's kthvalue skips its kernel for a 0-dim input; the medians check regardless
  const bool unsupported = self.scalar_type() == c10::kBool || c10::isComplexType(self.scalar_type());
  if (unsupported && (pick != Pick::Kth || self.dim() > 0)) dtype_not_implemented(kernel, self.scalar_type());
  if (unsupported) {
    if (!meta) {
      values.copy_(self);
      indices.fill_(0);
    }
    return {values, indices};
  }
  if (meta || values.numel() == 0) return {values, indices};
  Tensor rows = rows_of(self, d);
  const int64_t count = rows.numel() / n;
  dispatch_types<kIntegral | kFloating | kReducedFloat>(self.scalar_type(), kernel, [&]<typename T>() {
    const T* x = rows.data_ptr<T>();
    T* vo = values.data_ptr<T>();
    int64_t* io = indices.data_ptr<int64_t>();
    parallel_for(0, count, std::max<int64_t>(1, 32768 / n), [&](int64_t b, int64_t e) {
      std::vector<Entry<T>> scratch;
      for (int64_t r = b; r < e; ++r) {
        Entry<T> got = pick_row(x + r * n, n, pick, k - 1, scratch);
        vo[r] = got.value;
        io[r] = got.index;
      }
    });
  });
  return {values, indices};
}

// median() / nanmedian() over all elements: a 0-dim value; NaN for an empty float input.
// What torch returns for the median of nothing: NaN converted to the dtype the way x86
// converts it (the integer "indefinite" value, truncated for narrow types; true for bool),
// spelled out here so no undefined float -> int conversion happens.
Scalar empty_median(c10::ScalarType t) {
  switch (t) {
    case c10::kBool: return Scalar(true);
    case c10::kInt: return Scalar(int64_t{std::numeric_limits<int32_t>::min()});
    case c10::kLong: return Scalar(std::numeric_limits<int64_t>::min());
    case c10::kByte:
    case c10::kChar:
    case c10::kShort: return Scalar(int64_t{0});
    default: return Scalar(std::numeric_limits<double>::quiet_NaN());
  }
}

Tensor pick_all(const Tensor& self, Pick pick, bool meta) {
  const char* kernel = pick == Pick::Median ? "median_cpu" : "nanmedian_cpu";
  if (self.numel() == 0) {  // torch answers before its dtype check
    Tensor out = make_empty({}, self.scalar_type(), self.device());
    if (!meta) out.fill_(empty_median(self.scalar_type()));
    return out;
  }
  if (self.scalar_type() == c10::kBool || c10::isComplexType(self.scalar_type())) {
    dtype_not_implemented(kernel, self.scalar_type());
  }
  if (meta) return make_empty({}, self.scalar_type(), self.device());
  return std::get<0>(pick_dim(self.reshape({-1}), 0, false, pick, 0, false, kernel));
}

void copy_outs(const std::tuple<Tensor, Tensor>& result, Tensor& values, Tensor& indices, const char* op) {
  resize_out_sizes(values, std::get<0>(result).sizes(), op);
  resize_out_sizes(indices, std::get<1>(result).sizes(), op);
  values.copy_(std::get<0>(result));
  indices.copy_(std::get<1>(result));
}

}  // namespace

std::tuple<Tensor, Tensor> sort_stable_cpu(const Tensor& self, std::optional<bool> stable, int64_t dim, bool descending) {
  return sort_impl(self, dim, descending, false);
}
std::tuple<Tensor, Tensor> sort_stable_meta(const Tensor& self, std::optional<bool> stable, int64_t dim, bool descending) {
  return sort_impl(self, dim, descending, true);
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  return at::sort(self, std::optional<bool>(false), dim, descending);
}
std::tuple<Tensor&, Tensor&> sort_values_stable_out(const Tensor& self, std::optional<bool> stable, int64_t dim,
                                                    bool descending, Tensor& values, Tensor& indices) {
  copy_outs(at::sort(self, stable, dim, descending), values, indices, "sort");
  return {values, indices};
}
std::tuple<Tensor&, Tensor&> sort_values(const Tensor& self, int64_t dim, bool descending, Tensor& values,
                                         Tensor& indices) {
  return at::sort_out(values, indices, self, std::optional<bool>(false), dim, descending);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending) { return std::get<1>(at::sort(self, dim, descending)); }
Tensor argsort_stable(const Tensor& self, bool stable, int64_t dim, bool descending) {
  return std::get<1>(at::sort(self, std::optional<bool>(stable), dim, descending));
}
Tensor msort(const Tensor& self) { return std::get<0>(at::sort(self, 0, false)); }

std::tuple<Tensor, Tensor> topk_cpu(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  return topk_impl(self, k, dim, largest, false);
}
std::tuple<Tensor, Tensor> topk_meta(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  return topk_impl(self, k, dim, largest, true);
}
std::tuple<Tensor&, Tensor&> topk_values_out(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted,
                                             Tensor& values, Tensor& indices) {
  copy_outs(at::topk(self, k, dim, largest, sorted), values, indices, "topk");
  return {values, indices};
}

std::tuple<Tensor, Tensor> kthvalue_cpu(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  return pick_dim(self, dim, keepdim, Pick::Kth, k, false, "kthvalue");
}
std::tuple<Tensor, Tensor> kthvalue_meta(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  return pick_dim(self, dim, keepdim, Pick::Kth, k, true, "kthvalue");
}
std::tuple<Tensor&, Tensor&> kthvalue_values_out(const Tensor& self, int64_t k, int64_t dim, bool keepdim,
                                                 Tensor& values, Tensor& indices) {
  copy_outs(at::kthvalue(self, k, dim, keepdim), values, indices, "kthvalue");
  return {values, indices};
}

Tensor median_cpu(const Tensor& self) { return pick_all(self, Pick::Median, false); }
Tensor median_meta(const Tensor& self) { return pick_all(self, Pick::Median, true); }
std::tuple<Tensor, Tensor> median_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return pick_dim(self, dim, keepdim, Pick::Median, 0, false, "median");
}
std::tuple<Tensor, Tensor> median_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  return pick_dim(self, dim, keepdim, Pick::Median, 0, true, "median");
}
std::tuple<Tensor&, Tensor&> median_dim_values_out(const Tensor& self, int64_t dim, bool keepdim, Tensor& values,
                                                   Tensor& indices) {
  copy_outs(at::median(self, dim, keepdim), values, indices, "median");
  return {values, indices};
}

Tensor nanmedian_cpu(const Tensor& self) { return pick_all(self, Pick::NanMedian, false); }
Tensor nanmedian_meta(const Tensor& self) { return pick_all(self, Pick::NanMedian, true); }
std::tuple<Tensor, Tensor> nanmedian_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return pick_dim(self, dim, keepdim, Pick::NanMedian, 0, false, "nanmedian");
}
std::tuple<Tensor, Tensor> nanmedian_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  return pick_dim(self, dim, keepdim, Pick::NanMedian, 0, true, "nanmedian");
}
std::tuple<Tensor&, Tensor&> nanmedian_dim_values_out(const Tensor& self, int64_t dim, bool keepdim, Tensor& values,
                                                      Tensor& indices) {
  copy_outs(at::nanmedian(self, dim, keepdim), values, indices, "nanmedian");
  return {values, indices};
}

}  // namespace at::inline tessera::native
