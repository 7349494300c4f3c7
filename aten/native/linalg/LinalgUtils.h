// What the LAPACK-backed linalg ops share: torch.linalg.LinAlgError, the input checks with
// torch's messages, batched column-major buffers (the layout LAPACK writes and torch
// returns), and the translation of LAPACK's info codes into errors.
#pragma once

#include <aten/core/LinAlgError.h>
#include <aten/core/Parallel.h>
#include <aten/core/Tensor.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <string>
#include <vector>

namespace at::inline tessera::native {

// A must have at least 2 dims, a float, double, complex64 or complex128 dtype (integers and
// half raise as torch) and, if `square`, square matrices.
TORCH_API void check_linalg_input(const Tensor& A, const char* op, bool square = true);

// The real dtype of A's values (float for complex64) and the complex dtype that holds them
// (complex64 for float32): the dtypes of norms, singular values and eigenvalues.
inline c10::ScalarType real_dtype(const Tensor& A) { return c10::toRealValueType(A.scalar_type()); }
inline c10::ScalarType complex_dtype(const Tensor& A) { return c10::toComplexType(A.scalar_type()); }

// The transpose of each matrix of a batch (a view), and its conjugate transpose (a lazy
// conj view of it; the math-bit fallback materialises it for kernels that need values).
inline Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }
inline Tensor mH(const Tensor& t) { return t.transpose(-2, -1).conj(); }

// The pointer to matrix i of a batched buffer whose matrices are stored one after another
// (column-major or row-major).
template <typename T>
T* matrix_at(const Tensor& t, int64_t i) {
  return t.data_ptr<T>() + i * t.size(-1) * t.size(-2);
}

// The number of matrices in a batched (*, m, n) tensor.
inline int64_t batch_count(const Tensor& A) {
  int64_t b = 1;
  for (int64_t d = 0; d + 2 < A.dim(); ++d) b *= A.size(d);
  return b;
}

// An uninitialised (*, m, n) tensor whose matrices are column-major and stored one after
// another, as torch's linalg outputs are.
TORCH_API Tensor empty_batched_fortran(IntArrayRef sizes, const TensorOptions& options);
// A column-major copy of A (same layout as above), for LAPACK to overwrite (made under a
// serial_before_lapack(A)).
TORCH_API Tensor clone_batched_fortran(const Tensor& A);

// Held over the work just before a LAPACK call on A (its input copy, a finiteness check):
// when A is one matrix, parallel loops run inline meanwhile. A parallel loop there leaves
// OpenMP's workers spinning on the cores OpenBLAS threads that one call on (svd 512 took
// 1.3x torch's time so; torch's copies are serial). A batch, whose matrices
// lapack::for_each_matrix spreads over threads, keeps its parallel work.
inline at::SerialScope serial_before_lapack(const Tensor& A) { return at::SerialScope(batch_count(A) == 1); }
// `sizes` with the last `drop` dims removed and `tail` appended.
TORCH_API std::vector<int64_t> batch_shape_with(const Tensor& A, int64_t drop, std::initializer_list<int64_t> tail);

// What a positive info code means, per routine family.
enum class LinalgFailure {
  Singular,
  SingularDiagonal,
  LuZeroPivot,
  NotPositiveDefinite,
  EighNoConverge,
  SvdNoConverge,
  LdlSingular,
  LstsqNotFullRank
};
// Raises LinAlgError for the first batch element whose info is non-zero ("(Batch element
// i): " prefixed when the input was batched), in torch's words for `op`.
TORCH_API void check_linalg_errors(const Tensor& info, const char* op, LinalgFailure kind, bool batched);

}  // namespace at::inline tessera::native
