// Reductions over TensorIterator: which dims a call reduces, the result's shape and dtype
// (computed once for Meta and CPU), and the stubs the per-ISA kernels register on.
//
// A reduction iterates the input with an accumulator view of the output whose reduced
// dims have stride 0; kernels fold each element into the accumulator it maps to, and a
// row along a reduced innermost dim is folded first (pairwise for sums).
#pragma once

#include <aten/native/DispatchStub.h>
#include <aten/native/TensorIterator.h>
#include <aten/native/TensorMeta.h>

#include <optional>
#include <vector>

namespace at::inline tessera::native {

// The dtype= rule of the norms (linalg.vector_norm, matrix_norm, norm): a floating or
// complex dtype of the input's kind (complex for complex input) that does not narrow it;
// `op` names the caller in torch's messages.
TORCH_API void check_norm_dtype(c10::ScalarType input, std::optional<c10::ScalarType> dtype, const char* op);

// mask[d]: whether input dim d is reduced. An empty or absent list reduces every dim.
// Raises torch's IndexError for a dim out of range and RuntimeError for a repeated one.
TORCH_API std::vector<bool> reduction_mask(std::optional<IntArrayRef> dims, int64_t ndim);
// The result's sizes: reduced dims dropped, or kept as 1 with keepdim.
TORCH_API std::vector<int64_t> reduced_sizes(IntArrayRef sizes, const std::vector<bool>& mask, bool keepdim);
// amax/amin: a reduced dim of size 0 has no extremum (torch's IndexError / RuntimeError).
// (Checked dim by dim before repeated dims are, as torch does.)
TORCH_API void check_nonempty_reduction(const Tensor& self, std::optional<IntArrayRef> dims, const char* op);

// The iterator of a reduction: `acc` has the result's sizes (keepdim or not) and the
// input's dtype; it must be filled with the reduction's identity before the kernel runs.
TORCH_API TensorIterator make_reduction(const Tensor& acc, const Tensor& input, const std::vector<bool>& mask,
                                        bool keepdim);

// A tensor's elements as `outer` blocks of `n` x `inner` elements, row-major and
// contiguous, where `n` runs along the dims a kernel works on (one dim, or the reduced
// dims). Row kernels (variance, scans, softmax) read this layout; it is the input itself
// when already so laid out, else a permuted contiguous copy.
struct DimBlocks {
  Tensor data;
  int64_t outer = 1, n = 1, inner = 1;
};
TORCH_API DimBlocks blocks_along(const Tensor& self, int64_t dim);
TORCH_API DimBlocks blocks_along(const Tensor& self, const std::vector<bool>& mask);

using reduce_fn = void (*)(TensorIterator&);
DECLARE_DISPATCH(reduce_fn, sum_stub);
DECLARE_DISPATCH(reduce_fn, nansum_stub);
DECLARE_DISPATCH(reduce_fn, sum_of_squares_stub);  // float and double only
DECLARE_DISPATCH(reduce_fn, prod_stub);
DECLARE_DISPATCH(reduce_fn, amax_stub);
DECLARE_DISPATCH(reduce_fn, amin_stub);
DECLARE_DISPATCH(reduce_fn, and_stub);  // Bool accumulators
DECLARE_DISPATCH(reduce_fn, or_stub);

// Variance and mean of each (outer, inner) line of `blocks` (float, double or complex):
// writes var (the real dtype) and mean (the blocks' dtype), both contiguous with
// outer * inner elements; var = sum |x - mean|^2 / max(n - correction, 0). Two passes
// over cache-sized pieces, pieces combined in a fixed order (Chan et al.), so the result
// does not depend on the thread count. take_sqrt: var gets the standard deviation, its root
// taken before narrowing to var's dtype.
// The sum of x * x over dims (a float or double CPU tensor): the 2-norm's radicand read in
// one pass, with no |x| or x * x tensor in between. Not differentiable: callers use it when
// no gradient is wanted.
TORCH_API Tensor sum_of_squares_cpu(const Tensor& self, std::optional<IntArrayRef> dims, bool keepdim);

using var_mean_fn = void (*)(const DimBlocks& blocks, double correction, bool take_sqrt, const Tensor& var,
                             const Tensor& mean);
DECLARE_DISPATCH(var_mean_fn, var_mean_stub);

}  // namespace at::inline tessera::native
