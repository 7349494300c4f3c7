// Backward formulas of the ops built on Householder reflectors (householder_product / orgqr
// and ormqr), written with differentiable ops so that they differentiate again. Complex
// conjugations are spelled out (conjugate() is the identity on real tensors) so that the
// formulas hold when complex linalg arrives.
#include <autograd/FunctionsManual.h>

#include <aten/core/TensorOperators.h>
#include <aten/ops/Functions.h>

#include <vector>

namespace torch::autograd::generated::details {

// Q = H_0 ... H_{k-1} E (E: the first n columns of the identity), H_i = I - tau_i v_i v_i^H
// with v_i = (0, ..., 0, 1, input[i+1:, i]). Forward as X_i = H_i X_{i+1} from X_k = E, so
// X_0 = Q. For one step Y = X - z P with z = tau v and P = v^H X, the grads are
// gX = G + v gP, gP = -z^H G, gz = -G P^H, and then g_tau = v^H gz, g_v = conj(tau) gz + X gP^H.
std::tuple<Tensor, Tensor> householder_product_backward(const Tensor& grad, const Tensor& input, const Tensor& tau) {
  const int64_t m = input.size(-2), n = input.size(-1), k = tau.size(-1);
  if (!grad.defined()) return {Tensor(), Tensor()};
  if (k == 0) return {at::zeros_like(input), at::zeros_like(tau)};
  const Tensor V = input.tril(-1) + at::eye(m, n, input.options());
  std::vector<Tensor> X(static_cast<size_t>(k + 1));
  X[k] = at::eye(m, n, input.options()).expand(input.sizes());
  for (int64_t i = k - 1; i >= 0; --i) {
    const Tensor v = V.narrow(-1, i, 1);
    const Tensor t = tau.narrow(-1, i, 1).unsqueeze(-1);
    X[i] = X[i + 1] - (t * v) * at::matmul(mH(v), X[i + 1]);
  }
  Tensor G = grad;
  std::vector<Tensor> grad_v, grad_tau;
  for (int64_t i = 0; i < k; ++i) {
    const Tensor v = V.narrow(-1, i, 1);
    const Tensor t = tau.narrow(-1, i, 1).unsqueeze(-1);
    const Tensor& Xin = X[i + 1];
    const Tensor P = at::matmul(mH(v), Xin);
    const Tensor gP = -conjugate(t) * at::matmul(mH(v), G);
    const Tensor gz = -at::matmul(G, mH(P));
    grad_tau.push_back(at::matmul(mH(v), gz).squeeze(-1));
    grad_v.push_back(conjugate(t) * gz + at::matmul(Xin, mH(gP)));
    G = G + v * gP;
  }
  // Only the entries below the diagonal of input's first k columns are free.
  Tensor g_input = at::cat(grad_v, -1).tril(-1);
  if (k < n) {
    std::vector<int64_t> pad(input.sizes().begin(), input.sizes().end());
    pad.back() = n - k;
    g_input = at::cat({g_input, at::zeros(pad, input.options())}, -1);
  }
  return {g_input, at::cat(grad_tau, -1)};
}

// ormqr applies Q = H_0 ... H_{k-1} (m x m, m = input.size(-2)) to C: the product of the
// Householder backward above (on input's columns cut or padded to m) and the matmul's.
std::tuple<Tensor, Tensor, Tensor> ormqr_backward(const Tensor& grad, const Tensor& input, const Tensor& tau,
                                                  const Tensor& other, bool left, bool transpose,
                                                  std::array<bool, 3> grad_input_mask) {
  if (!grad.defined()) return {Tensor(), Tensor(), Tensor()};
  const int64_t m = input.size(-2), n = input.size(-1);
  std::vector<int64_t> pad(input.sizes().begin(), input.sizes().end());
  pad.back() = m - n;
  const Tensor square = n >= m ? input.narrow(-1, 0, m) : at::cat({input, at::zeros(pad, input.options())}, -1);
  const Tensor Q = at::linalg_householder_product(square, tau);
  const Tensor opQ = transpose ? mH(Q) : Q;
  Tensor g_other, g_input, g_tau;
  if (grad_input_mask[2]) g_other = left ? at::matmul(mH(opQ), grad) : at::matmul(grad, mH(opQ));
  if (grad_input_mask[0] || grad_input_mask[1]) {
    const Tensor g_opQ = left ? at::matmul(grad, mH(other)) : at::matmul(mH(other), grad);
    auto [g_square, g_t] = householder_product_backward(transpose ? mH(g_opQ) : g_opQ, square, tau);
    if (n >= m) {
      pad.back() = n - m;
      g_input = at::cat({g_square, at::zeros(pad, input.options())}, -1);
    } else {
      g_input = g_square.narrow(-1, 0, n);
    }
    g_tau = g_t;
  }
  return {grad_input_mask[0] ? g_input : Tensor(), grad_input_mask[1] ? g_tau : Tensor(), g_other};
}

}  // namespace torch::autograd::generated::details
