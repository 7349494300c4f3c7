// Helpers over an unboxed kernel's C++ signature: a stable identity used to check that
// a caller's op.typed<Sig>() matches the registered kernel, and the normalisation that
// makes `Tensor(const Tensor&)` and a lambda with that signature compare equal.
#pragma once

#include <c10/core/DispatchKeySet.h>

#include <string>
#include <type_traits>
#include <typeinfo>

namespace c10::inline tessera {

namespace detail {

template <typename F>
struct function_traits;
template <typename R, typename... A>
struct function_traits<R(A...)> {
  using return_type = R;
  using func_type = R(A...);
  static constexpr size_t arity = sizeof...(A);
};
template <typename R, typename... A>
struct function_traits<R (*)(A...)> : function_traits<R(A...)> {};
template <typename C, typename R, typename... A>
struct function_traits<R (C::*)(A...) const> : function_traits<R(A...)> {};
template <typename C, typename R, typename... A>
struct function_traits<R (C::*)(A...)> : function_traits<R(A...)> {};
// Lambdas and functors: the signature of operator().
template <typename F>
struct function_traits : function_traits<decltype(&F::operator())> {};

// Kernels may take the DispatchKeySet first (to redispatch); callers never pass it.
template <typename F>
struct strip_keyset {
  using type = F;
};
template <typename R, typename... A>
struct strip_keyset<R(DispatchKeySet, A...)> {
  using type = R(A...);
};
template <typename F>
struct takes_keyset : std::false_type {};
template <typename R, typename... A>
struct takes_keyset<R(DispatchKeySet, A...)> : std::true_type {};

}  // namespace detail

// The identity of an unboxed signature as callers spell it (no leading DispatchKeySet).
class CppSignature {
 public:
  template <typename F>
  static CppSignature make() {
    using Sig = typename detail::strip_keyset<typename detail::function_traits<F>::func_type>::type;
    return CppSignature(typeid(Sig));
  }
  bool operator==(const CppSignature& other) const { return *type_ == *other.type_; }
  // A readable (demangled) spelling for error messages.
  TORCH_API std::string name() const;

 private:
  explicit CppSignature(const std::type_info& t) : type_(&t) {}
  const std::type_info* type_;
};

}  // namespace c10::inline tessera
