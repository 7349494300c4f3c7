// Second moments: var, std, var_mean, std_mean (unbiased= and correction= forms), and
// nanmean. One kernel serves them all (var_mean_stub over the reduced dims laid out as
// lines, cpu/MomentsKernel.cpp); Meta gets the same shapes and dtypes without running it.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/reduce/ReduceOps.h>
#include <aten/ops/Functions.h>

#include <tuple>

namespace at::inline tessera::native {

namespace {

std::optional<int64_t> correction_of(bool unbiased) { return unbiased ? 1 : 0; }

// (variance or standard deviation, mean) of self over `dim`, in the results' dtypes:
// the real counterpart of self's dtype for var/std, self's dtype for the mean.
std::tuple<Tensor, Tensor> moments(const Tensor& self, std::optional<IntArrayRef> dim,
                                   std::optional<int64_t> correction, bool keepdim, bool take_sqrt) {
  const c10::ScalarType in = self.scalar_type();
  TORCH_CHECK(c10::isFloatingType(in) || c10::isComplexType(in),
              "std and var only support floating point and complex dtypes");
  // torch computes complex32's variance but not its root
  TORCH_CHECK(!(take_sqrt && in == c10::kComplexHalf), "\"sqrt_vml_cpu\" not implemented for 'Half'");
  const std::vector<bool> mask = reduction_mask(dim, self.dim());
  const std::vector<int64_t> sizes = reduced_sizes(self.sizes(), mask, keepdim);
  const c10::ScalarType real = c10::toRealValueType(in);
  Tensor var = make_empty(sizes, real, self.device());
  Tensor mean = make_empty(sizes, in, self.device());
  if (self.is_meta() || var.numel() == 0) return {var, mean};

  // Half and BFloat16 are computed in float, as torch does; complex32 in complex64.
  const c10::ScalarType compute = in == c10::kHalf || in == c10::kBFloat16 ? c10::kFloat
                                  : in == c10::kComplexHalf               ? c10::kComplexFloat
                                                                          : in;
  DimBlocks blocks = blocks_along(self.scalar_type() == compute ? self : self.to(compute), mask);
  if (!blocks.data.is_contiguous()) blocks.data = blocks.data.contiguous();
  Tensor v = compute == in ? var : make_empty(sizes, c10::toRealValueType(compute), self.device());
  Tensor m = compute == in ? mean : make_empty(sizes, compute, self.device());
  var_mean_stub(c10::DeviceType::CPU, blocks, static_cast<double>(correction.value_or(1)), take_sqrt, v, m);
  if (!v.is_same(var)) var.copy_(v);
  if (!m.is_same(mean)) mean.copy_(m);
  return {var, mean};
}


}  // namespace

Tensor var_correction(const Tensor& self, std::optional<IntArrayRef> dim, std::optional<int64_t> correction,
                      bool keepdim) {
  return std::get<0>(moments(self, dim, correction, keepdim, false));
}
Tensor std_correction(const Tensor& self, std::optional<IntArrayRef> dim, std::optional<int64_t> correction,
                      bool keepdim) {
  return std::get<0>(moments(self, dim, correction, keepdim, true));
}
std::tuple<Tensor, Tensor> var_mean_correction(const Tensor& self, std::optional<IntArrayRef> dim,
                                               std::optional<int64_t> correction, bool keepdim) {
  return moments(self, dim, correction, keepdim, false);
}
std::tuple<Tensor, Tensor> std_mean_correction(const Tensor& self, std::optional<IntArrayRef> dim,
                                               std::optional<int64_t> correction, bool keepdim) {
  return moments(self, dim, correction, keepdim, true);
}

// ---- the unbiased= spellings and out= forms

Tensor var(const Tensor& self, bool unbiased) {
  return at::var(self, std::optional<IntArrayRef>(), correction_of(unbiased), false);
}
Tensor var_dim(const Tensor& self, std::optional<IntArrayRef> dim, bool unbiased, bool keepdim) {
  return at::var(self, dim, correction_of(unbiased), keepdim);
}
Tensor& var_out(const Tensor& self, std::optional<IntArrayRef> dim, bool unbiased, bool keepdim, Tensor& out) {
  return at::var_out(out, self, dim, correction_of(unbiased), keepdim);
}
Tensor std(const Tensor& self, bool unbiased) {
  return at::std(self, std::optional<IntArrayRef>(), correction_of(unbiased), false);
}
Tensor std_dim(const Tensor& self, std::optional<IntArrayRef> dim, bool unbiased, bool keepdim) {
  return at::std(self, dim, correction_of(unbiased), keepdim);
}
Tensor& std_out(const Tensor& self, std::optional<IntArrayRef> dim, bool unbiased, bool keepdim, Tensor& out) {
  return at::std_out(out, self, dim, correction_of(unbiased), keepdim);
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, bool unbiased) {
  return at::var_mean(self, std::optional<IntArrayRef>(), correction_of(unbiased), false);
}
std::tuple<Tensor, Tensor> var_mean_dim(const Tensor& self, std::optional<IntArrayRef> dim, bool unbiased,
                                        bool keepdim) {
  return at::var_mean(self, dim, correction_of(unbiased), keepdim);
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, bool unbiased) {
  return at::std_mean(self, std::optional<IntArrayRef>(), correction_of(unbiased), false);
}
std::tuple<Tensor, Tensor> std_mean_dim(const Tensor& self, std::optional<IntArrayRef> dim, bool unbiased,
                                        bool keepdim) {
  return at::std_mean(self, dim, correction_of(unbiased), keepdim);
}

std::tuple<Tensor&, Tensor&> var_mean_correction_out(const Tensor& self, std::optional<IntArrayRef> dim,
                                                     std::optional<int64_t> correction, bool keepdim, Tensor& out0,
                                                     Tensor& out1) {
  auto [v, m] = at::var_mean(self, dim, correction, keepdim);
  copy_into_out(v, out0, "var_mean");
  copy_into_out(m, out1, "var_mean");
  return {out0, out1};
}
std::tuple<Tensor&, Tensor&> std_mean_correction_out(const Tensor& self, std::optional<IntArrayRef> dim,
                                                     std::optional<int64_t> correction, bool keepdim, Tensor& out0,
                                                     Tensor& out1) {
  auto [s, m] = at::std_mean(self, dim, correction, keepdim);
  copy_into_out(s, out0, "std_mean");
  copy_into_out(m, out1, "std_mean");
  return {out0, out1};
}

// ---- nanmean: nansum over the count of non-NaN elements.

Tensor nanmean(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
               std::optional<c10::ScalarType> dtype) {
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()),
              "nanmean(): expected input to have floating point dtype but got ", self.scalar_type());
  Tensor count = at::sum(at::logical_not(at::isnan(self)), dim, keepdim, std::nullopt);
  return at::nansum(self, dim, keepdim, dtype).div_(count);
}
Tensor& nanmean_out(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype, Tensor& out) {
  return copy_into_out(at::nanmean(self, dim, keepdim, dtype), out, "nanmean");
}

}  // namespace at::inline tessera::native
