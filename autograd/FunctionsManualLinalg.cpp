// Backward formulas of the LAPACK-backed linalg ops: each written with differentiable ops
// (triangular solves, matmuls, the ops themselves), so a backward pass recorded with
// create_graph=True differentiates again. The derivations are the standard matrix-calculus
// ones; comments give the identity each formula comes from. Adjoints are written mH
// (conjugate transposes), so the formulas marked complex in derivatives.yaml hold for
// complex inputs with torch's convention; on real tensors mH is the transpose.
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
// dA = P (dL U + L dU) gives gA = P L^-H [tril(L^H gL, -1) + triu(gU U^H)] U^-H.
Tensor lu_square_backward(const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L, const Tensor& U) {
  const Tensor phi = lu_parts(at::matmul(mH(L), gL), at::matmul(gU, mH(U)));
  const Tensor right = at::linalg_solve_triangular(mH(U), phi, /*upper=*/false, /*left=*/false, false);
  const Tensor both = at::linalg_solve_triangular(mH(L), right, /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
  return at::matmul(P, both);
}

// A rephasing V -> V e^{i phi} leaves A alone, so a loss may not see it: the imaginary part
// of diag(V^H gV) must vanish (torch's tolerances and message).
void check_eigenvector_phases(const Tensor& VhgV, const char* op) {
  const Tensor phase = at::imag(VhgV.diagonal(0, -2, -1));
  TORCH_CHECK(at::allclose(phase, at::zeros_like(phase), 1e-2, 1e-2), op,
              ": The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. The specified "
              "loss function depends on this quantity, so it is ill-defined.");
}

}  // namespace

Tensor lu_factor_ex_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots) {
  auto [P, L, U] = at::lu_unpack(LU, pivots, true, true);
  const int64_t m = LU.size(-2), n = LU.size(-1);
  const Tensor gL = grad.narrow(-1, 0, std::min(m, n)).tril(-1);
  const Tensor gU = grad.narrow(-2, 0, std::min(m, n)).triu();
  if (m == n) return lu_square_backward(gL, gU, P, L, U);
  if (m < n) {
    // A = P L [U1 U2]: U2 = L^-1 P^T A2 gives gA2 = P L^-H gU2, and (through L^-1)
    // -P^T gA2 U2^H to gL.
    const Tensor U1 = U.narrow(-1, 0, m), U2 = U.narrow(-1, m, n - m);
    const Tensor gU2 = gU.narrow(-1, m, n - m);
    const Tensor gA2 = at::matmul(P, at::linalg_solve_triangular(mH(L), gU2, true, true, true));
    const Tensor gL1 = gL - at::matmul(at::matmul(mT(P), gA2), mH(U2)).tril(-1);
    return at::cat({lu_square_backward(gL1, gU.narrow(-1, 0, m), P, L, U1), gA2}, -1);
  }
  // m > n: P^T A = [L1; L2] U: L2 = B2 U^-1 gives gB2 = gL2 U^-H, and (through U^-1)
  // -L2^H gB2 to gU.
  const Tensor L1 = L.narrow(-2, 0, n), L2 = L.narrow(-2, n, m - n);
  const Tensor gL2 = grad.narrow(-2, n, m - n);
  const Tensor gB2 = at::linalg_solve_triangular(mH(U), gL2, false, false, false);
  const Tensor gU1 = gU - at::matmul(mH(L2), gB2).triu();
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
  // op(A) X = B: g_op(A) = -gB X^H (left) or -X^H gB (right), gB = op(A)^-H gX.
  const Tensor gB = at::linalg_lu_solve(LU, pivots, grad, left, !adjoint);
  Tensor gA = left ? -at::matmul(gB, mH(X)) : -at::matmul(mH(X), gB);
  if (adjoint) gA = mH(gA);
  // A = P L U: gL = tril(P^T gA U^H, -1), gU = triu(L^H P^T gA).
  auto [P, L, U] = at::lu_unpack(LU, pivots, true, true);
  const Tensor PtgA = at::matmul(mT(P), gA);
  return lu_parts(at::matmul(PtgA, mH(U)), at::matmul(mH(L), PtgA));
}

