// quantized::add, add_relu, mul and mul_relu of two quantized tensors (broadcasting, into new
// qparams or an out= tensor's) and of a tensor and a scalar (add_scalar, mul_scalar and the
// Scalar overloads), as torch 1.13 computes them: the scalar forms move the qparams and touch
// the integers only where the result would not fit.
#include <aten/core/QTensorImpl.h>
#include <aten/library.h>
#include <aten/native/Broadcast.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/QuantizedOps.h>

#include <cmath>
#include <limits>

namespace at::inline tessera::native {

DEFINE_DISPATCH(qbinary_stub);
DEFINE_DISPATCH(qadd_scalar_stub);
DEFINE_DISPATCH(qclamp_stub);

namespace {

QAffine affine_of(const Tensor& q) { return qaffine_of(per_tensor_quantizer(q, "quantized op")); }

bool is_mul(QBinaryOp op) { return op == QBinaryOp::Mul || op == QBinaryOp::MulRelu; }

// torch's checks, with its spellings ("suported" and "shceme" in Add's).
void check_binary_inputs(QBinaryOp op, const Tensor& qa, const Tensor& qb) {
  const char* name = is_mul(op) ? "Mul" : "Add";
  check_not_sub_byte(qa, is_mul(op) ? "qmul" : "qadd");
  TORCH_CHECK(qa.qscheme() == c10::kPerTensorAffine, "Only per tensor quantization is ",
              is_mul(op) ? "supported" : "suported", " in ", name, ".");
  TORCH_CHECK(qa.qscheme() == qb.qscheme(), "Both inputs to ", name, " must have the same quantization shceme.");
  TORCH_CHECK(qa.scalar_type() == qb.scalar_type(), name, " operands should have same data type.");
}

void run_binary(QBinaryOp op, const Tensor& out, const Tensor& qa, const Tensor& qb) {
  if (out.is_meta() || out.numel() == 0) return;
  qbinary_stub(c10::DeviceType::CPU, op, integer_alias(out), affine_of(out), integer_alias(qa), affine_of(qa),
               integer_alias(qb), affine_of(qb));
}

template <QBinaryOp Op>
Tensor qbinary(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point) {
  check_binary_inputs(Op, qa, qb);
  const auto shape = infer_size(qa.sizes(), qb.sizes());
  // torch allocates qa's shape and layout; where broadcasting resizes it, the iterator lays
  // the output out as the full-shaped operand
  const MemoryFormat format = IntArrayRef(shape) == qa.sizes()   ? suggest_memory_format(qa)
                              : IntArrayRef(shape) == qb.sizes() ? suggest_memory_format(qb)
                                                                 : MemoryFormat::Contiguous;
  Tensor out = new_qtensor(
      shape, format, c10::make_intrusive<PerTensorAffineQuantizer>(qa.scalar_type(), scale, zero_point), qa.device());
  run_binary(Op, out, qa, qb);
  return out;
}

template <QBinaryOp Op>
Tensor& qbinary_out(const Tensor& qa, const Tensor& qb, Tensor& out) {
  check_binary_inputs(Op, qa, qb);
  check_binary_inputs(Op, qa, out);
  const auto shape = infer_size(qa.sizes(), qb.sizes());
  TORCH_CHECK(out.sizes() == IntArrayRef(shape), "quantized::", is_mul(Op) ? "mul" : "add", ".out: out has shape ",
              out.sizes(), " but the broadcast shape of the inputs is ", IntArrayRef(shape));
  run_binary(Op, out, qa, qb);
  return out;
}

// A new tensor of qa's shape, layout and dtype with the given qparams.
Tensor like_with_qparams(const Tensor& qa, double scale, int64_t zero_point) {
  return new_qtensor(qa.sizes(), suggest_memory_format(qa),
                     c10::make_intrusive<PerTensorAffineQuantizer>(qa.scalar_type(), scale, zero_point), qa.device());
}

void set_qparams(const Tensor& out, double scale, int64_t zero_point) {
  get_qtensorimpl(out)->set_quantizer_(
      c10::make_intrusive<PerTensorAffineQuantizer>(out.scalar_type(), scale, zero_point));
}

void copy_integers(const Tensor& out, const Tensor& qa) {
  if (!out.is_meta() && out.numel() > 0) integer_alias(out).copy_(integer_alias(qa));
}

void clamp_integers(const Tensor& out, const Tensor& qa, int64_t lo, int64_t hi, bool reflect) {
  if (out.is_meta() || out.numel() == 0) return;
  qclamp_stub(c10::DeviceType::CPU, integer_alias(out), integer_alias(qa), lo, hi, reflect);
}

// Adding c: its quantized value c_q = round(c / s) moves the zero point to z - c_q; where that
// leaves the dtype's range the zero point stops at the bound and the scale widens to keep
// the range, and the integers are requantized (torch's _add_scalar_out).
Tensor& add_scalar_into(const Tensor& qa, const Scalar& other, bool relu, Tensor& out) {
  TORCH_CHECK(qa.qscheme() == c10::kPerTensorAffine, "Only per tensor quantization is supported in Add.");
  check_not_sub_byte(qa, "qadd_scalar");
  const double s = qa.q_scale();
  const int64_t z = qa.q_zero_point();
  const auto [qmin, qmax] = quantized_range(qa.scalar_type());
  const int64_t c_q = truncate_like_x86(std::nearbyint(other.toDouble() / s));
  // wrapping, as x86 computes torch's z - c_q when c_q is INT64_MIN (a NaN or huge scalar)
  const int64_t shifted = static_cast<int64_t>(static_cast<uint64_t>(z) - static_cast<uint64_t>(c_q));
  if (shifted >= qmin && shifted <= qmax) {
    copy_integers(out, qa);
    set_qparams(out, s, shifted);
    if (relu) clamp_integers(out, out, shifted, qmax, false);
    return out;
  }
  TORCH_CHECK(c_q >= std::numeric_limits<int32_t>::min() && c_q <= std::numeric_limits<int32_t>::max(),
              "value cannot be converted to type int without overflow");
  const double span = static_cast<double>(qmax) - static_cast<double>(qmin);
  const double s_prime = shifted < qmin ? (static_cast<double>(qmax) - static_cast<double>(shifted)) / span * s
                                        : (static_cast<double>(shifted) - static_cast<double>(qmin)) / span * s;
  set_qparams(out, s_prime, shifted < qmin ? qmin : qmax);
  if (!out.is_meta() && out.numel() > 0) {
    qadd_scalar_stub(c10::DeviceType::CPU, integer_alias(out), affine_of(out), integer_alias(qa), affine_of(qa),
                     static_cast<int32_t>(c_q), relu);
  }
  return out;
}

// Multiplying by c > 0 scales the scale; by 0 gives zeros with scale 1; by c < 0 reflects the
// integers (q' = qmin + qmax - q) and the zero point (torch's _mul_scalar_out).
Tensor& mul_scalar_into(const Tensor& qa, const Scalar& other, bool relu, Tensor& out) {
  TORCH_CHECK(qa.qscheme() == c10::kPerTensorAffine, "Only per tensor quantization is supported in Mul.");
  check_not_sub_byte(qa, "qmul_scalar");
  const double c = other.toDouble();
  const double s = qa.q_scale();
  const int64_t z = qa.q_zero_point();
  const auto [qmin, qmax] = quantized_range(qa.scalar_type());
  if (c > 0.0) {
    if (relu) {
      clamp_integers(out, qa, as_stored(qa.scalar_type(), z), qmax, false);
    } else {
      copy_integers(out, qa);
    }
    set_qparams(out, c * s, z);
  } else if (c == 0.0) {
    if (!out.is_meta() && out.numel() > 0) integer_alias(out).zero_();
    set_qparams(out, 1.0, 0);
  } else {
    const int64_t z_prime = qmax - (z - qmin);
    clamp_integers(out, qa, relu ? as_stored(qa.scalar_type(), z_prime) : qmin, qmax, true);
    set_qparams(out, std::abs(c) * s, z_prime);
  }
  return out;
}

template <bool Mul, bool Relu>
Tensor scalar_op(const Tensor& qa, const Scalar& b) {
  TORCH_CHECK(qa.qscheme() == c10::kPerTensorAffine, "Only per tensor quantization is supported in ",
              Mul ? "Mul." : "Add.");
  Tensor out = like_with_qparams(qa, qa.q_scale(), qa.q_zero_point());
  return Mul ? mul_scalar_into(qa, b, Relu, out) : add_scalar_into(qa, b, Relu, out);
}
template <bool Mul, bool Relu>
Tensor scalar_op_swapped(const Scalar& b, const Tensor& qa) {
  return scalar_op<Mul, Relu>(qa, b);
}
template <bool Mul, bool Relu>
Tensor scalar_op_tensor(const Tensor& qa, const Tensor& b) {
  return scalar_op<Mul, Relu>(qa, b.item());
}
template <bool Mul, bool Relu>
Tensor& scalar_op_out(const Tensor& qa, const Scalar& b, Tensor& out) {
  TORCH_CHECK(out.is_quantized() && out.scalar_type() == qa.scalar_type() && out.sizes() == qa.sizes(),
              "quantized::", Mul ? "mul" : "add", "_scalar_out: out must be a quantized tensor of the input's dtype ",
              "and shape");
  return Mul ? mul_scalar_into(qa, b, Relu, out) : add_scalar_into(qa, b, Relu, out);
}
template <bool Mul, bool Relu>
Tensor& scalar_op_out_tensor(const Tensor& qa, const Tensor& b, Tensor& out) {
  return scalar_op_out<Mul, Relu>(qa, b.item(), out);
}

}  // namespace

}  // namespace at::inline tessera::native

