// IValue::to<T>(): from a stack slot to a kernel parameter type, for the boxing templates.
// TorchScript's leniencies apply, so a boxed caller may pass what Python accepts: an int for
// a float, any number for a Scalar, an empty generic list ([] has no type) for a typed list.
#pragma once

// Included at the end of aten/core/IValue.h; not meant to be included on its own.
#include <aten/core/IValue.h>

namespace c10::inline tessera {

namespace detail {
// The one integral target type that is not int64_t: range-check rather than wrap, so that a
// 2**40 passed to an `int32_t` parameter is an error, not a different number.
[[noreturn]] TORCH_API void throw_int_out_of_range(int64_t v, size_t bytes, bool is_signed);

template <typename T>
T narrow_int(int64_t v) {
  if constexpr (sizeof(T) == sizeof(int64_t) && std::is_signed_v<T>) {
    return static_cast<T>(v);
  } else {
    bool fits;
    if constexpr (std::is_signed_v<T>) {
      fits = v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             v <= static_cast<int64_t>(std::numeric_limits<T>::max());
    } else {
      fits = v >= 0 && static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
    if (C10_UNLIKELY(!fits)) throw_int_out_of_range(v, sizeof(T), std::is_signed_v<T>);
    return static_cast<T>(v);
  }
}
}  // namespace detail

template <typename T>
T IValue::to() const {
  if constexpr (std::is_same_v<T, IValue>) {
    return *this;
  } else if constexpr (detail::ivalue_is_optional<T>::value) {
    if (isNone()) return std::nullopt;
    return T(to<typename T::value_type>());
  } else if constexpr (std::is_same_v<T, at::Tensor> || std::is_same_v<T, const at::Tensor&>) {
    return toTensor();
  } else if constexpr (std::is_same_v<T, bool>) {
    return toBool();
  } else if constexpr (std::is_integral_v<T>) {
    return detail::narrow_int<T>(toInt());
  } else if constexpr (std::is_same_v<T, double>) {
    if (isInt()) return static_cast<double>(payload_.u.as_int);
    return toDouble();
  } else if constexpr (std::is_same_v<T, complex<double>>) {
    if (isInt()) return complex<double>(static_cast<double>(payload_.u.as_int), 0.0);
    if (isDouble()) return complex<double>(payload_.u.as_double, 0.0);
    return toComplexDouble();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return toStringRef();
  } else if constexpr (std::is_same_v<T, std::string_view>) {
    return toStringView();
  } else if constexpr (std::is_same_v<T, Dimname>) {
    return toDimname();
  } else if constexpr (std::is_same_v<T, std::vector<Dimname>>) {
    if (isEmptyGenericList()) return T();
    return toDimnameVector();
  } else if constexpr (std::is_same_v<T, Scalar>) {
    return toScalar();
  } else if constexpr (std::is_same_v<T, ScalarType>) {
    return toScalarType();
  } else if constexpr (std::is_same_v<T, Layout>) {
    return toLayout();
  } else if constexpr (std::is_same_v<T, MemoryFormat>) {
    return toMemoryFormat();
  } else if constexpr (std::is_same_v<T, QScheme>) {
    return static_cast<QScheme>(toInt());
  } else if constexpr (std::is_same_v<T, Device>) {
    return toDevice();
  } else if constexpr (std::is_same_v<T, at::Generator>) {
    return toGenerator();
  } else if constexpr (std::is_same_v<T, IntArrayRef>) {
    if (isEmptyGenericList()) return T();
    return toIntList();
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    if (isEmptyGenericList()) return T();
    return toIntVector();
  } else if constexpr (std::is_same_v<T, ArrayRef<double>>) {
    if (isEmptyGenericList()) return T();
    return toDoubleList();
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    if (isEmptyGenericList()) return T();
    return toDoubleList().vec();
  } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
    if (isEmptyGenericList()) return T();
    return toBoolList();
  } else if constexpr (detail::ivalue_is_bool_array<T>::value) {
    const std::vector<bool>& v = toBoolList();
    TORCH_CHECK(v.size() == std::tuple_size_v<T>, "expected a list of ", std::tuple_size_v<T>, " bools, got ",
                v.size());
    T out{};
    for (size_t i = 0; i < out.size(); ++i) out[i] = v[i];
    return out;
  } else if constexpr (std::is_same_v<T, ArrayRef<at::Tensor>>) {
    if (isEmptyGenericList()) return T();
    return toTensorList();
  } else if constexpr (std::is_same_v<T, std::vector<at::Tensor>>) {
    if (isEmptyGenericList()) return T();
    return toTensorList().vec();
  } else if constexpr (std::is_same_v<T, ArrayRef<std::optional<at::Tensor>>>) {
    if (isEmptyGenericList()) return T();
    return toOptionalTensorList();
  } else if constexpr (std::is_same_v<T, std::vector<std::optional<at::Tensor>>>) {
    if (isEmptyGenericList()) return T();
    // A Tensor[] is a valid Tensor?[] (every element present); the copy makes that possible.
    if (isTensorList()) return T(toTensorList().begin(), toTensorList().end());
    return toOptionalTensorList().vec();
  } else if constexpr (detail::ivalue_is_object_ptr<T>::value) {
    using E = typename T::element_type;
    return T::unsafe_reclaim_from_nonowning(static_cast<E*>(toObjectOf(typeid(E)).get()));
  } else if constexpr (std::is_same_v<T, ArrayRef<IValue>>) {
    return toList();
  } else if constexpr (std::is_same_v<T, std::vector<IValue>>) {
    return toList().vec();
  } else {
    static_assert(sizeof(T) == 0, "IValue::to<T>(): T is not a type an operator schema can name");
  }
}

}  // namespace c10::inline tessera