std::tuple<Tensor, Tensor> linalg_solve_backward(const Tensor& grad, const Tensor& X, const Tensor& A, const Tensor& B,
                                                 const Tensor& LU, const Tensor& pivots, bool left,
                                                 std::array<bool, 2> grad_input_mask) {
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes().equals(A.sizes().slice(0, A.dim() - 1)));
  const int64_t vdim = left ? -1 : -2;
  const Tensor gX = vector ? grad.unsqueeze(vdim) : grad;
  const Tensor X2 = vector ? X.unsqueeze(vdim) : X;
  // gB = A^-H gX (left) or gX A^-H: through A itself when the backward is recorded (so it
  // differentiates again), through the saved LU otherwise.
  const Tensor gB = c10::GradMode::is_enabled() ? at::linalg_solve(mH(A), gX, left)
                                                : at::linalg_lu_solve(LU, pivots, gX, left, true);
  Tensor gA;
  if (grad_input_mask[0]) gA = left ? -at::matmul(gB, mH(X2)) : -at::matmul(mH(X2), gB);
  Tensor gB_out;
  if (grad_input_mask[1]) gB_out = vector ? gB.squeeze(vdim) : gB;
  return {gA, gB_out};
}

Tensor linalg_det_backward(const Tensor& grad, const Tensor& det, const Tensor& A) {
  if (A.numel() == 0) return at::zeros_like(A);
  const Tensor scale = (grad * conjugate(det)).unsqueeze(-1).unsqueeze(-1);
  if (!at::eq(det, 0).any().item().toBool()) {
    // d det = det * tr(A^-1 dA): gA = g conj(det) A^-H.
    return scale * mH(at::linalg_inv(A));
  }
  // Some matrix is singular: the adjugate from the SVD, valid for every matrix. With
  // A = U S V^H, det = det(U) det(V^H) prod(s), and d prod(s)/ds_i = prod_{j != i} s_j:
  // gA = g conj(det(U) det(V^H)) U diag(prod_{j != i} s_j) V^H.
  auto [U, S, Vh] = at::linalg_svd(A, false, std::nullopt);
  const int64_t n = S.size(-1);
  std::vector<int64_t> one_col(S.sizes().begin(), S.sizes().end());
  one_col.back() = 1;
  const Tensor ones = at::ones(one_col, S.options());
  const Tensor before = at::cumprod(at::cat({ones, S.narrow(-1, 0, n - 1)}, -1), -1);
  const Tensor after = at::cumprod(at::cat({ones, S.flip({-1}).narrow(-1, 0, n - 1)}, -1), -1).flip({-1});
  const Tensor others = before * after;
  const Tensor sign =
      conjugate(at::linalg_det(U.detach()) * at::linalg_det(Vh.detach())).unsqueeze(-1).unsqueeze(-1);
  return grad.unsqueeze(-1).unsqueeze(-1) * sign * at::matmul(U * others.unsqueeze(-2), Vh);
}

Tensor slogdet_backward(const Tensor& grad_sign, const Tensor& grad_logabsdet, const Tensor& A, const Tensor& sign) {
  // d log|det A| = Re tr(A^-1 dA). The sign of a real determinant is piecewise constant, so
  // its grad adds nothing; a complex one moves as d sign = i Im tr(A^-1 dA) sign, which
  // adds -i Im(conj(g_sign) sign) to the scale of A^-H. A singular matrix gives inf/NaN, as
  // its logabsdet is -inf.
  Tensor g = grad_logabsdet;
  if (A.is_complex()) g = at::complex(grad_logabsdet, -at::imag(conjugate(grad_sign) * sign));
  return g.unsqueeze(-1).unsqueeze(-1) * mH(std::get<0>(at::linalg_inv_ex(A, false)));
}

Tensor cholesky_backward(const Tensor& grad, bool upper, const Tensor& L_or_U) {
  // A = L L^H: gA = L^-H Phi L^-1 with X = tril(L^H gL) and Phi = (X + tril(X, -1)^H) / 2,
  // Hermitian but for the diagonal's imaginary part (torch's form; for real A it is the
  // symmetrised lower-triangle formula).
  const Tensor L = upper ? mH(L_or_U) : L_or_U;
  const Tensor gL = upper ? mH(grad) : grad;
  const Tensor X = at::matmul(mH(L), gL).tril();
  const Tensor phi = 0.5 * (X + mH(X.tril(-1)));
  const Tensor left = at::linalg_solve_triangular(mH(L), phi, /*upper=*/true, /*left=*/true, false);
  return at::linalg_solve_triangular(L, left, /*upper=*/false, /*left=*/false, false);
}

