// Reductions that also say where: max.dim / min.dim (values and indices), argmax, argmin,
// and max() / min() over all elements. The reduced dim is moved last and made contiguous,
// then each row is scanned once; the first extremum wins, and a NaN beats every number
// (the first NaN's index is reported), as in torch.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/reduce/ReduceOps.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <tuple>

namespace at::inline tessera::native {

namespace {

// Checks a dim reduction and returns (wrapped dim, result sizes).
std::pair<int64_t, std::vector<int64_t>> dim_reduction_shape(const Tensor& self, int64_t dim, bool keepdim,
                                                             const char* op) {
  int64_t d = wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(self.dim() == 0 || self.size(d) != 0, op, "(): Expected reduction dim ", d,
                    " to have non-zero size.");
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) {
    if (keepdim) sizes[static_cast<size_t>(d)] = 1;
    else sizes.erase(sizes.begin() + d);
  }
  return {d, sizes};
}

template <bool Max, typename T>
bool better(T candidate, T best) {
  using O = opmath_t<T>;
  const O c = O(candidate), b = O(best);
  if constexpr (!std::is_integral_v<O>) {
    if (b != b) return false;  // a NaN already found stays
    if (c != c) return true;
  }
  return Max ? c > b : c < b;
}

// Scans rows of `n` contiguous elements; writes the extremum and/or its index per row.
template <bool Max>
void scan_rows(const Tensor& rows, int64_t n, const Tensor& values, const Tensor& indices, const char* op) {
  const int64_t count = n == 0 ? 0 : rows.numel() / n;
  dispatch_types<kIntegral | kBoolType | kFloating | kReducedFloat>(rows.scalar_type(), op, [&]<typename T>() {
    const T* x = rows.data_ptr<T>();
    T* v = values.defined() ? values.data_ptr<T>() : nullptr;
    int64_t* idx = indices.defined() ? indices.data_ptr<int64_t>() : nullptr;
    for (int64_t r = 0; r < count; ++r) {
      const T* row = x + r * n;
      int64_t best = 0;
      for (int64_t i = 1; i < n; ++i) {
        if (better<Max>(row[i], row[best])) best = i;
      }
      if (v) v[r] = row[best];
      if (idx) idx[r] = best;
    }
  });
}

// The rows to scan: self with dim `d` last, contiguous.
Tensor rows_along(const Tensor& self, int64_t d) {
  if (self.dim() == 0) return self.reshape({1});
  return self.movedim(d, -1).contiguous();
}

template <bool Max>
std::tuple<Tensor, Tensor> extremum_dim(const Tensor& self, int64_t dim, bool keepdim, bool meta) {
  const char* op = Max ? "max" : "min";
  auto [d, sizes] = dim_reduction_shape(self, dim, keepdim, op);
  // Like torch's, the dtype check belongs to the kernel, which an empty result skips.
  TORCH_CHECK(self.numel() == 0 || !c10::isComplexType(self.scalar_type()), "\"", op, "_cpu\" not implemented for '",
              self.scalar_type(), "'");
  Tensor values = make_empty(sizes, self.scalar_type(), self.device());
  Tensor indices = make_empty(sizes, c10::kLong, self.device());
  if (!meta && values.numel() > 0) {
    scan_rows<Max>(rows_along(self, d), self.dim() == 0 ? 1 : self.size(d), values, indices, op);
  }
  return {values, indices};
}

template <bool Max>
Tensor arg_extremum(const Tensor& self, std::optional<int64_t> dim, bool keepdim, bool meta) {
  const char* op = Max ? "argmax" : "argmin";
  auto check_dtype = [&] {
    TORCH_CHECK(self.scalar_type() != c10::kBool && !c10::isComplexType(self.scalar_type()), "\"", op,
                "_cpu\" not implemented for '", self.scalar_type(), "'");
  };
  if (!dim) {
    TORCH_CHECK_INDEX(self.numel() != 0, op, "(): Expected reduction dim to be specified for input.numel() == 0.");
    check_dtype();
    Tensor flat = self.reshape({-1});
    Tensor out = make_empty(keepdim ? std::vector<int64_t>(static_cast<size_t>(self.dim()), 1) : std::vector<int64_t>{},
                            c10::kLong, self.device());
    if (!meta) scan_rows<Max>(flat.contiguous(), flat.numel(), Tensor(), out, op);
    return out;
  }
  auto [d, sizes] = dim_reduction_shape(self, *dim, keepdim, op);
  Tensor out = make_empty(sizes, c10::kLong, self.device());
  if (out.numel() > 0) check_dtype();
  if (!meta && out.numel() > 0) scan_rows<Max>(rows_along(self, d), self.dim() == 0 ? 1 : self.size(d), Tensor(), out, op);
  return out;
}

template <bool Max>
Tensor extremum_all(const Tensor& self, bool meta) {
  const char* op = Max ? "max" : "min";
  TORCH_CHECK(self.numel() != 0, op, "(): Expected reduction dim to be specified for input.numel() == 0. Specify the ",
              "reduction dim with the 'dim' argument.");
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "\"", Max ? "max_all" : "min_all", "\" not implemented for '",
              self.scalar_type(), "'");
  Tensor out = make_empty({}, self.scalar_type(), self.device());
  if (!meta) {
    Tensor flat = self.reshape({-1}).contiguous();
    scan_rows<Max>(flat, flat.numel(), out, Tensor(), op);
  }
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor> max_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim<true>(self, dim, keepdim, false);
}
std::tuple<Tensor, Tensor> max_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim<true>(self, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim<false>(self, dim, keepdim, false);
}
std::tuple<Tensor, Tensor> min_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim<false>(self, dim, keepdim, true);
}

