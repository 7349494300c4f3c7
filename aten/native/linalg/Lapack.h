// LAPACK as the linalg kernels call it: the Fortran routines OpenBLAS exports, typed per
// scalar (float, double, c10::complex<float>, c10::complex<double>) behind one overloaded
// name each (the complex ones under the real routine's name: orgqr is c/zungqr, ormqr
// c/zunmqr; getrf and getrs (and real potrf) take square matrices of up to 16 rows to unblocked
// loops instead), and the loop that runs a batch of matrices across threads with OpenBLAS
// held to one thread meanwhile. Matrices are column-major (LAPACK's order); the kernels keep
// their buffers that way, as torch does.
#pragma once

#include <aten/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/complex.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>

namespace at::inline tessera::native::lapack {

// The real type under a scalar: T itself, or R for c10::complex<R> (LAPACK's eigenvalues,
// singular values, rcond and rwork are real for complex routines).
template <typename T>
struct RealOf {
  using type = T;
};
template <typename R>
struct RealOf<c10::complex<R>> {
  using type = R;
};
template <typename T>
using real_t = typename RealOf<T>::type;

// True for c10::complex<float> and c10::complex<double> (c10's own trait).
using c10::detail::is_complex_v;

// The trans argument that applies A^H: 'C' for complex scalars, 'T' (the same) for real.
template <typename T>
constexpr char adjoint_trans() {
  return is_complex_v<T> ? 'C' : 'T';
}

// Factorizations and solvers, one overload per scalar type. `info` is LAPACK's.
void getrf(int m, int n, float* a, int lda, int* ipiv, int* info);
void getrf(int m, int n, double* a, int lda, int* ipiv, int* info);
void getrf(int m, int n, c10::complex<float>* a, int lda, int* ipiv, int* info);
void getrf(int m, int n, c10::complex<double>* a, int lda, int* ipiv, int* info);
// trans 'N', 'T' or 'C' (conjugate transpose; complex only).
void getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info);
void getrs(char trans, int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb, int* info);
void getrs(char trans, int n, int nrhs, const c10::complex<float>* a, int lda, const int* ipiv, c10::complex<float>* b,
           int ldb, int* info);
void getrs(char trans, int n, int nrhs, const c10::complex<double>* a, int lda, const int* ipiv,
           c10::complex<double>* b, int ldb, int* info);
// The inverse from getrf's output, in place (workspace query: lwork = -1).
void getri(int n, float* a, int lda, const int* ipiv, float* work, int lwork, int* info);
void getri(int n, double* a, int lda, const int* ipiv, double* work, int lwork, int* info);
void getri(int n, c10::complex<float>* a, int lda, const int* ipiv, c10::complex<float>* work, int lwork, int* info);
void getri(int n, c10::complex<double>* a, int lda, const int* ipiv, c10::complex<double>* work, int lwork, int* info);
// Cholesky; for complex scalars A is Hermitian.
void potrf(char uplo, int n, float* a, int lda, int* info);
void potrf(char uplo, int n, double* a, int lda, int* info);
void potrf(char uplo, int n, c10::complex<float>* a, int lda, int* info);
void potrf(char uplo, int n, c10::complex<double>* a, int lda, int* info);
// The symmetric / Hermitian eigensolver (s/dsyevd, c/zheevd): real eigenvalues w.
// Workspace queries pass lwork = -1 (and liwork, lrwork = -1); the optimal sizes come back
// in work[0], iwork[0] and rwork[0]. The real routines take no rwork: theirs is ignored.
void heevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork, float* rwork, int lrwork,
           int* iwork, int liwork, int* info);
void heevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork, double* rwork,
           int lrwork, int* iwork, int liwork, int* info);
void heevd(char jobz, char uplo, int n, c10::complex<float>* a, int lda, float* w, c10::complex<float>* work, int lwork,
           float* rwork, int lrwork, int* iwork, int liwork, int* info);
