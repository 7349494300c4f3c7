// torch.linalg's functions written over the LAPACK kernels (Factorizations.cpp,
// Decompositions.cpp) and other ops, so they differentiate through those kernels'
// derivatives and run on Meta through theirs: the error-checking forms of the _ex ops,
// the legacy torch.* names, norms, pinv, rank, cond and the small helpers (vecdot,
// vander, cross, multi_dot, matrix_power, tensorinv/tensorsolve).
#include <aten/native/Broadcast.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/ops/Functions.h>

#include <functional>
#include <limits>
#include <vector>

namespace at::inline tessera::native {

// ---- LU family
std::tuple<Tensor, Tensor> linalg_lu_factor(const Tensor& A, bool pivot) {
  auto [LU, pivots, info] = at::linalg_lu_factor_ex(A, pivot, false);
  check_linalg_errors(info, "torch.linalg.lu_factor", LinalgFailure::LuZeroPivot, A.dim() > 2);
  return {LU, pivots};
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& A, bool pivot) {
  auto [LU, pivots, info] = at::linalg_lu_factor_ex(A, pivot, false);
  return at::lu_unpack(LU, pivots, true, true);
}

Tensor lu_solve(const Tensor& self, const Tensor& LU_data, const Tensor& LU_pivots) {
  return at::linalg_lu_solve(LU_data, LU_pivots, self, true, false);
}

// ---- solve and inverse
std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors) {
  auto [X, LU, pivots, info] = at::_linalg_solve_ex(A, B, left, check_errors);
  return {X, info};
}
Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left) {
  return std::get<0>(at::_linalg_solve_ex(A, B, left, true));
}
Tensor linalg_inv(const Tensor& A) { return std::get<0>(at::linalg_inv_ex(A, true)); }
Tensor inverse(const Tensor& self) { return at::linalg_inv(self); }

// ---- determinants
Tensor linalg_det(const Tensor& A) { return std::get<0>(at::_linalg_det(A)); }
Tensor det(const Tensor& self) { return at::linalg_det(self); }
std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor& A) {
  auto [sign, logabsdet, LU, pivots] = at::_linalg_slogdet(A);
  return {sign, logabsdet};
}
std::tuple<Tensor, Tensor> slogdet(const Tensor& self) { return at::linalg_slogdet(self); }
// log(det): NaN where the determinant is negative, -inf where it is zero. A complex
// determinant's log is log(sign) + log|det| (the principal branch; -inf+nanj at zero).
Tensor logdet(const Tensor& self) {
  auto [sign, logabsdet] = at::linalg_slogdet(self);
  if (self.is_complex()) return sign.log() + logabsdet;
  return at::where(at::lt(sign, 0), at::full({}, std::numeric_limits<double>::quiet_NaN(), logabsdet.options()), logabsdet);
}

// ---- Cholesky
Tensor linalg_cholesky(const Tensor& self, bool upper) { return std::get<0>(at::linalg_cholesky_ex(self, upper, true)); }
Tensor cholesky(const Tensor& self, bool upper) { return at::linalg_cholesky(self, upper); }
// A X = B with A = L L^H (or U^H U): two triangular solves.
Tensor cholesky_solve(const Tensor& self, const Tensor& input2, bool upper) {
  TORCH_CHECK(self.dim() >= 2, "b should have at least 2 dimensions, but has ", self.dim(), " dimensions instead");
  TORCH_CHECK(input2.dim() >= 2, "u should have at least 2 dimensions, but has ", input2.dim(), " dimensions instead");
  const Tensor L = upper ? mH(input2) : input2;
  const Tensor Y = at::linalg_solve_triangular(L, self, false, true, false);
  return at::linalg_solve_triangular(mH(L), Y, true, true, false);
}
Tensor cholesky_inverse(const Tensor& self, bool upper) {
  TORCH_CHECK(self.dim() >= 2, "cholesky_inverse: The input tensor must have at least 2 dimensions.");
  const Tensor identity = at::eye(self.size(-1), self.options()).expand(self.sizes());
  return at::cholesky_solve(identity, self, upper);
}

