// The loops vectorized_bench times, compiled once per CPU capability.
#include <aten/cpu/vec/vec.h>
#include <aten/native/DispatchStub.h>

#include <algorithm>

#include "../vectorized_bench.h"

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

template <typename F>
void unary(const float* x, float* out, int64_t n, F f) {
  using V = Vectorized<float>;
  int64_t i = 0;
  for (; i + V::size() <= n; i += V::size()) f(V::loadu(x + i)).store(out + i);
  if (i < n) f(V::loadu(x + i, n - i)).store(out + i, n - i);
}

void vec_bench_kernel(VecBenchOp op, const float* a, const float* b, float* out, int64_t n) {
  using V = Vectorized<float>;
  switch (op) {
    case VecBenchOp::exp:
      return unary(a, out, n, [](V x) { return x.exp(); });
    case VecBenchOp::tanh:
      return unary(a, out, n, [](V x) { return x.tanh(); });
    case VecBenchOp::sigmoid:
      return unary(a, out, n, [](V x) { return x.sigmoid(); });
    case VecBenchOp::add: {
      int64_t i = 0;
      for (; i + V::size() <= n; i += V::size()) (V::loadu(a + i) + V::loadu(b + i)).store(out + i);
      if (i < n) (V::loadu(a + i, n - i) + V::loadu(b + i, n - i)).store(out + i, n - i);
      return;
    }
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(vec_bench_stub, &vec_bench_kernel);

}  // namespace at::inline tessera::native
