// What ProcessGroupGloo's files share (internal): tensor checks, the dtypes Gloo moves and
// the element-wise reductions it applies, and turning a Gloo exception into a c10::Error.
#pragma once

#include <distributed/ProcessGroupGloo.h>

#include <aten/core/TensorUtils.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <type_traits>
#include <vector>

namespace c10d::inline tessera {

// Inside a catch: the exception as a c10::Error naming the collective.
std::exception_ptr gloo_error(const char* op);

// Non-empty, defined, dense CPU tensors of one dtype, shape and layout: contiguous ones, or
// with `elementwise` (allreduce, broadcast, reduce) any non-overlapping dense layout.
inline void check_tensors(const std::vector<at::Tensor>& tensors, const char* op, bool elementwise = false) {
  TORCH_CHECK(!tensors.empty(), "ProcessGroupGloo::", op, ": requires a non-empty tensor list");
  const at::Tensor& first = tensors[0];
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.defined(), "ProcessGroupGloo::", op, ": undefined tensor");
    TORCH_CHECK(t.device().is_cpu(), "ProcessGroupGloo::", op, ": Gloo takes CPU tensors, got one on ", t.device());
    TORCH_CHECK(t.layout() == c10::kStrided, "ProcessGroupGloo::", op, ": only dense tensors are supported");
    TORCH_CHECK(elementwise ? at::is_non_overlapping_and_dense(t) : t.is_contiguous(), "ProcessGroupGloo::", op,
                elementwise ? ": tensors must be non-overlapping and dense" : ": tensors must be contiguous");
    TORCH_CHECK(t.scalar_type() == first.scalar_type(), "ProcessGroupGloo::", op,
                ": tensors must all have the same dtype, got ", first.scalar_type(), " and ", t.scalar_type());
    TORCH_CHECK(t.sizes() == first.sizes() && t.strides() == first.strides(), "ProcessGroupGloo::", op,
                ": tensors must all have the same sizes and layout");
  }
}

inline void check_root(int64_t root, int size, const char* op) {
  TORCH_CHECK(root >= 0 && root < size, "ProcessGroupGloo::", op, ": invalid root rank: ", root);
}

// Calls f with a value of the C++ type Gloo moves for t's dtype (torch's Gloo dtypes).
template <typename F>
void with_gloo_type(c10::ScalarType type, const char* op, F&& f) {
  switch (type) {
    case c10::ScalarType::Float: return f(float{});
    case c10::ScalarType::Double: return f(double{});
    case c10::ScalarType::Half: return f(c10::Half{});
    case c10::ScalarType::BFloat16: return f(c10::BFloat16{});
    case c10::ScalarType::Char: return f(int8_t{});
    case c10::ScalarType::Byte: return f(uint8_t{});
    case c10::ScalarType::Int: return f(int32_t{});
    case c10::ScalarType::Long: return f(int64_t{});
    case c10::ScalarType::Bool: return f(bool{});
    default: TORCH_CHECK(false, "ProcessGroupGloo::", op, ": unsupported dtype ", type);
  }
}

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

template <typename T>
using Accumulate = std::conditional_t<std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>, float, T>;

template <typename T, typename Op>
void reduce_into(void* out, const void* a, const void* b, size_t n) {
  auto* c = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) c[i] = static_cast<T>(Op{}(static_cast<Accumulate<T>>(x[i]), static_cast<Accumulate<T>>(y[i])));
}

struct Plus { template <typename A> auto operator()(A a, A b) const { return a + b; } };
struct Times { template <typename A> auto operator()(A a, A b) const { return a * b; } };
struct Lesser { template <typename A> A operator()(A a, A b) const { return b < a ? b : a; } };
struct Greater { template <typename A> A operator()(A a, A b) const { return a < b ? b : a; } };
struct BitAnd { template <typename A> auto operator()(A a, A b) const { return a & b; } };
struct BitOr { template <typename A> auto operator()(A a, A b) const { return a | b; } };
struct BitXor { template <typename A> auto operator()(A a, A b) const { return a ^ b; } };

// The reduction of `op` on T, or the error torch gives for it (raised at the call).
template <typename T>
ReduceFn reduce_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return &reduce_into<T, Plus>;
    case ReduceOp::PRODUCT: return &reduce_into<T, Times>;
    case ReduceOp::MIN: return &reduce_into<T, Lesser>;
    case ReduceOp::MAX: return &reduce_into<T, Greater>;
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR:
      if constexpr (std::is_integral_v<T>) {
        return op == ReduceOp::BAND ? &reduce_into<T, BitAnd>
                                    : op == ReduceOp::BOR ? &reduce_into<T, BitOr> : &reduce_into<T, BitXor>;
      } else {
        TORCH_CHECK(false, "Cannot use ReduceOp.", reduce_op_name(op), " with non-integral dtype");
      }
    default: TORCH_CHECK(false, "Cannot use ReduceOp.", reduce_op_name(op), " with Gloo");
  }
}

inline ReduceFn reduce_fn_for(c10::ScalarType type, ReduceOp op, const char* name) {
  ReduceFn fn = nullptr;
  with_gloo_type(type, name, [&](auto v) { fn = reduce_fn<decltype(v)>(op); });
  return fn;
}

}  // namespace c10d::inline tessera
