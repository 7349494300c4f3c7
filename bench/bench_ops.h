// The operator the dispatch benchmarks call: bench::noop(Tensor a, Tensor b) -> Tensor,
// whose CPU kernel (in bench_ops.cpp, out of line) just returns `a`, so a benchmark of
// the call measures the dispatcher and nothing else.
#pragma once

#include <aten/aten.h>

namespace bench {
at::Tensor noop_kernel(const at::Tensor& a, const at::Tensor& b);
// The typed handle, as generated at:: functions hold one.
const c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, const at::Tensor&)>& noop_op();
}  // namespace bench
