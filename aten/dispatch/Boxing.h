// The templates that connect a kernel's C++ signature to the boxed world: calling an
// unboxed kernel with arguments taken from a Stack, and calling a boxed kernel with C++
// arguments. A kernel is written once, as an ordinary function; both paths come from it.
#pragma once

#include <aten/core/IValue.h>
#include <aten/dispatch/CppSignature.h>

#include <array>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace c10::inline tessera {

class OperatorHandle;

namespace detail {

// ---- arguments: IValue -> C++ ----

template <typename T>
struct is_tuple : std::false_type {};
template <typename... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};

// Index of the first `Tensor&` parameter: the tensor that an in-place op (self) or an
// out= op (out) returns by reference.
template <typename... Args>
constexpr size_t first_mutable_tensor_arg() {
  constexpr bool is_mut[] = {std::is_same_v<Args, at::Tensor&>..., false};
  for (size_t i = 0; i < sizeof...(Args); ++i) {
    if (is_mut[i]) return i;
  }
  return sizeof...(Args);
}

// Indices of the first N `Tensor&` parameters: the tensors an op with several out=
// arguments (sort.values: values, indices) returns by reference, in order.
template <size_t N, typename... Args>
constexpr std::array<size_t, N> mutable_tensor_args() {
  constexpr bool is_mut[] = {std::is_same_v<Args, at::Tensor&>..., false};
  std::array<size_t, N> out{};
  out.fill(sizeof...(Args));  // "none": fails the caller's static_assert
  size_t k = 0;
  for (size_t i = 0; i < sizeof...(Args) && k < N; ++i) {
    if (is_mut[i]) out[k++] = i;
  }
  return out;
}

// Whether a return type is a tuple of references (several out= tensors).
template <typename T>
struct is_ref_tuple : std::false_type {};
template <typename... T>
struct is_ref_tuple<std::tuple<T...>> : std::bool_constant<(sizeof...(T) > 0) && (std::is_lvalue_reference_v<T> && ...)> {};

// What a boxed call keeps of a result while its arguments go: values, never references.
template <typename T>
struct owned {
  using type = std::decay_t<T>;
};
template <typename... T>
struct owned<std::tuple<T...>> {
  using type = std::tuple<std::decay_t<T>...>;
};

// The value a kernel parameter of type Arg receives from an IValue that stays on the
// stack for the whole call, so views (IntArrayRef, const Tensor&) into it are safe.
template <typename Arg>
decltype(auto) unbox_arg(const IValue& v) {
  using T = std::decay_t<Arg>;
  if constexpr (std::is_same_v<T, at::Tensor>) {
    // `Tensor&` out-arguments name the same tensor; the handle itself is not rebound.
    return const_cast<at::Tensor&>(v.toTensor());
  } else if constexpr (std::is_same_v<T, ArrayRef<Dimname>>) {
    // names box as strings: the kernel's view is into a vector that lives for the call
    return v.to<std::vector<Dimname>>();
  } else if constexpr (std::is_same_v<T, std::optional<ArrayRef<Dimname>>>) {
    return v.to<std::optional<std::vector<Dimname>>>();
  } else {
    return v.to<T>();
  }
}

// ---- returns: C++ -> stack ----

template <typename T>
void push_output(Stack& stack, T&& value) {
  using D = std::decay_t<T>;
  if constexpr (is_tuple<D>::value) {
    std::apply([&](auto&&... elems) { (stack.emplace_back(std::forward<decltype(elems)>(elems)), ...); },
               std::forward<T>(value));
  } else {
    stack.emplace_back(std::forward<T>(value));
  }
}

// ---- returns: stack -> C++ (boxed kernel called through an unboxed signature) ----

template <typename Return>
Return pop_output(Stack& stack) {
  using D = std::decay_t<Return>;
  if constexpr (std::is_void_v<Return>) {
    stack.clear();
  } else if constexpr (is_tuple<D>::value) {
    constexpr size_t n = std::tuple_size_v<D>;
    TORCH_CHECK(stack.size() == n, "a boxed kernel returned ", stack.size(), " values; the signature expects ", n);
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return D(stack[I].to<std::decay_t<std::tuple_element_t<I, D>>>()...);
    }(std::make_index_sequence<n>());
  } else if constexpr (std::is_lvalue_reference_v<Return>) {
    // `Tensor&` returns (in-place and out= ops) are one of the arguments by contract; the
    // caller's reference is what the unboxed wrapper hands back (see call_boxed_unboxed).
    static_assert(std::is_same_v<D, at::Tensor>, "only Tensor& may be returned by reference");
    TORCH_CHECK(stack.size() == 1, "a boxed kernel returned ", stack.size(), " values; the signature expects 1");
    return stack[0].toTensor();
  } else {
    TORCH_CHECK(stack.size() == 1, "a boxed kernel returned ", stack.size(), " values; the signature expects 1");
    return stack[0].to<D>();
  }
}

// Calls functor f with the keys (when its signature takes them) and the arguments.
template <bool WithKeys, typename F, typename... A>
C10_ALWAYS_INLINE decltype(auto) invoke_kernel(F& f, DispatchKeySet ks, A&&... args) {
  if constexpr (WithKeys) {
    return f(ks, std::forward<A>(args)...);
  } else {
    return f(std::forward<A>(args)...);
  }
}

// The boxed and unboxed entry points for functor F whose signature (as written by the
// kernel author, possibly with a leading DispatchKeySet) is FullSig.
template <typename F, typename FullSig, bool WithKeys = takes_keyset<FullSig>::value,
          typename Sig = typename strip_keyset<FullSig>::type>
struct KernelWrappers;
template <typename F, typename FullSig, bool WithKeys, typename R, typename... Args>
struct KernelWrappers<F, FullSig, WithKeys, R(Args...)> {
  static void boxed(void* functor, const OperatorHandle&, DispatchKeySet ks, Stack* stack) {
    constexpr size_t n = sizeof...(Args);
    TORCH_CHECK(stack->size() >= n, "boxed call with ", stack->size(), " arguments on the stack; the kernel takes ", n);
    IValue* args = stack->data() + (stack->size() - n);
    F& f = *static_cast<F*>(functor);
    auto invoke = [&]<size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
      return invoke_kernel<WithKeys>(f, ks, unbox_arg<Args>(args[I])...);
    };
    if constexpr (std::is_void_v<R>) {
      invoke(std::index_sequence_for<Args...>());
      stack->erase(stack->end() - n, stack->end());
    } else {
      // Copy the result out before the arguments (which a Tensor& result refers to) go.
      typename owned<R>::type result = invoke(std::index_sequence_for<Args...>());
      stack->erase(stack->end() - n, stack->end());
      push_output(*stack, std::move(result));
    }
  }

  static R unboxed(void* functor, DispatchKeySet ks, Args... args) {
    return invoke_kernel<WithKeys>(*static_cast<F*>(functor), ks, std::forward<Args>(args)...);
  }
};

}  // namespace detail
}  // namespace c10::inline tessera
