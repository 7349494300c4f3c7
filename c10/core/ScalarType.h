// ScalarType: the 20 element types of Tessera, with PyTorch's names, item sizes,
// categories and type promotion (promoteTypes, identical to PyTorch's table).
#pragma once

#include <c10/macros/Macros.h>

#include <cstddef>
#include <cstdint>
#include <ostream>

namespace c10::inline tessera {

// X(enumerator, item size in bytes). PyTorch's relative order; dense numbering.
#define C10_FORALL_SCALAR_TYPES(X) \
  X(Byte, 1)                       \
  X(Char, 1)                       \
  X(Short, 2)                      \
  X(Int, 4)                        \
  X(Long, 8)                       \
  X(Half, 2)                       \
  X(Float, 4)                      \
  X(Double, 8)                     \
  X(ComplexHalf, 4)                \
  X(ComplexFloat, 8)               \
  X(ComplexDouble, 16)             \
  X(Bool, 1)                       \
  X(QInt8, 1)                      \
  X(QUInt8, 1)                     \
  X(QInt32, 4)                     \
  X(BFloat16, 2)                   \
  X(QUInt4x2, 1)                   \
  X(QUInt2x4, 1)                   \
  X(Float8_e5m2, 1)                \
  X(Float8_e4m3fn, 1)

enum class ScalarType : int8_t {
#define C10_ENUM_ENTRY(name, size) name,
  C10_FORALL_SCALAR_TYPES(C10_ENUM_ENTRY)
#undef C10_ENUM_ENTRY
  Undefined,
  NumOptions
};
constexpr int kNumScalarTypes = static_cast<int>(ScalarType::NumOptions) - 1;

#define C10_CONSTANT_ENTRY(name, size) constexpr ScalarType k##name = ScalarType::name;
C10_FORALL_SCALAR_TYPES(C10_CONSTANT_ENTRY)
#undef C10_CONSTANT_ENTRY

// "Float", "Long", ... (PyTorch's C++ names); "Undefined" for Undefined.
C10_API const char* toString(ScalarType t);
C10_API std::ostream& operator<<(std::ostream& os, ScalarType t);

constexpr size_t elementSize(ScalarType t) {
  switch (t) {
#define C10_SIZE_ENTRY(name, size) \
  case ScalarType::name:           \
    return size;
    C10_FORALL_SCALAR_TYPES(C10_SIZE_ENTRY)
#undef C10_SIZE_ENTRY
    default:
      return 0;
  }
}

// Categories, as PyTorch defines them. Bool is integral only when asked to include it.
constexpr bool isIntegralType(ScalarType t, bool includeBool) {
  return t == ScalarType::Byte || t == ScalarType::Char || t == ScalarType::Short || t == ScalarType::Int ||
         t == ScalarType::Long || (includeBool && t == ScalarType::Bool);
}
constexpr bool isFloat8Type(ScalarType t) { return t == ScalarType::Float8_e5m2 || t == ScalarType::Float8_e4m3fn; }
constexpr bool isReducedFloatingType(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 || isFloat8Type(t);
}
constexpr bool isFloatingType(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || isReducedFloatingType(t);
}
constexpr bool isComplexType(ScalarType t) {
  return t == ScalarType::ComplexHalf || t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble;
}
// The quantized types. quint4x2 and quint2x4 pack two 4-bit or four 2-bit values into each
// byte (their item size is the byte, as torch reports it).
constexpr bool isSubByteQIntType(ScalarType t) { return t == ScalarType::QUInt4x2 || t == ScalarType::QUInt2x4; }
constexpr bool isQIntType(ScalarType t) {
  return t == ScalarType::QInt8 || t == ScalarType::QUInt8 || t == ScalarType::QInt32 || isSubByteQIntType(t);
}
constexpr bool isSignedType(ScalarType t) {
  return !(t == ScalarType::Byte || t == ScalarType::Bool || t == ScalarType::QUInt8 || isSubByteQIntType(t));
}

// ComplexHalf <-> Half, ComplexFloat <-> Float, ComplexDouble <-> Double.
C10_API ScalarType toRealValueType(ScalarType t);
C10_API ScalarType toComplexType(ScalarType t);

// The type both operands convert to in a binary op, by PyTorch's rules. Raises for
// quantized or Float8 operands of different types, as current PyTorch does.
C10_API ScalarType promoteTypes(ScalarType a, ScalarType b);

// Whether casting `from` to `to` keeps the category (PyTorch's canCast): no float->int,
// no complex->non-complex, no non-bool->bool.
C10_API bool canCast(ScalarType from, ScalarType to);

}  // namespace c10::inline tessera
