// quantized::conv{1,2,3}d's prepacked weights: the custom classes Conv2dPackedParamsBase
// (conv1d's too, with a unit height, as torch packs it) and Conv3dPackedParamsBase that
// conv*_prepack return and conv*, conv*_relu and conv*_unpack take, as in torch 1.13 on its
// oneDNN engine. Like the linear ones they keep the weight as given and, once oneDNN asks
// for it, in oneDNN's blocked layout.
#pragma once

#include <aten/core/CustomClass.h>
#include <aten/native/quantized/PackedWeight.h>

#include <optional>
#include <tuple>
#include <vector>

namespace at::inline tessera::native {

// The convolution's geometry, as many entries as the packed weight has spatial dimensions
// (2 for conv1d and conv2d, 3 for conv3d).
struct ConvGeometry {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
  bool transpose = false;
};

class TORCH_API ConvPackedParamsBase : public torch::CustomClassHolder {
 public:
  // weight: qint8 [O, I / groups, k...] (2 or 3 spatial dims), per-tensor or per-channel
  // (axis 0) affine with zero points 0; bias: float32 [O] or absent. Unchecked: prepack's.
  ConvPackedParamsBase(Tensor weight, std::optional<Tensor> bias, ConvGeometry geometry)
      : weight_(std::move(weight)), bias_(std::move(bias)), geometry_(std::move(geometry)) {}

  const PackedWeight& packed_weight() const { return weight_; }
  const Tensor& weight() const { return weight_.tensor(); }
  const std::optional<Tensor>& bias() const { return bias_; }
  std::tuple<Tensor, std::optional<Tensor>> unpack() const { return {weight(), bias_}; }
  const ConvGeometry& geometry() const { return geometry_; }
  int64_t spatial_dims() const { return weight().dim() - 2; }
  int64_t out_channels() const { return weight().size(0); }

 private:
  PackedWeight weight_;
  std::optional<Tensor> bias_;
  ConvGeometry geometry_;
};

// torch's pickled state: ("2", [params, weight], [bias]) with params an int16 tensor of
// [spatial dims, stride..., padding..., dilation..., output_padding..., groups, transpose].
TORCH_API c10::IValue conv_packed_state(const ConvPackedParamsBase& packed);
// The geometry, weight and bias of such a state, checked as prepack checks them.
TORCH_API std::tuple<Tensor, std::optional<Tensor>, ConvGeometry> conv_from_state(const c10::IValue& state,
                                                                                  int64_t spatial_dims);

// The two classes torch registers: one C++ type each (a class is registered per type).
class TORCH_API Conv2dPackedParams final : public ConvPackedParamsBase {
  using ConvPackedParamsBase::ConvPackedParamsBase;
};
class TORCH_API Conv3dPackedParams final : public ConvPackedParamsBase {
  using ConvPackedParamsBase::ConvPackedParamsBase;
};

}  // namespace at::inline tessera::native
