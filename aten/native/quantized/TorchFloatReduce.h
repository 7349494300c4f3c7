// torch 1.13's float32 sum and std on CPU in its exact order of operations, for the quantized
// mean and std fallbacks (ReduceOps.cpp), whose results move by a step when a last bit does;
// a scalar port, Note [torch's float reduction order].
#pragma once

#include <cstdint>
#include <vector>

namespace at::inline tessera::native {

// Note [torch's float reduction order]: torch's TensorIterator orders a reduction's dims with
// the reduced ones (output stride 0) first, then by ascending strides (the output's compared
// first; an insertion sort that leaves ties in place), and coalesces them. Its sum kernel
// (cascade_sum in SumKernel.cpp) then runs a 2-d loop per outer index: a unit-stride reduced
// dim of 8 or more is summed as 8-float vectors (vectorized_inner_sum), else a unit-stride
// kept dim of 8 or more is summed 32, then 8 columns at a time (vectorized_outer_sum), else
// scalar loops. Every row sum goes through multi_row_sum, a 4-level cascade whose leaves hold
// 2^max(4, ceil_log2(n) / 4) rows, four interleaved partial sums (row_sum) where the loop
// has them. The output starts at zero and each 2-d call adds its partial sums to it. std
// with every dim reduced is two-pass (the float mean widened to double, then the squared
// deviations summed in double in memory order); otherwise it is Welford's update in double
// over the reduced elements in the iterator's order. Vectors are 8 lanes wide (torch's AVX2
// and default kernels; its AVX-512 ones are 16, not reproduced). At one thread this equals
// torch bit for bit (a research run checked 3.7M outputs, docs/plans/quantized-mean-std-*).

// Sums of a dense float tensor over `dims` (wrapped, distinct), keepdim shape, contiguous.
std::vector<float> torch_order_sum(const float* data, const std::vector<int64_t>& sizes,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dims);

// Standard deviations over `dims` with `correction`, keepdim shape, contiguous.
std::vector<float> torch_order_std(const float* data, const std::vector<int64_t>& sizes,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dims,
                                   int64_t correction);

}  // namespace at::inline tessera::native
