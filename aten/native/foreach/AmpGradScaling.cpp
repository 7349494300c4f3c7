// The two steps of mixed-precision gradient scaling that GradScaler runs each iteration
// (current torch's CPU kernels; torch 1.13 has them for CUDA only):
// _amp_foreach_non_finite_check_and_unscale_ multiplies every grad by inv_scale and sets
// found_inf to 1 when any element is inf or NaN; _amp_update_scale_ then backs the scale
// off after an overflow, or grows it after growth_interval clean steps in a row. Both work
// in place on one-element tensors, so a step never reads a value back into Python.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <cmath>

namespace at::inline tessera::native {

namespace {

void check_one_float(const Tensor& t, const char* name) {
  TORCH_CHECK(t.numel() == 1, name, " must be a 1-element tensor.");
  TORCH_CHECK(t.scalar_type() == c10::kFloat, name, " must be a float tensor.");
}

void check_unscale_arguments(TensorList grads, const Tensor& found_inf, const Tensor& inv_scale) {
  check_one_float(inv_scale, "inv_scale");
  check_one_float(found_inf, "found_inf");
  for (size_t i = 0; i < grads.size(); ++i) {
    TORCH_CHECK(c10::isFloatingType(grads[i].scalar_type()), "_amp_foreach_non_finite_check_and_unscale_: ",
                "scaled_grads[", i, "] must be a floating point tensor, got ", c10::toString(grads[i].scalar_type()));
    TORCH_CHECK(grads[i].device() == found_inf.device() && grads[i].layout() == c10::kStrided,
                "_amp_foreach_non_finite_check_and_unscale_: scaled_grads[", i,
                "] must be a strided tensor on found_inf's device (", found_inf.device(), "), got ", grads[i].device());
  }
}

void check_update_arguments(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf) {
  TORCH_CHECK(growth_tracker.numel() == 1, "growth_tracker must be a 1-element tensor.");
  TORCH_CHECK(growth_tracker.scalar_type() == c10::kInt, "growth_tracker must be an int tensor.");
  check_one_float(scale, "current_scale");
  check_one_float(found_inf, "found_inf");
}

// Scales a contiguous grad in place (in float, or double for double grads); returns
// whether it held an inf or NaN.
template <typename T>
bool unscale_contiguous(T* data, int64_t n, float inv_scale) {
  using acc_t = opmath_t<T>;
  const acc_t inv = static_cast<acc_t>(inv_scale);
  bool non_finite = false;
  const bool scale = inv_scale != 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    const acc_t v = static_cast<acc_t>(data[i]);
    non_finite |= !std::isfinite(v);
    if (scale) data[i] = static_cast<T>(v * inv);
  }
  return non_finite;
}

}  // namespace

void _amp_foreach_non_finite_check_and_unscale_cpu_(TensorList self, Tensor& found_inf, const Tensor& inv_scale) {
  check_unscale_arguments(self, found_inf, inv_scale);
  const float inv = inv_scale.item().toFloat();
  bool non_finite = false;
  for (const Tensor& grad : self) {
    if (grad.numel() == 0) continue;
    if (grad.is_contiguous()) {
      non_finite |= dispatch_types<kFloating | kReducedFloat>(grad.scalar_type(), "_amp_foreach_non_finite_check_and_unscale_",
                                                              [&]<typename T>() {
                                                                return unscale_contiguous(grad.data_ptr<T>(), grad.numel(), inv);
                                                              });
    } else {  // a strided view: through a contiguous copy, written back
      Tensor copy = grad.contiguous();
      non_finite |= dispatch_types<kFloating | kReducedFloat>(grad.scalar_type(), "_amp_foreach_non_finite_check_and_unscale_",
                                                              [&]<typename T>() {
                                                                return unscale_contiguous(copy.data_ptr<T>(), copy.numel(), inv);
                                                              });
      const_cast<Tensor&>(grad).copy_(copy);
    }
  }
  if (non_finite) found_inf.fill_(1.0);
}

void _amp_foreach_non_finite_check_and_unscale_meta_(TensorList self, Tensor& found_inf, const Tensor& inv_scale) {
  check_unscale_arguments(self, found_inf, inv_scale);
}

Tensor& _amp_update_scale_cpu_(Tensor& self, Tensor& growth_tracker, const Tensor& found_inf,
                               double scale_growth_factor, double scale_backoff_factor, int64_t growth_interval) {
  check_update_arguments(self, growth_tracker, found_inf);
  float* scale = self.data_ptr<float>();
  int32_t* tracker = growth_tracker.data_ptr<int32_t>();
  if (*found_inf.data_ptr<float>() != 0.0f) {
    *scale = static_cast<float>(*scale * scale_backoff_factor);
    *tracker = 0;
    return self;
  }
  // A clean step: count it, and at growth_interval in a row grow the scale (unless the
  // grown scale would overflow float32).
  const int32_t successful = *tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(*scale * scale_growth_factor);
    if (std::isfinite(grown)) *scale = grown;
    *tracker = 0;
  } else {
    *tracker = successful;
  }
  return self;
}

Tensor& _amp_update_scale_meta_(Tensor& self, Tensor& growth_tracker, const Tensor& found_inf, double, double,
                                int64_t) {
  check_update_arguments(self, growth_tracker, found_inf);
  return self;
}

}  // namespace at::inline tessera::native
