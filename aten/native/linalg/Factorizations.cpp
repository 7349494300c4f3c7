// LAPACK-backed kernels of the LU family (lu_factor_ex, lu_unpack, lu_solve, solve, inv,
// det, slogdet; Cholesky and the triangular solve are in Triangular.cpp). Each CPU kernel
// and its Meta kernel are one function with a `meta` flag: the checks, shapes and
// column-major buffers are computed once, and only the CPU path calls LAPACK (whose
// wrappers take tiny matrices to unblocked loops, SmallMatrix.h). Batches run their
// matrices across threads (lapack::for_each_matrix).
#include <aten/core/Dispatch.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/linalg/Lapack.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/native/linalg/SmallMatrix.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace at::inline tessera::native {

namespace {

Tensor int_tensor(std::vector<int64_t> sizes, const Tensor& like) {
  return at::zeros(sizes, like.options().dtype(c10::kInt));
}

// A's batch broadcast with B's: both expanded to batch + their own matrix dims.
std::vector<int64_t> broadcast_batch(const Tensor& A, const Tensor& B) {
  return infer_size(A.sizes().slice(0, A.dim() - 2), B.sizes().slice(0, B.dim() - 2));
}
std::vector<int64_t> with_matrix(std::vector<int64_t> batch, int64_t r, int64_t c) {
  batch.push_back(r);
  batch.push_back(c);
  return batch;
}

// getrf on every matrix of LU (column-major, overwritten) into pivots and info.
void lu_factor_into(const Tensor& LU, const Tensor& pivots, const Tensor& info) {
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n), batch = batch_count(LU);
  if (LU.numel() == 0) return;
  const int mi = lapack::lapack_int(m, "linalg.lu_factor"), ni = lapack::lapack_int(n, "linalg.lu_factor");
  dispatch_types<kFloating | kComplex>(LU.scalar_type(), "linalg.lu_factor", [&]<typename T>() {
    int* piv = pivots.data_ptr<int>();
    int* inf = info.data_ptr<int>();
    lapack::for_each_matrix(batch, m * n * k, [&](int64_t i) {
      lapack::getrf(mi, ni, matrix_at<T>(LU, i), std::max(1, mi), piv + i * k, inf + i);
    });
  });
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex_impl(const Tensor& A, bool pivot, bool check_errors, bool meta) {
  check_linalg_input(A, "linalg.lu_factor", /*square=*/false);
  TORCH_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  const int64_t k = std::min(A.size(-2), A.size(-1));
  Tensor LU = clone_batched_fortran(A);
  Tensor pivots = int_tensor(batch_shape_with(A, 2, {k}), A);
  Tensor info = int_tensor(batch_shape_with(A, 2, {}), A);
  if (!meta) {
    lu_factor_into(LU, pivots, info);
    if (check_errors) check_linalg_errors(info, "torch.linalg.lu_factor_ex", LinalgFailure::Singular, A.dim() > 2);
  }
  return {LU, pivots, info};
}

// Pivots come from users too: every one must name a row of the matrix, or LAPACK would
// read and swap outside it.
void check_pivots(const Tensor& pivots, int64_t n) {
  const Tensor p = pivots.contiguous();
  const int* d = p.data_ptr<int>();
  for (int64_t i = 0; i < p.numel(); ++i) {
    TORCH_CHECK(d[i] >= 1, "Pivots given to lu_solve must all be greater or equal to 1. Did you properly pass the "
                "result of lu_factor?");
    TORCH_CHECK(d[i] <= n, "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly "
                "pass the result of lu_factor?");
  }
}

// op(A) X = B (left) or X op(A) = B, op = A or A^H (A^T for real A), from A's LU; B is left
// untouched.
Tensor lu_solve_impl(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint, bool meta) {
  check_linalg_input(LU, "linalg.lu_solve");
  TORCH_CHECK(B.dim() >= 2, "linalg.lu_solve: The input tensor B must have at least 2 dimensions.");
  TORCH_CHECK(pivots.scalar_type() == c10::kInt, "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32");
  TORCH_CHECK(LU.scalar_type() == B.scalar_type(), "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type ",
              LU.scalar_type(), " and B of type ", B.scalar_type(), " instead");
  const int64_t n = LU.size(-1);
  TORCH_CHECK(pivots.dim() == LU.dim() - 1 && pivots.size(-1) == n &&
                  pivots.sizes().slice(0, pivots.dim() - 1).equals(LU.sizes().slice(0, LU.dim() - 2)),
              "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape ",
              pivots.sizes(), " instead");
  if (left) {
    TORCH_CHECK(B.size(-2) == n, "linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B (", n, "x",
                n, " and ", B.size(-2), "x", B.size(-1), ")");
  } else {
    TORCH_CHECK(B.size(-1) == n, "linalg.lu_solve: Incompatible shapes of A and B for the equation XA = B (", n, "x",
                n, " and ", B.size(-2), "x", B.size(-1), ")");
  }
  const std::vector<int64_t> batch = broadcast_batch(LU, B);
  const Tensor Bb = B.expand(with_matrix(batch, B.size(-2), B.size(-1)));
  // The right-hand sides LAPACK sees are X (left, column-major) or X^T (right: the
  // row-major X is X^T in column-major order).
  Tensor X = left ? clone_batched_fortran(Bb) : Bb.contiguous().clone();
  if (meta || X.numel() == 0 || n == 0) return X;
  check_pivots(pivots, n);
  // getrs only reads the LU: one already in LAPACK's layout (lu_factor's output) is used
  // as it is.
  const bool batch_matches = LU.sizes().slice(0, LU.dim() - 2).equals(batch);
  const Tensor LUb = batch_matches && mT(LU).is_contiguous() ? LU : clone_batched_fortran(LU.expand(with_matrix(batch, n, n)));
  std::vector<int64_t> pbatch = batch;
  pbatch.push_back(n);
  const Tensor Pb = pivots.expand(pbatch).contiguous();
  const int64_t nrhs = left ? B.size(-1) : B.size(-2);
  const int ni = lapack::lapack_int(n, "linalg.lu_solve"), ri = lapack::lapack_int(nrhs, "linalg.lu_solve");
  dispatch_types<kFloating | kComplex>(LU.scalar_type(), "linalg.lu_solve", [&]<typename T>() {
    // Right: X A = B is A^T X^T = B^T ('T'), and X A^H = B is A conj(X)^T = conj(B)^T, a
    // plain solve between two conjugations of the buffer (real: the conjugations vanish).
    const char trans = left ? (adjoint ? lapack::adjoint_trans<T>() : 'N') : (adjoint ? 'N' : 'T');
    const bool conjugate_rhs = !left && adjoint && lapack::is_complex_v<T>;
    if (conjugate_rhs) X.conj_physical_();
    const int* piv = Pb.data_ptr<int>();
    lapack::for_each_matrix(batch_count(X), n * n * nrhs, [&](int64_t i) {
      int info = 0;
      lapack::getrs(trans, ni, ri, matrix_at<T>(LUb, i), ni, piv + i * n, matrix_at<T>(X, i), ni, &info);
    });
    if (conjugate_rhs) X.conj_physical_();
  });
  return X;
}

// torch's rule: B is a (batch of) vector(s) if it is 1-D or has A's batch and one dim less.
bool is_vector_rhs(const Tensor& A, const Tensor& B) {
  return B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes().equals(A.sizes().slice(0, A.dim() - 1)));
}

