// The zero-preserving unary operators of the sparse layouts, functional and in place:
// each is the dense operator applied to the values (of the coalesced tensor, for COO),
// with pow by a number, nan_to_num and fill_ of the compressed layouts beside them.
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

using namespace sparse;

namespace {
template <class F>
Tensor unary_on_values(const Tensor& self, F&& op) {
  if (self.layout() == c10::kSparse) {
    const Tensor a = self.coalesce();
    const SparseTensorImpl* impl = get_sparse_impl(a);
    return make_sparse_coo(self.sizes(), impl->indices().clone(), op(impl->values()), true);
  }
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self);
  return make_sparse_compressed(self.layout(), self.sizes(), impl->compressed_indices().clone(),
                                impl->plain_indices().clone(), op(impl->values()));
}
}  // namespace

#define TESSERA_SPARSE_UNARY(name) \
  Tensor sparse_unary_##name(const Tensor& self) { return unary_on_values(self, [](const Tensor& v) { return at::name(v); }); }
TESSERA_SPARSE_UNARY(neg)
TESSERA_SPARSE_UNARY(abs)
TESSERA_SPARSE_UNARY(sqrt)
TESSERA_SPARSE_UNARY(sin)
TESSERA_SPARSE_UNARY(tan)
TESSERA_SPARSE_UNARY(tanh)
TESSERA_SPARSE_UNARY(sinh)
TESSERA_SPARSE_UNARY(asin)
TESSERA_SPARSE_UNARY(asinh)
TESSERA_SPARSE_UNARY(atan)
TESSERA_SPARSE_UNARY(atanh)
TESSERA_SPARSE_UNARY(relu)
TESSERA_SPARSE_UNARY(sgn)
TESSERA_SPARSE_UNARY(sign)
TESSERA_SPARSE_UNARY(expm1)
TESSERA_SPARSE_UNARY(log1p)
TESSERA_SPARSE_UNARY(erf)
TESSERA_SPARSE_UNARY(trunc)
TESSERA_SPARSE_UNARY(floor)
TESSERA_SPARSE_UNARY(ceil)
TESSERA_SPARSE_UNARY(round)
TESSERA_SPARSE_UNARY(frac)
TESSERA_SPARSE_UNARY(square)
TESSERA_SPARSE_UNARY(angle)
TESSERA_SPARSE_UNARY(deg2rad)
TESSERA_SPARSE_UNARY(rad2deg)
TESSERA_SPARSE_UNARY(isnan)
TESSERA_SPARSE_UNARY(isinf)
TESSERA_SPARSE_UNARY(signbit)
#undef TESSERA_SPARSE_UNARY

// pow with a number exponent (pow.Tensor_Scalar wraps it): zero-preserving unless the
// exponent is 0, and not linear, so on the values of the coalesced tensor.
Tensor pow_sparse(const Tensor& self, const Tensor& exponent) {
  TORCH_CHECK_NOT_IMPLEMENTED(c10::isSparseLayout(self.layout()) && exponent.layout() == c10::kStrided &&
                                  exponent.unsafeGetTensorImpl()->is_wrapped_number(),
                              "pow: a sparse tensor takes a number exponent only (torch.pow(sparse, 2.0)), got ",
                              sparse::layout_word(self.layout()), " and ", sparse::layout_word(exponent.layout()),
                              exponent.layout() == c10::kStrided ? " tensor" : "");
  TORCH_CHECK(exponent.item().toComplexDouble() != c10::complex<double>(0, 0), "pow: cannot raise to zeroth power on sparse tensor; it would make the result "
              "tensor dense");
  const c10::ScalarType result = native::result_type(self, exponent);
  TORCH_CHECK(result == self.scalar_type(), "Found dtype ", c10::toString(self.scalar_type()), " but expected ",
              c10::toString(result));
  return unary_on_values(self, [&](const Tensor& v) { return at::pow(v, exponent); });
}

