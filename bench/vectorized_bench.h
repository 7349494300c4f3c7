// The kernel vectorized_bench times on each CPU capability (bench/cpu/VecBenchKernel.cpp).
#pragma once

#include <aten/native/DispatchStub.h>

#include <cstdint>

namespace at::inline tessera::native {

enum class VecBenchOp { exp, tanh, sigmoid, add };
using vec_bench_fn = void (*)(VecBenchOp op, const float* a, const float* b, float* out, int64_t n);
DECLARE_DISPATCH(vec_bench_fn, vec_bench_stub);

}  // namespace at::inline tessera::native
