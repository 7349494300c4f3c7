// Fake quantization for quantization-aware training: float -> float operators that round each
// value to the quantized grid of (scale, zero_point, quant_min, quant_max) and back, with the
// straight-through gradient (1 inside the range, 0 where the value was clamped) kept as a bool
// mask, and the LSQ gradients for learnable scales and zero points (Esser et al., "Learned Step
// Size Quantization", in LearnableFakeQuantize.cpp). Shapes come first for Meta and CPU alike;
// the loops run on CPU only.
#include <aten/native/quantized/FakeQuantize.h>

#include <aten/native/NativeFunctions.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>

namespace at::inline tessera::native {

namespace {

// Note [Fake quantization arithmetic]: torch 1.13 computes a float or half element in float32,
// qval = int64(zero_point + nearbyint(x * (1.0f / scale))) with x86's conversion of NaN and
// out-of-range values to INT64_MIN (so NaN and +-inf land on quant_min), then clamps qval; a
// double element it computes in double and clamps before converting (so +inf lands on quant_max
// and NaN on quant_min). The output is (clamped - zero_point) * scale in double, rounded to the
// element type; the mask says whether qval was inside [quant_min, quant_max]. Matching this
// is what lets the outputs and masks equal torch's exactly.
struct Grid {
  int64_t quant_min, quant_max;
};

// One element: the fake-quantized value and whether it was inside the range. zero_point is an
// integer, or a float for per-channel float zero points: then qval = lrintf(x / scale + zp),
// the sum rounded to float32 for every element type (so double input, too, saturates to
// quant_min past int64), as torch computes it.
template <typename T, typename ZeroPoint>
inline T fake_quantize_one(T x, float scale, ZeroPoint zero_point, Grid g, bool& in_range) {
  const float inv_scale = 1.0f / scale;
  int64_t q;
  if constexpr (std::is_same_v<T, double> && !std::is_same_v<ZeroPoint, float>) {
    const double qf = static_cast<double>(zero_point) + std::nearbyint(x * inv_scale);
    in_range = g.quant_min <= qf && qf <= g.quant_max;
    q = static_cast<int64_t>(std::fmin(std::fmax(qf, static_cast<double>(g.quant_min)), g.quant_max));
  } else {
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const Acc xa = static_cast<Acc>(x);
    float qf;
    if constexpr (std::is_same_v<ZeroPoint, float>) {
      qf = std::nearbyint(static_cast<float>(xa * inv_scale + zero_point));
    } else {
      qf = static_cast<float>(zero_point) + std::nearbyint(static_cast<float>(xa) * inv_scale);
    }
    const int64_t qi = truncate_like_x86(qf);
    in_range = g.quant_min <= qi && qi <= g.quant_max;
    q = std::min(std::max(qi, g.quant_min), g.quant_max);
  }
  return static_cast<T>((static_cast<double>(q) - static_cast<double>(zero_point)) * static_cast<double>(scale));
}

// The per-channel qparams broadcast along `axis`: for flat element i of a contiguous tensor,
// channel (i / inner) % channels.
struct ChannelLayout {
  int64_t outer, channels, inner;
};
// One channel for per-tensor qparams (axis nullopt).
ChannelLayout channel_layout(const Tensor& self, std::optional<int64_t> axis) {
  if (!axis) return {1, 1, self.numel()};
  int64_t inner = 1;
  for (int64_t d = *axis + 1; d < self.dim(); ++d) inner *= self.size(d);
  const int64_t channels = self.size(*axis);
  return {channels * inner == 0 ? 0 : self.numel() / (channels * inner), channels, inner};
}

template <typename T, typename ZeroPoint>
void fake_quantize_loop(const Tensor& x, const Tensor& out, const Tensor& mask, const float* scales,
                        const ZeroPoint* zero_points, const ChannelLayout& l, Grid g) {
  const T* in = static_cast<const T*>(x.data_ptr());
  T* o = static_cast<T*>(out.data_ptr());
  bool* m = mask.data_ptr<bool>();
  int64_t i = 0;
  for (int64_t a = 0; a < l.outer; ++a) {
    for (int64_t c = 0; c < l.channels; ++c) {
      const float scale = scales[c];
      const ZeroPoint zp = zero_points[c];
      for (int64_t k = 0; k < l.inner; ++k, ++i) o[i] = fake_quantize_one(in[i], scale, zp, g, m[i]);
    }
  }
}

// output and mask of fake quantization with qparams per channel along axis, or one pair for
// the tensor (axis nullopt).
std::tuple<Tensor, Tensor> fake_quantize_with(const Tensor& self, const Tensor& scales, const Tensor& zero_points,
                                              std::optional<int64_t> axis, Grid g, const char* op) {
  check_qparams_have_values(self, {scales, zero_points}, op);
  Tensor x = self.contiguous();
  Tensor out = at::empty_like(x, x.options(), MemoryFormat::Contiguous);
  Tensor mask = at::empty_like(x, x.options().dtype(c10::kBool), MemoryFormat::Contiguous);
  dispatch_fake_quant_types(self.scalar_type(), op, [&](auto tag) {
    using T = decltype(tag);
    if (x.is_meta()) return;
    const ChannelLayout l = channel_layout(x, axis);
    Tensor s = scales.to(c10::kFloat).contiguous();
    TORCH_INTERNAL_ASSERT(s.numel() == l.channels && zero_points.numel() == l.channels, op, ": ", s.numel(),
                          " qparams for ", l.channels, " channels");
    if (c10::isFloatingType(zero_points.scalar_type())) {
      Tensor z = zero_points.to(c10::kFloat).contiguous();
      fake_quantize_loop<T, float>(x, out, mask, s.data_ptr<float>(), z.data_ptr<float>(), l, g);
    } else {
      Tensor z = zero_points.to(c10::kLong).contiguous();
      fake_quantize_loop<T, int64_t>(x, out, mask, s.data_ptr<float>(), z.data_ptr<int64_t>(), l, g);
    }
  });
  return {out, mask};
}

std::tuple<Tensor, Tensor> fake_quantize_per_tensor(const Tensor& self, float scale, int64_t zero_point, Grid g) {
  Tensor s = at::full({1}, static_cast<double>(scale), TensorOptions().dtype(c10::kFloat));
  Tensor z = at::full({1}, zero_point, TensorOptions().dtype(c10::kLong));
  return fake_quantize_with(self, s, z, std::nullopt, g, "fake_quantize_tensor_cachemask_kernel_type_handling");
}

}  // namespace

// ---- straight-through fake quantization

std::tuple<Tensor, Tensor> fake_quantize_per_tensor_affine_cachemask(const Tensor& self, double scale,
                                                                     int64_t zero_point, int64_t quant_min,
                                                                     int64_t quant_max) {
  check_quant_range(quant_min, quant_max);
  TORCH_CHECK(zero_point >= quant_min && zero_point <= quant_max,
              "`zero_point` must be between `quant_min` and `quant_max`.");
  return fake_quantize_per_tensor(self, static_cast<float>(scale), zero_point, {quant_min, quant_max});
}

// The qparams as one-element tensors (what observers hold); fake_quant_enabled == 0 passes the
// input through with an all-true mask. torch reads the zero point with toInt (truncating).
std::tuple<Tensor, Tensor> fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
    const Tensor& self, const Tensor& scale, const Tensor& zero_point, const Tensor& fake_quant_enabled,
    int64_t quant_min, int64_t quant_max) {
  check_quant_range(quant_min, quant_max);
  if (self.is_meta()) return fake_quantize_per_tensor(self, 1.0f, 0, {quant_min, quant_max});  // shapes only
  check_qparams_have_values(self, {scale, zero_point, fake_quant_enabled}, "fake_quantize_per_tensor_affine");
  if (fake_quant_enabled.item().toLong() == 0) {
    dispatch_fake_quant_types(self.scalar_type(), "fake_quantize_tensor_cachemask_kernel_type_handling", [](auto) {});
    return {self.clone(MemoryFormat::Contiguous), at::ones_like(self, self.options().dtype(c10::kBool))};
  }
  return fake_quantize_per_tensor(self, scale.item().toFloat(), zero_point.item().toLong(), {quant_min, quant_max});
}

