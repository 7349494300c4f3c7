// Backward formulas of the LAPACK-backed linalg ops, for real inputs: each written with
// differentiable ops (triangular solves, matmuls, the ops themselves), so a backward pass
// recorded with create_graph=True differentiates again. The derivations are the standard
// matrix-calculus ones; comments give the identity each formula comes from.
#include <autograd/FunctionsManual.h>

#include <aten/core/TensorOperators.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <string_view>
#include <vector>

namespace torch::autograd::generated::details {

namespace {

Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }

// X with its lower part (below the diagonal) from tril(X, -1) of `lower` and the rest
// from triu(X) of `upper`: the grad of a compact LU from the grads of L and U.
Tensor lu_parts(const Tensor& lower, const Tensor& upper) { return lower.tril(-1) + upper.triu(); }

// gA for a square A = P L U from the grads of L (strictly lower part) and U (upper):
// dA = P (dL U + L dU) gives gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T.
Tensor lu_square_backward(const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L, const Tensor& U) {
  const Tensor phi = lu_parts(at::matmul(mT(L), gL), at::matmul(gU, mT(U)));
  const Tensor right = at::linalg_solve_triangular(mT(U), phi, /*upper=*/false, /*left=*/false, false);
  const Tensor both = at::linalg_solve_triangular(mT(L), right, /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
  return at::matmul(P, both);
}

}  // namespace

Tensor lu_factor_ex_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots) {
  auto [P, L, U] = at::lu_unpack(LU, pivots, true, true);
  const int64_t m = LU.size(-2), n = LU.size(-1);
  const Tensor gL = grad.narrow(-1, 0, std::min(m, n)).tril(-1);
  const Tensor gU = grad.narrow(-2, 0, std::min(m, n)).triu();
  if (m == n) return lu_square_backward(gL, gU, P, L, U);
  if (m < n) {
    // A = P L [U1 U2]: U2 = L^-1 P^T A2 gives gA2 = P L^-T gU2, and (through L^-1)
    // -P^T gA2 U2^T to gL.
    const Tensor U1 = U.narrow(-1, 0, m), U2 = U.narrow(-1, m, n - m);
    const Tensor gU2 = gU.narrow(-1, m, n - m);
    const Tensor gA2 = at::matmul(P, at::linalg_solve_triangular(mT(L), gU2, true, true, true));
    const Tensor gL1 = gL - at::matmul(at::matmul(mT(P), gA2), mT(U2)).tril(-1);
    return at::cat({lu_square_backward(gL1, gU.narrow(-1, 0, m), P, L, U1), gA2}, -1);
  }
  // m > n: P^T A = [L1; L2] U: L2 = B2 U^-1 gives gB2 = gL2 U^-T, and (through U^-1)
  // -L2^T gB2 to gU.
  const Tensor L1 = L.narrow(-2, 0, n), L2 = L.narrow(-2, n, m - n);
  const Tensor gL2 = grad.narrow(-2, n, m - n);
  const Tensor gB2 = at::linalg_solve_triangular(mT(U), gL2, false, false, false);
  const Tensor gU1 = gU - at::matmul(mT(L2), gB2).triu();
  const Tensor identity = at::eye(n, LU.options());
  const Tensor gB1 = lu_square_backward(gL.narrow(-2, 0, n), gU1, identity, L1, U);
  return at::matmul(P, at::cat({gB1, gB2}, -2));
}

Tensor lu_unpack_backward(const Tensor& grad_L, const Tensor& grad_U, int64_t m, int64_t n) {
  if (m == n) return lu_parts(grad_L, grad_U);
  if (m < n) {  // L is m x m, U is m x n
    const Tensor left = grad_L.tril(-1) + grad_U.narrow(-1, 0, m).triu();
    return at::cat({left, grad_U.narrow(-1, m, n - m)}, -1);
  }
  // L is m x n, U is n x n
  const Tensor top = grad_L.narrow(-2, 0, n).tril(-1) + grad_U.triu();
  return at::cat({top, grad_L.narrow(-2, n, m - n)}, -2);
}

