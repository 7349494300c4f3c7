// Dispatcher overhead: a direct call of a trivial out-of-line kernel, the same kernel
// through the dispatcher's typed (unboxed) path, through the boxed path, key-set
// extraction alone, and at::add end to end on one-element tensors.
#include "bench_ops.h"

#include <benchmark/benchmark.h>

namespace {

at::Tensor one_element() {
  at::Tensor t = at::empty({1});
  t.fill_(1.0);
  return t;
}

void BM_DirectKernel(benchmark::State& state) {
  at::Tensor a = one_element(), b = one_element();
  for (auto _ : state) benchmark::DoNotOptimize(bench::noop_kernel(a, b));
}
BENCHMARK(BM_DirectKernel);

void BM_DispatchedCall(benchmark::State& state) {
  at::Tensor a = one_element(), b = one_element();
  const auto& op = bench::noop_op();
  for (auto _ : state) benchmark::DoNotOptimize(op.call(a, b));
}
BENCHMARK(BM_DispatchedCall);

void BM_BoxedCall(benchmark::State& state) {
  at::Tensor a = one_element(), b = one_element();
  const auto& op = bench::noop_op();
  c10::Stack stack;
  stack.reserve(2);
  for (auto _ : state) {
    stack.emplace_back(a);
    stack.emplace_back(b);
    op.callBoxed(&stack);
    benchmark::DoNotOptimize(stack.back());
    stack.clear();
  }
}
BENCHMARK(BM_BoxedCall);

void BM_KeySetExtraction(benchmark::State& state) {
  at::Tensor a = one_element(), b = one_element();
  const auto& entry = bench::noop_op().entry();
  for (auto _ : state) {
    const auto& tls = c10::thread_local_state();
    c10::DispatchKeySet ks = ((c10::detail::argumentKeys(a, b) | tls.included | c10::detail::kAlwaysIncluded) -
                              tls.excluded) - entry.fallthroughKeys();
    benchmark::DoNotOptimize(ks);
  }
}
BENCHMARK(BM_KeySetExtraction);

void BM_AtAddOneElement(benchmark::State& state) {
  at::Tensor a = one_element(), b = one_element();
  for (auto _ : state) benchmark::DoNotOptimize(at::add(a, b));
}
BENCHMARK(BM_AtAddOneElement);

}  // namespace

BENCHMARK_MAIN();
