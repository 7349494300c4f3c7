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

  // The weight in the layouts oneDNN primitives chose, one copy per layout (a matmul's may
  // depend on the batch size): onednn/Int8Common.cpp makes and finds them.
  struct Blocked;
  std::vector<std::shared_ptr<const Blocked>> blocked() const;
  void add_blocked(std::shared_ptr<const Blocked> blocked) const;

 private:
  Tensor weight_;
  std::vector<float> inverse_scales_;
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const Blocked>> blocked_;
};

// prepack's checks of a weight and bias, with torch's words where torch has any (`op`
// names the operator): qint8, `dims` dimensions, none of them empty but the output
// channels, per-tensor or per-channel affine along axis 0 with zero points 0 (oneDNN's int8
// weights are symmetric; `zero_point_error` is the operator's message, to which the
// offending zero point is appended when `name_zero_point`), a float32 bias of one element per
// output channel on the weight's device.
TORCH_API void check_packed_weight(const Tensor& weight, const std::optional<Tensor>& bias, int64_t dims,
                                   const char* op, const char* zero_point_error, bool name_zero_point);

// What running x through a packed weight needs besides shapes: a real weight for a real
// input (a weight packed on the meta device serves meta inputs only) and, for a quantized
// result, a positive finite output scale.
TORCH_API void check_packed_run(const Tensor& x, const PackedWeight& weight, std::optional<double> out_scale,
                                const char* op);

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
