#include <aten/core/TensorOperators.h>

#include <aten/core/TensorUtils.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera {

namespace {
Tensor wrap(const Scalar& s, const Tensor& like) { return wrapped_scalar_tensor(s, like.device()); }
}  // namespace

Tensor operator-(const Tensor& a) { return at::neg(a); }

#define TESSERA_DEFINE_TENSOR_OPERATOR(op, fn)                                                      \
  Tensor operator op(const Tensor& a, const Tensor& b) { return at::fn(a, b); }                     \
  Tensor operator op(const Tensor& a, const Scalar& b) { return at::fn(a, wrap(b, a)); }           \
  Tensor operator op(const Scalar& a, const Tensor& b) { return at::fn(wrap(a, b), b); }
TESSERA_DEFINE_TENSOR_OPERATOR(+, add)
TESSERA_DEFINE_TENSOR_OPERATOR(-, sub)
TESSERA_DEFINE_TENSOR_OPERATOR(*, mul)
TESSERA_DEFINE_TENSOR_OPERATOR(/, div)
#undef TESSERA_DEFINE_TENSOR_OPERATOR

}  // namespace at::inline tessera