std::tuple<Tensor, Tensor> triangular_solve(const Tensor& self, const Tensor& A, bool upper, bool transpose,
                                            bool unitriangular) {
  TORCH_CHECK(self.dim() >= 2, "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has ",
              self.dim(), " dimensions instead");
  TORCH_CHECK(A.dim() >= 2, "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has ", A.dim(),
              " dimensions instead");
  const Tensor op_A = transpose ? mT(A) : A;
  const Tensor X = at::linalg_solve_triangular(op_A, self, transpose ? !upper : upper, true, unitriangular);
  std::vector<int64_t> batch = infer_size(A.sizes().slice(0, A.dim() - 2), self.sizes().slice(0, self.dim() - 2));
  batch.push_back(A.size(-2));
  batch.push_back(A.size(-1));
  return {X, A.expand(batch).clone()};
}

// ---- eigh and the SVD
std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& self, std::string_view UPLO) {
  return at::_linalg_eigh(self, UPLO, true);
}
// The eigenvectors are computed only when a gradient will need them.
Tensor linalg_eigvalsh(const Tensor& self, std::string_view UPLO) {
  return std::get<0>(at::_linalg_eigh(self, UPLO, self.requires_grad()));
}
std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices, std::optional<std::string_view> driver) {
  return at::_linalg_svd(A, full_matrices, true, driver);
}
Tensor linalg_svdvals(const Tensor& A, std::optional<std::string_view> driver) {
  return std::get<1>(at::_linalg_svd(A, false, A.requires_grad(), driver));
}
// torch.svd returns V (Vh^H), not Vh, and zeros for U and V without compute_uv.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& self, bool some, bool compute_uv) {
  TORCH_CHECK(self.dim() >= 2, "linalg.svd: input should have at least 2 dimensions, but has ", self.dim(),
              " dimensions instead");
  if (!compute_uv) {
    const Tensor S = at::linalg_svdvals(self, std::nullopt);
    const int64_t m = self.size(-2), n = self.size(-1);
    std::vector<int64_t> u(self.sizes().begin(), self.sizes().end()), v = u;
    u.back() = m;
    v[v.size() - 2] = n;
    return {at::zeros(u, self.options()), S, at::zeros(v, self.options())};
  }
  auto [U, S, Vh] = at::_linalg_svd(self, !some, true, std::nullopt);
  return {U, S, mH(Vh)};  // a conj view for complex input, as torch's V
}
std::tuple<Tensor, Tensor> qr(const Tensor& self, bool some) { return at::linalg_qr(self, some ? "reduced" : "complete"); }

// ---- products and helpers
Tensor linalg_matrix_power(const Tensor& self, int64_t n) {
  TORCH_CHECK(self.dim() >= 2, "linalg.matrix_power: The input tensor A must have at least 2 dimensions.");
  TORCH_CHECK(self.size(-1) == self.size(-2), "linalg.matrix_power: A must be batches of square matrices, but they are ",
              self.size(-2), " by ", self.size(-1), " matrices");
  // The identity, still connected to self (a zero gradient), as torch records it.
  if (n == 0) return self.clone().copy_(at::eye(self.size(-1), self.options()).expand(self.sizes()));
  Tensor base = n < 0 ? at::linalg_inv(self) : self;
  uint64_t e = n < 0 ? static_cast<uint64_t>(-(n + 1)) + 1 : static_cast<uint64_t>(n);
  if (e == 1) return n < 0 ? base : base.clone();
  Tensor result;
  while (e > 0) {
    if (e & 1) result = result.defined() ? at::matmul(result, base) : base;
    e >>= 1;
    if (e > 0) base = at::matmul(base, base);
  }
  return result;
}
Tensor matrix_power(const Tensor& self, int64_t n) { return at::linalg_matrix_power(self, n); }