std::tuple<Tensor, Tensor, Tensor, Tensor> solve_ex_impl(const Tensor& A, const Tensor& B, bool left,
                                                         bool check_errors, bool meta) {
  check_linalg_input(A, "linalg.solve");
  TORCH_CHECK(A.scalar_type() == B.scalar_type(), "linalg.solve: Expected A and B to have the same dtype, but found A of type ",
              A.scalar_type(), " and B of type ", B.scalar_type(), " instead");
  const bool vector = is_vector_rhs(A, B);
  const Tensor B2 = vector ? B.unsqueeze(left ? -1 : -2) : B;
  const int64_t n = A.size(-1);
  TORCH_CHECK(left ? B2.size(-2) == n : B2.size(-1) == n, "linalg.solve: Incompatible shapes of A and B for the equation ",
              left ? "AX = B (" : "XA = B (", n, "x", n, " and ", B2.size(-2), "x", B2.size(-1), ")");
  auto [LU, pivots, info] = lu_factor_ex_impl(A, true, false, meta);
  if (!meta && check_errors) check_linalg_errors(info, "torch.linalg.solve", LinalgFailure::Singular, A.dim() > 2);
  Tensor X = lu_solve_impl(LU, pivots, B2, left, false, meta);
  if (vector) X = X.squeeze(left ? -1 : -2);
  return {X, LU, pivots, info};
}

