// The per-ISA loops of the sparse kernels (cpu/SparseKernels.cpp): the CSR x dense
// product, the scan that lists a dense tensor's nonzero elements, and dense += sparse. Both take float or
// double data; other dtypes go through the generic kernels in SparseOps.cpp and
// SparseConversions.cpp.
#pragma once

#include <aten/core/Tensor.h>
#include <aten/native/DispatchStub.h>

#include <utility>

namespace at::inline tessera::native {

// out[m, n] = values x dense for a CSR matrix (compressed and plain indices of one integer
// dtype, int32 or int64; the compressed ones already checked to rise from 0 to nnz); dense
// [k, n] and out contiguous, of the values' dtype, out written whole. The plain indices are
// checked here, in parallel, each row's before it is read: false when one lies outside
// [0, k) (out then holds nothing meaningful). Rows run in parallel.
using spmm_csr_fn = bool (*)(const Tensor& compressed, const Tensor& plain, const Tensor& values,
                             const Tensor& dense, Tensor& out);
DECLARE_DISPATCH(spmm_csr_fn, spmm_csr_stub);

// (positions, values) of the nonzero elements of a contiguous 1-D tensor, in ascending
// order: int64 [nnz] and [nnz] of its dtype.
using nonzero_entries_fn = std::pair<Tensor, Tensor> (*)(const Tensor& flat);
DECLARE_DISPATCH(nonzero_entries_fn, nonzero_entries_stub);

// dense[rows[k], :] += alpha * values[k, :] for every entry k: dense [R, n] and values
// [nnz, n] contiguous and of one dtype, rows int64 [nnz] already checked to lie in [0, R).
// Entries with the same row add in entry order (Note [Scattering rows]).
using scatter_add_rows_fn = void (*)(Tensor& dense, const Tensor& rows, const Tensor& values, const c10::Scalar& alpha);
DECLARE_DISPATCH(scatter_add_rows_fn, scatter_add_rows_stub);

// Whether the stubs take this dtype.
inline bool sparse_kernels_take(c10::ScalarType t) { return t == c10::kFloat || t == c10::kDouble; }

}  // namespace at::inline tessera::native
