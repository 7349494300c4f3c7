// The LAPACK routines OpenBLAS exports (Fortran names and calling convention: every
// argument by pointer, a hidden length after each character argument), wrapped per
// scalar type (c10::complex<float> / <double> standing for Fortran's COMPLEX / COMPLEX*16,
// whose layout they share); and the batch loop the linalg kernels share.
#include <aten/native/linalg/Lapack.h>

#include <aten/core/Parallel.h>
#include <aten/native/linalg/Blas.h>
#include <aten/native/linalg/SmallMatrix.h>
#include <c10/util/Exception.h>

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstddef>

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work, const int* lwork, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void sormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const float* a,
             const int* lda, const float* tau, float* c, const int* ldc, float* work, const int* lwork, int* info, size_t,
             size_t);
void dormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const double* a,
             const int* lda, const double* tau, double* c, const int* ldc, double* work, const int* lwork, int* info,
             size_t, size_t);
void sgels_(const char* trans, const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b,
            const int* ldb, float* work, const int* lwork, int* info, size_t);
void dgels_(const char* trans, const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
            const int* ldb, double* work, const int* lwork, int* info, size_t);
void sgelsy_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, int* jpvt,
             const float* rcond, int* rank, float* work, const int* lwork, int* info);
void dgelsy_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             int* jpvt, const double* rcond, int* rank, double* work, const int* lwork, int* info);
void sgelsd_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, float* s,
             const float* rcond, int* rank, float* work, const int* lwork, int* iwork, int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
void sgelss_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, float* s,
             const float* rcond, int* rank, float* work, const int* lwork, int* info);
void dgelss_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* info);
void ssytrf_(const char* uplo, const int* n, float* a, const int* lda, int* ipiv, float* work, const int* lwork,
             int* info, size_t);
void dsytrf_(const char* uplo, const int* n, double* a, const int* lda, int* ipiv, double* work, const int* lwork,
             int* info, size_t);
void ssytrs_(const char* uplo, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t);
void dsytrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr, float* wi,
            float* vl, const int* ldvl, float* vr, const int* ldvr, float* work, const int* lwork, int* info, size_t,
            size_t);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info, size_t,
            size_t);

// Complex routines: COMPLEX is c10::complex<float>, COMPLEX*16 c10::complex<double>.
void cgetrf_(const int* m, const int* n, c10::complex<float>* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, c10::complex<double>* a, const int* lda, int* ipiv, int* info);
void cgetrs_(const char* trans, const int* n, const int* nrhs, const c10::complex<float>* a, const int* lda,
             const int* ipiv, c10::complex<float>* b, const int* ldb, int* info, size_t);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const c10::complex<double>* a, const int* lda,
             const int* ipiv, c10::complex<double>* b, const int* ldb, int* info, size_t);
void cgetri_(const int* n, c10::complex<float>* a, const int* lda, const int* ipiv, c10::complex<float>* work,
             const int* lwork, int* info);
void zgetri_(const int* n, c10::complex<double>* a, const int* lda, const int* ipiv, c10::complex<double>* work,
             const int* lwork, int* info);
void cpotrf_(const char* uplo, const int* n, c10::complex<float>* a, const int* lda, int* info, size_t);
void zpotrf_(const char* uplo, const int* n, c10::complex<double>* a, const int* lda, int* info, size_t);
void cheevd_(const char* jobz, const char* uplo, const int* n, c10::complex<float>* a, const int* lda, float* w,
             c10::complex<float>* work, const int* lwork, float* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, size_t, size_t);
void zheevd_(const char* jobz, const char* uplo, const int* n, c10::complex<double>* a, const int* lda, double* w,
             c10::complex<double>* work, const int* lwork, double* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info, size_t, size_t);
void cgesdd_(const char* jobz, const int* m, const int* n, c10::complex<float>* a, const int* lda, float* s,
             c10::complex<float>* u, const int* ldu, c10::complex<float>* vt, const int* ldvt,
             c10::complex<float>* work, const int* lwork, float* rwork, int* iwork, int* info, size_t);
