// The one matrix-product kernel every op of the matmul family ends in: a batch of strided
// GEMMs, out = beta * out + alpha * a @ b, sent to OpenBLAS for float, double and complex
// (views BLAS can read, transposed ones included, go as they are), BFloat16 to oneDNN's
// matmul on CPUs with native bfloat16 and otherwise, like Half, computed in float, and a
// plain loop for the integer types.
#pragma once

#include <aten/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace at::inline tessera::native {

// out[i] = beta * out[i] + alpha * a[i] @ b[i] for each i of the leading (batch) dim:
// a is (B, M, K), b is (B, K, N), out is (B, M, N), all of out's dtype and any strides
// (a batch stride of 0, an expanded operand, is fine for a and b). beta == 0 means out is
// written without being read, so NaN or garbage in it does not leak into the result.
// Bool raises torch's RuntimeError naming `op`.
TORCH_API void batched_gemm(const Tensor& out, const Tensor& a, const Tensor& b, const c10::Scalar& beta,
                            const c10::Scalar& alpha, const char* op);

// The dot product of two 1-D tensors of the same dtype and length into the 0-dim `out`;
// conj_self conjugates self first (vdot).
TORCH_API void dot_into(const Tensor& out, const Tensor& self, const Tensor& other, bool conj_self, const char* op);

// Products write out= tensors only in their own dtype (torch: "Expected out tensor to have
// dtype float, but got double instead"); defined in LinearAlgebra.cpp.
// Whether beta (or alpha) is zero: a zero beta means the old `out` is not read, NaNs included.
bool is_zero_scalar(const c10::Scalar& s);

TORCH_API void check_product_out_dtype(const Tensor& out, c10::ScalarType t);

// Holds OpenBLAS to one thread while our own threads run a batch (Note [BLAS threads]).
struct SingleThreadedBlas {
  SingleThreadedBlas();
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;
};

}  // namespace at::inline tessera::native
