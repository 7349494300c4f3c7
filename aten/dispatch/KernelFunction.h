// KernelFunction: one kernel as the dispatcher stores it. It holds an unboxed entry (a
// direct call with C++ arguments, the fast path) and a boxed entry (arguments on a
// Stack, for fallbacks, custom ops and Python); both are derived from the one C++
// function the kernel author wrote. A boxed-only kernel is still callable unboxed.
#pragma once

#include <aten/dispatch/Boxing.h>

#include <functional>
#include <memory>
#include <optional>

namespace c10::inline tessera {

// A function pointer known at compile time; TORCH_FN(f) makes one. Kernels registered
// this way are called directly, with no pointer loaded from the kernel object.
template <typename FuncType, FuncType* func>
struct CompileTimeFunctionPointer {
  using type = FuncType;
  static constexpr FuncType* value = func;
};
#define TORCH_FN(func) \
  ::c10::CompileTimeFunctionPointer<std::remove_pointer_t<std::remove_reference_t<decltype(func)>>, func>()

namespace detail {
// Functors that call a function known at compile time, or held as a pointer.
template <typename FuncType, FuncType* func>
struct DirectCall;
template <typename R, typename... A, R (*func)(A...)>
struct DirectCall<R(A...), func> {
  R operator()(A... a) const { return func(std::forward<A>(a)...); }
};
template <typename FuncType>
struct RuntimeCall;
template <typename R, typename... A>
struct RuntimeCall<R(A...)> {
  explicit RuntimeCall(R (*f)(A...)) : fn(f) {}
  R operator()(A... a) const { return fn(std::forward<A>(a)...); }
  R (*fn)(A...);
};
}  // namespace detail

class TORCH_API KernelFunction {
 public:
  // (functor, op, keys, stack): the boxed calling convention.
  using InternalBoxedFn = void (*)(void*, const OperatorHandle&, DispatchKeySet, Stack*);
  // What users write for a boxed kernel or fallback.
  using BoxedKernelFn = void (*)(const OperatorHandle&, DispatchKeySet, Stack*);

  KernelFunction() = default;

  template <typename FuncType, FuncType* func>
  static KernelFunction makeFromUnboxedFunction(CompileTimeFunctionPointer<FuncType, func>) {
    // Not a function-local static: those become STB_GNU_UNIQUE symbols, which would make a
    // custom-op library impossible to dlclose (and so its kernels impossible to unload).
    auto owner = std::make_shared<detail::DirectCall<FuncType, func>>();
    return fromFunctor<detail::DirectCall<FuncType, func>, FuncType>(owner.get(), owner);
  }

  template <typename FuncPtr>
    requires std::is_function_v<std::remove_pointer_t<FuncPtr>>
  static KernelFunction makeFromUnboxedRuntimeFunction(FuncPtr fn) {
    using FuncType = std::remove_pointer_t<FuncPtr>;
    auto owner = std::make_shared<detail::RuntimeCall<FuncType>>(fn);
    return fromFunctor<detail::RuntimeCall<FuncType>, FuncType>(owner.get(), owner);
  }

  // A lambda or functor object (stateful or not).
  template <typename Functor>
    requires(!std::is_function_v<std::remove_pointer_t<std::decay_t<Functor>>>)
  static KernelFunction makeFromUnboxedLambda(Functor&& f) {
    using F = std::decay_t<Functor>;
    auto owner = std::make_shared<F>(std::forward<Functor>(f));
    return fromFunctor<F, typename detail::function_traits<F>::func_type>(owner.get(), owner);
  }

  static KernelFunction makeFromBoxedFunction(BoxedKernelFn fn);
  // A boxed kernel with state (a Python function, say), kept alive by the kernel.
  using BoxedCallable = std::function<void(const OperatorHandle&, DispatchKeySet, Stack*)>;
  static KernelFunction makeFromBoxedCallable(BoxedCallable fn);
  // A boxed-only kernel over the dispatcher's own state (the missing-kernel reporter).
  static KernelFunction makeInternalBoxed(InternalBoxedFn fn, void* functor);
  // Tells the dispatcher to skip this key and look further down.
  static KernelFunction makeFallthrough();

  bool isValid() const { return boxed_ != nullptr; }
  bool isFallthrough() const;
  bool hasUnboxed() const { return unboxed_ != nullptr; }
  const std::optional<CppSignature>& cppSignature() const { return signature_; }

  void callBoxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const { boxed_(functor_, op, ks, stack); }

  template <typename R, typename... Args>
  R call(const OperatorHandle& op, DispatchKeySet ks, Args... args) const {
    if (C10_LIKELY(unboxed_ != nullptr)) {
      return reinterpret_cast<R (*)(void*, DispatchKeySet, Args...)>(unboxed_)(functor_, ks,
                                                                              std::forward<Args>(args)...);
    }
    return callBoxedFromUnboxed<R, Args...>(op, ks, std::forward<Args>(args)...);
  }

 private:
  template <typename F, typename Sig>
  static KernelFunction fromFunctor(F* functor, std::shared_ptr<void> owner) {
    using Wrappers = detail::KernelWrappers<F, Sig>;
    KernelFunction k;
    k.owner_ = std::move(owner);
    k.functor_ = functor;
    k.boxed_ = &Wrappers::boxed;
    k.unboxed_ = reinterpret_cast<void*>(&Wrappers::unboxed);
    k.signature_ = CppSignature::make<Sig>();
    return k;
  }

  template <typename R, typename... Args>
  R callBoxedFromUnboxed(const OperatorHandle& op, DispatchKeySet ks, Args... args) const {
    Stack stack;
    stack.reserve(sizeof...(Args));
    (stack.emplace_back(args), ...);
    boxed_(functor_, op, ks, &stack);
    if constexpr (std::is_lvalue_reference_v<R>) {
      // In-place and out= ops return the argument they wrote to (see Boxing.h).
      constexpr size_t i = detail::first_mutable_tensor_arg<Args...>();
      static_assert(i < sizeof...(Args), "a Tensor& return needs a Tensor& argument");
      return std::get<i>(std::forward_as_tuple(args...));
    } else if constexpr (detail::is_ref_tuple<R>::value) {
      // Several out= tensors (values, indices): the Tensor& arguments, in order.
      constexpr size_t n = std::tuple_size_v<R>;
      constexpr auto idx = detail::mutable_tensor_args<n, Args...>();
      static_assert(idx[n - 1] < sizeof...(Args), "a tuple of Tensor& returns needs as many Tensor& arguments");
      auto all = std::forward_as_tuple(args...);
      return [&]<size_t... I>(std::index_sequence<I...>) { return R(std::get<idx[I]>(all)...); }(std::make_index_sequence<n>());
    } else {
      return detail::pop_output<R>(stack);
    }
  }

  std::shared_ptr<void> owner_;  // keeps a stateful functor alive; null for TORCH_FN
  void* functor_ = nullptr;
  InternalBoxedFn boxed_ = nullptr;
  void* unboxed_ = nullptr;  // R(*)(void*, DispatchKeySet, Args...)
  std::optional<CppSignature> signature_;
};

}  // namespace c10::inline tessera
