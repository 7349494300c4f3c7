// nn activations: argument checks of the TensorIterator activations (their kernels are in
// cpu/ActivationKernel.cpp), the composite ones (relu6, selu, celu, glu, prelu) and the
// two kernels whose operands are not one iterator family's (log_sigmoid_backward, whose
// buffer torch's CPU kernel reads but ours recomputes, and _prelu_kernel).
#include <aten/core/Dispatch.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/DispatchStubs.h>
#include <aten/native/MetaFunctions.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/nn/Activation.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <string_view>

namespace at::inline tessera {

namespace meta {

static void check_approximate(std::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
}

void check_gelu(const Tensor&, std::string_view approximate) { check_approximate(approximate); }

void check_gelu_backward_grad_input(const Tensor&, const Tensor&, std::string_view approximate) {
  check_approximate(approximate);
}

// Backward from the result is exact only when the activation keeps the sign (the slope is
// not negative); torch refuses the rest with these words.
void check_leaky_relu_backward_grad_input(const Tensor&, const Tensor&, const Scalar& negative_slope,
                                          bool self_is_result) {
  TORCH_CHECK(!self_is_result || negative_slope.toDouble() >= 0.0,
              "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
              "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
              "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
              "in-place leakRelu backward calculation with negative slope");
}

void check_elu_backward_grad_input(const Tensor&, const Scalar& alpha, const Scalar&, const Scalar&, bool is_result,
                                   const Tensor&) {
  TORCH_CHECK(!is_result || alpha.toDouble() >= 0.0,
              "In-place elu backward calculation is triggered with a negative slope which is not supported. "
              "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
              "version instead.");
}

void check_softshrink(const Tensor&, const Scalar& lambd) {
  TORCH_CHECK(lambd.toDouble() >= 0, "lambda must be greater or equal to 0, but found to be ", lambd, ".");
}

void check_hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  TORCH_CHECK(self.scalar_type() != c10::kBool, "Bool inputs not supported for hardtanh");
  TORCH_CHECK(self.scalar_type() != c10::kByte || (min_val.toDouble() >= 0 && max_val.toDouble() >= 0),
              "cannot do hardtanh on an unsigned type with negative limits");
}

}  // namespace meta

namespace native {

DEFINE_DISPATCH(log_sigmoid_backward_stub);
DEFINE_DISPATCH(mish_backward_stub);
DEFINE_DISPATCH(prelu_stub);

// One binary iterator (CPU and Meta alike: meta tensors stop at the shape).
static Tensor binary_activation(DispatchStub<activation_stub_fn>& stub, const Tensor& a, const Tensor& b, const char* name) {
  TensorIterator iter =
      TensorIterator::config_for(IteratorFamily::Binary).add_output(Tensor()).add_input(a).add_input(b).op_name(name).build();
  if (!iter.output().is_meta()) stub(c10::DeviceType::CPU, iter);
  return iter.output();
}

Tensor log_sigmoid_backward(const Tensor& grad_output, const Tensor& self, const Tensor&) {
  return binary_activation(log_sigmoid_backward_stub, grad_output, self, "log_sigmoid_backward");
}

Tensor mish_backward(const Tensor& grad_output, const Tensor& self) {
  return binary_activation(mish_backward_stub, grad_output, self, "mish_backward");
}

Tensor _prelu_kernel(const Tensor& self, const Tensor& weight) {
  return binary_activation(prelu_stub, self, weight, "prelu");
}

// weight holds one slope, or one per channel (dim 1); it is viewed with self's rank so
// that it broadcasts along the channels.
Tensor prelu(const Tensor& self, const Tensor& weight) {
  TORCH_CHECK(self.scalar_type() == weight.scalar_type(), "prelu: Type promoting not supported. Got ",
              self.scalar_type(), " and ", weight.scalar_type());
  TORCH_CHECK(weight.dim() <= 1, "prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = ", weight.dim());
  if (weight.numel() != 1) {
    TORCH_CHECK(self.dim() > 0, "Not allow zero-dim input tensor.");
    const int64_t channels = self.dim() > 1 ? self.size(1) : 1;
    TORCH_CHECK(channels == weight.numel(), "Mismatch of parameter numbers and input channel size. Found parameter "
                "numbers = ", weight.numel(), " and channel size = ", channels, ".");
  }
  std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
  if (self.dim() > 1) shape[1] = weight.numel();
  return at::_prelu_kernel(self, weight.reshape(shape));
}

Tensor relu6(const Tensor& self) { return at::hardtanh(self, 0, 6); }
Tensor& relu6_(Tensor& self) { return at::hardtanh_(self, 0, 6); }

// SELU's constants (Klambauer et al., 2017).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

Tensor selu(const Tensor& self) { return at::elu(self, kSeluAlpha, kSeluScale); }
Tensor& selu_(Tensor& self) { return at::elu_(self, kSeluAlpha, kSeluScale); }

static double celu_input_scale(const Scalar& alpha) {
  TORCH_CHECK(alpha.toDouble() != 0.0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  return 1.0 / alpha.toDouble();
}

Tensor celu(const Tensor& self, const Scalar& alpha) { return at::elu(self, alpha, 1.0, celu_input_scale(alpha)); }
Tensor& celu_(Tensor& self, const Scalar& alpha) { return at::elu_(self, alpha, 1.0, celu_input_scale(alpha)); }

// The first half of `dim` gated by the sigmoid of the second.
Tensor glu(const Tensor& self, int64_t dim) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t d = wrap_dim(dim, self.dim());
  const int64_t n = self.size(d);
  TORCH_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()), "\"glu\" not implemented for '", self.scalar_type(), "'");
  return self.narrow(d, 0, n / 2) * self.narrow(d, n / 2, n / 2).sigmoid();
}

// ---- rrelu: a random negative slope per element while training (Uniform(lower, upper),
// held constant for autograd, so the grad is grad * slope), the mean slope otherwise.

static Tensor rrelu_slopes(const Tensor& self, const Scalar& lower, const Scalar& upper,
                           std::optional<at::Generator> generator) {
  c10::AutoGradMode no_grad(false);
  Tensor slopes = at::empty_like(self).uniform_(lower.toDouble(), upper.toDouble(), generator);
  return at::where(at::le(self, 0), slopes, at::ones_like(self));
}

static void check_rrelu(const Tensor& self, const Scalar& lower, const Scalar& upper, bool training) {
  TORCH_CHECK(lower.toDouble() <= upper.toDouble(), "Lower bound should be less than or equal to the upper bound");
  if (training && !c10::isFloatingType(self.scalar_type())) dtype_not_implemented("rrelu_with_noise_out_cpu",
                                                                                   self.scalar_type());
}

Tensor rrelu(const Tensor& self, const Scalar& lower, const Scalar& upper, bool training,
             std::optional<at::Generator> generator) {
  check_rrelu(self, lower, upper, training);
  if (training) return self * rrelu_slopes(self, lower, upper, generator);
  return at::leaky_relu(self, (lower.toDouble() + upper.toDouble()) / 2);
}

Tensor& rrelu_(Tensor& self, const Scalar& lower, const Scalar& upper, bool training,
               std::optional<at::Generator> generator) {
  check_rrelu(self, lower, upper, training);
  if (training) return self.mul_(rrelu_slopes(self, lower, upper, generator));
  return at::leaky_relu_(self, (lower.toDouble() + upper.toDouble()) / 2);
}


}  // namespace native

}  // namespace at::inline tessera
