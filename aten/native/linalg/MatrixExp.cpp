// linalg.matrix_exp by scaling and squaring with Pade approximants (Higham, "The scaling
// and squaring method for the matrix exponential revisited", 2005): each matrix of a batch
// is scaled by 2^-s so that its 1-norm is below the degree's bound theta, the [m/m] Pade
// approximant r(A) = (V - U)^-1 (V + U) is solved for, and the result squared s times.
// Degree 13 for double, 7 for float (the bounds that keep the backward error below each
// precision's unit roundoff). The derivative (derivatives.yaml) is the exponential of a
// 2n x 2n block matrix, so it is differentiable again.
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace at::inline tessera::native {

namespace {

// The [13/13] and [7/7] Pade coefficients b_0..b_m of exp.
constexpr std::array<double, 14> kPade13 = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                            1187353796428800.0,  129060195264000.0,   10559470521600.0,
                                            670442572800.0,      33522128640.0,       1323241920.0,
                                            40840800.0,          960960.0,            16380.0,
                                            182.0,               1.0};
constexpr std::array<double, 8> kPade7 = {17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0};
// The largest 1-norm each degree takes unscaled (Higham 2005, table 2.3; single precision
// from its table for u = 2^-24).
constexpr double kTheta13 = 5.371920351148152;
constexpr double kTheta7Float = 3.925724783138660;

// U (odd part) and V (even part) of the Pade approximant of degree 13 or 7 at A.
std::pair<Tensor, Tensor> pade_parts(const Tensor& A, bool degree13) {
  const Tensor I = at::eye(A.size(-1), A.options()).expand(A.sizes());
  const Tensor A2 = at::matmul(A, A);
  const Tensor A4 = at::matmul(A2, A2);
  const Tensor A6 = at::matmul(A4, A2);
  if (!degree13) {
    const auto& b = kPade7;
    const Tensor U = at::matmul(A, A6 * b[7] + A4 * b[5] + A2 * b[3] + I * b[1]);
    const Tensor V = A6 * b[6] + A4 * b[4] + A2 * b[2] + I * b[0];
    return {U, V};
  }
  const auto& b = kPade13;
  const Tensor U = at::matmul(A, at::matmul(A6, A6 * b[13] + A4 * b[11] + A2 * b[9]) + A6 * b[7] + A4 * b[5] +
                                     A2 * b[3] + I * b[1]);
  const Tensor V = at::matmul(A6, A6 * b[12] + A4 * b[10] + A2 * b[8]) + A6 * b[6] + A4 * b[4] + A2 * b[2] + I * b[0];
  return {U, V};
}

Tensor matrix_exp_impl(const Tensor& A, bool meta) {
  // torch's words: the shape checks name linalg.matrix_exp, the dtype check matrix_exp.
  TORCH_CHECK(A.dim() >= 2, "linalg.matrix_exp: The input tensor A must have at least 2 dimensions.");
  TORCH_CHECK(A.size(-1) == A.size(-2), "linalg.matrix_exp: A must be batches of square matrices, but they are ",
              A.size(-2), " by ", A.size(-1), " matrices");
  check_linalg_input(A, "matrix_exp");
  if (meta || A.numel() == 0) return at::empty(A.sizes(), A.options());
  const int64_t n = A.size(-1);
  if (n == 1) return A.exp();
  // The degree follows the precision of the real type, as torch picks it.
  const bool is_double = real_dtype(A) == c10::kDouble;
  const double theta = is_double ? kTheta13 : kTheta7Float;
  // s per matrix: the fewest halvings that bring its 1-norm (largest column sum) below theta.
  const Tensor norms = A.abs().sum(IntArrayRef{-2}).amax(IntArrayRef{-1}).to(c10::kDouble);
  const Tensor steps = at::ceil(at::log2(norms / theta)).clamp_min(0).nan_to_num(0, 0, 0);
  const int64_t most = static_cast<int64_t>(steps.max().item().toDouble());
  const Tensor scaled = most == 0 ? A : A * at::pow(2.0, -steps).to(A.scalar_type()).unsqueeze(-1).unsqueeze(-1);
  const auto [U, V] = pade_parts(scaled, is_double);
  Tensor X = at::linalg_solve(V - U, V + U);
  for (int64_t k = 0; k < most; ++k) {
    // Only the matrices scaled more than k times square again.
    const Tensor again = steps.gt(static_cast<double>(k)).unsqueeze(-1).unsqueeze(-1);
    X = at::where(again, at::matmul(X, X), X);
  }
  return X;
}

}  // namespace

Tensor linalg_matrix_exp_cpu(const Tensor& self) { return matrix_exp_impl(self, false); }
Tensor linalg_matrix_exp_meta(const Tensor& self) { return matrix_exp_impl(self, true); }
Tensor matrix_exp(const Tensor& self) { return at::linalg_matrix_exp(self); }

}  // namespace at::inline tessera::native
