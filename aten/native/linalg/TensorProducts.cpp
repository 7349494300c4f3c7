// Products built over mm and broadcasting mul: tensordot (contracted dims moved together,
// then one matrix product), inner, kron and addr. Autograd and Meta come from the ops they
// call. Checks and messages are torch's.
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <vector>

namespace at::inline tessera::native {

// Sum over pairs (dims_self[i], dims_other[i]): self's free dims, then other's.
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other) {
  TORCH_CHECK(dims_self.size() == dims_other.size(), "both dimension lists should have same length");
  std::vector<bool> contracted_self(static_cast<size_t>(self.dim())), contracted_other(static_cast<size_t>(other.dim()));
  std::vector<int64_t> perm_self, perm_other, out_sizes;
  int64_t k = 1;
  for (size_t i = 0; i < dims_self.size(); ++i) {
    const int64_t a = wrap_dim(dims_self[i], self.dim()), b = wrap_dim(dims_other[i], other.dim());
    TORCH_CHECK(self.size(a) == other.size(b), "contracted dimensions need to match, but first has size ",
                self.size(a), " in dim ", dims_self[i], " and second has size ", other.size(b), " in dim ",
                dims_other[i]);
    TORCH_CHECK(!contracted_self[static_cast<size_t>(a)] && !contracted_other[static_cast<size_t>(b)],
                "tensordot: a dimension is contracted twice");
    contracted_self[static_cast<size_t>(a)] = contracted_other[static_cast<size_t>(b)] = true;
    k *= self.size(a);
  }
  int64_t m = 1, n = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (contracted_self[static_cast<size_t>(d)]) continue;
    perm_self.push_back(d);
    out_sizes.push_back(self.size(d));
    m *= self.size(d);
  }
  for (int64_t d : dims_self) perm_self.push_back(wrap_dim(d, self.dim()));
  for (int64_t d : dims_other) perm_other.push_back(wrap_dim(d, other.dim()));
  for (int64_t d = 0; d < other.dim(); ++d) {
    if (contracted_other[static_cast<size_t>(d)]) continue;
    perm_other.push_back(d);
    out_sizes.push_back(other.size(d));
    n *= other.size(d);
  }
  const Tensor a = self.permute(perm_self).reshape({m, k});
  const Tensor b = other.permute(perm_other).reshape({k, n});
  return at::mm(a, b).reshape(out_sizes);
}

Tensor inner(const Tensor& self, const Tensor& other) {
  if (self.dim() == 0 || other.dim() == 0) return self * other;
  TORCH_CHECK(self.size(-1) == other.size(-1), "inner() the last dimension must match on both input tensors but got "
              "shapes ", self.sizes(), " and ", other.sizes());
  return at::tensordot(self, other, {-1}, {-1});
}

// Every product self[i] * other[j], laid out as blocks: dims are aligned from the right and
// each output dim is self's size times other's.
Tensor kron(const Tensor& self, const Tensor& other) {
  const int64_t rank = std::max(self.dim(), other.dim());
  std::vector<int64_t> a_shape, b_shape, out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t sa = d < rank - self.dim() ? 1 : self.size(d - (rank - self.dim()));
    const int64_t sb = d < rank - other.dim() ? 1 : other.size(d - (rank - other.dim()));
    a_shape.insert(a_shape.end(), {sa, 1});
    b_shape.insert(b_shape.end(), {1, sb});
    out_shape.push_back(sa * sb);
  }
  return (self.reshape(a_shape) * other.reshape(b_shape)).reshape(out_shape);
}

namespace {

void check_addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  TORCH_CHECK(vec1.dim() == 1, "addr: Expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  TORCH_CHECK(vec2.dim() == 1, "addr: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  const c10::ScalarType t = self.scalar_type();
  if (t == c10::kBool) return;
  TORCH_CHECK(!beta.isBoolean(), "Boolean beta only supported for Boolean results.");
  TORCH_CHECK(!alpha.isBoolean(), "Boolean alpha only supported for Boolean results.");
  if (c10::isIntegralType(t, false)) {
    TORCH_CHECK(!beta.isFloatingPoint() && !beta.isComplex(),
                "For integral input tensors, argument beta must not be a floating point number.");
    TORCH_CHECK(!alpha.isFloatingPoint() && !alpha.isComplex(),
                "For integral input tensors, argument alpha must not be a floating point number.");
  }
}

// beta * self + alpha * outer(vec1, vec2); beta == 0 ignores self (NaN included), as torch;
// bool tensors take (beta and self) or (alpha and outer).
Tensor addr_value(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  check_addr(self, vec1, vec2, beta, alpha);
  // torch's expand message for a self that does not broadcast to the grid
  const Tensor base = self.expand({vec1.size(0), vec2.size(0)});
  const bool bool_vectors = vec1.scalar_type() == c10::kBool || vec2.scalar_type() == c10::kBool;
  const bool complex_alpha =
      alpha.isComplex() && !c10::isComplexType(c10::promoteTypes(vec1.scalar_type(), vec2.scalar_type()));
  if (bool_vectors || complex_alpha || beta.equal(0)) {
    const Tensor outer = at::outer(vec1, vec2);
    if (outer.scalar_type() == c10::kBool && self.scalar_type() == c10::kBool) {
      const Tensor scaled = alpha.toBool() ? outer : at::zeros_like(outer);
      return beta.toBool() ? at::logical_or(base, scaled) : scaled;
    }
    const Tensor product = alpha.equal(1) ? outer : outer * alpha;
    // (zeros of self's dtype keep the result's promotion to it)
    if (beta.equal(0)) return product + at::zeros_like(base);
    return (beta.equal(1) ? base : base * beta) + product;
  }
  const Tensor scaled_base = beta.equal(1) ? base : base * beta;
  // One pass, as torch's kernel: base + alpha * vec1[i] * vec2[j] over the broadcast grid,
  // with no outer-product tensor in between.
  return at::addcmul(scaled_base, vec1.unsqueeze(1), vec2.unsqueeze(0), alpha);
}

}  // namespace

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  return addr_value(self, vec1, vec2, beta, alpha);
}

Tensor& addr_(Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  return self.copy_(addr_value(self, vec1, vec2, beta, alpha));
}

// The product of a chain of matrices, left to right (torch warns it is deprecated in favour
// of linalg.multi_dot; the Python wrapper does).
Tensor chain_matmul(TensorList matrices) {
  TORCH_CHECK(!matrices.empty(), "chain_matmul(): Expected one or more matrices");
  for (size_t i = 0; i < matrices.size(); ++i) {
    TORCH_CHECK(matrices[i].dim() == 2, "Tensor dimension is ", matrices[i].dim(), ", expected 2 instead.");
  }
  if (matrices.size() == 1) return matrices[0].clone();
  Tensor product = at::mm(matrices[0], matrices[1]);
  for (size_t i = 2; i < matrices.size(); ++i) product = at::mm(product, matrices[i]);
  return product;
}

}  // namespace at::inline tessera::native
