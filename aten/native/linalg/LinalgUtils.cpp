// Input checks, column-major buffers and LinAlgError for the LAPACK-backed linalg ops.
#include <aten/native/linalg/LinalgUtils.h>

#include <aten/core/Parallel.h>
#include <aten/ops/Functions.h>
#include <c10/util/StringUtil.h>

namespace at::inline tessera {
LinAlgError::~LinAlgError() = default;
}  // namespace at::inline tessera

namespace at::inline tessera::native {

void check_linalg_input(const Tensor& A, const char* op, bool square) {
  TORCH_CHECK(A.dim() >= 2, op, ": The input tensor A must have at least 2 dimensions.");
  const c10::ScalarType t = A.scalar_type();
  TORCH_CHECK(c10::isFloatingType(t) || c10::isComplexType(t), op,
              ": Expected a floating point or complex tensor as input. Got ", t);
  TORCH_CHECK(t != c10::kHalf && t != c10::kBFloat16, op, ": Low precision dtypes not supported. Got ", t);
  if (square) {
    TORCH_CHECK(A.size(-1) == A.size(-2), op, ": A must be batches of square matrices, but they are ", A.size(-2),
                " by ", A.size(-1), " matrices");
  }
}

Tensor empty_batched_fortran(IntArrayRef sizes, const TensorOptions& options) {
  std::vector<int64_t> swapped(sizes.begin(), sizes.end());
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  return at::empty(swapped, options).transpose(-2, -1);
}

Tensor clone_batched_fortran(const Tensor& A) {
  Tensor out = empty_batched_fortran(A.sizes(), A.options());
  if (A.numel() == 0 || A.is_meta()) return out;
  const at::SerialScope serial = serial_before_lapack(A);
  out.copy_(A);
  return out;
}

std::vector<int64_t> batch_shape_with(const Tensor& A, int64_t drop, std::initializer_list<int64_t> tail) {
  std::vector<int64_t> s(A.sizes().begin(), A.sizes().end() - drop);
  s.insert(s.end(), tail.begin(), tail.end());
  return s;
}

namespace {
std::string failure_message(const char* op, LinalgFailure kind, int info) {
  switch (kind) {
    case LinalgFailure::Singular:
      return c10::str(op, ": The solver failed because the input matrix is singular.");
    case LinalgFailure::SingularDiagonal:
      return c10::str(op, ": The diagonal element ", info,
                      " is zero, the inversion could not be completed because the input matrix is singular.");
    case LinalgFailure::LuZeroPivot:
      return c10::str(op, ": U[", info, ",", info,
                      "] is zero and using it on lu_solve would result in a division by zero. If you still want to "
                      "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
    case LinalgFailure::NotPositiveDefinite:
      return c10::str(op,
                      ": The factorization could not be completed because the input is not positive-definite (the "
                      "leading minor of order ",
                      info, " is not positive-definite).");
    case LinalgFailure::EighNoConverge:
      return c10::str(op,
                      ": The algorithm failed to converge because the input matrix is ill-conditioned or has too "
                      "many repeated eigenvalues (error code: ",
                      info, ").");
    case LinalgFailure::SvdNoConverge:
      return c10::str(op,
                      ": The algorithm failed to converge because the input matrix is ill-conditioned or has too "
                      "many repeated singular values (error code: ",
                      info, ").");
    case LinalgFailure::LdlSingular:
      // torch 1.13 stops here on an internal assert ("Unknown error code"); the words are ours.
      return c10::str(op, ": The factorization completed, but D[", info, ", ", info,
                      "] is exactly zero, so the input is singular and a solve with it would divide by zero.");
    case LinalgFailure::LstsqNotFullRank:
      return c10::str(op,
                      ": The least squares solution could not be computed because the input matrix does not have "
                      "full rank (error code: ",
                      info, ").");
  }
  return op;
}
}  // namespace

void check_linalg_errors(const Tensor& info, const char* op, LinalgFailure kind, bool batched) {
  if (info.is_meta() || info.numel() == 0) return;
  const Tensor flat = info.contiguous().reshape({-1});
  const int* p = flat.data_ptr<int>();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    TORCH_CHECK(p[i] >= 0, op, ": Argument ", -p[i], " has illegal value. Most certainly there is a bug in the "
                "implementation calling the backend library.");
    if (p[i] == 0) continue;
    std::string message = failure_message(op, kind, p[i]);
    if (batched) {
      const std::string prefix = c10::str(op, ": ");
      message = c10::str(op, ": (Batch element ", i, "): ", message.substr(prefix.size()));
    }
    throw LinAlgError(std::move(message), C10_HERE_);
  }
}

}  // namespace at::inline tessera::native
