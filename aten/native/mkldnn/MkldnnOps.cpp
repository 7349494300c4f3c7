// The dense operators torch 1.13 runs on the _mkldnn layout: add, mul, relu (and its
// backward), clone, zero_, copy_, reshape, and view's refusal. Each checks what torch's
// oneDNN kernel checks, with its message, then runs the dense operator on views of the
// buffers (MkldnnUtils.h). As in torch: no broadcasting, results in self's dtype, out=
// tensors must be mkldnn tensors of the result's size.
#include <aten/core/TensorUtils.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/mkldnn/MkldnnUtils.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

namespace {

using mkldnn::check_is_mkldnn;
using mkldnn::dense_view;
using mkldnn::wrap;

// torch's sum primitive takes equal shapes only; its failure is oneDNN's message.
void check_same_shape_for_sum(const Tensor& self, const Tensor& other) {
  TORCH_CHECK(self.sizes() == other.sizes(), "could not create a primitive descriptor for a sum primitive");
}

// self (+ alpha * other) written into the buffer of `out`, in out's dtype.
void add_into(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  dense_view(out).copy_(at::add(dense_view(self), dense_view(other), alpha));
}

void check_mul_operands(const Tensor& self, const Tensor& other, const Tensor& out) {
  TORCH_CHECK(out.sizes() == self.sizes(), "mkldnn_mul_out: the output size should be same as input size");
  check_is_mkldnn(out);
  check_is_mkldnn(self);
  if (other.dim() != 0) {
    TORCH_CHECK(self.sizes() == other.sizes(), "mkldnn_mul_out: currently mkldnn not support broadcasting");
    check_is_mkldnn(other);
  }
}

// self * other into out's buffer. A dense 0-dim factor (a Python number) scales as oneDNN's
// linear eltwise does: in float, rounded once to out's dtype (bfloat16 too).
void mul_into(const Tensor& self, const Tensor& other, const Tensor& out) {
  if (other.dim() == 0 && !other.is_mkldnn()) {
    dense_view(out).copy_(at::mul(dense_view(self).to(c10::kFloat), other.to(c10::kFloat)));
  } else {
    dense_view(out).copy_(at::mul(dense_view(self), dense_view(other)));
  }
}

}  // namespace

Tensor mkldnn_add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  check_is_mkldnn(self);
  check_is_mkldnn(other);
  check_same_shape_for_sum(self, other);
  return wrap(at::add(dense_view(self), dense_view(other), alpha).to(self.scalar_type()));
}

Tensor& mkldnn_add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  check_is_mkldnn(self);
  check_is_mkldnn(other);
  check_is_mkldnn(out);
  check_same_shape_for_sum(self, other);
  // torch leaves a wrongly sized out= with its old size around the new data; refuse instead
  TORCH_CHECK(out.sizes() == self.sizes(), "mkldnn_add_out: the output size should be same as input size");
  add_into(self, other, alpha, out);
  return out;
}

Tensor& mkldnn_add_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  return mkldnn_add_out(self, other, alpha, self);
}

Tensor& mkldnn_mul_out(const Tensor& self, const Tensor& other, Tensor& out) {
  check_mul_operands(self, other, out);
  mul_into(self, other, out);
  return out;
}

Tensor mkldnn_mul(const Tensor& self, const Tensor& other) {
  // `2 * m` arrives as mul(number, m): the product commutes, as torch's reflected operator does
  if (self.dim() == 0 && !self.is_mkldnn() && other.is_mkldnn()) return mkldnn_mul(other, self);
  Tensor out = wrap(at::empty(self.sizes(), self.options().layout(c10::kStrided)));
  return mkldnn_mul_out(self, other, out);
}

Tensor& mkldnn_mul_(Tensor& self, const Tensor& other) { return mkldnn_mul_out(self, other, self); }

Tensor mkldnn_relu(const Tensor& self) { return wrap(at::relu(dense_view(self))); }

Tensor& mkldnn_relu_(Tensor& self) {
  dense_view(self).relu_();
  return self;
}

// relu's gradient whatever `threshold` is: torch's oneDNN kernel is relu's, at 0.
Tensor mkldnn_relu_backward(const Tensor& grad_output, const Tensor& self, const Scalar& /*threshold*/) {
  check_is_mkldnn(self);
  check_is_mkldnn(grad_output);
  return wrap(at::threshold_backward(dense_view(grad_output), dense_view(self), 0));
}

Tensor mkldnn_clone(const Tensor& self, std::optional<c10::MemoryFormat> memory_format) {
  // the enum's C++ name, as torch's message prints it
  static constexpr const char* kNames[] = {"Contiguous", "Preserve", "ChannelsLast", "ChannelsLast3d"};
  TORCH_CHECK(!memory_format.has_value(), "unsupported memory format option ",
              kNames[static_cast<int>(*memory_format)]);
  return wrap(dense_view(self).clone());
}

Tensor& mkldnn_zero_(Tensor& self) {
  dense_view(self).zero_();
  return self;
}

Tensor& copy_mkldnn_(Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  TORCH_CHECK(self.sizes() == src.sizes(), "copy_mkldnn_: only support same size tensor.");
  TORCH_CHECK(self.is_mkldnn() && src.is_mkldnn(),
              "copy_mkldnn_: between mkldnn layout and dense Tensors is not implemented! Found self type = ",
              self.is_mkldnn() ? "Mkldnn" : "", tensor_type_string(self), " and src type = ",
              src.is_mkldnn() ? "Mkldnn" : "", tensor_type_string(src));
  dense_view(self).copy_(dense_view(src));
  return self;
}

Tensor mkldnn_view(const Tensor& /*self*/, IntArrayRef /*size*/) {
  TORCH_CHECK(false, "Currently Mkldnn tensor does not support view. Change to use reshape instead");
}

// A copy in the new shape (Tensor.reshape returns self itself for the same shape).
Tensor mkldnn_reshape(const Tensor& self, IntArrayRef shape) {
  return wrap(dense_view(self).reshape(infer_size(shape, self.numel())).clone());
}

}  // namespace at::inline tessera::native