std::tuple<Tensor, Tensor> linalg_solve_triangular_backward(const Tensor& grad, const Tensor& A, const Tensor& X,
                                                            bool upper, bool left, bool unitriangular,
                                                            std::array<bool, 2> grad_input_mask) {
  // A X = B: gB = A^-H gX; gA = -gB X^H, kept to the triangle A's values came from.
  const Tensor gB = at::linalg_solve_triangular(mH(A), grad, !upper, left, unitriangular);
  Tensor gA;
  if (grad_input_mask[0]) {
    const Tensor full = left ? -at::matmul(gB, mH(X)) : -at::matmul(mH(X), gB);
    const int64_t diagonal = unitriangular ? 1 : 0;
    gA = upper ? full.triu(diagonal) : full.tril(-diagonal);
  }
  return {gA, grad_input_mask[1] ? gB : Tensor()};
}

// Both formulas below take undefined grads for unused outputs (derivatives.yaml's
// `undefined_grads: keep`): with only the eigen- or singular values used, the vectors' terms,
// whose 1 / (l_j - l_i) is infinite for repeated values, are skipped.
Tensor linalg_eigh_backward(const Tensor& grad_L, const Tensor& grad_V, const Tensor& L, const Tensor& V) {
  if (!grad_L.defined() && !grad_V.defined()) return Tensor();
  TORCH_CHECK(V.numel() > 0 || L.numel() == 0,
              "linalg_eigh_backward: The derivative needs the eigenvectors; compute them with linalg.eigh.");
  // A = V diag(L) V^H: gA = V (diag(gL) + skew(V^H gV) / E) V^H, E_ij = l_j - l_i (1 on the
  // diagonal, which gL replaces: no infinity there to differentiate again).
  if (!grad_V.defined()) return at::matmul(V * grad_L.unsqueeze(-2), mH(V));
  const Tensor VhgV = at::matmul(mH(V), grad_V);
  if (V.is_complex()) check_eigenvector_phases(VhgV, "linalg_eigh_backward");
  const Tensor skew = 0.5 * (VhgV - mH(VhgV));
  const Tensor E = at::diagonal_scatter(L.unsqueeze(-2) - L.unsqueeze(-1), at::ones_like(L), 0, -2, -1);
  const Tensor gL = grad_L.defined() ? grad_L.to(V.scalar_type()) : at::zeros(L.sizes(), V.options());
  const Tensor inner = at::diagonal_scatter(skew / E, gL, 0, -2, -1);
  return at::matmul(V, at::matmul(inner, mH(V)));
}

Tensor linalg_eig_backward(const Tensor& grad_L, const Tensor& grad_V, const Tensor& L, const Tensor& V) {
  TORCH_CHECK(V.numel() > 0 || L.numel() == 0,
              "linalg_eig_backward: The derivative needs the eigenvectors; compute them with linalg.eig.");
  if (L.numel() == 0) return at::zeros(V.sizes(), V.options());
  const Tensor Vh = mH(V);
  Tensor VhgV = at::matmul(Vh, grad_V);
  check_eigenvector_phases(VhgV, "linalg_eig_backward");
  // A = V diag(L) V^-1 with unit-norm columns: project out the part of gV that moves the
  // norms, then gA = V^-H (diag(gL) + (V^H gV) / conj(E)) V^H, E_ij = L_j - L_i.
  VhgV = VhgV - at::matmul(Vh, V * at::real(VhgV.diagonal(0, -2, -1)).unsqueeze(-2));
  const Tensor Lc = conjugate(L);
  const Tensor Econj = at::diagonal_scatter(Lc.unsqueeze(-2) - Lc.unsqueeze(-1), at::ones_like(L), 0, -2, -1);
  const Tensor inner = at::diagonal_scatter(VhgV / Econj, grad_L, 0, -2, -1);
  return at::linalg_solve(Vh, at::matmul(inner, Vh), true);
}

