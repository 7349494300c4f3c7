// Unblocked LU, LU solves and Cholesky for square matrices of at most kMaxSize rows, with
// LAPACK's conventions (column-major storage, 1-based pivots, the same info codes). For a
// batch of tiny matrices LAPACK's per-call overhead (argument checks, blocking and
// threading decisions) is most of the time; these loops do the same arithmetic without it.
// lapack::getrf / getrs (real and complex) and potrf (real) (Lapack.cpp) take tiny
// matrices here.
#pragma once

#include <c10/util/complex.h>

#include <cmath>
#include <limits>
#include <utility>

namespace at::inline tessera::native::small_matrix {

constexpr int kMaxSize = 16;

// What the loops need of a scalar: the size pivoting compares (LAPACK's i?amax: |x| for
// reals, |re| + |im| for complex), the modulus, and the conjugate.
template <typename T>
struct Scalar {
  using Real = T;
  static Real pivot_size(T v) { return std::abs(v); }
  static Real modulus(T v) { return std::abs(v); }
  static T conj(T v) { return v; }
};
template <typename R>
struct Scalar<c10::complex<R>> {
  using Real = R;
  static R pivot_size(c10::complex<R> v) { return std::abs(v.real()) + std::abs(v.imag()); }
  static R modulus(c10::complex<R> v) { return c10::abs(v); }
  static c10::complex<R> conj(c10::complex<R> v) { return c10::conj(v); }
};

// getrf: A = P L U in place (L unit lower, U upper), partial pivoting on the largest
// magnitude (the first of equals, as LAPACK's idamax). info = j + 1 for the first zero
// pivot U[j, j], the factorization still completed.
template <typename T>
void getrf(int n, T* a, int* ipiv, int* info) {
  using S = Scalar<T>;
  *info = 0;
  for (int j = 0; j < n; ++j) {
    T* col = a + j * n;
    // a NaN below the diagonal never wins (as in the getrf torch calls); it spreads
    // through the updates instead
    int p = j;
    typename S::Real best = S::pivot_size(col[j]);
    for (int i = j + 1; i < n; ++i) {
      if (S::pivot_size(col[i]) > best) {
        best = S::pivot_size(col[i]);
        p = i;
      }
    }
    ipiv[j] = p + 1;
    if (col[p] != T(0)) {
      if (p != j) {
        for (int k = 0; k < n; ++k) std::swap(a[j + k * n], a[p + k * n]);
      }
      const T pivot = col[j];
      if (S::modulus(pivot) >= std::numeric_limits<typename S::Real>::min()) {
        const T inverse = T(1) / pivot;
        for (int i = j + 1; i < n; ++i) col[i] *= inverse;
      } else {  // a subnormal pivot: its reciprocal would overflow
        for (int i = j + 1; i < n; ++i) col[i] /= pivot;
      }
    } else if (*info == 0) {
      *info = j + 1;
    }
    for (int k = j + 1; k < n; ++k) {
      T* target = a + k * n;
      const T factor = target[j];  // no skip of zero factors: 0 * NaN must reach the result
      for (int i = j + 1; i < n; ++i) target[i] -= col[i] * factor;
    }
  }
}

// getrs: op(A) X = B from getrf's output, op = A ('N'), A^T ('T') or A^H ('C'); B
// (n x nrhs, column-major) is overwritten with X.
template <typename T>
void getrs(char trans, int n, int nrhs, const T* a, const int* ipiv, T* b) {
  const bool transpose = trans != 'N';
  // the factor's entries as op(A) reads them
  auto entry = [&](int i, int j) { return trans == 'C' ? Scalar<T>::conj(a[i + j * n]) : a[i + j * n]; };
  for (int r = 0; r < nrhs; ++r) {
    T* x = b + r * n;
    if (!transpose) {
      for (int i = 0; i < n; ++i) {
        if (ipiv[i] - 1 != i) std::swap(x[i], x[ipiv[i] - 1]);
      }
      for (int j = 0; j < n; ++j) {  // L y = P^T b, L unit lower
        const T xj = x[j];
        for (int i = j + 1; i < n; ++i) x[i] -= a[i + j * n] * xj;
      }
      for (int j = n - 1; j >= 0; --j) {  // U x = y
        x[j] /= a[j + j * n];
        const T xj = x[j];
        for (int i = 0; i < j; ++i) x[i] -= a[i + j * n] * xj;
      }
    } else {
      for (int i = 0; i < n; ++i) {  // U^T y = b (U^H for 'C')
        T s = x[i];
        for (int k = 0; k < i; ++k) s -= entry(k, i) * x[k];
        x[i] = s / entry(i, i);
      }
      for (int i = n - 1; i >= 0; --i) {  // L^T z = y
        T s = x[i];
        for (int k = i + 1; k < n; ++k) s -= entry(k, i) * x[k];
        x[i] = s;
      }
      for (int i = n - 1; i >= 0; --i) {  // x = P z
        if (ipiv[i] - 1 != i) std::swap(x[i], x[ipiv[i] - 1]);
      }
    }
  }
}

// potrf: A = L L^T (lower) or U^T U (upper) in the named triangle; the other is not read
// or written. info = j + 1 when the leading minor of order j + 1 is not positive-definite.
template <typename T>
void potrf(bool upper, int n, T* a, int* info) {
  // L(r, c) for r >= c: lower keeps it at (r, c), upper keeps its transpose at (c, r)
  auto L = [&](int r, int c) -> T& { return upper ? a[c + r * n] : a[r + c * n]; };
  *info = 0;
  for (int j = 0; j < n; ++j) {
    T d = L(j, j);
    for (int k = 0; k < j; ++k) d -= L(j, k) * L(j, k);
    if (d <= T(0)) {  // NaN is not a failure here, as in LAPACK: it spreads
      L(j, j) = d;
      *info = j + 1;
      return;
    }
    d = std::sqrt(d);
    L(j, j) = d;
    for (int i = j + 1; i < n; ++i) {
      T s = L(i, j);
      for (int k = 0; k < j; ++k) s -= L(i, k) * L(j, k);
      L(i, j) = s / d;
    }
  }
}

}  // namespace at::inline tessera::native::small_matrix
