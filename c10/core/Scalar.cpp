#include <c10/core/Scalar.h>

#include <sstream>

namespace c10::inline tessera {

namespace detail {
void throw_overflow(const char* type_name) {
  TORCH_CHECK(false, "value cannot be converted to type ", type_name, " without overflow");
}
}  // namespace detail

ScalarType Scalar::type() const {
  switch (tag_) {
    case Tag::Bool: return ScalarType::Bool;
    case Tag::Int: return ScalarType::Long;
    case Tag::Double: return ScalarType::Double;
    case Tag::Complex: return ScalarType::ComplexDouble;
  }
  TORCH_INTERNAL_ASSERT(false, "corrupt Scalar tag");
}

Scalar Scalar::operator-() const {
  switch (tag_) {
    case Tag::Bool: TORCH_CHECK(false, "torch boolean negative, the `-` operator, is not supported.");
    case Tag::Int:
      // Negate in unsigned arithmetic: -INT64_MIN wraps as it does for a tensor.
      return Scalar(static_cast<int64_t>(0ull - static_cast<uint64_t>(v_.i)));
    case Tag::Double: return Scalar(-v_.d);
    case Tag::Complex: return Scalar(complex<double>(-v_.z.real(), -v_.z.imag()));
  }
  TORCH_INTERNAL_ASSERT(false, "corrupt Scalar tag");
}

bool Scalar::equal(const Scalar& other) const {
  if (tag_ != other.tag_) return false;
  switch (tag_) {
    case Tag::Bool:
    case Tag::Int: return v_.i == other.v_.i;
    case Tag::Double: return v_.d == other.v_.d;
    case Tag::Complex: return v_.z.real() == other.v_.z.real() && v_.z.imag() == other.v_.z.imag();
  }
  return false;
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.isBoolean()) return os << (s.toBool() ? "true" : "false");
  if (s.isIntegral(false)) return os << s.toLong();
  if (s.isFloatingPoint()) return os << s.toDouble();
  auto z = s.toComplexDouble();
  return os << "(" << z.real() << "," << z.imag() << ")";
}

std::string toString(const Scalar& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace c10::inline tessera
