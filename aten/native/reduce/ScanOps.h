// Scans and softmax along one dim: the stubs their per-ISA kernels register on
// (cpu/ScanOpsKernel.cpp, cpu/SoftMaxKernel.cpp). Kernels read the input as DimBlocks
// (ReduceOps.h) and write a contiguous output of the same [outer, n, inner] layout.
#pragma once

#include <aten/native/DispatchStub.h>
#include <aten/native/reduce/ReduceOps.h>

namespace at::inline tessera::native {

// out[.., k, ..] = x[.., 0, ..] op ... op x[.., k, ..]; `in` already has out's dtype.
using scan_fn = void (*)(const DimBlocks& in, const Tensor& out);
DECLARE_DISPATCH(scan_fn, cumsum_stub);
DECLARE_DISPATCH(scan_fn, cumprod_stub);
DECLARE_DISPATCH(scan_fn, logcumsumexp_stub);

// Running extremum and the index where it was last taken (a NaN wins and stays).
using cum_extremum_fn = void (*)(const DimBlocks& in, const Tensor& values, const Tensor& indices);
DECLARE_DISPATCH(cum_extremum_fn, cummax_stub);
DECLARE_DISPATCH(cum_extremum_fn, cummin_stub);

// softmax (or log_softmax when `log`) of float/double lines; `in` has out's dtype.
using softmax_fn = void (*)(const DimBlocks& in, const Tensor& out, bool log);
DECLARE_DISPATCH(softmax_fn, softmax_stub);

}  // namespace at::inline tessera::native
