// Fake quantization with learnable qparams (LSQ, Esser et al. 2019): the forward is plain fake
// quantization with the zero point rounded and clamped into the grid; the backward gives the
// input the straight-through gradient and gives scale and zero point the gradients of the
// clamped affine map, element by element, summed over everything but the channel axis.
#include <aten/native/quantized/FakeQuantize.h>

#include <aten/native/NativeFunctions.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <optional>
#include <type_traits>

namespace at::inline tessera::native {

namespace {

// Note [LSQ gradients]: as torch 1.13 computes them, in float32 for float and half (double for
// double): xq = int64(nearbyint(zero_point + x / scale)) (NaN and values past int64 become
// INT64_MIN, below the range). Inside [quant_min, quant_max]: dx = dy, dscale = dy * (xfq - x) / scale
// with xfq = (xq - zero_point) * scale, dzero_point = 0. Outside: dx = 0, dscale = dy *
// (quant_min or quant_max - zero_point), dzero_point = -dy * scale. Each is times grad_factor.
template <typename T>
void lsq_grads(const T* x, const T* dy, T* dx, T* dscale, T* dzp, int64_t outer, int64_t channels, int64_t inner,
               const float* scales, const float* zero_points, int64_t quant_min, int64_t quant_max, float grad_factor) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  int64_t i = 0;
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t c = 0; c < channels; ++c) {
      const Acc scale = scales[c], zp = zero_points[c];
      const Acc inv_scale = Acc(1) / scale;
      const Acc small = static_cast<Acc>(quant_min) - zp, big = static_cast<Acc>(quant_max) - zp;
      for (int64_t k = 0; k < inner; ++k, ++i) {
        const Acc xi = static_cast<Acc>(x[i]), g = static_cast<Acc>(dy[i]);
        const int64_t xq = truncate_like_x86(std::nearbyint(zp + xi * inv_scale));
        const bool inside = xq >= quant_min && xq <= quant_max;
        dx[i] = static_cast<T>(inside ? g : Acc(0));
        if (inside) {
          const Acc xfq = static_cast<Acc>((static_cast<Acc>(xq) - zp) * scale);
          dzp[i] = static_cast<T>(0);
          dscale[i] = static_cast<T>(g * (xfq - xi) * inv_scale * grad_factor);
        } else {
          dzp[i] = static_cast<T>(g * Acc(-1) * scale * grad_factor);
          dscale[i] = static_cast<T>((xq < quant_min ? g * small : g * big) * grad_factor);
        }
      }
    }
  }
}

void check_lsq_range(int64_t quant_min, int64_t quant_max) {
  TORCH_CHECK(quant_min <= 0 && quant_max >= 0,
              "`quant_min` should be less than or equal to `quant_max`, and the quantization range should include 0.");
}

// torch's rounding of a learnable zero point: nearbyint then clamp for the forward (and for
// per-channel backward); zero_point + 0.5 truncated for the per-tensor backward.
int64_t per_tensor_zero_point(const Tensor& zero_point, int64_t quant_min, int64_t quant_max, bool forward) {
  float zp = zero_point.reshape({-1}).select(0, 0).item().toFloat();
  zp = forward ? std::nearbyint(zp) : zp + 0.5f;
  zp = std::min(std::max(zp, static_cast<float>(quant_min)), static_cast<float>(quant_max));
  return static_cast<int64_t>(zp);
}

Tensor rounded_zero_points(const Tensor& zero_point, int64_t quant_min, int64_t quant_max) {
  return zero_point.round().clamp(quant_min, quant_max);
}

// dx, and dscale and dzero_point per element, for x viewed as (outer, channels, inner) with
// the channels along axis, or as one channel (axis nullopt: per-tensor qparams).
std::tuple<Tensor, Tensor, Tensor> lsq_backward(const Tensor& grad, const Tensor& self, const Tensor& scales,
                                                const Tensor& zero_points, std::optional<int64_t> axis,
                                                int64_t quant_min, int64_t quant_max, double grad_factor,
                                                const char* op) {
  check_qparams_have_values(self, {grad, scales, zero_points}, op);
  Tensor x = self.contiguous();
  Tensor dy = grad.to(self.scalar_type()).contiguous();
  Tensor dx = at::empty_like(x, x.options(), MemoryFormat::Contiguous);
  Tensor dscale = at::empty_like(x, x.options(), MemoryFormat::Contiguous);
  Tensor dzp = at::empty_like(x, x.options(), MemoryFormat::Contiguous);
  dispatch_fake_quant_types(self.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    if (x.is_meta()) return;
    int64_t inner = 1;
    for (int64_t d = axis.value_or(-1) + 1; d < x.dim(); ++d) inner *= x.size(d);
    const int64_t channels = axis ? x.size(*axis) : 1;
    const int64_t outer = channels * inner == 0 ? 0 : x.numel() / (channels * inner);
    Tensor s = scales.to(c10::kFloat).contiguous(), z = zero_points.to(c10::kFloat).contiguous();
    TORCH_INTERNAL_ASSERT(s.numel() == channels && z.numel() == channels, op, ": qparams for ", s.numel(), " of ",
                          channels, " channels");
    lsq_grads<T>(static_cast<const T*>(x.data_ptr()), static_cast<const T*>(dy.data_ptr()),
                 static_cast<T*>(dx.data_ptr()), static_cast<T*>(dscale.data_ptr()), static_cast<T*>(dzp.data_ptr()),
                 outer, channels, inner, s.data_ptr<float>(), z.data_ptr<float>(), quant_min, quant_max,
                 static_cast<float>(grad_factor));
  });
  return {dx, dscale, dzp};
}

}  // namespace