namespace {
namespace qn = at::native;
using qn::QBinaryOp;

void register_binary(torch::Library& m) {
  m.impl("add", TORCH_FN(qn::qbinary<QBinaryOp::Add>));
  m.impl("add.out", TORCH_FN(qn::qbinary_out<QBinaryOp::Add>));
  m.impl("add_out", TORCH_FN(qn::qbinary_out<QBinaryOp::Add>));
  m.impl("add_relu", TORCH_FN(qn::qbinary<QBinaryOp::AddRelu>));
  m.impl("add_relu.out", TORCH_FN(qn::qbinary_out<QBinaryOp::AddRelu>));
  m.impl("add_relu_out", TORCH_FN(qn::qbinary_out<QBinaryOp::AddRelu>));
  m.impl("mul", TORCH_FN(qn::qbinary<QBinaryOp::Mul>));
  m.impl("mul.out", TORCH_FN(qn::qbinary_out<QBinaryOp::Mul>));
  m.impl("mul_out", TORCH_FN(qn::qbinary_out<QBinaryOp::Mul>));
  m.impl("mul_relu", TORCH_FN(qn::qbinary<QBinaryOp::MulRelu>));
  m.impl("mul_relu.out", TORCH_FN(qn::qbinary_out<QBinaryOp::MulRelu>));
  m.impl("mul_relu_out", TORCH_FN(qn::qbinary_out<QBinaryOp::MulRelu>));
  // The scalar forms: <op>.Scalar / .Scalar2 / .Scalar_out and <op>_scalar[_relu][_out](.Tensor).
  m.impl("add.Scalar", TORCH_FN((qn::scalar_op<false, false>)));
  m.impl("add.Scalar2", TORCH_FN((qn::scalar_op_swapped<false, false>)));
  m.impl("add.Scalar_out", TORCH_FN((qn::scalar_op_out<false, false>)));
  m.impl("add_relu.Scalar", TORCH_FN((qn::scalar_op<false, true>)));
  m.impl("add_relu.Scalar2", TORCH_FN((qn::scalar_op_swapped<false, true>)));
  m.impl("add_relu.Scalar_out", TORCH_FN((qn::scalar_op_out<false, true>)));
  m.impl("mul.Scalar", TORCH_FN((qn::scalar_op<true, false>)));
  m.impl("mul.Scalar2", TORCH_FN((qn::scalar_op_swapped<true, false>)));
  m.impl("mul.Scalar_out", TORCH_FN((qn::scalar_op_out<true, false>)));
  m.impl("mul_relu.Scalar", TORCH_FN((qn::scalar_op<true, true>)));
  m.impl("mul_relu.Scalar2", TORCH_FN((qn::scalar_op_swapped<true, true>)));
  m.impl("mul_relu.Scalar_out", TORCH_FN((qn::scalar_op_out<true, true>)));
  m.impl("add_scalar", TORCH_FN((qn::scalar_op<false, false>)));
  m.impl("add_scalar.Tensor", TORCH_FN((qn::scalar_op_tensor<false, false>)));
  m.impl("add_scalar_out", TORCH_FN((qn::scalar_op_out<false, false>)));
  m.impl("add_scalar_out.Tensor", TORCH_FN((qn::scalar_op_out_tensor<false, false>)));
  m.impl("add_scalar_relu", TORCH_FN((qn::scalar_op<false, true>)));
  m.impl("add_scalar_relu.Tensor", TORCH_FN((qn::scalar_op_tensor<false, true>)));
  m.impl("add_scalar_relu_out", TORCH_FN((qn::scalar_op_out<false, true>)));
  m.impl("add_scalar_relu_out.Tensor", TORCH_FN((qn::scalar_op_out_tensor<false, true>)));
  m.impl("mul_scalar", TORCH_FN((qn::scalar_op<true, false>)));
  m.impl("mul_scalar.Tensor", TORCH_FN((qn::scalar_op_tensor<true, false>)));
  m.impl("mul_scalar_out", TORCH_FN((qn::scalar_op_out<true, false>)));
  m.impl("mul_scalar_out.Tensor", TORCH_FN((qn::scalar_op_out_tensor<true, false>)));
  m.impl("mul_scalar_relu", TORCH_FN((qn::scalar_op<true, true>)));
  m.impl("mul_scalar_relu.Tensor", TORCH_FN((qn::scalar_op_tensor<true, true>)));
  m.impl("mul_scalar_relu_out", TORCH_FN((qn::scalar_op_out<true, true>)));
  m.impl("mul_scalar_relu_out.Tensor", TORCH_FN((qn::scalar_op_out_tensor<true, true>)));
}
}  // namespace

TORCH_LIBRARY_IMPL(quantized, QuantizedCPU, m) { register_binary(m); }
TORCH_LIBRARY_IMPL(quantized, QuantizedMeta, m) { register_binary(m); }