void zgesdd_(const char* jobz, const int* m, const int* n, c10::complex<double>* a, const int* lda, double* s,
             c10::complex<double>* u, const int* ldu, c10::complex<double>* vt, const int* ldvt,
             c10::complex<double>* work, const int* lwork, double* rwork, int* iwork, int* info, size_t);
void cgeqrf_(const int* m, const int* n, c10::complex<float>* a, const int* lda, c10::complex<float>* tau,
             c10::complex<float>* work, const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, c10::complex<double>* a, const int* lda, c10::complex<double>* tau,
             c10::complex<double>* work, const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, c10::complex<float>* a, const int* lda,
             const c10::complex<float>* tau, c10::complex<float>* work, const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, c10::complex<double>* a, const int* lda,
             const c10::complex<double>* tau, c10::complex<double>* work, const int* lwork, int* info);
void cunmqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
             const c10::complex<float>* a, const int* lda, const c10::complex<float>* tau, c10::complex<float>* c,
             const int* ldc, c10::complex<float>* work, const int* lwork, int* info, size_t, size_t);
void zunmqr_(const char* side, const char* trans, const int* m, const int* n, const int* k,
             const c10::complex<double>* a, const int* lda, const c10::complex<double>* tau, c10::complex<double>* c,
             const int* ldc, c10::complex<double>* work, const int* lwork, int* info, size_t, size_t);
void cgels_(const char* trans, const int* m, const int* n, const int* nrhs, c10::complex<float>* a, const int* lda,
            c10::complex<float>* b, const int* ldb, c10::complex<float>* work, const int* lwork, int* info, size_t);
void zgels_(const char* trans, const int* m, const int* n, const int* nrhs, c10::complex<double>* a, const int* lda,
            c10::complex<double>* b, const int* ldb, c10::complex<double>* work, const int* lwork, int* info, size_t);
void cgelsy_(const int* m, const int* n, const int* nrhs, c10::complex<float>* a, const int* lda,
             c10::complex<float>* b, const int* ldb, int* jpvt, const float* rcond, int* rank,
             c10::complex<float>* work, const int* lwork, float* rwork, int* info);
void zgelsy_(const int* m, const int* n, const int* nrhs, c10::complex<double>* a, const int* lda,
             c10::complex<double>* b, const int* ldb, int* jpvt, const double* rcond, int* rank,
             c10::complex<double>* work, const int* lwork, double* rwork, int* info);
void cgelsd_(const int* m, const int* n, const int* nrhs, c10::complex<float>* a, const int* lda,
             c10::complex<float>* b, const int* ldb, float* s, const float* rcond, int* rank, c10::complex<float>* work,
             const int* lwork, float* rwork, int* iwork, int* info);
void zgelsd_(const int* m, const int* n, const int* nrhs, c10::complex<double>* a, const int* lda,
             c10::complex<double>* b, const int* ldb, double* s, const double* rcond, int* rank,
             c10::complex<double>* work, const int* lwork, double* rwork, int* iwork, int* info);
void cgelss_(const int* m, const int* n, const int* nrhs, c10::complex<float>* a, const int* lda,
             c10::complex<float>* b, const int* ldb, float* s, const float* rcond, int* rank, c10::complex<float>* work,
             const int* lwork, float* rwork, int* info);
void zgelss_(const int* m, const int* n, const int* nrhs, c10::complex<double>* a, const int* lda,
             c10::complex<double>* b, const int* ldb, double* s, const double* rcond, int* rank,
             c10::complex<double>* work, const int* lwork, double* rwork, int* info);
void chetrf_(const char* uplo, const int* n, c10::complex<float>* a, const int* lda, int* ipiv,
             c10::complex<float>* work, const int* lwork, int* info, size_t);
void zhetrf_(const char* uplo, const int* n, c10::complex<double>* a, const int* lda, int* ipiv,
             c10::complex<double>* work, const int* lwork, int* info, size_t);