void heevd(char jobz, char uplo, int n, c10::complex<double>* a, int lda, double* w, c10::complex<double>* work,
           int lwork, double* rwork, int lrwork, int* iwork, int liwork, int* info);
// The SVD by divide and conquer: real singular values s. The complex routines take a real
// rwork, which LAPACK does not size by query; the real ones ignore it.
void gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt, float* work,
           int lwork, float* rwork, int* iwork, int* info);
void gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt,
           double* work, int lwork, double* rwork, int* iwork, int* info);
void gesdd(char jobz, int m, int n, c10::complex<float>* a, int lda, float* s, c10::complex<float>* u, int ldu,
           c10::complex<float>* vt, int ldvt, c10::complex<float>* work, int lwork, float* rwork, int* iwork,
           int* info);
void gesdd(char jobz, int m, int n, c10::complex<double>* a, int lda, double* s, c10::complex<double>* u, int ldu,
           c10::complex<double>* vt, int ldvt, c10::complex<double>* work, int lwork, double* rwork, int* iwork,
           int* info);
void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info);
void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info);
void geqrf(int m, int n, c10::complex<float>* a, int lda, c10::complex<float>* tau, c10::complex<float>* work,
           int lwork, int* info);
void geqrf(int m, int n, c10::complex<double>* a, int lda, c10::complex<double>* tau, c10::complex<double>* work,
           int lwork, int* info);
// Q from geqrf's reflectors (c/zungqr for complex scalars).
void orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info);
void orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork, int* info);
void orgqr(int m, int n, int k, c10::complex<float>* a, int lda, const c10::complex<float>* tau,
           c10::complex<float>* work, int lwork, int* info);
void orgqr(int m, int n, int k, c10::complex<double>* a, int lda, const c10::complex<double>* tau,
           c10::complex<double>* work, int lwork, int* info);
// Q (from geqrf's reflectors) applied to C: side 'L' / 'R', trans 'N' / 'T' (real) or
// 'N' / 'C' (complex, c/zunmqr).
void ormqr(char side, char trans, int m, int n, int k, const float* a, int lda, const float* tau, float* c, int ldc,
           float* work, int lwork, int* info);
void ormqr(char side, char trans, int m, int n, int k, const double* a, int lda, const double* tau, double* c, int ldc,
           double* work, int lwork, int* info);
void ormqr(char side, char trans, int m, int n, int k, const c10::complex<float>* a, int lda,
           const c10::complex<float>* tau, c10::complex<float>* c, int ldc, c10::complex<float>* work, int lwork,
           int* info);
void ormqr(char side, char trans, int m, int n, int k, const c10::complex<double>* a, int lda,
           const c10::complex<double>* tau, c10::complex<double>* c, int ldc, c10::complex<double>* work, int lwork,
           int* info);
// Least squares min ||A X - B|| (B: max(m, n) rows, X overwriting its first n): QR (gels,
// full rank), complete orthogonal factorisation (gelsy; jpvt zeroed by the caller), SVD
// (gelsd divide and conquer, gelss). `rcond` bounds the singular values kept. The complex
// gelsy, gelsd and gelss take a real rwork besides work; the real ones ignore it, so one
// call serves every scalar type.
void gels(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* work, int lwork, int* info);
void gels(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* work, int lwork, int* info);
void gelsy(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, int* jpvt, float rcond, int* rank, float* work,
           int lwork, float* rwork, int* info);
void gelsy(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, int* jpvt, double rcond, int* rank,
           double* work, int lwork, double* rwork, int* info);
void gelsd(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* s, float rcond, int* rank, float* work,
           int lwork, float* rwork, int* iwork, int* info);
void gelsd(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* s, double rcond, int* rank,
           double* work, int lwork, double* rwork, int* iwork, int* info);
void gelss(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* s, float rcond, int* rank, float* work,
           int lwork, float* rwork, int* info);
void gelss(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* s, double rcond, int* rank,
           double* work, int lwork, double* rwork, int* info);
