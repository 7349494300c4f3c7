// The elementwise loops CPU kernels are written with, over TensorIterator's 2-D loop:
//
//   cpu_kernel(iter, [](float a, float b) -> float { return a + b; });
//   cpu_kernel_vec(iter, [](float a, float b) { return a + b; },
//                  [](Vectorized<float> a, Vectorized<float> b) { return a + b; });
//
// The scalar op's parameter and return types say what each operand holds (inputs in
// order; the one output first in the iterator). cpu_kernel_vec runs the vector op on full
// vectors of a row when every operand is contiguous in the inner dimension or an input is
// a scalar (stride 0, broadcast once per row), and the scalar op on the row's tail and on
// every strided row. The vector path needs all operands of one type; otherwise (e.g. a
// comparison writing bool) only the scalar op runs. Include this only from files compiled
// per ISA (aten/native/cpu/*.cpp).
#pragma once

#include <aten/cpu/vec/vec.h>
#include <aten/native/TensorIterator.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>

#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace at::inline tessera::native {

inline namespace CPU_CAPABILITY {

namespace loops {

// What an op takes and returns.
template <typename R, typename... A>
struct signature {
  using result_type = R;
  using args = std::tuple<std::decay_t<A>...>;
  static constexpr int arity = sizeof...(A);
};
template <typename F>
struct function_traits : function_traits<decltype(&F::operator())> {};
template <typename C, typename R, typename... A>
struct function_traits<R (C::*)(A...) const> : signature<R, A...> {};
template <typename C, typename R, typename... A>
struct function_traits<R (C::*)(A...)> : signature<R, A...> {};
template <typename R, typename... A>
struct function_traits<R (*)(A...)> : signature<R, A...> {};

template <typename Op>
using traits_of = function_traits<std::decay_t<Op>>;
template <typename Op, size_t I>
using arg_t = std::tuple_element_t<I, typename traits_of<Op>::args>;

// One row of n elements, element by element. Contiguous=true lets the compiler see the
// unit strides (and vectorise the scalar op itself where it can).
template <bool Contiguous, typename Op, size_t... I>
void scalar_row(Op& op, char* const* data, const int64_t* strides, int64_t n, std::index_sequence<I...>) {
  using R = typename traits_of<Op>::result_type;
  auto stride = [&](size_t k, size_t size) { return Contiguous ? static_cast<int64_t>(size) : strides[k]; };
  const int64_t out_stride = stride(0, sizeof(R));
  [[maybe_unused]] const std::array<int64_t, sizeof...(I) + 1> in_stride = {0, stride(I + 1, sizeof(arg_t<Op, I>))...};
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<R*>(data[0] + i * out_stride) =
        op(*reinterpret_cast<const arg_t<Op, I>*>(data[I + 1] + i * in_stride[I + 1])...);
  }
}

template <typename Op, size_t... I>
void scalar_row_any(Op& op, char* const* data, const int64_t* strides, int64_t n, std::index_sequence<I...> seq) {
  using R = typename traits_of<Op>::result_type;
  bool contiguous = strides[0] == static_cast<int64_t>(sizeof(R));
  ((contiguous = contiguous && strides[I + 1] == static_cast<int64_t>(sizeof(arg_t<Op, I>))), ...);
  if (contiguous) scalar_row<true>(op, data, strides, n, seq);
  else scalar_row<false>(op, data, strides, n, seq);
}

// Whether the vector op applies: every operand has the scalar op's result type.
template <typename Op, size_t... I>
constexpr bool all_same_type(std::index_sequence<I...>) {
  using R = typename traits_of<Op>::result_type;
  return (std::is_same_v<R, arg_t<Op, I>> && ...);
}

// One row with the vector op over full vectors (two per step), then the scalar op on the
// tail. Inputs with stride 0 are broadcast once.
template <typename Op, typename VOp, size_t... I>
void vectorized_row(Op& op, VOp& vop, char* const* data, const int64_t* strides, int64_t n,
                    std::index_sequence<I...> seq) {
  using T = typename traits_of<Op>::result_type;
  using Vec = vec::Vectorized<T>;
  constexpr int64_t kStep = Vec::size();
  const std::array<bool, sizeof...(I) + 1> scalar = {false, (strides[I + 1] == 0)...};
  const std::array<Vec, sizeof...(I) + 1> broadcast = {
      Vec(), (scalar[I + 1] ? Vec(*reinterpret_cast<const T*>(data[I + 1])) : Vec())...};
  [[maybe_unused]] auto load = [&](size_t k, int64_t i) {
    return scalar[k] ? broadcast[k] : Vec::loadu(data[k] + i * static_cast<int64_t>(sizeof(T)));
  };
  T* out = reinterpret_cast<T*>(data[0]);
  int64_t i = 0;
  for (; i + 2 * kStep <= n; i += 2 * kStep) {
    const Vec r0 = vop(load(I + 1, i)...);
    const Vec r1 = vop(load(I + 1, i + kStep)...);
    r0.store(out + i);
    r1.store(out + i + kStep);
  }
  for (; i + kStep <= n; i += kStep) vop(load(I + 1, i)...).store(out + i);
  if (i < n) {
    std::array<char*, sizeof...(I) + 1> rest = {data[0] + i * static_cast<int64_t>(sizeof(T)),
                                                 data[I + 1] + (scalar[I + 1] ? 0 : i * static_cast<int64_t>(sizeof(T)))...};
    scalar_row<false>(op, rest.data(), strides, n - i, seq);
  }
}

template <typename Op>
void check_operands(const TensorIterator& iter) {
  constexpr int kArity = traits_of<Op>::arity;
  TORCH_INTERNAL_ASSERT(iter.noutputs() == 1 && iter.ninputs() == kArity, "cpu_kernel: the op takes ", kArity,
                        " inputs and returns 1 value, the iterator has ", iter.ninputs(), " inputs and ",
                        iter.noutputs(), " outputs");
  const std::array<size_t, kArity + 1> sizes = [&]<size_t... I>(std::index_sequence<I...>) {
    return std::array<size_t, kArity + 1>{sizeof(typename traits_of<Op>::result_type), sizeof(arg_t<Op, I>)...};
  }(std::make_index_sequence<kArity>());
  for (int k = 0; k <= kArity; ++k) {
    TORCH_INTERNAL_ASSERT(c10::elementSize(iter.dtype(k)) == sizes[k], "cpu_kernel: operand ", k, " has dtype ",
                          iter.dtype(k), ", which does not match the op's ", k == 0 ? "result" : "parameter", " type");
  }
}

// Wraps a row function into the iterator's 2-D loop.
template <int NTensors, typename Row>
auto loop_2d(Row row) {
  return [row](char** data, const int64_t* strides, int64_t size0, int64_t size1) mutable {
    std::array<char*, NTensors> ptrs;
    for (int k = 0; k < NTensors; ++k) ptrs[k] = data[k];
    for (int64_t j = 0; j < size1; ++j) {
      row(ptrs.data(), strides, size0);
      for (int k = 0; k < NTensors; ++k) ptrs[k] += strides[NTensors + k];
    }
  };
}

template <typename Op>
auto scalar_loop(Op& op) {
  constexpr int kArity = traits_of<Op>::arity;
  return loop_2d<kArity + 1>([&op](char* const* data, const int64_t* strides, int64_t n) {
    scalar_row_any(op, data, strides, n, std::make_index_sequence<kArity>());
  });
}

template <typename Op, typename VOp>
auto vectorized_loop(Op& op, VOp& vop) {
  constexpr int kArity = traits_of<Op>::arity;
  return loop_2d<kArity + 1>([&op, &vop](char* const* data, const int64_t* strides, int64_t n) {
    using T = typename traits_of<Op>::result_type;
    constexpr auto kSize = static_cast<int64_t>(sizeof(T));
    bool vectorizable = strides[0] == kSize;
    for (int k = 1; k <= kArity; ++k) vectorizable = vectorizable && (strides[k] == kSize || strides[k] == 0);
    if (vectorizable) vectorized_row(op, vop, data, strides, n, std::make_index_sequence<kArity>());
    else scalar_row<false>(op, data, strides, n, std::make_index_sequence<kArity>());
  });
}

// The vectorized loop when every operand has one type, else the scalar one.
template <typename Op, typename VOp>
auto vectorized_or_scalar_loop(Op& op, VOp& vop) {
  if constexpr (all_same_type<Op>(std::make_index_sequence<traits_of<Op>::arity>())) {
    return vectorized_loop(op, vop);
  } else {
    return scalar_loop(op);
  }
}

}  // namespace loops

// out = op(in...) for every element, in parallel over the iterator's chunks.
template <typename Op>
void cpu_kernel(const TensorIterator& iter, Op&& op, int64_t grain_size = 32768) {
  loops::check_operands<Op>(iter);
  iter.for_each(loops::scalar_loop(op), grain_size);
}

// The same, with vop(Vectorized<T>...) on contiguous and scalar-broadcast rows.
template <typename Op, typename VOp>
void cpu_kernel_vec(const TensorIterator& iter, Op&& op, VOp&& vop, int64_t grain_size = 32768) {
  loops::check_operands<Op>(iter);
  iter.for_each(loops::vectorized_or_scalar_loop(op, vop), grain_size);
}

// On the calling thread only (ops whose elements depend on order, e.g. random ones).
template <typename Op>
void cpu_serial_kernel(const TensorIterator& iter, Op&& op) {
  loops::check_operands<Op>(iter);
  iter.serial_for_each(loops::scalar_loop(op));
}

template <typename Op, typename VOp>
void cpu_serial_kernel_vec(const TensorIterator& iter, Op&& op, VOp&& vop) {
  loops::check_operands<Op>(iter);
  iter.serial_for_each(loops::vectorized_or_scalar_loop(op, vop));
}

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::native