// The chain's cheapest parenthesisation (the classic O(k^3) dynamic programme), then the
// products in that order; a 1-D first or last operand is a row or column vector whose
// dimension the result drops.
Tensor linalg_multi_dot(TensorList tensors) {
  const size_t k = tensors.size();
  TORCH_CHECK(k >= 2, "multi_dot(): expected at least 2 tensors but got ", k);
  std::vector<Tensor> mats(tensors.begin(), tensors.end());
  const bool first_vector = mats[0].dim() == 1, last_vector = mats[k - 1].dim() == 1;
  TORCH_CHECK(mats[0].dim() == 1 || mats[0].dim() == 2, "multi_dot(): the first tensor must be 1D or 2D but got ",
              mats[0].dim(), "D");
  TORCH_CHECK(mats[k - 1].dim() == 1 || mats[k - 1].dim() == 2, "multi_dot(): the last tensor must be 1D or 2D but got ",
              mats[k - 1].dim(), "D");
  for (size_t i = 1; i + 1 < k; ++i) {
    TORCH_CHECK(mats[i].dim() == 2, "multi_dot(): tensor ", i, " must be 2D but got ", mats[i].dim(), "D");
  }
  if (first_vector) mats[0] = mats[0].unsqueeze(0);
  if (last_vector) mats[k - 1] = mats[k - 1].unsqueeze(1);
  for (size_t i = 1; i < k; ++i) {
    TORCH_CHECK(mats[i].scalar_type() == mats[0].scalar_type(), "multi_dot(): all tensors must have be the same dtype but tensor 0 is ",
                mats[0].scalar_type(), " and tensor ", i, " ", mats[i].scalar_type());
    TORCH_CHECK(mats[i - 1].size(1) == mats[i].size(0), "multi_dot(): tensors ", i - 1, " and ", i,
                " with shapes ", mats[i - 1].sizes(), " and ", mats[i].sizes(), " cannot be multiplied");
  }
  std::vector<int64_t> dims(k + 1);
  for (size_t i = 0; i < k; ++i) dims[i] = mats[i].size(0);
  dims[k] = mats[k - 1].size(1);
  std::vector<std::vector<int64_t>> cost(k, std::vector<int64_t>(k, 0)), split(k, std::vector<int64_t>(k, 0));
  for (size_t len = 1; len < k; ++len) {
    for (size_t i = 0; i + len < k; ++i) {
      const size_t j = i + len;
      cost[i][j] = std::numeric_limits<int64_t>::max();
      for (size_t s = i; s < j; ++s) {
        const int64_t c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1];
        if (c < cost[i][j]) {
          cost[i][j] = c;
          split[i][j] = static_cast<int64_t>(s);
        }
      }
    }
  }
  std::function<Tensor(size_t, size_t)> product = [&](size_t i, size_t j) -> Tensor {
    if (i == j) return mats[i];
    const size_t s = static_cast<size_t>(split[i][j]);
    return at::mm(product(i, s), product(s + 1, j));
  };
  Tensor result = product(0, k - 1);
  if (first_vector) result = result.squeeze(0);
  if (last_vector) result = result.squeeze(-1);
  return result;
}

Tensor linalg_matmul(const Tensor& self, const Tensor& other) { return at::matmul(self, other); }

Tensor linalg_vecdot(const Tensor& x, const Tensor& y, int64_t dim) {
  TORCH_CHECK(x.scalar_type() == y.scalar_type(), "linalg.vecdot: Expected x and y to have the same dtype, but found x of type ",
              x.scalar_type(), " and y of type ", y.scalar_type(), " instead");
  if (!x.is_complex()) return (x * y).sum({dim});
  return (x.conj() * y).sum({dim});
}

Tensor linalg_vander(const Tensor& x, std::optional<int64_t> N) {
  TORCH_CHECK(x.dim() >= 1, "linalg.vander: x must have at least one dimension");
  const int64_t n = N.value_or(x.size(-1));
  TORCH_CHECK(n > 1, "N must be greater than 1.");
  std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  sizes.push_back(n - 1);
  const Tensor powers = x.unsqueeze(-1).expand(sizes).cumprod(-1);
  sizes.back() = 1;
  return at::cat({at::ones(sizes, powers.options()), powers}, -1);
}

