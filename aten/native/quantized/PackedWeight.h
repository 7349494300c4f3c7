// A qint8 weight as the prepacked GEMM and convolution params hold it (PackedLinear.h,
// PackedConv.h): the tensor as given (unpack returns it), its scales inverted once the way
// torch's oneDNN engine inverts them, and oneDNN's reordered copy, made on first use.
#pragma once

#include <aten/core/Tensor.h>

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace at::inline tessera::native {

class TORCH_API PackedWeight {
 public:
  // weight: qint8, per-tensor or per-channel (axis 0) affine.
  explicit PackedWeight(Tensor weight);

  const Tensor& tensor() const { return weight_; }
  // f32(1.0 / scale) per tensor (the division in double), 1.0f / float(scale) per channel.
  const std::vector<float>& inverse_scales() const { return inverse_scales_; }

  // The weight in the layout a oneDNN primitive chose (onednn/BlockedWeight.cpp).
  struct Blocked;
  std::shared_ptr<const Blocked> blocked() const;
  void set_blocked(std::shared_ptr<const Blocked> blocked) const;

 private:
  Tensor weight_;
  std::vector<float> inverse_scales_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const Blocked> blocked_;
};

// The first nonzero weight zero point, as (channel, zero point); channel -1 for a per-tensor
// weight. oneDNN's int8 weights are symmetric: prepack refuses any.
struct NonzeroZeroPoint {
  int64_t channel, zero_point;
};
TORCH_API std::optional<NonzeroZeroPoint> nonzero_zero_point(const Tensor& weight);

// The factors the int8 GEMMs and convolutions requantize with (Note [Quantized linear
// arithmetic] in Linear.cpp): prod = f32(f32(1 / x_scale) * inverse weight scale), one or one
// per output channel, and the output scales oneDNN multiplies by: f32(f32(1 / out_scale) /
// prod) into a quantized output, f32(1 / prod) into a float one (out_scale absent).
struct RequantizeScales {
  std::vector<float> prod, output;
};
TORCH_API RequantizeScales requantize_scales(double x_scale, const PackedWeight& weight,
                                             std::optional<double> out_scale);
// bias * prod per output channel in float32 (the bias in the accumulator's units); undefined
// without a bias.
TORCH_API Tensor bias_in_accumulator_units(const std::optional<Tensor>& bias, const std::vector<float>& prod);

}  // namespace at::inline tessera::native