void csytrf_(const char* uplo, const int* n, c10::complex<float>* a, const int* lda, int* ipiv,
             c10::complex<float>* work, const int* lwork, int* info, size_t);
void zsytrf_(const char* uplo, const int* n, c10::complex<double>* a, const int* lda, int* ipiv,
             c10::complex<double>* work, const int* lwork, int* info, size_t);
void chetrs_(const char* uplo, const int* n, const int* nrhs, const c10::complex<float>* a, const int* lda,
             const int* ipiv, c10::complex<float>* b, const int* ldb, int* info, size_t);
void zhetrs_(const char* uplo, const int* n, const int* nrhs, const c10::complex<double>* a, const int* lda,
             const int* ipiv, c10::complex<double>* b, const int* ldb, int* info, size_t);
void csytrs_(const char* uplo, const int* n, const int* nrhs, const c10::complex<float>* a, const int* lda,
             const int* ipiv, c10::complex<float>* b, const int* ldb, int* info, size_t);
void zsytrs_(const char* uplo, const int* n, const int* nrhs, const c10::complex<double>* a, const int* lda,
             const int* ipiv, c10::complex<double>* b, const int* ldb, int* info, size_t);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, c10::complex<float>* a, const int* lda,
            c10::complex<float>* w, c10::complex<float>* vl, const int* ldvl, c10::complex<float>* vr, const int* ldvr,
            c10::complex<float>* work, const int* lwork, float* rwork, int* info, size_t, size_t);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, c10::complex<double>* a, const int* lda,
            c10::complex<double>* w, c10::complex<double>* vl, const int* ldvl, c10::complex<double>* vr,
            const int* ldvr, c10::complex<double>* work, const int* lwork, double* rwork, int* info, size_t, size_t);
}

