// LAPACK-backed kernels that factor into or solve with triangular matrices: Cholesky
// (linalg_cholesky_ex) and the triangular solve (linalg_solve_triangular). As in
// Factorizations.cpp, each CPU kernel and its Meta kernel are one function with a `meta`
// flag; batches run their matrices across threads (lapack::for_each_matrix).
#include <aten/core/Dispatch.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/linalg/Lapack.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/ops/Functions.h>

#include <vector>

namespace at::inline tessera::native {

namespace {

std::tuple<Tensor, Tensor> cholesky_ex_impl(const Tensor& A, bool upper, bool check_errors, bool meta) {
  check_linalg_input(A, "linalg.cholesky");
  Tensor L = clone_batched_fortran(A);
  Tensor info = at::zeros(batch_shape_with(A, 2, {}), A.options().dtype(c10::kInt));
  if (meta || A.numel() == 0) return {L, info};
  const int64_t n = A.size(-1);
  const int ni = lapack::lapack_int(n, "linalg.cholesky");
  dispatch_types<kFloating | kComplex>(A.scalar_type(), "linalg.cholesky", [&]<typename T>() {
    int* inf = info.data_ptr<int>();
    lapack::for_each_matrix(batch_count(L), n * n * n / 3, [&](int64_t i) {
      lapack::potrf(upper ? 'U' : 'L', ni, matrix_at<T>(L, i), ni, inf + i);
    });
  });
  // LAPACK leaves the other triangle as it was.
  if (upper) L.triu_(); else L.tril_();
  if (check_errors) check_linalg_errors(info, "linalg.cholesky", LinalgFailure::NotPositiveDefinite, A.dim() > 2);
  return {L, info};
}

Tensor solve_triangular_impl(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular, bool meta) {
  check_linalg_input(A, "linalg.solve_triangular");
  TORCH_CHECK(B.dim() >= 2, "linalg.solve_triangular: The input tensor B must have at least 2 dimensions.");
  const int64_t n = A.size(-1);
  TORCH_CHECK(left ? B.size(-2) == n : B.size(-1) == n,
              "linalg.solve_triangular: Incompatible shapes of A and B for the equation ", left ? "AX = B (" : "XA = B (",
              n, "x", n, " and ", B.size(-2), "x", B.size(-1), ")");
  const c10::ScalarType t = c10::promoteTypes(A.scalar_type(), B.scalar_type());
  // A's batch broadcast with B's, each then expanded to batch + its own matrix dims.
  const std::vector<int64_t> batch = infer_size(A.sizes().slice(0, A.dim() - 2), B.sizes().slice(0, B.dim() - 2));
  auto with_matrix = [&](int64_t r, int64_t c) {
    std::vector<int64_t> sizes = batch;
    sizes.push_back(r);
    sizes.push_back(c);
    return sizes;
  };
  // Row-major throughout: BLAS's trsm takes the layout as an argument.
  Tensor X = B.to(t).expand(with_matrix(B.size(-2), B.size(-1))).contiguous().clone();
  if (meta || X.numel() == 0) return X;
  const Tensor Ab = A.to(t).expand(with_matrix(n, n)).contiguous();
  const int rows = lapack::lapack_int(X.size(-2), "linalg.solve_triangular");
  const int cols = lapack::lapack_int(X.size(-1), "linalg.solve_triangular");
  dispatch_types<kFloating | kComplex>(t, "linalg.solve_triangular", [&]<typename T>() {
    lapack::for_each_matrix(batch_count(X), n * n * (left ? cols : rows), [&](int64_t i) {
      lapack::trsm(left, upper, 'N', unitriangular, rows, cols, matrix_at<T>(Ab, i), static_cast<int>(n),
                   matrix_at<T>(X, i), cols);
    });
  });
  return X;
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_cholesky_ex_cpu(const Tensor& A, bool upper, bool check_errors) {
  return cholesky_ex_impl(A, upper, check_errors, false);
}
std::tuple<Tensor, Tensor> linalg_cholesky_ex_meta(const Tensor& A, bool upper, bool check_errors) {
  return cholesky_ex_impl(A, upper, check_errors, true);
}
Tensor linalg_solve_triangular_cpu(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  return solve_triangular_impl(A, B, upper, left, unitriangular, false);
}
Tensor linalg_solve_triangular_meta(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  return solve_triangular_impl(A, B, upper, left, unitriangular, true);
}

}  // namespace at::inline tessera::native
