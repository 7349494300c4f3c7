// quantized::linear's prepacked weights: the custom class LinearPackedParamsBase that
// linear_prepack returns and linear, linear_relu, linear_dynamic and linear_unpack take, as
// in torch 1.13 on its oneDNN engine. The int8 weight is kept as given (unpack returns it)
// and, once a matmul asks for it, in oneDNN's blocked layout (reordered once, then reused).
#pragma once

#include <aten/core/CustomClass.h>
#include <aten/core/Tensor.h>

#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

namespace at::inline tessera::native {

class TORCH_API LinearPackedParamsBase : public torch::CustomClassHolder {
 public:
  // weight: 2-d qint8 [N, K], per-tensor or per-channel (axis 0) affine with zero points 0;
  // bias: float32 [N] or absent. Both are kept as the very tensors given, as torch does.
  // Checked (torch's errors): what quantized::linear_prepack and unpickling call.
  static c10::intrusive_ptr<LinearPackedParamsBase> prepack(Tensor weight, std::optional<Tensor> bias);
  // Unchecked: prepack's.
  LinearPackedParamsBase(Tensor weight, std::optional<Tensor> bias);

  const Tensor& weight() const { return weight_; }
  const std::optional<Tensor>& bias() const { return bias_; }
  std::tuple<Tensor, std::optional<Tensor>> unpack() const { return {weight_, bias_}; }
  int64_t out_features() const { return weight_.size(0); }
  int64_t in_features() const { return weight_.size(1); }
  // The weight scales as oneDNN takes them: f32(1/scale), per channel or one.
  const std::vector<float>& inverse_weight_scales() const { return inverse_weight_scales_; }

  // oneDNN's copy of the weight in the layout its matmul chose (onednn/Int8Matmul.cpp): made
  // on first use and kept with the weight, so a module reorders its weight once.
  struct BlockedWeight;
  std::shared_ptr<const BlockedWeight> blocked_weight() const;
  void set_blocked_weight(std::shared_ptr<const BlockedWeight> blocked) const;

 private:
  Tensor weight_;
  std::optional<Tensor> bias_;
  std::vector<float> inverse_weight_scales_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const BlockedWeight> blocked_;
};

}  // namespace at::inline tessera::native