Tensor lu_solve_LU_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots, const Tensor& X, bool left,
                            bool adjoint) {
  // op(A) X = B: g_op(A) = -gB X^T (left) or -X^T gB (right), gB = op(A)^-T gX.
  const Tensor gB = at::linalg_lu_solve(LU, pivots, grad, left, !adjoint);
  Tensor gA = left ? -at::matmul(gB, mT(X)) : -at::matmul(mT(X), gB);
  if (adjoint) gA = mT(gA);
  // A = P L U: gL = tril(P^T gA U^T, -1), gU = triu(L^T P^T gA).
  auto [P, L, U] = at::lu_unpack(LU, pivots, true, true);
  const Tensor PtgA = at::matmul(mT(P), gA);
  return lu_parts(at::matmul(PtgA, mT(U)), at::matmul(mT(L), PtgA));
}

std::tuple<Tensor, Tensor> linalg_solve_backward(const Tensor& grad, const Tensor& X, const Tensor& A, const Tensor& B,
                                                 const Tensor& LU, const Tensor& pivots, bool left,
                                                 std::array<bool, 2> grad_input_mask) {
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes().equals(A.sizes().slice(0, A.dim() - 1)));
  const int64_t vdim = left ? -1 : -2;
  const Tensor gX = vector ? grad.unsqueeze(vdim) : grad;
  const Tensor X2 = vector ? X.unsqueeze(vdim) : X;
  // gB = A^-T gX (left) or gX A^-T: through A itself when the backward is recorded (so it
  // differentiates again), through the saved LU otherwise.
  const Tensor gB = c10::GradMode::is_enabled() ? at::linalg_solve(mT(A), gX, left)
                                                : at::linalg_lu_solve(LU, pivots, gX, left, true);
  Tensor gA;
  if (grad_input_mask[0]) gA = left ? -at::matmul(gB, mT(X2)) : -at::matmul(mT(X2), gB);
  Tensor gB_out;
  if (grad_input_mask[1]) gB_out = vector ? gB.squeeze(vdim) : gB;
  return {gA, gB_out};
}

Tensor linalg_det_backward(const Tensor& grad, const Tensor& det, const Tensor& A) {
  if (A.numel() == 0) return at::zeros_like(A);
  const Tensor scale = (grad * det).unsqueeze(-1).unsqueeze(-1);
  if (!at::eq(det, 0).any().item().toBool()) {
    // d det = det * tr(A^-1 dA): gA = g det A^-T.
    return scale * mT(at::linalg_inv(A));
  }
  // Some matrix is singular: the adjugate from the SVD, valid for every matrix. With
  // A = U S V^T, det = det(U) det(V) prod(s), and d prod(s)/ds_i = prod_{j != i} s_j.
  auto [U, S, Vh] = at::linalg_svd(A, false, std::nullopt);
  const int64_t n = S.size(-1);
  std::vector<int64_t> one_col(S.sizes().begin(), S.sizes().end());
  one_col.back() = 1;
  const Tensor ones = at::ones(one_col, S.options());
  const Tensor before = at::cumprod(at::cat({ones, S.narrow(-1, 0, n - 1)}, -1), -1);
  const Tensor after = at::cumprod(at::cat({ones, S.flip({-1}).narrow(-1, 0, n - 1)}, -1), -1).flip({-1});
  const Tensor others = before * after;
  const Tensor sign = (at::linalg_det(U.detach()) * at::linalg_det(Vh.detach())).unsqueeze(-1).unsqueeze(-1);
  return grad.unsqueeze(-1).unsqueeze(-1) * sign * at::matmul(U * others.unsqueeze(-2), Vh);
}

Tensor slogdet_backward(const Tensor& grad_logabsdet, const Tensor& A) {
  // d log|det A| = tr(A^-1 dA); the sign of a real determinant is piecewise constant, so
  // its grad adds nothing. A singular matrix gives inf/NaN, as its logabsdet is -inf.
  return grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * mT(std::get<0>(at::linalg_inv_ex(A, false)));
}

Tensor cholesky_backward(const Tensor& grad, bool upper, const Tensor& L_or_U) {
  // A = L L^T: gA = L^-T Phi(L^T gL) L^-1, Phi taking the lower triangle with half the
  // diagonal, then symmetrised (only A's symmetric part matters).
  const Tensor L = upper ? mT(L_or_U) : L_or_U;
  const Tensor gL = upper ? mT(grad) : grad;
  const Tensor X = at::matmul(mT(L), gL);
  const Tensor phi = X.tril(-1) + 0.5 * at::diag_embed(X.diagonal(0, -2, -1), 0, -2, -1);
  const Tensor left = at::linalg_solve_triangular(mT(L), phi, /*upper=*/true, /*left=*/true, false);
  const Tensor gA = at::linalg_solve_triangular(L, left, /*upper=*/false, /*left=*/false, false);
  return 0.5 * (gA + mT(gA));
}