namespace at::inline tessera::native::lapack {

// Square matrices of at most small_matrix::kMaxSize rows, stored densely, skip LAPACK's
// per-call overhead: the unblocked loops give the same factors, pivots and info codes.
static bool is_small(int n, int lda) { return n <= small_matrix::kMaxSize && lda == n; }

void getrf(int m, int n, float* a, int lda, int* ipiv, int* info) {
  if (m == n && is_small(n, lda)) return small_matrix::getrf(n, a, ipiv, info);
  sgetrf_(&m, &n, a, &lda, ipiv, info);
}
void getrf(int m, int n, double* a, int lda, int* ipiv, int* info) {
  if (m == n && is_small(n, lda)) return small_matrix::getrf(n, a, ipiv, info);
  dgetrf_(&m, &n, a, &lda, ipiv, info);
}
void getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info) {
  if (is_small(n, lda) && ldb == n) {
    *info = 0;
    return small_matrix::getrs(trans, n, nrhs, a, ipiv, b);
  }
  sgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
void getrs(char trans, int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb, int* info) {
  if (is_small(n, lda) && ldb == n) {
    *info = 0;
    return small_matrix::getrs(trans, n, nrhs, a, ipiv, b);
  }
  dgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
void getri(int n, float* a, int lda, const int* ipiv, float* work, int lwork, int* info) {
  sgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
void getri(int n, double* a, int lda, const int* ipiv, double* work, int lwork, int* info) {
  dgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
void potrf(char uplo, int n, float* a, int lda, int* info) {
  if (is_small(n, lda)) return small_matrix::potrf(uplo == 'U', n, a, info);
  spotrf_(&uplo, &n, a, &lda, info, 1);
}
void potrf(char uplo, int n, double* a, int lda, int* info) {
  if (is_small(n, lda)) return small_matrix::potrf(uplo == 'U', n, a, info);
  dpotrf_(&uplo, &n, a, &lda, info, 1);
}
void heevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork, float* /*rwork*/,
           int /*lrwork*/, int* iwork, int liwork, int* info) {
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
void heevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork, double* /*rwork*/,
           int /*lrwork*/, int* iwork, int liwork, int* info) {
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
void gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt, float* work,
           int lwork, float* /*rwork*/, int* iwork, int* info) {
  sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
void gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt,
           double* work, int lwork, double* /*rwork*/, int* iwork, int* info) {
  dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) {
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) {
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info) {
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork, int* info) {
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}

void ormqr(char side, char trans, int m, int n, int k, const float* a, int lda, const float* tau, float* c, int ldc,
           float* work, int lwork, int* info) {
  sormqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);
}
void ormqr(char side, char trans, int m, int n, int k, const double* a, int lda, const double* tau, double* c, int ldc,
           double* work, int lwork, int* info) {
  dormqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);
}
void gels(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* work, int lwork, int* info) {
  const char trans = 'N';
  sgels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);
}
void gels(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* work, int lwork, int* info) {
  const char trans = 'N';
  dgels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);
}
void gelsy(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, int* jpvt, float rcond, int* rank, float* work,
           int lwork, float* /*rwork*/, int* info) {
  sgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, info);
}
void gelsy(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, int* jpvt, double rcond, int* rank,
           double* work, int lwork, double* /*rwork*/, int* info) {
  dgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, info);
}
void gelsd(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* s, float rcond, int* rank, float* work,
           int lwork, float* /*rwork*/, int* iwork, int* info) {
  sgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);
}
void gelsd(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* s, double rcond, int* rank,
           double* work, int lwork, double* /*rwork*/, int* iwork, int* info) {
  dgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);
}
void gelss(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* s, float rcond, int* rank, float* work,
           int lwork, float* /*rwork*/, int* info) {
  sgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, info);
}
void gelss(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* s, double rcond, int* rank,
           double* work, int lwork, double* /*rwork*/, int* info) {
  dgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, info);
}
void sytrf(int n, float* a, int lda, int* ipiv, float* work, int lwork, int* info) {
  const char uplo = 'L';
  ssytrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);
}
void sytrf(int n, double* a, int lda, int* ipiv, double* work, int lwork, int* info) {
  const char uplo = 'L';
  dsytrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);
}
void sytrs(int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb, int* info) {
  const char uplo = 'L';
  ssytrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
void sytrs(int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb, int* info) {
  const char uplo = 'L';
  dsytrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
void sytrf(bool /*hermitian*/, int n, float* a, int lda, int* ipiv, float* work, int lwork, int* info) {
  sytrf(n, a, lda, ipiv, work, lwork, info);
}
void sytrf(bool /*hermitian*/, int n, double* a, int lda, int* ipiv, double* work, int lwork, int* info) {
  sytrf(n, a, lda, ipiv, work, lwork, info);
}
void sytrs(bool /*hermitian*/, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb,
           int* info) {
  sytrs(n, nrhs, a, lda, ipiv, b, ldb, info);
}
void sytrs(bool /*hermitian*/, int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb,
           int* info) {
  sytrs(n, nrhs, a, lda, ipiv, b, ldb, info);
}
void geev(char jobvr, int n, float* a, int lda, float* w, float* wi, float* vr, int ldvr, float* work, int lwork,
          float* /*rwork*/, int* info) {
  const char jobvl = 'N';
  const int ldvl = 1;
  float vl = 0;
  sgeev_(&jobvl, &jobvr, &n, a, &lda, w, wi, &vl, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1);
}
void geev(char jobvr, int n, double* a, int lda, double* w, double* wi, double* vr, int ldvr, double* work, int lwork,
          double* /*rwork*/, int* info) {
  const char jobvl = 'N';
  const int ldvl = 1;
  double vl = 0;
  dgeev_(&jobvl, &jobvr, &n, a, &lda, w, wi, &vl, &ldvl, vr, &ldvr, work, &lwork, info, 1, 1);
}

// Complex scalars: LU and its solves take tiny matrices to the unblocked loops too; the
// rest goes straight to LAPACK.
void getrf(int m, int n, c10::complex<float>* a, int lda, int* ipiv, int* info) {
  if (m == n && is_small(n, lda)) return small_matrix::getrf(n, a, ipiv, info);
  cgetrf_(&m, &n, a, &lda, ipiv, info);
}
void getrf(int m, int n, c10::complex<double>* a, int lda, int* ipiv, int* info) {
  if (m == n && is_small(n, lda)) return small_matrix::getrf(n, a, ipiv, info);
  zgetrf_(&m, &n, a, &lda, ipiv, info);
}
void getrs(char trans, int n, int nrhs, const c10::complex<float>* a, int lda, const int* ipiv, c10::complex<float>* b,
           int ldb, int* info) {
  if (is_small(n, lda) && ldb == n) {
    *info = 0;
    return small_matrix::getrs(trans, n, nrhs, a, ipiv, b);
  }
  cgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
void getrs(char trans, int n, int nrhs, const c10::complex<double>* a, int lda, const int* ipiv,
           c10::complex<double>* b, int ldb, int* info) {
  if (is_small(n, lda) && ldb == n) {
    *info = 0;
    return small_matrix::getrs(trans, n, nrhs, a, ipiv, b);
  }
  zgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
void getri(int n, c10::complex<float>* a, int lda, const int* ipiv, c10::complex<float>* work, int lwork, int* info) {
  cgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
void getri(int n, c10::complex<double>* a, int lda, const int* ipiv, c10::complex<double>* work, int lwork, int* info) {
  zgetri_(&n, a, &lda, ipiv, work, &lwork, info);
}
void potrf(char uplo, int n, c10::complex<float>* a, int lda, int* info) { cpotrf_(&uplo, &n, a, &lda, info, 1); }
void potrf(char uplo, int n, c10::complex<double>* a, int lda, int* info) { zpotrf_(&uplo, &n, a, &lda, info, 1); }
void heevd(char jobz, char uplo, int n, c10::complex<float>* a, int lda, float* w, c10::complex<float>* work, int lwork,
           float* rwork, int lrwork, int* iwork, int liwork, int* info) {
  cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}
void heevd(char jobz, char uplo, int n, c10::complex<double>* a, int lda, double* w, c10::complex<double>* work,
           int lwork, double* rwork, int lrwork, int* iwork, int liwork, int* info) {
  zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}
void gesdd(char jobz, int m, int n, c10::complex<float>* a, int lda, float* s, c10::complex<float>* u, int ldu,
           c10::complex<float>* vt, int ldvt, c10::complex<float>* work, int lwork, float* rwork, int* iwork,
           int* info) {
  cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}
void gesdd(char jobz, int m, int n, c10::complex<double>* a, int lda, double* s, c10::complex<double>* u, int ldu,
           c10::complex<double>* vt, int ldvt, c10::complex<double>* work, int lwork, double* rwork, int* iwork,
           int* info) {
  zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}
void geqrf(int m, int n, c10::complex<float>* a, int lda, c10::complex<float>* tau, c10::complex<float>* work,
           int lwork, int* info) {
  cgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void geqrf(int m, int n, c10::complex<double>* a, int lda, c10::complex<double>* tau, c10::complex<double>* work,
           int lwork, int* info) {
  zgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, c10::complex<float>* a, int lda, const c10::complex<float>* tau,
           c10::complex<float>* work, int lwork, int* info) {
  cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, c10::complex<double>* a, int lda, const c10::complex<double>* tau,
           c10::complex<double>* work, int lwork, int* info) {
  zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void ormqr(char side, char trans, int m, int n, int k, const c10::complex<float>* a, int lda,
           const c10::complex<float>* tau, c10::complex<float>* c, int ldc, c10::complex<float>* work, int lwork,
           int* info) {
  cunmqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);
}
void ormqr(char side, char trans, int m, int n, int k, const c10::complex<double>* a, int lda,
           const c10::complex<double>* tau, c10::complex<double>* c, int ldc, c10::complex<double>* work, int lwork,
           int* info) {
  zunmqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);
}
void gels(int m, int n, int nrhs, c10::complex<float>* a, int lda, c10::complex<float>* b, int ldb,
          c10::complex<float>* work, int lwork, int* info) {
  const char trans = 'N';
  cgels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);
}
void gels(int m, int n, int nrhs, c10::complex<double>* a, int lda, c10::complex<double>* b, int ldb,
          c10::complex<double>* work, int lwork, int* info) {
  const char trans = 'N';
  zgels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);
}
void gelsy(int m, int n, int nrhs, c10::complex<float>* a, int lda, c10::complex<float>* b, int ldb, int* jpvt,
           float rcond, int* rank, c10::complex<float>* work, int lwork, float* rwork, int* info) {
  cgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, rwork, info);
}
void gelsy(int m, int n, int nrhs, c10::complex<double>* a, int lda, c10::complex<double>* b, int ldb, int* jpvt,
           double rcond, int* rank, c10::complex<double>* work, int lwork, double* rwork, int* info) {
  zgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, rwork, info);
}
void gelsd(int m, int n, int nrhs, c10::complex<float>* a, int lda, c10::complex<float>* b, int ldb, float* s,
           float rcond, int* rank, c10::complex<float>* work, int lwork, float* rwork, int* iwork, int* info) {
  cgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, iwork, info);
}
void gelsd(int m, int n, int nrhs, c10::complex<double>* a, int lda, c10::complex<double>* b, int ldb, double* s,
           double rcond, int* rank, c10::complex<double>* work, int lwork, double* rwork, int* iwork, int* info) {
  zgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, iwork, info);
}
void gelss(int m, int n, int nrhs, c10::complex<float>* a, int lda, c10::complex<float>* b, int ldb, float* s,
           float rcond, int* rank, c10::complex<float>* work, int lwork, float* rwork, int* info) {
  cgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, info);
}
void gelss(int m, int n, int nrhs, c10::complex<double>* a, int lda, c10::complex<double>* b, int ldb, double* s,
           double rcond, int* rank, c10::complex<double>* work, int lwork, double* rwork, int* info) {
  zgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, info);
}
void sytrf(bool hermitian, int n, c10::complex<float>* a, int lda, int* ipiv, c10::complex<float>* work, int lwork,
           int* info) {
  const char uplo = 'L';
  if (hermitian) return chetrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);
  csytrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);
}
void sytrf(bool hermitian, int n, c10::complex<double>* a, int lda, int* ipiv, c10::complex<double>* work, int lwork,
           int* info) {
  const char uplo = 'L';
  if (hermitian) return zhetrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);
  zsytrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, info, 1);
}
void sytrs(bool hermitian, int n, int nrhs, const c10::complex<float>* a, int lda, const int* ipiv,
           c10::complex<float>* b, int ldb, int* info) {
  const char uplo = 'L';
  if (hermitian) return chetrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
  csytrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
void sytrs(bool hermitian, int n, int nrhs, const c10::complex<double>* a, int lda, const int* ipiv,
           c10::complex<double>* b, int ldb, int* info) {
  const char uplo = 'L';
  if (hermitian) return zhetrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
  zsytrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
void geev(char jobvr, int n, c10::complex<float>* a, int lda, c10::complex<float>* w, float* /*wi*/,
          c10::complex<float>* vr, int ldvr, c10::complex<float>* work, int lwork, float* rwork, int* info) {
  const char jobvl = 'N';
  const int ldvl = 1;
  c10::complex<float> vl;
  cgeev_(&jobvl, &jobvr, &n, a, &lda, w, &vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
}
void geev(char jobvr, int n, c10::complex<double>* a, int lda, c10::complex<double>* w, double* /*wi*/,
          c10::complex<double>* vr, int ldvr, c10::complex<double>* work, int lwork, double* rwork, int* info) {
  const char jobvl = 'N';
  const int ldvl = 1;
  c10::complex<double> vl;
  zgeev_(&jobvl, &jobvr, &n, a, &lda, w, &vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
}

namespace {
struct TrsmForm {
  CBLAS_SIDE side;
  CBLAS_UPLO uplo;
  CBLAS_TRANSPOSE trans;
  CBLAS_DIAG diag;
};
TrsmForm trsm_form(bool left, bool upper, bool transpose, bool unit_diagonal) {
  return {left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower, transpose ? CblasTrans : CblasNoTrans,
          unit_diagonal ? CblasUnit : CblasNonUnit};
}
// trans 'N', 'T' or 'C'; 'C' conjugates only for complex scalars (for real ones it is 'T').
TrsmForm trsm_form(bool left, bool upper, char trans, bool unit_diagonal, bool complex) {
  TrsmForm f = trsm_form(left, upper, trans != 'N', unit_diagonal);
  if (complex && trans == 'C') f.trans = CblasConjTrans;
  return f;
}
}  // namespace

void trsm(bool left, bool upper, bool transpose, bool unit_diagonal, int m, int n, const float* a, int lda, float* b,
          int ldb) {
  const TrsmForm f = trsm_form(left, upper, transpose, unit_diagonal);
  cblas_strsm(CblasRowMajor, f.side, f.uplo, f.trans, f.diag, m, n, 1.0f, a, lda, b, ldb);
}
void trsm(bool left, bool upper, bool transpose, bool unit_diagonal, int m, int n, const double* a, int lda,
          double* b, int ldb) {
  const TrsmForm f = trsm_form(left, upper, transpose, unit_diagonal);
  cblas_dtrsm(CblasRowMajor, f.side, f.uplo, f.trans, f.diag, m, n, 1.0, a, lda, b, ldb);
}
void trsm(bool left, bool upper, char trans, bool unit_diagonal, int m, int n, const float* a, int lda, float* b,
          int ldb) {
  const TrsmForm f = trsm_form(left, upper, trans, unit_diagonal, false);
  cblas_strsm(CblasRowMajor, f.side, f.uplo, f.trans, f.diag, m, n, 1.0f, a, lda, b, ldb);
}
void trsm(bool left, bool upper, char trans, bool unit_diagonal, int m, int n, const double* a, int lda, double* b,
          int ldb) {
  const TrsmForm f = trsm_form(left, upper, trans, unit_diagonal, false);
  cblas_dtrsm(CblasRowMajor, f.side, f.uplo, f.trans, f.diag, m, n, 1.0, a, lda, b, ldb);
}
void trsm(bool left, bool upper, char trans, bool unit_diagonal, int m, int n, const c10::complex<float>* a, int lda,
          c10::complex<float>* b, int ldb) {
  const TrsmForm f = trsm_form(left, upper, trans, unit_diagonal, true);
  const c10::complex<float> one{1};
  cblas_ctrsm(CblasRowMajor, f.side, f.uplo, f.trans, f.diag, m, n, &one, a, lda, b, ldb);
}
void trsm(bool left, bool upper, char trans, bool unit_diagonal, int m, int n, const c10::complex<double>* a, int lda,
          c10::complex<double>* b, int ldb) {
  const TrsmForm f = trsm_form(left, upper, trans, unit_diagonal, true);
  const c10::complex<double> one{1};
  cblas_ztrsm(CblasRowMajor, f.side, f.uplo, f.trans, f.diag, m, n, &one, a, lda, b, ldb);
}

void for_each_matrix(int64_t batch, int64_t flops_each, const std::function<void(int64_t)>& fn) {
  if (batch <= 1 || at::get_num_threads() == 1 || at::in_parallel_region()) {
    for (int64_t i = 0; i < batch; ++i) fn(i);
    return;
  }
  // Small matrices share a thread until a chunk is worth starting one for.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, flops_each));
  SingleThreadedBlas guard;
  at::parallel_for(0, batch, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

int lapack_int(int64_t v, const char* op) {
  TORCH_CHECK(v <= INT_MAX, op, ": matrix dimension ", v, " is larger than LAPACK supports (", INT_MAX, ")");
  return static_cast<int>(v);
}

}  // namespace at::inline tessera::native::lapack