Tensor svd_backward(const Tensor& grad_U, const Tensor& grad_S, const Tensor& grad_Vh, const Tensor& U_in,
                    const Tensor& S, const Tensor& Vh_in, bool full_matrices) {
  if (!grad_U.defined() && !grad_S.defined() && !grad_Vh.defined()) return Tensor();
  TORCH_CHECK(U_in.numel() > 0 || S.numel() == 0,
              "svd_backward: The derivative needs the singular vectors; compute them with linalg.svd.");
  const int64_t m = U_in.size(-2), n = Vh_in.size(-1), k = S.size(-1);
  // The columns of a full U (rows of Vh) past k do not affect A: only the first k count.
  const Tensor U = full_matrices ? U_in.narrow(-1, 0, k) : U_in;
  const Tensor Vh = full_matrices ? Vh_in.narrow(-2, 0, k) : Vh_in;
  // Only S used: gA = U diag(gS) V^H, whatever the multiplicities.
  if (!grad_U.defined() && !grad_Vh.defined()) {
    return m >= n ? at::matmul(U, grad_S.unsqueeze(-1) * Vh) : at::matmul(U * grad_S.unsqueeze(-2), Vh);
  }
  const Tensor gU = !grad_U.defined() ? at::zeros_like(U) : full_matrices ? grad_U.narrow(-1, 0, k) : grad_U;
  const Tensor gVh = !grad_Vh.defined() ? at::zeros_like(Vh) : full_matrices ? grad_Vh.narrow(-2, 0, k) : grad_Vh;
  const Tensor gV = mH(gVh), V = mH(Vh);
  // A = U S V^H (Townsend, "Differentiating the singular value decomposition"):
  // gA = U [diag(gS) + (skew(U^H gU) S + S skew(V^H gV)) / E] V^H
  //      + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H),
  // skew(X) = X - X^H, E_ij = s_j^2 - s_i^2 with 1 on the diagonal (torch's form: no
  // infinity to differentiate again); complex: + U diag(skew(U^H gU)_ii / (2 s_i)) V^H, the
  // phase part U and V share.
  const Tensor S2 = S * S;
  const Tensor E = at::diagonal_scatter(S2.unsqueeze(-2) - S2.unsqueeze(-1), at::ones_like(S), 0, -2, -1);
  const Tensor UhgU = at::matmul(mH(U), gU), VhgV = at::matmul(mH(V), gV);
  const Tensor skew_U = UhgU - mH(UhgU), skew_V = VhgV - mH(VhgV);
  if (U.is_complex()) {
    // U -> U e^{i phi}, V -> V e^{i phi} leaves A alone: Im diag(skew(U^H gU) + skew(V^H gV)) = 0
    const Tensor u_phase = at::imag(skew_U.diagonal(0, -2, -1)), v_phase = at::imag(skew_V.diagonal(0, -2, -1));
    TORCH_CHECK(at::allclose(u_phase, -v_phase, 1e-2, 1e-2),
                "svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{i "
                "phi}. The specified loss function depends on this phase term, making it ill-defined.");
  }
  Tensor inner = (skew_U * S.unsqueeze(-2) + S.unsqueeze(-1) * skew_V) / E;
  if (grad_S.defined()) inner = inner + at::diag_embed(grad_S.to(U.scalar_type()), 0, -2, -1);
  if (U.is_complex()) inner = inner + at::diag_embed(skew_U.diagonal(0, -2, -1) / (2 * S), 0, -2, -1);
  Tensor gA = at::matmul(U, at::matmul(inner, Vh));
  const Tensor S_inv = S.reciprocal();
  if (m > k && grad_U.defined()) {
    const Tensor proj = gU - at::matmul(U, UhgU);
    gA = gA + at::matmul(proj * S_inv.unsqueeze(-2), Vh);
  }
  if (n > k && grad_Vh.defined()) {
    const Tensor proj = gVh - at::matmul(mH(VhgV), Vh);
    gA = gA + at::matmul(U * S_inv.unsqueeze(-2), proj);
  }
  return gA;
}

namespace {
// A = Q R with m >= n (Liao et al.): gA = [gQ + Q copyltu(M)] R^-H, M = R gR^H - gQ^H Q,
// copyltu mirroring the lower triangle onto the upper one (conjugated) over M's real
// diagonal (R's diagonal is real).
Tensor qr_tall_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  const Tensor M = at::matmul(R, mH(gR)) - at::matmul(mH(gQ), Q);
  Tensor diagonal = M.diagonal(0, -2, -1);
  if (M.is_complex()) diagonal = at::real(diagonal).to(M.scalar_type());
  const Tensor copyltu = M.tril(-1) + mH(M.tril(-1)) + at::diag_embed(diagonal, 0, -2, -1);
  const Tensor b = gQ + at::matmul(Q, copyltu);
  return at::linalg_solve_triangular(mH(R), b, /*upper=*/false, /*left=*/false, false);
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
  // Y gR2^H to gQ before the square case.
  const Tensor R1 = R.narrow(-1, 0, m), gR2 = grad_R.narrow(-1, m, n - m);
  const Tensor Y = at::matmul(Q, R.narrow(-1, m, n - m));
  const Tensor gX = qr_tall_backward(grad_Q + at::matmul(Y, mH(gR2)), grad_R.narrow(-1, 0, m), Q, R1);
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
