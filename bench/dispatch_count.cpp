// Runs N calls of one kind so that callgrind can count their instructions:
//   dispatch_count {direct|dispatched|boxed|add} N   (add: at::add on one-element tensors)
// bench/callgrind_dispatch.py runs it for two N and reports instructions per call.
#include "bench_ops.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s {direct|dispatched|boxed|add} N\n", argv[0]);
    return 2;
  }
  long n = std::atol(argv[2]);
  at::Tensor a = at::empty({1}), b = at::empty({1});
  const auto& op = bench::noop_op();
  volatile const void* sink = nullptr;
  if (std::strcmp(argv[1], "direct") == 0) {
    for (long i = 0; i < n; ++i) sink = bench::noop_kernel(a, b).unsafeGetTensorImpl();
  } else if (std::strcmp(argv[1], "dispatched") == 0) {
    for (long i = 0; i < n; ++i) sink = op.call(a, b).unsafeGetTensorImpl();
  } else if (std::strcmp(argv[1], "boxed") == 0) {
    c10::Stack stack;
    stack.reserve(2);
    for (long i = 0; i < n; ++i) {
      stack.emplace_back(a);
      stack.emplace_back(b);
      op.callBoxed(&stack);
      sink = stack.back().toTensor().unsafeGetTensorImpl();
      stack.clear();
    }
  } else if (std::strcmp(argv[1], "add") == 0) {
    for (long i = 0; i < n; ++i) sink = at::add(a, b).unsafeGetTensorImpl();
  } else {
    std::fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
  }
  (void)sink;
  return 0;
}
