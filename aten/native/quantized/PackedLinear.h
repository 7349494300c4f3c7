// quantized::linear's prepacked weights: the custom class LinearPackedParamsBase that
// linear_prepack returns and linear, linear_relu, linear_dynamic and linear_unpack take, as
// in torch 1.13 on its oneDNN engine.
#pragma once

#include <aten/core/CustomClass.h>
#include <aten/native/quantized/PackedWeight.h>

#include <optional>
#include <tuple>

namespace at::inline tessera::native {

class TORCH_API LinearPackedParamsBase : public torch::CustomClassHolder {
 public:
  // weight: 2-d qint8 [N, K], per-tensor or per-channel (axis 0) affine with zero points 0;
  // bias: float32 [N] or absent. Both are kept as the very tensors given, as torch does.
  // Checked (torch's errors): what quantized::linear_prepack and unpickling call.
  static c10::intrusive_ptr<LinearPackedParamsBase> prepack(Tensor weight, std::optional<Tensor> bias);
  // Unchecked: prepack's.
  LinearPackedParamsBase(Tensor weight, std::optional<Tensor> bias)
      : weight_(std::move(weight)), bias_(std::move(bias)) {}

  const PackedWeight& packed_weight() const { return weight_; }
  const Tensor& weight() const { return weight_.tensor(); }
  const std::optional<Tensor>& bias() const { return bias_; }
  std::tuple<Tensor, std::optional<Tensor>> unpack() const { return {weight(), bias_}; }
  int64_t out_features() const { return weight().size(0); }
  int64_t in_features() const { return weight().size(1); }

 private:
  PackedWeight weight_;
  std::optional<Tensor> bias_;
};

}  // namespace at::inline tessera::native