Tensor fake_quantize_per_tensor_affine(const Tensor& self, double scale, int64_t zero_point, int64_t quant_min,
                                       int64_t quant_max) {
  return std::get<0>(at::fake_quantize_per_tensor_affine_cachemask(self, scale, zero_point, quant_min, quant_max));
}

Tensor fake_quantize_per_tensor_affine_tensor_qparams(const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                                                      int64_t quant_min, int64_t quant_max) {
  Tensor enabled = at::ones({1}, TensorOptions().dtype(c10::kLong));
  return std::get<0>(at::_fake_quantize_per_tensor_affine_cachemask_tensor_qparams(self, scale, zero_point, enabled,
                                                                                   quant_min, quant_max));
}

Tensor fake_quantize_per_tensor_affine_cachemask_backward(const Tensor& grad, const Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == c10::kBool, "fake_quantize_per_tensor_affine_cachemask_backward: the mask must be ",
              "a bool tensor, got ", mask.scalar_type());
  TORCH_CHECK(mask.numel() == grad.numel(), "`mask` and `dY` are not the same size: `mask` is size ", mask.numel(),
              " and `dY` is size ", grad.numel());
  if (grad.numel() <= 0) return grad;
  return at::mul(grad, mask);
}

Tensor fake_quantize_per_channel_affine_cachemask_backward(const Tensor& grad, const Tensor& mask) {
  return at::fake_quantize_per_tensor_affine_cachemask_backward(grad, mask);
}

