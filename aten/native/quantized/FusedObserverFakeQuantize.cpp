// fused_moving_avg_obs_fake_quant: one call per training step of a QAT module that observes
// the input's range (a moving average of its min and max, per tensor or per row), chooses
// qparams from it and fake-quantizes the input with them, updating the observer's state
// tensors (running_min, running_max, scale, zero_point) in place.
#include <aten/native/quantized/FakeQuantize.h>

#include <aten/native/NativeFunctions.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <limits>

namespace at::inline tessera::native {

namespace {

// running = current where running is still +-inf (the first observation), else
// running + averaging_const * (current - running), in float32 as torch computes it.
void update_moving_average(const Tensor& running, const Tensor& current, float averaging_const) {
  Tensor cur = current.to(c10::kFloat).contiguous();
  TORCH_CHECK(cur.numel() == running.numel(), "fused_moving_avg_obs_fake_quant: the observer holds ", running.numel(),
              " running values but the input has ", cur.numel(), " rows");
  float* r = running.data_ptr<float>();
  const float* c = cur.data_ptr<float>();
  for (int64_t i = 0, n = running.numel(); i < n; ++i) {
    r[i] = std::isinf(r[i]) ? c[i] : r[i] + averaging_const * (c[i] - r[i]);
  }
}

void check_observer_state(const Tensor& t, const char* name) {
  TORCH_CHECK(t.scalar_type() == c10::kFloat && t.is_contiguous() && !t.is_meta(),
              "fused_moving_avg_obs_fake_quant: ", name, " must be a contiguous float32 CPU tensor, got ",
              t.scalar_type(), " on ", t.device());
}

}  // namespace

std::tuple<Tensor, Tensor> fused_moving_avg_obs_fq_helper(const Tensor& self, const Tensor& observer_on,
                                                          const Tensor& fake_quant_on, Tensor& running_min,
                                                          Tensor& running_max, Tensor& scale, Tensor& zero_point,
                                                          double averaging_const, int64_t quant_min, int64_t quant_max,
                                                          int64_t ch_axis, bool per_row_fake_quant,
                                                          bool symmetric_quant) {
  TORCH_CHECK(ch_axis < self.dim(), "Error in fused_moving_avg_obs_fake_quant_cpu: ch_axis must be < self.dim()");
  TORCH_CHECK(!per_row_fake_quant || ch_axis == 0,
              "Per-channel FakeQuant in fused_moving_avg_obs_fake_quant is only supported on axis == 0");
  dispatch_fake_quant_types(self.scalar_type(), "fused_moving_avg_obs_fake_quant", [](auto) {});
  Tensor x = self.contiguous();
  if (per_row_fake_quant && running_min.numel() == 0) {
    // A per-row observer sizes its state on the first call.
    const int64_t rows = self.size(ch_axis);
    running_min.resize_({rows}).fill_(std::numeric_limits<float>::infinity());
    running_max.resize_({rows}).fill_(-std::numeric_limits<float>::infinity());
    scale.resize_({rows});
    zero_point.resize_({rows});
  }
  // On the meta device: the output and mask's shapes; the state keeps its values.
  if (x.is_meta()) return {at::empty_like(x), at::empty_like(x, x.options().dtype(c10::kBool))};
  check_observer_state(running_min, "running_min");
  check_observer_state(running_max, "running_max");
  TORCH_CHECK(running_min.numel() == running_max.numel() && scale.numel() == running_min.numel() &&
                  zero_point.numel() == running_min.numel(),
              "fused_moving_avg_obs_fake_quant: running_min, running_max, scale and zero_point need one element each",
              per_row_fake_quant ? " per row" : "");
  TORCH_CHECK(per_row_fake_quant || running_min.numel() == 1, "fused_moving_avg_obs_fake_quant: a per-tensor ",
              "observer holds one running min and max, got ", running_min.numel());
  if (observer_on.item().toLong() != 0 && x.numel() > 0) {
    Tensor mins, maxs;
    if (per_row_fake_quant) {
      // One row per slice along dim 0 (the only channel axis torch allows here).
      std::tie(mins, maxs) = at::aminmax(x.dim() == 2 ? x : x.flatten(1), 1);
    } else {
      std::tie(mins, maxs) = at::aminmax(x);
    }
    update_moving_average(running_min, mins, static_cast<float>(averaging_const));
    update_moving_average(running_max, maxs, static_cast<float>(averaging_const));
  }
  if (fake_quant_on.item().toLong() == 0) {
    return {x.clone(), at::ones_like(x, x.options().dtype(c10::kBool))};
  }
  const float* mins = running_min.data_ptr<float>();
  const float* maxs = running_max.data_ptr<float>();
  Tensor scales = at::empty({running_min.numel()}, TensorOptions().dtype(c10::kDouble));
  Tensor zero_points = at::empty({running_min.numel()}, TensorOptions().dtype(c10::kLong));
  for (int64_t i = 0; i < running_min.numel(); ++i) {
    const QParams q = choose_quantization_params(mins[i], maxs[i], quant_min, quant_max, symmetric_quant);
    scales.data_ptr<double>()[i] = q.scale;
    zero_points.data_ptr<int64_t>()[i] = q.zero_point;
  }
  scale.copy_(scales.view(scale.sizes()));
  zero_point.copy_(zero_points.view(zero_point.sizes()));
  if (per_row_fake_quant) {
    return native::fake_quantize_per_channel_affine_cachemask(x, scale.to(c10::kFloat), zero_point.to(c10::kInt),
                                                              ch_axis, quant_min, quant_max);
  }
  return native::fake_quantize_per_tensor_affine_cachemask_tensor_qparams(x, scale, zero_point, fake_quant_on,
                                                                          quant_min, quant_max);
}

Tensor fused_moving_avg_obs_fake_quant(const Tensor& self, const Tensor& observer_on, const Tensor& fake_quant_on,
                                       Tensor& running_min, Tensor& running_max, Tensor& scale, Tensor& zero_point,
                                       double averaging_const, int64_t quant_min, int64_t quant_max, int64_t ch_axis,
                                       bool per_row_fake_quant, bool symmetric_quant) {
  return std::get<0>(at::_fused_moving_avg_obs_fq_helper(self, observer_on, fake_quant_on, running_min, running_max,
                                                         scale, zero_point, averaging_const, quant_min, quant_max,
                                                         ch_axis, per_row_fake_quant, symmetric_quant));
}

}  // namespace at::inline tessera::native