// The complex least-squares routines: rcond and s are real.
void gels(int m, int n, int nrhs, c10::complex<float>* a, int lda, c10::complex<float>* b, int ldb,
          c10::complex<float>* work, int lwork, int* info);
void gels(int m, int n, int nrhs, c10::complex<double>* a, int lda, c10::complex<double>* b, int ldb,
          c10::complex<double>* work, int lwork, int* info);
void gelsy(int m, int n, int nrhs, c10::complex<float>* a, int lda, c10::complex<float>* b, int ldb, int* jpvt,
           float rcond, int* rank, c10::complex<float>* work, int lwork, float* rwork, int* info);
void gelsy(int m, int n, int nrhs, c10::complex<double>* a, int lda, c10::complex<double>* b, int ldb, int* jpvt,
           double rcond, int* rank, c10::complex<double>* work, int lwork, double* rwork, int* info);
void gelsd(int m, int n, int nrhs, c10::complex<float>* a, int lda, c10::complex<float>* b, int ldb, float* s,
           float rcond, int* rank, c10::complex<float>* work, int lwork, float* rwork, int* iwork, int* info);
void gelsd(int m, int n, int nrhs, c10::complex<double>* a, int lda, c10::complex<double>* b, int ldb, double* s,
           double rcond, int* rank, c10::complex<double>* work, int lwork, double* rwork, int* iwork, int* info);
void gelss(int m, int n, int nrhs, c10::complex<float>* a, int lda, c10::complex<float>* b, int ldb, float* s,
           float rcond, int* rank, c10::complex<float>* work, int lwork, float* rwork, int* info);
void gelss(int m, int n, int nrhs, c10::complex<double>* a, int lda, c10::complex<double>* b, int ldb, double* s,
           double rcond, int* rank, c10::complex<double>* work, int lwork, double* rwork, int* info);
// Bunch-Kaufman LDL^T of a symmetric matrix (its lower triangle, uplo 'L') and the solve
// with it.
void sytrf(int n, float* a, int lda, int* ipiv, float* work, int lwork, int* info);
void sytrf(int n, double* a, int lda, int* ipiv, double* work, int lwork, int* info);
void sytrs(int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info);
void sytrs(int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb, int* info);
// The same with one form for every scalar type: for complex ones, `hermitian` picks the
// Hermitian LDL^H (c/zhetrf, c/zhetrs) over the complex symmetric LDL^T (c/zsytrf,
// c/zsytrs); for real ones it is ignored.
void sytrf(bool hermitian, int n, float* a, int lda, int* ipiv, float* work, int lwork, int* info);
void sytrf(bool hermitian, int n, double* a, int lda, int* ipiv, double* work, int lwork, int* info);
void sytrf(bool hermitian, int n, c10::complex<float>* a, int lda, int* ipiv, c10::complex<float>* work, int lwork,
           int* info);
void sytrf(bool hermitian, int n, c10::complex<double>* a, int lda, int* ipiv, c10::complex<double>* work, int lwork,
           int* info);
void sytrs(bool hermitian, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info);
void sytrs(bool hermitian, int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb, int* info);
void sytrs(bool hermitian, int n, int nrhs, const c10::complex<float>* a, int lda, const int* ipiv,
           c10::complex<float>* b, int ldb, int* info);
void sytrs(bool hermitian, int n, int nrhs, const c10::complex<double>* a, int lda, const int* ipiv,
           c10::complex<double>* b, int ldb, int* info);
// Row-major triangular solve through BLAS: op(A) X = alpha B (left) or X op(A) = B (right),
// X overwriting B (m x n, leading dimension ldb).
void trsm(bool left, bool upper, bool transpose, bool unit_diagonal, int m, int n, const float* a, int lda, float* b,
          int ldb);
void trsm(bool left, bool upper, bool transpose, bool unit_diagonal, int m, int n, const double* a, int lda,
          double* b, int ldb);
