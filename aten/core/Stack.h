// c10::Stack: the boxed calling convention's argument and result list. A boxed kernel finds
// its n arguments as the last n IValues, pops them and pushes its results; these helpers
// name those moves (also as torch::jit::push/pop/..., where PyTorch's code spells them).
#pragma once

// Included at the end of aten/core/IValue.h; not meant to be included on its own.
#include <aten/core/IValue.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace c10::inline tessera {

using Stack = std::vector<IValue>;

// Underflow means a kernel and its schema disagree on the argument count.
#define TESSERA_CHECK_STACK_(stack, n, what) \
  TORCH_CHECK((n) <= (stack).size(), what ": needs ", (n), " values but the stack holds ", (stack).size())

template <typename... Args>
void push(Stack& stack, Args&&... args) {
  (stack.emplace_back(std::forward<Args>(args)), ...);
}

inline IValue pop(Stack& stack) {
  TESSERA_CHECK_STACK_(stack, size_t{1}, "pop");
  IValue v = std::move(stack.back());
  stack.pop_back();
  return v;
}

// The last n values, in stack order (the first argument first).
inline std::vector<IValue> pop(Stack& stack, size_t n) {
  TESSERA_CHECK_STACK_(stack, n, "pop");
  auto first = stack.end() - static_cast<std::ptrdiff_t>(n);
  std::vector<IValue> out(std::make_move_iterator(first), std::make_move_iterator(stack.end()));
  stack.erase(first, stack.end());
  return out;
}

inline void drop(Stack& stack, size_t n) {
  TESSERA_CHECK_STACK_(stack, n, "drop");
  stack.erase(stack.end() - static_cast<std::ptrdiff_t>(n), stack.end());
}

// The i-th of the last n values: peek(stack, 0, 3) is the first of a 3-argument call.
inline IValue& peek(Stack& stack, size_t i, size_t n) {
  TESSERA_CHECK_STACK_(stack, n, "peek");
  TORCH_CHECK(i < n, "peek: index ", i, " is not among the last ", n, " values");
  return stack[stack.size() - n + i];
}
inline const IValue& peek(const Stack& stack, size_t i, size_t n) {
  return peek(const_cast<Stack&>(stack), i, n);
}

// A view of the last n values; valid until the stack is next modified.
inline ArrayRef<IValue> last(const Stack& stack, size_t n) {
  TESSERA_CHECK_STACK_(stack, n, "last");
  return ArrayRef<IValue>(stack.data() + (stack.size() - n), n);
}

#undef TESSERA_CHECK_STACK_

}  // namespace c10::inline tessera

namespace at::inline tessera {
using c10::Stack;
}  // namespace at::inline tessera

namespace torch::jit::inline tessera {
using c10::drop;
using c10::last;
using c10::peek;
using c10::pop;
using c10::push;
using c10::Stack;
}  // namespace torch::jit::inline tessera
