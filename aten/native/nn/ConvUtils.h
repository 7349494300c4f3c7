// The geometry of a convolution and the three passes every convolution backend provides.
// A transposed convolution is the adjoint of an ordinary one, so both are described by
// the ordinary ("forward") convolution: src is its input, dst its output.
#pragma once

#include <aten/core/Tensor.h>

#include <array>
#include <cstdint>

namespace at::inline tessera::native {

struct ConvShape {
  int64_t batch = 0, groups = 1;
  int64_t src_channels = 0, dst_channels = 0;  // of the forward convolution
  int spatial = 0;                             // 1, 2 or 3 spatial dims
  // Per spatial dim (the first `spatial` entries are used).
  std::array<int64_t, 3> src{}, dst{}, kernel{}, stride{}, padding{}, dilation{};

  // The right padding that makes dst exact: (dst - 1) * stride + span - src - left pad
  // (negative when the last input rows are never read).
  int64_t padding_right(int i) const {
    return (dst[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - src[i] - padding[i];
  }
};

// Output length of a convolution along one dim (torch's conv_output_size), and of a
// transposed one (conv_input_size).
inline int64_t conv_output_length(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1;  // negative: no window fits (floor, not 0)
  return (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
}
inline int64_t conv_transpose_output_length(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                                            int64_t output_padding) {
  return (in - 1) * stride - 2 * pad + dilation * (k - 1) + output_padding + 1;
}

// The three passes, on tensors of one floating dtype laid out NC<spatial> (any dense
// strides for oneDNN; the GEMM path makes its operands contiguous). Weights are
// (dst_channels, src_channels / groups, kernel...). Outputs are written, not accumulated.
//   forward:          dst = conv(src, weight)
//   backward_data:    src = conv^T(dst, weight)   (also a transposed convolution's forward)
//   backward_weights: weight = d<dst_grad, conv(src, .)>
namespace onednn {
// Return false when oneDNN has no primitive for the case (dtype, padding, ...); the
// caller then takes the GEMM path. Primitives are cached by shape.
bool conv_forward(const Tensor& dst, const Tensor& src, const Tensor& weight, const Tensor& bias, const ConvShape& s);
bool conv_backward_data(const Tensor& src_grad, const Tensor& dst_grad, const Tensor& weight, const ConvShape& s);
bool conv_backward_weights(const Tensor& weight_grad, const Tensor& dst_grad, const Tensor& src, const ConvShape& s);
// Whether the CPU computes bfloat16 convolutions natively (AVX512-BF16 or AMX).
bool has_native_bf16();
// How many plans oneDNN built are in the cache (for tests of its use and reuse).
TORCH_API size_t cached_plan_count();
}  // namespace onednn

namespace gemm_conv {
// im2col per sample and group, then one GEMM (OpenBLAS for float/double).
void conv_forward(const Tensor& dst, const Tensor& src, const Tensor& weight, const ConvShape& s);
void conv_backward_data(const Tensor& src_grad, const Tensor& dst_grad, const Tensor& weight, const ConvShape& s);
void conv_backward_weights(const Tensor& weight_grad, const Tensor& dst_grad, const Tensor& src, const ConvShape& s);
}  // namespace gemm_conv

// im2col over one [C, spatial...] image into a [C * prod(kernel), prod(dst)] matrix, and
// its adjoint col2im, which adds the columns back into a zeroed image (ConvShape's
// src/dst/kernel/stride/padding/dilation; channels given).
template <typename T>
void im2col_image(const T* image, T* columns, int64_t channels, const ConvShape& s);
template <typename T>
void col2im_image(const T* columns, T* image, int64_t channels, const ConvShape& s);

}  // namespace at::inline tessera::native