std::tuple<Tensor, Tensor> inv_ex_impl(const Tensor& A, bool check_errors, bool meta) {
  check_linalg_input(A, "linalg.inv");
  auto [LU, pivots, info] = lu_factor_ex_impl(A, true, false, meta);
  if (!meta && check_errors) check_linalg_errors(info, "linalg.inv", LinalgFailure::SingularDiagonal, A.dim() > 2);
  const int64_t n = A.size(-1);
  // (tiny matrices: the unblocked solve beats getri's call)
  if (meta || n <= small_matrix::kMaxSize || A.numel() == 0) {
    Tensor identity = at::eye(n, A.options()).expand(A.sizes());
    return {lu_solve_impl(LU, pivots, identity, true, false, meta), info};
  }
  // getri inverts in place from the LU: 4/3 n^3 flops against 2 n^3 for solving against
  // the identity. (A singular matrix's inverse is undefined; inv_ex returns what LAPACK left.)
  const int ni = lapack::lapack_int(n, "linalg.inv");
  dispatch_types<kFloating | kComplex>(A.scalar_type(), "linalg.inv", [&]<typename T>() {
    const int* piv = pivots.data_ptr<int>();
    T query = 0;
    int query_info = 0;
    lapack::getri(ni, matrix_at<T>(LU, 0), ni, piv, &query, -1, &query_info);
    const int lwork = lapack::workspace_size(query);
    lapack::for_each_matrix(batch_count(LU), 2 * n * n * n, [&](int64_t i) {
      auto work = lapack::workspace<T>(lwork);
      int info_i = 0;
      T* m = matrix_at<T>(LU, i);
      lapack::getri(ni, m, ni, piv + i * n, work.get(), lwork, &info_i);
      if (info_i > 0) {  // singular: getri left the LU; solve against the identity as torch
        const std::vector<T> lu(m, m + n * n);
        std::fill(m, m + n * n, T(0));
        for (int64_t d = 0; d < n; ++d) m[d * n + d] = T(1);
        lapack::getrs('N', ni, ni, lu.data(), ni, piv + i * n, m, ni, &info_i);
      }
    });
  });
  return {LU, info};
}

// The determinant's factors from an LU: the product of U's diagonal and the parity of the
// row swaps, per matrix. Writes det, or sign and log|det| (a real value for complex LU).
template <typename T>
void lu_determinants(const Tensor& LU, const Tensor& pivots, T* det, T* sign, lapack::real_t<T>* logabs) {
  using R = lapack::real_t<T>;
  const int64_t n = LU.size(-1), batch = batch_count(LU);
  const int* piv = pivots.data_ptr<int>();
  for (int64_t b = 0; b < batch; ++b) {
    const T* a = matrix_at<T>(LU, b);
    bool odd_swaps = false, odd_negatives = false;
    T product(1), phase(1);
    R log_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T d = a[i * n + i];
      if (piv[b * n + i] != i + 1) odd_swaps = !odd_swaps;
      using std::abs;  // c10::abs for complex d, found by argument lookup
      const R magnitude = abs(d);
      if constexpr (lapack::is_complex_v<T>) {
        // sgn(d) = d / |d| (0 for 0; a NaN stays NaN), as torch's sign of a complex det
        phase *= magnitude == R(0) ? T(0) : d / magnitude;
      } else if (d < 0) {
        odd_negatives = !odd_negatives;
      }
      product *= d;
      log_sum += std::log(magnitude);
    }
    // The parity multiplies as a number, as torch's (a negation would flip the sign of a zero
    // imaginary part, and with it the branch of log(sign)).
    const T parity(odd_swaps ? -1 : 1);
    if (det) det[b] = parity * product;
    if (!sign) continue;
    logabs[b] = log_sum;
    if constexpr (lapack::is_complex_v<T>) {
      sign[b] = phase * parity;
    } else {
      // a zero or NaN on the diagonal has no sign, as torch's sgn
      const bool signless = log_sum == -std::numeric_limits<R>::infinity() || std::isnan(log_sum);
      sign[b] = signless ? T(0) : (odd_swaps != odd_negatives ? T(-1) : T(1));
    }
  }
}