// ---- in place: the op on the values member, as torch's in-place kernels do. On COO a
// nonlinear op needs one entry per position (f(a) + f(b) is not f(a + b)), so it refuses
// an uncoalesced tensor in torch's words; a linear one (neg, deg2rad, rad2deg) takes any.
// The write is below autograd, so the member's version counter is bumped here: a tensor
// that values() gave earlier (sharing that counter) is seen as modified, as in torch.

namespace {
template <class F>
Tensor& unary_on_values_(Tensor& self, const char* op, bool linear, F&& apply) {
  if (self.layout() == c10::kSparse) {
    const SparseTensorImpl* impl = get_sparse_impl(self, op);
    TORCH_CHECK(linear || impl->coalesced(), op, " requires coalesced input");
    Tensor values = impl->values();
    apply(values);
    values.unsafeGetTensorImpl()->bump_version();
    return self;
  }
  Tensor values = get_sparse_csr_impl(self, op)->values();
  apply(values);
  values.unsafeGetTensorImpl()->bump_version();
  return self;
}
}  // namespace

#define TESSERA_SPARSE_UNARY_(name, linear)                                                              \
  Tensor& sparse_unary_##name##_(Tensor& self) {                                                         \
    return unary_on_values_(self, #name "_", linear, [](Tensor& v) { v.name##_(); });                    \
  }
TESSERA_SPARSE_UNARY_(neg, true)
TESSERA_SPARSE_UNARY_(deg2rad, true)
TESSERA_SPARSE_UNARY_(rad2deg, true)
TESSERA_SPARSE_UNARY_(abs, false)
TESSERA_SPARSE_UNARY_(sqrt, false)
TESSERA_SPARSE_UNARY_(sin, false)
TESSERA_SPARSE_UNARY_(tan, false)
TESSERA_SPARSE_UNARY_(tanh, false)
TESSERA_SPARSE_UNARY_(sinh, false)
TESSERA_SPARSE_UNARY_(asin, false)
TESSERA_SPARSE_UNARY_(asinh, false)
TESSERA_SPARSE_UNARY_(atan, false)
TESSERA_SPARSE_UNARY_(atanh, false)
TESSERA_SPARSE_UNARY_(relu, false)
TESSERA_SPARSE_UNARY_(sgn, false)
TESSERA_SPARSE_UNARY_(sign, false)
TESSERA_SPARSE_UNARY_(expm1, false)
TESSERA_SPARSE_UNARY_(log1p, false)
TESSERA_SPARSE_UNARY_(erf, false)
TESSERA_SPARSE_UNARY_(trunc, false)
TESSERA_SPARSE_UNARY_(floor, false)
TESSERA_SPARSE_UNARY_(ceil, false)
TESSERA_SPARSE_UNARY_(round, false)
TESSERA_SPARSE_UNARY_(frac, false)
TESSERA_SPARSE_UNARY_(square, false)
#undef TESSERA_SPARSE_UNARY_

// nan_to_num maps 0 to 0, so it is one of the family (with its three arguments).
Tensor nan_to_num_sparse(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                         std::optional<double> neginf) {
  return unary_on_values(self, [&](const Tensor& v) { return at::nan_to_num(v, nan, posinf, neginf); });
}

Tensor& nan_to_num_sparse_(Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                           std::optional<double> neginf) {
  return unary_on_values_(self, "nan_to_num_", false, [&](Tensor& v) { v.nan_to_num_(nan, posinf, neginf); });
}

// fill_ of a compressed tensor writes its specified elements (torch's rule; the pattern
// stays). A COO tensor has no such kernel in torch, and none here.
Tensor& fill_sparse_compressed_(Tensor& self, const c10::Scalar& value) {
  return unary_on_values_(self, "fill_", true, [&](Tensor& v) { v.fill_(value); });
}

}  // namespace at::inline tessera::native