std::tuple<Tensor, Tensor> linalg_solve_triangular_backward(const Tensor& grad, const Tensor& A, const Tensor& X,
                                                            bool upper, bool left, bool unitriangular,
                                                            std::array<bool, 2> grad_input_mask) {
  // A X = B: gB = A^-T gX; gA = -gB X^T, kept to the triangle A's values came from.
  const Tensor gB = at::linalg_solve_triangular(mT(A), grad, !upper, left, unitriangular);
  Tensor gA;
  if (grad_input_mask[0]) {
    const Tensor full = left ? -at::matmul(gB, mT(X)) : -at::matmul(mT(X), gB);
    const int64_t diagonal = unitriangular ? 1 : 0;
    gA = upper ? full.triu(diagonal) : full.tril(-diagonal);
  }
  return {gA, grad_input_mask[1] ? gB : Tensor()};
}

Tensor linalg_eigh_backward(const Tensor& grad_L, const Tensor& grad_V, const Tensor& L, const Tensor& V) {
  TORCH_CHECK(V.numel() > 0 || L.numel() == 0,
              "linalg_eigh_backward: The derivative needs the eigenvectors; compute them with linalg.eigh.");
  // A = V diag(L) V^T: gA = V (diag(gL) + F o skew(V^T gV)) V^T, F_ij = 1 / (l_j - l_i).
  const Tensor VtgV = at::matmul(mT(V), grad_V);
  const Tensor skew = 0.5 * (VtgV - mT(VtgV));
  const Tensor E = L.unsqueeze(-2) - L.unsqueeze(-1);
  const Tensor inner = at::diagonal_scatter(skew / E, grad_L, 0, -2, -1);
  return at::matmul(V, at::matmul(inner, mT(V)));
}

Tensor svd_backward(const Tensor& grad_U, const Tensor& grad_S, const Tensor& grad_Vh, const Tensor& U_in,
                    const Tensor& S, const Tensor& Vh_in, bool full_matrices) {
  TORCH_CHECK(U_in.numel() > 0 || S.numel() == 0,
              "svd_backward: The derivative needs the singular vectors; compute them with linalg.svd.");
  const int64_t m = U_in.size(-2), n = Vh_in.size(-1), k = S.size(-1);
  // The columns of a full U (rows of Vh) past k do not affect A: only the first k count.
  const Tensor U = full_matrices ? U_in.narrow(-1, 0, k) : U_in;
  const Tensor Vh = full_matrices ? Vh_in.narrow(-2, 0, k) : Vh_in;
  const Tensor gU = full_matrices ? grad_U.narrow(-1, 0, k) : grad_U;
  const Tensor gV = mT(full_matrices ? grad_Vh.narrow(-2, 0, k) : grad_Vh);
  const Tensor V = mT(Vh);
  // A = U S V^T (Townsend, "Differentiating the singular value decomposition"):
  // gA = U [diag(gS) + (F o (U^T gU - gU^T U)) S + S (F o (V^T gV - gV^T V))] V^T
  //      + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T), F_ij = 1 / (s_j^2 - s_i^2).
  const Tensor S2 = S * S;
  const Tensor F = at::diagonal_scatter((S2.unsqueeze(-2) - S2.unsqueeze(-1)).reciprocal(), at::zeros_like(S), 0, -2, -1);
  const Tensor UtgU = at::matmul(mT(U), gU), VtgV = at::matmul(mT(V), gV);
  Tensor inner = (F * (UtgU - mT(UtgU))) * S.unsqueeze(-2) + S.unsqueeze(-1) * (F * (VtgV - mT(VtgV)));
  inner = inner + at::diag_embed(grad_S, 0, -2, -1);
  Tensor gA = at::matmul(U, at::matmul(inner, Vh));
  const Tensor S_inv = S.reciprocal();
  if (m > k) {
    const Tensor proj = gU - at::matmul(U, UtgU);
    gA = gA + at::matmul(proj * S_inv.unsqueeze(-2), Vh);
  }
  if (n > k) {
    const Tensor proj = mT(gV) - at::matmul(mT(VtgV), Vh);
    gA = gA + at::matmul(U * S_inv.unsqueeze(-2), proj);
  }
  return gA;
}

