// The out= forms of the linear-algebra ops with several results: each computes the
// functional op and copies every result into its out tensor (resized when empty, dtype
// checked as torch's out= is), so the functional kernels stay the one implementation.
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/ops/Functions.h>

#include <tuple>
#include <utility>

namespace at::inline tessera::native {

namespace {

// Copies result i into out i for every i; returns the outs.
template <typename Results, typename... Outs, size_t... I>
std::tuple<Outs&...> copy_results(const Results& results, const char* op, std::index_sequence<I...>,
                                  Outs&... outs) {
  (copy_into_out(std::get<I>(results), outs, op), ...);
  return std::tuple<Outs&...>(outs...);
}

template <typename Results, typename... Outs>
std::tuple<Outs&...> copy_results(const Results& results, const char* op, Outs&... outs) {
  return copy_results(results, op, std::index_sequence_for<Outs...>{}, outs...);
}

}  // namespace

std::tuple<Tensor&, Tensor&, Tensor&> linalg_lu_factor_ex_out(const Tensor& A, bool pivot, bool check_errors,
                                                              Tensor& LU, Tensor& pivots, Tensor& info) {
  return copy_results(at::linalg_lu_factor_ex(A, pivot, check_errors), "linalg.lu_factor_ex", LU, pivots, info);
}
std::tuple<Tensor&, Tensor&> linalg_lu_factor_out(const Tensor& A, bool pivot, Tensor& LU, Tensor& pivots) {
  return copy_results(at::linalg_lu_factor(A, pivot), "linalg.lu_factor", LU, pivots);
}
std::tuple<Tensor&, Tensor&, Tensor&> linalg_lu_out(const Tensor& A, bool pivot, Tensor& P, Tensor& L, Tensor& U) {
  return copy_results(at::linalg_lu(A, pivot), "linalg.lu", P, L, U);
}
std::tuple<Tensor&, Tensor&, Tensor&> lu_unpack_out(const Tensor& LU_data, const Tensor& LU_pivots, bool unpack_data,
                                                    bool unpack_pivots, Tensor& P, Tensor& L, Tensor& U) {
  return copy_results(at::lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots), "lu_unpack", P, L, U);
}
std::tuple<Tensor&, Tensor&> linalg_solve_ex_out(const Tensor& A, const Tensor& B, bool left, bool check_errors,
                                                 Tensor& result, Tensor& info) {
  return copy_results(at::linalg_solve_ex(A, B, left, check_errors), "linalg.solve_ex", result, info);
}
std::tuple<Tensor&, Tensor&> linalg_inv_ex_out(const Tensor& A, bool check_errors, Tensor& inverse, Tensor& info) {
  return copy_results(at::linalg_inv_ex(A, check_errors), "linalg.inv_ex", inverse, info);
}
std::tuple<Tensor&, Tensor&> linalg_slogdet_out(const Tensor& A, Tensor& sign, Tensor& logabsdet) {
  return copy_results(at::linalg_slogdet(A), "linalg.slogdet", sign, logabsdet);
}
std::tuple<Tensor&, Tensor&> slogdet_out(const Tensor& self, Tensor& sign, Tensor& logabsdet) {
  return copy_results(at::linalg_slogdet(self), "slogdet", sign, logabsdet);
}
std::tuple<Tensor&, Tensor&> linalg_cholesky_ex_out(const Tensor& self, bool upper, bool check_errors, Tensor& L,
                                                    Tensor& info) {
  return copy_results(at::linalg_cholesky_ex(self, upper, check_errors), "linalg.cholesky_ex", L, info);
}
std::tuple<Tensor&, Tensor&> triangular_solve_out(const Tensor& self, const Tensor& A, bool upper, bool transpose,
                                                  bool unitriangular, Tensor& X, Tensor& M) {
  return copy_results(at::triangular_solve(self, A, upper, transpose, unitriangular), "triangular_solve", X, M);
}
std::tuple<Tensor&, Tensor&> linalg_eigh_out(const Tensor& self, std::string_view UPLO, Tensor& eigvals,
                                             Tensor& eigvecs) {
  return copy_results(at::linalg_eigh(self, UPLO), "linalg.eigh", eigvals, eigvecs);
}
std::tuple<Tensor&, Tensor&, Tensor&> linalg_svd_out(const Tensor& A, bool full_matrices,
                                                     std::optional<std::string_view> driver, Tensor& U, Tensor& S,
                                                     Tensor& Vh) {
  return copy_results(at::linalg_svd(A, full_matrices, driver), "linalg.svd", U, S, Vh);
}
std::tuple<Tensor&, Tensor&, Tensor&> svd_out(const Tensor& self, bool some, bool compute_uv, Tensor& U, Tensor& S,
                                              Tensor& V) {
  return copy_results(at::svd(self, some, compute_uv), "svd", U, S, V);
}
std::tuple<Tensor&, Tensor&> linalg_qr_out(const Tensor& A, std::string_view mode, Tensor& Q, Tensor& R) {
  return copy_results(at::linalg_qr(A, mode), "linalg.qr", Q, R);
}
std::tuple<Tensor&, Tensor&> qr_out(const Tensor& self, bool some, Tensor& Q, Tensor& R) {
  return copy_results(at::qr(self, some), "qr", Q, R);
}

std::tuple<Tensor&, Tensor&> geqrf_out(const Tensor& self, Tensor& a, Tensor& tau) {
  return copy_results(at::geqrf(self), "geqrf", a, tau);
}
std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> linalg_lstsq_out(const Tensor& self, const Tensor& b,
                                                                std::optional<double> rcond,
                                                                std::optional<std::string_view> driver,
                                                                Tensor& solution, Tensor& residuals, Tensor& rank,
                                                                Tensor& singular_values) {
  return copy_results(at::linalg_lstsq(self, b, rcond, driver), "linalg.lstsq", solution, residuals, rank,
                      singular_values);
}
std::tuple<Tensor&, Tensor&, Tensor&> linalg_ldl_factor_ex_out(const Tensor& self, bool hermitian, bool check_errors,
                                                               Tensor& LD, Tensor& pivots, Tensor& info) {
  return copy_results(at::linalg_ldl_factor_ex(self, hermitian, check_errors), "linalg.ldl_factor_ex", LD, pivots,
                      info);
}
std::tuple<Tensor&, Tensor&> linalg_ldl_factor_out(const Tensor& self, bool hermitian, Tensor& LD, Tensor& pivots) {
  return copy_results(at::linalg_ldl_factor(self, hermitian), "linalg.ldl_factor", LD, pivots);
}

}  // namespace at::inline tessera::native