Tensor max_cpu(const Tensor& self) { return extremum_all<true>(self, false); }
Tensor max_meta(const Tensor& self) { return extremum_all<true>(self, true); }
Tensor min_cpu(const Tensor& self) { return extremum_all<false>(self, false); }
Tensor min_meta(const Tensor& self) { return extremum_all<false>(self, true); }

Tensor argmax_cpu(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum<true>(self, dim, keepdim, false);
}
Tensor argmax_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum<true>(self, dim, keepdim, true);
}
Tensor argmin_cpu(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum<false>(self, dim, keepdim, false);
}
Tensor argmin_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extremum<false>(self, dim, keepdim, true);
}

std::tuple<Tensor&, Tensor&> max_dim_max(const Tensor& self, int64_t dim, bool keepdim, Tensor& max,
                                         Tensor& max_values) {
  auto [v, i] = at::max(self, dim, keepdim);
  copy_into_out(v, max, "max");
  copy_into_out(i, max_values, "max");  // (torch names the indices' out tensor max_values)
  return {max, max_values};
}
std::tuple<Tensor&, Tensor&> min_dim_min(const Tensor& self, int64_t dim, bool keepdim, Tensor& min,
                                         Tensor& min_indices) {
  auto [v, i] = at::min(self, dim, keepdim);
  copy_into_out(v, min, "min");
  copy_into_out(i, min_indices, "min");
  return {min, min_indices};
}
Tensor& argmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  return copy_into_out(at::argmax(self, dim, keepdim), out, "argmax");
}
Tensor& argmin_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  return copy_into_out(at::argmin(self, dim, keepdim), out, "argmin");
}

// max(self, other) / min(self, other) are maximum / minimum.
Tensor max_other(const Tensor& self, const Tensor& other) { return at::maximum(self, other); }
Tensor& max_out(const Tensor& self, const Tensor& other, Tensor& out) { return at::maximum_out(out, self, other); }
Tensor min_other(const Tensor& self, const Tensor& other) { return at::minimum(self, other); }
Tensor& min_out(const Tensor& self, const Tensor& other, Tensor& out) { return at::minimum_out(out, self, other); }

}  // namespace at::inline tessera::native