namespace {
// A = Q R with m >= n (Liao et al.): gA = [gQ + Q copyltu(M)] R^-T, M = R gR^T - gQ^T Q,
// copyltu mirroring the lower triangle onto the upper one.
Tensor qr_tall_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  const Tensor M = at::matmul(R, mT(gR)) - at::matmul(mT(gQ), Q);
  const Tensor copyltu = M.tril() + mT(M.tril(-1));
  const Tensor b = gQ + at::matmul(Q, copyltu);
  return at::linalg_solve_triangular(mT(R), b, /*upper=*/false, /*left=*/false, false);
}
}  // namespace

Tensor linalg_qr_backward(const Tensor& grad_Q, const Tensor& grad_R, const Tensor& Q, const Tensor& R,
                          std::string_view mode) {
  TORCH_CHECK(mode != "r", "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
              "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
  const int64_t m = Q.size(-2), n = R.size(-1);
  TORCH_CHECK(!(mode == "complete" && m > n),
              "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
  if (m >= n) return qr_tall_backward(grad_Q, grad_R, Q, R);
  // m < n: A = [X Y] with X = Q R1, Y = Q R2: gY = Q gR2, and Y's dependence on Q adds
  // Y gR2^T to gQ before the square case.
  const Tensor R1 = R.narrow(-1, 0, m), gR2 = grad_R.narrow(-1, m, n - m);
  const Tensor Y = at::matmul(Q, R.narrow(-1, m, n - m));
  const Tensor gX = qr_tall_backward(grad_Q + at::matmul(Y, mT(gR2)), grad_R.narrow(-1, 0, m), Q, R1);
  return at::cat({gX, at::matmul(Q, gR2)}, -1);
}

// exp(A)'s Frechet derivative in direction E is the upper right block of
// exp([[A, E], [0, A]]); the adjoint one (the backward) is the same with A^H.
Tensor linalg_matrix_exp_differential(const Tensor& self, const Tensor& grad, bool adjoint) {
  const int64_t n = self.size(-1);
  const Tensor A = adjoint ? conjugate(mT(self)) : self;
  const Tensor top = at::cat({A, grad}, -1);
  const Tensor bottom = at::cat({at::zeros_like(A), A}, -1);
  return at::linalg_matrix_exp(at::cat({top, bottom}, -2)).narrow(-2, 0, n).narrow(-1, n, n);
}

// The pseudo-inverse P of A (m x n) moves by dP = -P dA P + P P^H dA^H (I - A P) +
// (I - P A) dA^H P^H P; its adjoint, for a grad G of P:
// gA = -P^H G P^H + (I - A P) G^H P P^H + P^H P G^H (I - P A).
Tensor pinv_backward(const Tensor& grad, const Tensor& pinvA, const Tensor& A) {
  const Tensor Ph = conjugate(mT(pinvA)), Gh = conjugate(mT(grad));
  const Tensor left = at::matmul(Gh, at::matmul(pinvA, Ph));
  const Tensor right = at::matmul(at::matmul(Ph, pinvA), Gh);
  return -at::matmul(Ph, at::matmul(grad, Ph)) + left - at::matmul(A, at::matmul(pinvA, left)) + right -
         at::matmul(at::matmul(right, pinvA), A);
}

// lstsq's solution is pinv(A) B (the minimum-norm least-squares solution), so its grads
// are pinv's and the matmul's. B may be a batch of vectors.
std::tuple<Tensor, Tensor> linalg_lstsq_backward(const Tensor& grad, const Tensor& A, const Tensor& B,
                                                 std::array<bool, 2> grad_input_mask) {
  if (!grad.defined()) return {Tensor(), Tensor()};
  const bool vector_case = B.dim() == A.dim() - 1;
  const Tensor Bm = vector_case ? B.unsqueeze(-1) : B;
  const Tensor gX = vector_case ? grad.unsqueeze(-1) : grad;
  const Tensor pinvA = at::linalg_pinv(A, std::optional<double>(), std::optional<double>());
  Tensor gA, gB;
  if (grad_input_mask[0]) gA = pinv_backward(at::matmul(gX, conjugate(mT(Bm))), pinvA, A);
  if (grad_input_mask[1]) {
    gB = at::matmul(conjugate(mT(pinvA)), gX);
    if (vector_case) gB = gB.squeeze(-1);
  }
  return {gA, gB};
}

}  // namespace torch::autograd::generated::details
