// Elementwise ops about powers of two and exponents, written over pow and mul (so autograd,
// Meta and dtypes come from those) except frexp, which splits each float itself:
// ldexp (x * 2^e), float_power (pow in double, or complex double), isreal, frexp.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <cmath>

namespace at::inline tessera::native {

Tensor ldexp_Tensor(const Tensor& self, const Tensor& other) { return at::mul(self, at::pow(2.0, other)); }

Tensor& ldexp_(Tensor& self, const Tensor& other) { return at::mul_out(self, self, at::pow(2.0, other)); }

// float_power computes in float64 (complex128 when either side is complex), whatever the
// inputs' dtypes.
namespace {
c10::ScalarType float_power_type(bool complex) { return complex ? c10::kComplexDouble : c10::kDouble; }

Scalar as_power_scalar(const Scalar& s, c10::ScalarType t) {
  if (t == c10::kComplexDouble) return Scalar(s.to<c10::complex<double>>());
  return Scalar(s.to<double>());
}
}  // namespace

Tensor float_power_Tensor_Tensor(const Tensor& self, const Tensor& exponent) {
  const auto t = float_power_type(self.is_complex() || exponent.is_complex());
  return at::pow(self.to(t), exponent.to(t));
}

Tensor float_power_Tensor_Scalar(const Tensor& self, const Scalar& exponent) {
  const auto t = float_power_type(self.is_complex() || exponent.isComplex());
  return at::pow(self.to(t), as_power_scalar(exponent, t));
}

Tensor float_power_Scalar(const Scalar& self, const Tensor& exponent) {
  const auto t = float_power_type(self.isComplex() || exponent.is_complex());
  return at::pow(as_power_scalar(self, t), exponent.to(t));
}

Tensor& float_power__Tensor(Tensor& self, const Tensor& exponent) {
  const auto t = float_power_type(self.is_complex() || exponent.is_complex());
  TORCH_CHECK(self.scalar_type() == t, "the base given to float_power_ has dtype ", self.scalar_type(),
              " but the operation's result requires dtype ", t);
  return self.pow_(exponent.to(t));
}

Tensor& float_power__Scalar(Tensor& self, const Scalar& exponent) {
  const auto t = float_power_type(self.is_complex() || exponent.isComplex());
  TORCH_CHECK(self.scalar_type() == t, "the base given to float_power_ has dtype ", self.scalar_type(),
              " but the operation's result requires dtype ", t);
  return self.pow_(as_power_scalar(exponent, t));
}

// True where the imaginary part is zero; every element of a real tensor.
Tensor isreal(const Tensor& self) {
  // ones_like, not ones: a dispatched operator, so a named self names the result (as torch).
  if (!self.is_complex()) return at::ones_like(self, TensorOptions().dtype(c10::kBool), c10::MemoryFormat::Contiguous);
  return at::imag(self).eq(0);
}

// mantissa * 2^exponent == self with |mantissa| in [0.5, 1) (0, inf and NaN keep themselves
// and a zero exponent), as std::frexp.
std::tuple<Tensor, Tensor> frexp(const Tensor& self) {
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()), "torch.frexp() only supports floating-point dtypes");
  Tensor mantissa = make_empty(self.sizes().vec(), self.scalar_type(), self.device());
  Tensor exponent = make_empty(self.sizes().vec(), c10::kInt, self.device());
  if (self.is_meta() || self.numel() == 0) return {mantissa, exponent};
  const Tensor x = self.contiguous();
  dispatch_types<kFloating | kReducedFloat>(self.scalar_type(), "frexp", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* in = x.data_ptr<T>();
    T* m = mantissa.data_ptr<T>();
    int32_t* e = exponent.data_ptr<int32_t>();
    at::parallel_for(0, self.numel(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        int exp = 0;
        m[i] = static_cast<T>(std::frexp(static_cast<O>(in[i]), &exp));
        e[i] = exp;
      }
    });
  });
  return {mantissa, exponent};
}

std::tuple<Tensor&, Tensor&> frexp_Tensor_out(const Tensor& self, Tensor& mantissa, Tensor& exponent) {
  TORCH_CHECK(mantissa.scalar_type() == self.scalar_type(), "torch.frexp() expects mantissa to have dtype ",
              self.scalar_type(), " but got ", mantissa.scalar_type());
  TORCH_CHECK(exponent.scalar_type() == c10::kInt, "torch.frexp() expects exponent to have int dtype but got ",
              exponent.scalar_type());
  auto [m, e] = at::frexp(self);
  resize_out_sizes(mantissa, m.sizes(), "frexp");
  resize_out_sizes(exponent, e.sizes(), "frexp");
  mantissa.copy_(m);
  exponent.copy_(e);
  return {mantissa, exponent};
}

}  // namespace at::inline tessera::native