// The same with op(A) named by trans: 'N', 'T' or 'C' (A^H; for real scalars the same as 'T').
void trsm(bool left, bool upper, char trans, bool unit_diagonal, int m, int n, const float* a, int lda, float* b,
          int ldb);
void trsm(bool left, bool upper, char trans, bool unit_diagonal, int m, int n, const double* a, int lda, double* b,
          int ldb);
void trsm(bool left, bool upper, char trans, bool unit_diagonal, int m, int n, const c10::complex<float>* a, int lda,
          c10::complex<float>* b, int ldb);
void trsm(bool left, bool upper, char trans, bool unit_diagonal, int m, int n, const c10::complex<double>* a, int lda,
          c10::complex<double>* b, int ldb);
// Eigenvalues (and with jobvr 'V' the right eigenvectors, in vr) of a general matrix; no
// left eigenvectors. Real scalars: real parts in w, imaginary parts in wi (a conjugate
// pair's vectors as LAPACK packs them), rwork unused. Complex scalars: eigenvalues in w,
// wi unused (may be null), rwork of 2n reals.
void geev(char jobvr, int n, float* a, int lda, float* w, float* wi, float* vr, int ldvr, float* work, int lwork,
          float* rwork, int* info);
void geev(char jobvr, int n, double* a, int lda, double* w, double* wi, double* vr, int ldvr, double* work, int lwork,
          double* rwork, int* info);
void geev(char jobvr, int n, c10::complex<float>* a, int lda, c10::complex<float>* w, float* wi,
          c10::complex<float>* vr, int ldvr, c10::complex<float>* work, int lwork, float* rwork, int* info);
void geev(char jobvr, int n, c10::complex<double>* a, int lda, c10::complex<double>* w, double* wi,
          c10::complex<double>* vr, int ldvr, c10::complex<double>* work, int lwork, double* rwork, int* info);

// Runs fn(i) for each matrix i of a batch: across threads (OpenBLAS held to one thread)
// when there are several matrices, else inline so OpenBLAS may thread the one call.
// `flops_each` is a rough cost per matrix, for the grain.
void for_each_matrix(int64_t batch, int64_t flops_each, const std::function<void(int64_t)>& fn);

// An uninitialised workspace of n elements (at least one) for one LAPACK call: LAPACK
// writes its workspaces before reading them, and a zero-filled vector would cost a pass
// over memory per matrix (gesdd's is ~4n^2). Raw bytes, since c10::complex's constructor
// would zero them (operator new's alignment covers every LAPACK scalar).
template <typename T>
class Workspace {
 public:
  explicit Workspace(int64_t n)
      : bytes_(std::make_unique_for_overwrite<std::byte[]>(sizeof(T) * static_cast<size_t>(n > 1 ? n : 1))) {}
  T* get() const { return reinterpret_cast<T*>(bytes_.get()); }

 private:
  static_assert(alignof(T) <= alignof(std::max_align_t));
  std::unique_ptr<std::byte[]> bytes_;
};
template <typename T>
Workspace<T> workspace(int64_t n) {
  return Workspace<T>(n);
}

// LAPACK's optimal workspace size, returned (by a query with lwork = -1) in a scalar of
// the routine's type.
template <typename T>
int workspace_size(T query) {
  // rounded up a little: a float query above 2^24 may have been rounded down (LAPACK
  // before 3.10 did not round it up)
  const double size = std::ceil(static_cast<double>(query) * (1.0 + std::numeric_limits<T>::epsilon()));
  return size > 1 ? static_cast<int>(std::min<double>(size, std::numeric_limits<int>::max())) : 1;
}
// A complex routine returns the size in the real part.
template <typename R>
int workspace_size(c10::complex<R> query) {
  return workspace_size(query.real());
}

// LAPACK sizes are int: a matrix dimension beyond it is refused with torch-style words.
int lapack_int(int64_t v, const char* op);

}  // namespace at::inline tessera::native::lapack
