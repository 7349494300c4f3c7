#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

namespace c10::inline tessera {

const char* toString(ScalarType t) {
  switch (t) {
#define C10_NAME_ENTRY(name, size) \
  case ScalarType::name:           \
    return #name;
    C10_FORALL_SCALAR_TYPES(C10_NAME_ENTRY)
#undef C10_NAME_ENTRY
    case ScalarType::Undefined:
      return "Undefined";
    default:
      return "UNKNOWN_SCALAR";
  }
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

ScalarType toRealValueType(ScalarType t) {
  switch (t) {
    case ScalarType::ComplexHalf: return ScalarType::Half;
    case ScalarType::ComplexFloat: return ScalarType::Float;
    case ScalarType::ComplexDouble: return ScalarType::Double;
    default: return t;
  }
}

ScalarType toComplexType(ScalarType t) {
  switch (t) {
    case ScalarType::Half:
    case ScalarType::ComplexHalf: return ScalarType::ComplexHalf;
    case ScalarType::BFloat16:
    case ScalarType::Float:
    case ScalarType::ComplexFloat: return ScalarType::ComplexFloat;
    case ScalarType::Double:
    case ScalarType::ComplexDouble: return ScalarType::ComplexDouble;
    default: TORCH_CHECK(false, "Unknown Complex ScalarType for ", t);
  }
}

namespace {

// Promotion is a join in a small lattice. Integers order by range, where uint8 and int8
// meet at int16; floating types meet at the wider one, except that Half and BFloat16
// (neither contains the other) meet at Float; complex absorbs everything and takes the
// precision of the wider real part.
int integerRank(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::Char: return 1;
    case ScalarType::Short: return 2;
    case ScalarType::Int: return 3;
    case ScalarType::Long: return 4;
    default: return 0;
  }
}

ScalarType promoteIntegers(ScalarType a, ScalarType b) {
  if ((a == ScalarType::Byte && b == ScalarType::Char) || (a == ScalarType::Char && b == ScalarType::Byte)) {
    return ScalarType::Short;
  }
  return integerRank(a) >= integerRank(b) ? a : b;
}

ScalarType promoteFloats(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if ((a == ScalarType::Half && b == ScalarType::BFloat16) || (a == ScalarType::BFloat16 && b == ScalarType::Half)) {
    return ScalarType::Float;
  }
  auto rank = [](ScalarType t) { return t == ScalarType::Double ? 2 : t == ScalarType::Float ? 1 : 0; };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace

ScalarType promoteTypes(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined || b == ScalarType::Undefined) return ScalarType::Undefined;
  if (a == b) return a;
  TORCH_CHECK(!isQIntType(a) && !isQIntType(b),
              "promoteTypes with quantized numbers is not handled yet; figure out what the correct rules "
              "should be, offending types: ", a, " ", b);
  TORCH_CHECK(!isFloat8Type(a) && !isFloat8Type(b), "Promotion for Float8 Types is not supported, attempted to promote ",
              a, " and ", b);
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
  if (isComplexType(a) || isComplexType(b)) {
    ScalarType real = promoteFloats(isFloatingType(toRealValueType(a)) ? toRealValueType(a) : ScalarType::Half,
                                    isFloatingType(toRealValueType(b)) ? toRealValueType(b) : ScalarType::Half);
    return real == ScalarType::Double ? ScalarType::ComplexDouble
           : real == ScalarType::Half ? ScalarType::ComplexHalf
                                      : ScalarType::ComplexFloat;
  }
  if (isFloatingType(a) && isFloatingType(b)) return promoteFloats(a, b);
  if (isFloatingType(a)) return a;
  if (isFloatingType(b)) return b;
  return promoteIntegers(a, b);
}

bool canCast(ScalarType from, ScalarType to) {
  if (isComplexType(from) && !isComplexType(to)) return false;
  if (isFloatingType(from) && isIntegralType(to, false)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

}  // namespace c10::inline tessera
