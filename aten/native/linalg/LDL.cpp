// The LDL^T factorisation of symmetric matrices with Bunch-Kaufman pivoting (LAPACK's
// sytrf on the lower triangle; for complex input LDL^H of a Hermitian matrix, hetrf, when
// `hermitian`, else LDL^T of a complex-symmetric one) and the solve with it (sytrs/hetrs):
// linalg.ldl_factor_ex, ldl_factor and ldl_solve. LD keeps L (unit lower, below the diagonal) and the 1x1 and
// 2x2 blocks of D, the strict upper triangle zeroed, column-major as torch returns it.
// Neither op is differentiable in torch. CPU and Meta share one function per op.
#include <aten/core/Dispatch.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/linalg/Lapack.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/ops/Functions.h>

#include <vector>

namespace at::inline tessera::native {

namespace {

std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex_impl(const Tensor& self, bool hermitian, bool check_errors,
                                                      bool meta) {
  constexpr const char* op = "torch.linalg.ldl_factor_ex";
  check_linalg_input(self, op);
  const int64_t n = self.size(-1);
  Tensor LD = clone_batched_fortran(self);
  Tensor pivots = at::zeros(batch_shape_with(self, 2, {n}), self.options().dtype(c10::kInt));
  Tensor info = at::zeros(batch_shape_with(self, 2, {}), self.options().dtype(c10::kInt));
  if (meta || self.numel() == 0) return {LD, pivots, info};
  const int ni = lapack::lapack_int(n, op);
  dispatch_types<kFloating | kComplex>(self.scalar_type(), op, [&]<typename T>() {
    T query{};
    int query_info = 0;
    lapack::sytrf(hermitian, ni, matrix_at<T>(LD, 0), ni, pivots.data_ptr<int>(), &query, -1, &query_info);
    const int lwork = lapack::workspace_size(query);
    int* piv = pivots.data_ptr<int>();
    int* inf = info.data_ptr<int>();
    lapack::for_each_matrix(batch_count(LD), n * n * n / 3, [&](int64_t i) {
      auto work = lapack::workspace<T>(lwork);
      lapack::sytrf(hermitian, ni, matrix_at<T>(LD, i), ni, piv + i * n, work.get(), lwork, inf + i);
    });
  });
  LD.copy_(LD.tril());
  if (check_errors) check_linalg_errors(info, op, LinalgFailure::LdlSingular, self.dim() > 2);
  return {LD, pivots, info};
}

// Pivots come from users too, and sytrs follows them: each must name a row (1..n for a
// 1x1 block, -1..-n for a 2x2 one) and negative ones must pair up, or LAPACK would read
// outside the matrix.
void check_ldl_pivots(const Tensor& pivots, int64_t n) {
  // In int64, before any narrowing to LAPACK's int (which would wrap 2^32 + k to k, and
  // whose INT_MIN has no absolute value).
  const Tensor p = pivots.to(c10::kLong).contiguous();
  const int64_t* d = p.data_ptr<int64_t>();
  const auto names_a_row = [n](int64_t v) { return v != 0 && v >= -n && v <= n; };
  for (int64_t start = 0; start < p.numel(); start += n) {
    for (int64_t k = 0; k < n; ++k) {
      const int64_t v = d[start + k];
      TORCH_CHECK(names_a_row(v), "torch.linalg.ldl_solve: pivots must lie in [-n, -1] or [1, n] for n = ", n,
                  ", got ", v, ". Did you pass the result of ldl_factor?");
      if (v > 0) continue;
      TORCH_CHECK(k + 1 < n && d[start + k + 1] < 0 && names_a_row(d[start + k + 1]),
                  "torch.linalg.ldl_solve: a negative pivot (a 2x2 block of D) must be followed by another. Did you "
                  "pass the result of ldl_factor?");
      ++k;
    }
  }
}

Tensor ldl_solve_impl(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian, bool meta) {
  constexpr const char* op = "torch.linalg.ldl_solve";
  TORCH_CHECK(LD.dim() >= 2, op, ": Expected LD to have at least 2 dimensions, but it has ", LD.dim(),
              " dimensions instead");
  TORCH_CHECK(B.dim() >= 2, op, ": Expected B to have at least 2 dimensions, but it has ", B.dim(),
              " dimensions instead");
  check_linalg_input(LD, op);
  const int64_t n = LD.size(-1);
  TORCH_CHECK(pivots.sizes().equals(LD.sizes().slice(0, LD.dim() - 1)), op,
              ": Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape ", pivots.sizes(),
              " instead");
  TORCH_CHECK(c10::isIntegralType(pivots.scalar_type(), /*includeBool=*/false), op,
              ": Expected pivots to be integers. Got ", pivots.scalar_type());
  TORCH_CHECK(B.scalar_type() == LD.scalar_type(), "Expected b and A to have the same dtype, but found b of type ",
              B.scalar_type(), " and A of type ", LD.scalar_type(), " instead.");
  TORCH_CHECK(B.size(-2) == n, "Incompatible matrix sizes for ", op, ": each A matrix is ", n, " by ", n,
              " but each b matrix is ", B.size(-2), " by ", B.size(-1));
  std::vector<int64_t> batch =
      infer_size(LD.sizes().slice(0, LD.dim() - 2), B.sizes().slice(0, B.dim() - 2));
  std::vector<int64_t> b_sizes = batch, ld_sizes = batch, piv_sizes = batch;
  b_sizes.insert(b_sizes.end(), {n, B.size(-1)});
  ld_sizes.insert(ld_sizes.end(), {n, n});
  piv_sizes.push_back(n);
  Tensor X = clone_batched_fortran(B.expand(b_sizes));
  if (meta || X.numel() == 0) return X;
  const Tensor wide = pivots.expand(piv_sizes);
  check_ldl_pivots(wide, n);
  const Tensor piv = wide.to(c10::kInt).contiguous();
  const Tensor factors = clone_batched_fortran(LD.expand(ld_sizes));
  const int ni = lapack::lapack_int(n, op), ri = lapack::lapack_int(B.size(-1), op);
  dispatch_types<kFloating | kComplex>(LD.scalar_type(), op, [&]<typename T>() {
    lapack::for_each_matrix(batch_count(X), 2 * n * n * B.size(-1), [&](int64_t i) {
      int info = 0;
      lapack::sytrs(hermitian, ni, ri, matrix_at<T>(factors, i), ni, piv.data_ptr<int>() + i * n, matrix_at<T>(X, i),
                    ni, &info);
    });
  });
  return X;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_ldl_factor_ex_cpu(const Tensor& self, bool hermitian, bool check_errors) {
  return ldl_factor_ex_impl(self, hermitian, check_errors, false);
}
std::tuple<Tensor, Tensor, Tensor> linalg_ldl_factor_ex_meta(const Tensor& self, bool hermitian, bool check_errors) {
  return ldl_factor_ex_impl(self, hermitian, check_errors, true);
}
std::tuple<Tensor, Tensor> linalg_ldl_factor(const Tensor& self, bool hermitian) {
  auto [LD, pivots, info] = at::linalg_ldl_factor_ex(self, hermitian, /*check_errors=*/false);
  check_linalg_errors(info, "torch.linalg.ldl_factor", LinalgFailure::LdlSingular, self.dim() > 2);
  return {LD, pivots};
}
Tensor linalg_ldl_solve_cpu(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  return ldl_solve_impl(LD, pivots, B, hermitian, false);
}
Tensor linalg_ldl_solve_meta(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  return ldl_solve_impl(LD, pivots, B, hermitian, true);
}

}  // namespace at::inline tessera::native