Tensor fake_quantize_learnable_per_tensor_affine(const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                                                 int64_t quant_min, int64_t quant_max, double grad_factor) {
  if (self.is_meta()) return at::empty_like(self);  // the qparams' values are not needed for the shape
  check_qparams_have_values(self, {scale, zero_point}, "_fake_quantize_learnable_per_tensor_affine");
  const float scale_value = scale.reshape({-1}).select(0, 0).item().toFloat();
  const int64_t zp = per_tensor_zero_point(zero_point, quant_min, quant_max, /*forward=*/true);
  return std::get<0>(native::fake_quantize_per_tensor_affine_cachemask(self, scale_value, zp, quant_min, quant_max));
}

std::tuple<Tensor, Tensor, Tensor> fake_quantize_learnable_per_tensor_affine_backward(
    const Tensor& grad, const Tensor& self, const Tensor& scale, const Tensor& zero_point, int64_t quant_min,
    int64_t quant_max, double grad_factor) {
  TORCH_CHECK(self.numel() == grad.numel(), "`X` and `dY` are not the same size");
  check_lsq_range(quant_min, quant_max);
  if (self.is_meta()) return {at::empty_like(self), at::empty_like(scale), at::empty_like(zero_point)};
  check_qparams_have_values(self, {grad, scale, zero_point}, "_fake_quantize_learnable_per_tensor_affine_backward");
  const int64_t zp = per_tensor_zero_point(zero_point, quant_min, quant_max, /*forward=*/false);
  TORCH_CHECK(zp >= quant_min && zp <= quant_max, "`zero_point` must be between `quant_min` and `quant_max`.");
  if (self.numel() <= 0) return {self, scale, zero_point};
  // torch reads element 0 of each qparam (select raises torch's IndexError for an empty one)
  Tensor s = scale.reshape({-1}).select(0, 0).reshape({1});
  Tensor z = at::full({1}, static_cast<double>(zp), TensorOptions().dtype(c10::kFloat));
  auto [dx, dscale, dzp] = lsq_backward(grad.reshape(self.sizes()), self, s, z, std::nullopt, quant_min, quant_max,
                                        grad_factor, "fake_quantize_learnable_tensor_grad_kernel_cpu");
  return {dx.view(self.sizes()), dscale.sum().reshape(scale.sizes()).to(scale.scalar_type()),
          dzp.sum().reshape(zero_point.sizes()).to(zero_point.scalar_type())};
}

Tensor fake_quantize_learnable_per_channel_affine(const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                                                  int64_t axis, int64_t quant_min, int64_t quant_max,
                                                  double grad_factor) {
  Tensor zp = rounded_zero_points(zero_point, quant_min, quant_max).to(c10::kInt);
  return std::get<0>(native::fake_quantize_per_channel_affine_cachemask(self, scale, zp, axis, quant_min, quant_max));
}

std::tuple<Tensor, Tensor, Tensor> fake_quantize_learnable_per_channel_affine_backward(
    const Tensor& grad, const Tensor& self, const Tensor& scale, const Tensor& zero_point, int64_t axis,
    int64_t quant_min, int64_t quant_max, double grad_factor) {
  TORCH_CHECK(self.sizes().equals(grad.sizes()), "`X` and `dY` are not the same size");
  check_lsq_range(quant_min, quant_max);
  TORCH_CHECK(scale.dim() == 1, "scale should be a 1-D tensor");
  TORCH_CHECK(zero_point.dim() == 1, "zero point should be a 1-D tensor");
  TORCH_CHECK(scale.numel() == zero_point.numel(), "scale and zero-point need to have the same dimensions");
  TORCH_CHECK(scale.numel() == self.size(axis),  // size() raises torch's IndexError past the dims
              "dimensions of scale and zero-point are not consistent with input tensor");
  TORCH_CHECK(axis >= 0 && axis <= self.dim(), "`axis` must be between 0 and number of dimensions of input");
  Tensor zp = rounded_zero_points(zero_point, quant_min, quant_max);
  auto [dx, dscale, dzp] = lsq_backward(grad, self, scale, zp, axis, quant_min, quant_max, grad_factor,
                                        "fake_quantize_learnable_channel_grad_kernel_cpu");
  std::vector<int64_t> others;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d != axis) others.push_back(d);
  }
  auto per_channel = [&](const Tensor& t, const Tensor& like) {
    return (others.empty() ? t : t.sum(others)).reshape(like.sizes()).to(like.scalar_type());
  };
  return {dx.view(self.sizes()), per_channel(dscale, scale), per_channel(dzp, zero_point)};
}

}  // namespace at::inline tessera::native
