// The per-ISA loops of the quantized elementwise operators (cpu/QuantizedOpsKernel.cpp) and
// what the operator files (BinaryOps.cpp, Activation.cpp) hand them. Every loop reads and
// writes the integers of per-tensor-affine tensors (integer_alias) and reproduces torch
// 1.13's arithmetic, Note [Quantized elementwise arithmetic].
#pragma once

#include <aten/core/QTensorImpl.h>
#include <aten/core/Tensor.h>
#include <aten/native/DispatchStub.h>

#include <cstdint>

namespace at::inline tessera::native {

// Note [Quantized elementwise arithmetic]: torch runs these operators through cpu_kernel_vec,
// whose vector loop covers each contiguous row in chunks of 2 * Vectorized<qint>::size()
// elements (64 for quint8/qint8, 16 for qint32 on AVX2) and whose scalar loop takes the rest
// of the row, and a strided row whole. The two loops round differently where they go
// through float: the vector one dequantizes as fma(scale, q, -zero_point * scale), the scalar
// one as scale * float(q - zero_point). Both quantize as zero_point + nearbyint(x / scale)
// with the division done as x * (1 / scale). The loops here split every row the same way
// and give each part its arithmetic, so results equal torch's bit for bit at one thread
// (torch's own results move with its thread count, as its chunks do). Operators that stay
// in integers (relu, clamp, mul, the scalar forms) have no such split.

// The integer parameters of one per-tensor-affine operand.
struct QAffine {
  float scale;
  int64_t zero_point;
};

// The checks every quantized operator file shares (defined in Activation.cpp, out of line:
// this header is also read by the per-ISA loops, whose copies of an inline function the
// linker could swap):
// torch's refusal of the packed quint4x2 / quint2x4 in a kernel dispatched over quint8, qint8
// and qint32 ("qrelu" not implemented for 'QUInt4x2');
void check_not_sub_byte(const Tensor& q, const char* kernel);
// that refusal, then q's per-tensor-affine quantizer (torch's q_scale() check otherwise);
const PerTensorAffineQuantizer& checked_per_tensor(const Tensor& q, const char* kernel);
// a zero point as torch's relu compares it with the integers: converted to the stored type
// (std::max<underlying>), so an out-of-range zero point wraps.
int64_t as_stored(c10::ScalarType qtype, int64_t zero_point);
// the qparams a loop takes: scale in float, the zero point.
QAffine qaffine_of(const PerTensorAffineQuantizer& q);

enum class QBinaryOp { Add, AddRelu, Mul, MulRelu };

// out = a op b elementwise on their integers: out, a and b are the integer views of
// per-tensor-affine tensors of one dtype, b broadcast to out's shape.
using qbinary_fn = void (*)(QBinaryOp op, const Tensor& out, QAffine out_q, const Tensor& a, QAffine a_q,
                            const Tensor& b, QAffine b_q);
// out = requantize((a - a_zp + addend), a_scale / out_scale, out_zp), clamped at out_zp
// when relu: torch's add of a scalar whose quantized value is addend (qadd_scalar_kernel).
using qadd_scalar_fn = void (*)(const Tensor& out, QAffine out_q, const Tensor& a, QAffine a_q, int32_t addend,
                                bool relu);
// out = clamp(a, lo, hi) on integers (relu, relu6, clamp, hardtanh); also the integer maps
// of mul by a negative scalar (out = qmin + qmax - a), selected by `reflect`.
using qclamp_fn = void (*)(const Tensor& out, const Tensor& a, int64_t lo, int64_t hi, bool reflect);

// The float functions the unary operators apply between dequantizing and quantizing.
enum class QUnaryOp {
  Sigmoid,
  Tanh,
  Hardsigmoid,
  Hardswish,
  LeakyRelu,
  Elu,
  Gelu,
  GeluTanh,
  Threshold,
  Identity,
  Relu
};
struct QUnaryArgs {
  float alpha = 0;  // leaky_relu's slope; elu's alpha; threshold's threshold
  float beta = 0;   // elu's scale; threshold's value
  float gamma = 0;  // elu's input_scale
  // The 1 / output scale the 8-bit vector loop multiplies by: most kernels compute it in
  // double (1.0 / scale), leaky_relu in float; the scalar loop always takes 1.0f / scale.
  float vector_inv_scale = 0;
};
using qunary_fn = void (*)(QUnaryOp op, const QUnaryArgs& args, const Tensor& out, QAffine out_q, const Tensor& a,
                           QAffine a_q);

// cat's channels-last requantization: out and a are [pixels, C] integer views (unit channel
// stride); each row's first C - C % 8 channels take torch's vector arithmetic.
using qrequantize_rows_fn = void (*)(const Tensor& out, QAffine out_q, const Tensor& a, QAffine a_q,
                                     float vector_inv_scale, bool relu);

// Max pooling of a quantized tensor (Pooling.cpp): aten's max_pool1d/2d call these on one.
TORCH_API Tensor quantized_max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                      IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
TORCH_API Tensor quantized_max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                      IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);

// One output coordinate's two source neighbours along a dim and their weights (bilinear upsampling).
struct BilinearTap {
  int64_t i0, i1;
  float l0, l1;
};
// Bilinear upsampling's channels-last loop: out and in are integer views [N, C, H, W] with unit
// channel stride, rows and cols the taps of out's H and W; torch's AVX2 arithmetic (FMA), its
// vector form on the first vector_channels channels, Note [Quantized bilinear upsampling].
using qupsample_bilinear_nhwc_fn = void (*)(const Tensor& out, const Tensor& in, const BilinearTap* rows,
                                            const BilinearTap* cols, int64_t vector_channels, int64_t zero_point);

// Bilinear upsampling of a quantized tensor (UpSample.cpp): aten's upsample_bilinear2d calls it on one.
TORCH_API Tensor upsample_bilinear2d_quantized(const Tensor& input, std::optional<IntArrayRef> output_size,
                                               bool align_corners, std::optional<ArrayRef<double>> scale_factors);

DECLARE_DISPATCH(qbinary_fn, qbinary_stub);
DECLARE_DISPATCH(qadd_scalar_fn, qadd_scalar_stub);
DECLARE_DISPATCH(qclamp_fn, qclamp_stub);
DECLARE_DISPATCH(qunary_fn, qunary_stub);
DECLARE_DISPATCH(qrequantize_rows_fn, qrequantize_rows_stub);
DECLARE_DISPATCH(qupsample_bilinear_nhwc_fn, qupsample_bilinear_nhwc_stub);

}  // namespace at::inline tessera::native