static void check_per_channel(const Tensor& self, const Tensor& scale, const Tensor& zero_point, int64_t axis,
                              int64_t quant_min, int64_t quant_max) {
  TORCH_CHECK(scale.scalar_type() == c10::kFloat, "Scale must be Float, found ", scale.scalar_type());
  TORCH_CHECK(zero_point.scalar_type() == c10::kInt || zero_point.scalar_type() == c10::kFloat ||
                  zero_point.scalar_type() == c10::kHalf,
              "Zero-point must be Int32, Float or Half, found ", zero_point.scalar_type());
  TORCH_CHECK(scale.dim() == 1, "scale should be a 1-D tensor");
  TORCH_CHECK(zero_point.dim() == 1, "zero point should be a 1-D tensor");
  TORCH_CHECK(scale.numel() == zero_point.numel(), "scale and zero-point need to have the same dimensions");
  TORCH_CHECK(scale.numel() == self.size(axis),  // size() raises torch's IndexError past the dims
              "dimensions of scale and zero-point are not consistent with input tensor");
  check_quant_range(quant_min, quant_max);
  check_qparams_have_values(self, {scale, zero_point}, "fake_quantize_per_channel_affine");
  if (!c10::isFloatingType(zero_point.scalar_type()) && zero_point.numel() > 0 && !zero_point.is_meta()) {
    TORCH_CHECK(zero_point.min().item().toLong() >= quant_min && zero_point.max().item().toLong() <= quant_max,
                "`zero_point` must be between `quant_min` and `quant_max`.");
  }
  TORCH_CHECK(axis >= 0 && axis <= self.dim(), "`axis` must be between 0 and number of dimensions of input");
}

std::tuple<Tensor, Tensor> fake_quantize_per_channel_affine_cachemask(const Tensor& self, const Tensor& scale,
                                                                      const Tensor& zero_point, int64_t axis,
                                                                      int64_t quant_min, int64_t quant_max) {
  check_per_channel(self, scale, zero_point, axis, quant_min, quant_max);
  return fake_quantize_with(self, scale, zero_point, axis, {quant_min, quant_max},
                            "fake_quant_per_channel_cachemask_cpu");
}

Tensor fake_quantize_per_channel_affine(const Tensor& self, const Tensor& scale, const Tensor& zero_point, int64_t axis,
                                        int64_t quant_min, int64_t quant_max) {
  return std::get<0>(
      at::fake_quantize_per_channel_affine_cachemask(self, scale, zero_point, axis, quant_min, quant_max));
}

}  // namespace at::inline tessera::native
