// torch.special's names for operators that live elsewhere (special_expit is sigmoid,
// special_gammainc is igamma, ...) and the multivariate log-gamma function, a sum of
// lgamma terms. Each calls the operator it names, so autograd, Meta and the dtype rules
// come from that operator.
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/ops/Functions.h>

#include <cmath>

namespace at::inline tessera::native {

// Unary names: the functional form and its out= form, both forwarding.
#define TESSERA_SPECIAL_ALIAS(NAME, TARGET)                                                              \
  Tensor special_##NAME(const Tensor& self) { return at::TARGET(self); }                                \
  Tensor& special_##NAME##_out(const Tensor& self, Tensor& out) { return at::TARGET##_out(out, self); }

TESSERA_SPECIAL_ALIAS(expm1, expm1)
TESSERA_SPECIAL_ALIAS(exp2, exp2)
TESSERA_SPECIAL_ALIAS(psi, digamma)
TESSERA_SPECIAL_ALIAS(digamma, digamma)
TESSERA_SPECIAL_ALIAS(gammaln, lgamma)
TESSERA_SPECIAL_ALIAS(erf, erf)
TESSERA_SPECIAL_ALIAS(erfc, erfc)
TESSERA_SPECIAL_ALIAS(erfinv, erfinv)
TESSERA_SPECIAL_ALIAS(expit, sigmoid)
TESSERA_SPECIAL_ALIAS(sinc, sinc)
TESSERA_SPECIAL_ALIAS(log1p, log1p)
TESSERA_SPECIAL_ALIAS(i0, i0)
#undef TESSERA_SPECIAL_ALIAS

Tensor special_polygamma(int64_t n, const Tensor& self) { return at::polygamma(n, self); }
Tensor& special_polygamma_out(int64_t n, const Tensor& self, Tensor& out) { return at::polygamma_out(out, n, self); }
Tensor special_logit(const Tensor& self, std::optional<double> eps) { return at::logit(self, eps); }
Tensor& special_logit_out(const Tensor& self, std::optional<double> eps, Tensor& out) {
  return at::logit_out(out, self, eps);
}
Tensor special_round(const Tensor& self, int64_t decimals) { return at::round(self, decimals); }
Tensor& special_round_out(const Tensor& self, int64_t decimals, Tensor& out) {
  return at::round_out(out, self, decimals);
}
Tensor special_logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) { return at::logsumexp(self, dim, keepdim); }
Tensor& special_logsumexp_out(const Tensor& self, IntArrayRef dim, bool keepdim, Tensor& out) {
  return at::logsumexp_out(out, self, dim, keepdim);
}
Tensor special_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return at::softmax(self, dim, dtype);
}
Tensor special_log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return at::log_softmax(self, dim, dtype);
}
Tensor special_gammainc(const Tensor& self, const Tensor& other) { return at::igamma(self, other); }
Tensor& special_gammainc_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return at::igamma_out(out, self, other);
}
Tensor special_gammaincc(const Tensor& self, const Tensor& other) { return at::igammac(self, other); }
Tensor& special_gammaincc_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return at::igammac_out(out, self, other);
}
Tensor special_xlogy(const Tensor& self, const Tensor& other) { return at::xlogy(self, other); }
Tensor& special_xlogy_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return at::xlogy_out(out, self, other);
}
Tensor special_xlogy_self_scalar(const Scalar& self, const Tensor& other) { return at::xlogy(self, other); }
Tensor& special_xlogy_self_scalar_out(const Scalar& self, const Tensor& other, Tensor& out) {
  return at::xlogy_out(out, self, other);
}
Tensor special_xlogy_other_scalar(const Tensor& self, const Scalar& other) { return at::xlogy(self, other); }
Tensor& special_xlogy_other_scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return at::xlogy_out(out, self, other);
}

// log Gamma_p(x) = p (p - 1) / 4 log(pi) + sum over j < p of lgamma(x - j / 2). Elements
// at or below (p - 1) / 2 are not refused (torch stopped checking them): lgamma gives
// their inf or its value on the negative axis.
Tensor mvlgamma(const Tensor& self, int64_t p) {
  TORCH_CHECK(self.scalar_type() != c10::kBool, "The input tensor may not be a boolean tensor.");
  TORCH_CHECK(p >= 1, "p has to be greater than or equal to 1");
  const Tensor x = c10::isIntegralType(self.scalar_type(), false) ? self.to(c10::get_default_dtype()) : self;
  const double pi = 3.14159265358979323846;
  Tensor sum = at::lgamma(x);
  for (int64_t j = 1; j < p; ++j) sum = at::add(sum, at::lgamma(at::sub(x, 0.5 * static_cast<double>(j))));
  return at::add(sum, static_cast<double>(p) * static_cast<double>(p - 1) / 4.0 * std::log(pi));
}
Tensor& mvlgamma_out(const Tensor& self, int64_t p, Tensor& out) {
  return copy_into_out(at::mvlgamma(self, p), out, "mvlgamma");
}
// (on a copy: lgamma saves its input for backward, and self is about to change)
Tensor& mvlgamma_(Tensor& self, int64_t p) { return copy_into_out(at::mvlgamma(self.clone(), p), self, "mvlgamma_"); }
Tensor special_multigammaln(const Tensor& self, int64_t p) { return at::mvlgamma(self, p); }
Tensor& special_multigammaln_out(const Tensor& self, int64_t p, Tensor& out) { return at::mvlgamma_out(out, self, p); }

}  // namespace at::inline tessera::native