// torch.vander: one dimension only, decreasing powers unless increasing, N = 0 allowed,
// integers and bools computed as int64.
Tensor vander(const Tensor& x, std::optional<int64_t> N, bool increasing) {
  TORCH_CHECK(x.dim() == 1, "x must be a one-dimensional tensor.");
  const int64_t n = N.value_or(x.size(0));
  TORCH_CHECK(n >= 0, "N must be non-negative.");
  const Tensor base = x.to(c10::promoteTypes(x.scalar_type(), c10::kLong));
  // (as torch, N <= 1 gives constant ones with no graph)
  if (n <= 1) return at::ones({x.size(0), n}, base.options());
  const Tensor powers = base.unsqueeze(-1).expand({x.size(0), n - 1}).cumprod(-1);
  const Tensor result = at::cat({at::ones({x.size(0), 1}, base.options()), powers}, -1);
  return increasing ? result : result.flip({-1});
}

Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim) {
  TORCH_CHECK(self.dim() == other.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  const std::vector<int64_t> shape = infer_size(self.sizes(), other.sizes());
  const int64_t d = dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim;
  TORCH_CHECK_INDEX(d >= 0 && d < static_cast<int64_t>(shape.size()), "Dimension out of range (expected to be in range of [",
                    -static_cast<int64_t>(shape.size()), ", ", shape.size() - 1, "], but got ", dim, ")");
  TORCH_CHECK(self.size(d) == 3 && other.size(d) == 3, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", self.size(d), " and ", other.size(d));
  const Tensor a = self.expand(shape), b = other.expand(shape);
  // c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}, indices mod 3.
  return at::roll(a, {-1}, {d}) * at::roll(b, {-2}, {d}) - at::roll(a, {-2}, {d}) * at::roll(b, {-1}, {d});
}

Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  if (dim) return at::linalg_cross(self, other, *dim);
  // torch's legacy default: the first dimension of size 3.
  const std::vector<int64_t> shape = infer_size(self.sizes(), other.sizes());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 3) return at::linalg_cross(self, other, static_cast<int64_t>(i));
  }
  TORCH_CHECK(false, "no dimension of size 3 in input");
  return Tensor();
}

Tensor linalg_diagonal(const Tensor& A, int64_t offset, int64_t dim1, int64_t dim2) {
  return A.diagonal(offset, dim1, dim2);
}

Tensor linalg_tensorinv(const Tensor& self, int64_t ind) {
  TORCH_CHECK(ind > 0, "Expected a strictly positive integer for 'ind', but got ", ind);
  std::vector<int64_t> out_shape(self.sizes().begin() + ind, self.sizes().end());
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < ind && i < self.dim(); ++i) rows *= self.size(i);
  for (int64_t i = ind; i < self.dim(); ++i) cols *= self.size(i);
  TORCH_CHECK(rows == cols, "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got ",
              cols, " != ", rows);
  out_shape.insert(out_shape.end(), self.sizes().begin(), self.sizes().begin() + ind);
  return at::linalg_inv(self.reshape({rows, cols})).reshape(out_shape);
}

Tensor linalg_tensorsolve(const Tensor& self, const Tensor& other, std::optional<IntArrayRef> dims) {
  Tensor A = self;
  if (dims && !dims->empty()) {
    std::vector<int64_t> dest;
    for (size_t i = 0; i < dims->size(); ++i) dest.push_back(self.dim() - static_cast<int64_t>(dims->size()) + static_cast<int64_t>(i));
    A = at::movedim(self, *dims, dest);
  }
  const int64_t rows = other.numel();
  std::vector<int64_t> x_shape(A.sizes().begin() + other.dim(), A.sizes().end());
  int64_t cols = 1;
  for (int64_t s : x_shape) cols *= s;
  TORCH_CHECK(rows == cols, "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got ",
              cols, " != ", rows);
  return at::linalg_solve(A.reshape({rows, cols}), other.reshape({rows}), true).reshape(x_shape);
}

}  // namespace at::inline tessera::native