std::tuple<Tensor, Tensor, Tensor> det_impl(const Tensor& A, bool meta) {
  check_linalg_input(A, "linalg.det");
  auto [LU, pivots, info] = lu_factor_ex_impl(A, true, false, meta);
  Tensor det = at::empty(batch_shape_with(A, 2, {}), A.options());
  if (!meta) {
    dispatch_types<kFloating | kComplex>(A.scalar_type(), "linalg.det", [&]<typename T>() {
      lu_determinants<T>(LU, pivots, det.data_ptr<T>(), nullptr, nullptr);
    });
  }
  return {det, LU, pivots};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> slogdet_impl(const Tensor& A, bool meta) {
  check_linalg_input(A, "linalg.slogdet");
  auto [LU, pivots, info] = lu_factor_ex_impl(A, true, false, meta);
  Tensor sign = at::empty(batch_shape_with(A, 2, {}), A.options());
  Tensor logabs = at::empty(batch_shape_with(A, 2, {}), A.options().dtype(real_dtype(A)));
  if (!meta) {
    dispatch_types<kFloating | kComplex>(A.scalar_type(), "linalg.slogdet", [&]<typename T>() {
      lu_determinants<T>(LU, pivots, nullptr, sign.data_ptr<T>(), logabs.data_ptr<lapack::real_t<T>>());
    });
  }
  return {sign, logabs, LU, pivots};
}

// P (from the pivots' row swaps), unit-lower L and upper U from a compact LU.
std::tuple<Tensor, Tensor, Tensor> lu_unpack_impl(const Tensor& LU, const Tensor& pivots, bool unpack_data,
                                                  bool unpack_pivots, bool meta) {
  TORCH_CHECK(LU.dim() >= 2, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ", LU.sizes(),
              " instead");
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  TORCH_CHECK(pivots.scalar_type() == c10::kInt, "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
              "torch.int32 dtype. Note: this function is intended to be used with the output produced by "
              "torch.linalg.lu_factor");
  TORCH_CHECK(pivots.dim() == LU.dim() - 1 && pivots.size(-1) == k,
              "torch.lu_unpack: Expected LU_pivots of shape LU.shape[:-2] + (min(m, n),), but got ", pivots.sizes());
  Tensor L, U, P;
  if (unpack_data) {
    U = LU.narrow(-2, 0, k).triu();
    L = LU.narrow(-1, 0, k).tril(-1);
    if (!meta) L.diagonal(0, -2, -1).fill_(1);
  } else {
    L = at::empty({0}, LU.options());
    U = at::empty({0}, LU.options());
  }
  if (!unpack_pivots) return {at::empty({0}, LU.options()), L, U};
  P = at::empty(batch_shape_with(LU, 2, {m, m}), LU.options());
  if (meta || P.numel() == 0) return {P, L, U};
  check_pivots(pivots, m);
  // Apply the swaps to the identity permutation, then scatter ones: P[perm[i], i] = 1.
  P.zero_();
  const Tensor piv = pivots.contiguous();
  const int* pv = piv.data_ptr<int>();
  const int64_t batch = batch_count(LU);
  dispatch_types<kFloating | kComplex>(LU.scalar_type(), "lu_unpack", [&]<typename T>() {
    T* p = P.data_ptr<T>();
    std::vector<int64_t> perm(static_cast<size_t>(m));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < m; ++i) perm[static_cast<size_t>(i)] = i;
      for (int64_t i = 0; i < k; ++i) std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(pv[b * k + i] - 1)]);
      for (int64_t i = 0; i < m; ++i) p[b * m * m + perm[static_cast<size_t>(i)] * m + i] = T(1);
    }
  });
  return {P, L, U};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex_cpu(const Tensor& A, bool pivot, bool check_errors) {
  return lu_factor_ex_impl(A, pivot, check_errors, false);
}
std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex_meta(const Tensor& A, bool pivot, bool check_errors) {
  return lu_factor_ex_impl(A, pivot, check_errors, true);
}
std::tuple<Tensor, Tensor, Tensor> lu_unpack_cpu(const Tensor& LU, const Tensor& pivots, bool unpack_data,
                                                 bool unpack_pivots) {
  return lu_unpack_impl(LU, pivots, unpack_data, unpack_pivots, false);
}
std::tuple<Tensor, Tensor, Tensor> lu_unpack_meta(const Tensor& LU, const Tensor& pivots, bool unpack_data,
                                                  bool unpack_pivots) {
  return lu_unpack_impl(LU, pivots, unpack_data, unpack_pivots, true);
}
Tensor linalg_lu_solve_cpu(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  return lu_solve_impl(LU, pivots, B, left, adjoint, false);
}
Tensor linalg_lu_solve_meta(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  return lu_solve_impl(LU, pivots, B, left, adjoint, true);
}
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_solve_ex_cpu(const Tensor& A, const Tensor& B, bool left,
                                                               bool check_errors) {
  return solve_ex_impl(A, B, left, check_errors, false);
}
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_solve_ex_meta(const Tensor& A, const Tensor& B, bool left,
                                                                bool check_errors) {
  return solve_ex_impl(A, B, left, check_errors, true);
}
std::tuple<Tensor, Tensor> linalg_inv_ex_cpu(const Tensor& A, bool check_errors) { return inv_ex_impl(A, check_errors, false); }
std::tuple<Tensor, Tensor> linalg_inv_ex_meta(const Tensor& A, bool check_errors) { return inv_ex_impl(A, check_errors, true); }
std::tuple<Tensor, Tensor, Tensor> linalg_det_cpu(const Tensor& A) { return det_impl(A, false); }
std::tuple<Tensor, Tensor, Tensor> linalg_det_meta(const Tensor& A) { return det_impl(A, true); }
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_slogdet_cpu(const Tensor& A) { return slogdet_impl(A, false); }
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_slogdet_meta(const Tensor& A) { return slogdet_impl(A, true); }
}  // namespace at::inline tessera::native
