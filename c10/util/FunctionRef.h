// function_ref<Sig>: a non-owning reference to any callable, two pointers wide. Loops
// take one so a kernel's lambda is called without std::function's allocation.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace c10::inline tessera {

template <typename Fn>
class function_ref;

template <typename R, typename... Args>
class function_ref<R(Args...)> {
 public:
  template <typename Callable>
    requires(!std::is_same_v<std::remove_cvref_t<Callable>, function_ref> &&
             std::is_invocable_r_v<R, Callable&, Args...>)
  function_ref(Callable&& callable)  // NOLINT: implicit, like a reference
      : callback_(&call<std::remove_reference_t<Callable>>),
        callable_(reinterpret_cast<intptr_t>(&callable)) {}

  R operator()(Args... args) const { return callback_(callable_, std::forward<Args>(args)...); }

 private:
  template <typename Callable>
  static R call(intptr_t callable, Args... args) {
    return (*reinterpret_cast<Callable*>(callable))(std::forward<Args>(args)...);
  }

  R (*callback_)(intptr_t, Args...);
  intptr_t callable_;
};

}  // namespace c10::inline tessera
