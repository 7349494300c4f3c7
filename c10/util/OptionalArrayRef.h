// OptionalArrayRef<T>: an optional list argument of the public C++ API (`dim`, `s`, ...), as
// torch's. std::optional<ArrayRef<T>> made from one number built the ArrayRef inside its own
// constructor, over a temporary that died there (`t.sum(-2)` read freed stack); here one
// element binds by reference in the caller, so it lives to the end of the caller's full
// expression, as lists and vectors passed as arguments do.
#pragma once

#include <c10/util/ArrayRef.h>

#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>

namespace c10::inline tessera {

template <typename T>
class OptionalArrayRef {
 public:
  constexpr OptionalArrayRef() noexcept = default;
  constexpr OptionalArrayRef(std::nullopt_t) noexcept {}  // NOLINT: implicit, as std::optional
  constexpr OptionalArrayRef(const std::optional<ArrayRef<T>>& ref) noexcept : ref_(ref) {}  // NOLINT
  // One element: `t.sum(-2)` (a converted number is the caller's temporary).
  constexpr OptionalArrayRef(const T& one) noexcept : ref_(ArrayRef<T>(one)) {}  // NOLINT
  // Anything that views as an ArrayRef<T>: ArrayRef, std::vector, C arrays, SmallVector /
  // DimVector.
  template <typename U, std::enable_if_t<!std::is_same_v<std::decay_t<U>, OptionalArrayRef> &&
                                             std::is_convertible_v<U&&, ArrayRef<T>> &&
                                             !std::is_convertible_v<U&&, T>,
                                         int> = 0>
  constexpr OptionalArrayRef(U&& list) : ref_(ArrayRef<T>(std::forward<U>(list))) {}  // NOLINT
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  constexpr OptionalArrayRef(const std::initializer_list<T>& list) : ref_(ArrayRef<T>(list)) {}  // NOLINT
#pragma GCC diagnostic pop

  constexpr bool has_value() const noexcept { return ref_.has_value(); }
  constexpr explicit operator bool() const noexcept { return ref_.has_value(); }
  constexpr ArrayRef<T> operator*() const { return *ref_; }
  constexpr const ArrayRef<T>* operator->() const { return &*ref_; }
  constexpr ArrayRef<T> value() const { return ref_.value(); }
  constexpr ArrayRef<T> value_or(ArrayRef<T> fallback) const { return ref_.value_or(fallback); }
  // What kernels and the dispatcher take.
  constexpr operator std::optional<ArrayRef<T>>() const noexcept { return ref_; }  // NOLINT

 private:
  std::optional<ArrayRef<T>> ref_;
};

using OptionalIntArrayRef = OptionalArrayRef<int64_t>;

}  // namespace c10::inline tessera

namespace at::inline tessera {
using c10::OptionalArrayRef;
using c10::OptionalIntArrayRef;
}  // namespace at::inline tessera
