// DefaultValue accessors and torch's printed spelling of schema defaults.
#include <aten/schema/DefaultValue.h>

#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <utility>

namespace c10::inline tessera {

namespace {

const char* kind_label(DefaultValue::Kind k) {
  using K = DefaultValue::Kind;
  switch (k) {
    case K::None: return "None";
    case K::Bool: return "bool";
    case K::Int: return "int";
    case K::Double: return "float";
    case K::Complex: return "complex";
    case K::String: return "str";
    case K::IntList: return "int list";
    case K::DoubleList: return "float list";
    case K::BoolList: return "bool list";
    case K::Enum: return "enum constant";
  }
  return "?";
}

struct EnumConstant {
  std::string_view name;
  int64_t code;
};

// The identifiers torch's schema parser turns into enum integers, plus a few siblings of
// theirs; the codes are c10's (and torch's) enum values.
const std::array<EnumConstant, 13> kEnumConstants{{
    {"float", static_cast<int64_t>(ScalarType::Float)},
    {"double", static_cast<int64_t>(ScalarType::Double)},
    {"complex", static_cast<int64_t>(ScalarType::ComplexFloat)},
    {"long", static_cast<int64_t>(ScalarType::Long)},
    {"int", static_cast<int64_t>(ScalarType::Int)},
    {"strided", static_cast<int64_t>(Layout::Strided)},
    {"contiguous_format", static_cast<int64_t>(MemoryFormat::Contiguous)},
    {"preserve_format", static_cast<int64_t>(MemoryFormat::Preserve)},
    {"channels_last", static_cast<int64_t>(MemoryFormat::ChannelsLast)},
    {"channels_last_3d", static_cast<int64_t>(MemoryFormat::ChannelsLast3d)},
    // at::Reduction: None = 0, Mean = 1, Sum = 2.
    {"Mean", 1},
    {"Sum", 2},
    {"half", static_cast<int64_t>(ScalarType::Half)},
}};

}  // namespace

#define TESSERA_EXPECT_KIND(k) \
  TORCH_CHECK(kind_ == Kind::k, "default value is a ", kind_label(kind_), ", not a ", kind_label(Kind::k))

DefaultValue DefaultValue::boolean(bool b) {
  DefaultValue v(Kind::Bool);
  v.int_ = b ? 1 : 0;
  return v;
}

DefaultValue DefaultValue::integer(int64_t i) {
  DefaultValue v(Kind::Int);
  v.int_ = i;
  return v;
}

DefaultValue DefaultValue::floating(double d) {
  DefaultValue v(Kind::Double);
  v.real_ = d;
  return v;
}

DefaultValue DefaultValue::complex(double real, double imag) {
  DefaultValue v(Kind::Complex);
  v.real_ = real;
  v.imag_ = imag;
  return v;
}

DefaultValue DefaultValue::string(std::string s) {
  DefaultValue v(Kind::String);
  v.text_ = std::move(s);
  return v;
}

DefaultValue DefaultValue::int_list(std::vector<int64_t> values) {
  DefaultValue v(Kind::IntList);
  v.ints_ = std::move(values);
  return v;
}

DefaultValue DefaultValue::double_list(std::vector<double> values) {
  DefaultValue v(Kind::DoubleList);
  v.doubles_ = std::move(values);
  return v;
}

DefaultValue DefaultValue::bool_list(const std::vector<bool>& values) {
  DefaultValue v(Kind::BoolList);
  v.ints_.assign(values.begin(), values.end());
  return v;
}

DefaultValue DefaultValue::enum_value(std::string name, int64_t code) {
  DefaultValue v(Kind::Enum);
  v.text_ = std::move(name);
  v.int_ = code;
  return v;
}

std::optional<DefaultValue> DefaultValue::from_enum_name(std::string_view name) {
  for (const auto& c : kEnumConstants) {
    if (c.name == name) return enum_value(std::string(name), c.code);
  }
  return std::nullopt;
}

bool DefaultValue::toBool() const {
  TESSERA_EXPECT_KIND(Bool);
  return int_ != 0;
}

int64_t DefaultValue::toInt() const {
  TORCH_CHECK(kind_ == Kind::Int || kind_ == Kind::Enum, "default value is a ", kind_label(kind_), ", not an int");
  return int_;
}

double DefaultValue::toDouble() const {
  TESSERA_EXPECT_KIND(Double);
  return real_;
}

double DefaultValue::complexReal() const {
  TESSERA_EXPECT_KIND(Complex);
  return real_;
}

double DefaultValue::complexImag() const {
  TESSERA_EXPECT_KIND(Complex);
  return imag_;
}

const std::string& DefaultValue::toStringRef() const {
  TESSERA_EXPECT_KIND(String);
  return text_;
}

const std::string& DefaultValue::enumName() const {
  TESSERA_EXPECT_KIND(Enum);
  return text_;
}

const std::vector<int64_t>& DefaultValue::toIntList() const {
  TESSERA_EXPECT_KIND(IntList);
  return ints_;
}

const std::vector<double>& DefaultValue::toDoubleList() const {
  TESSERA_EXPECT_KIND(DoubleList);
  return doubles_;
}

std::vector<bool> DefaultValue::toBoolList() const {
  TESSERA_EXPECT_KIND(BoolList);
  return std::vector<bool>(ints_.begin(), ints_.end());
}

#undef TESSERA_EXPECT_KIND

void DefaultValue::print(std::ostream& out) const {
  switch (kind_) {
    case Kind::None: out << "None"; return;
    case Kind::Bool: out << (int_ ? "True" : "False"); return;
    case Kind::Int:
    case Kind::Enum: out << int_; return;
    case Kind::Double: out << format_schema_double(real_); return;
    case Kind::Complex:
      // torch's complex spelling: real part, the imaginary part's sign, its magnitude, j.
      out << format_schema_double(real_) << (std::signbit(imag_) ? "-" : "+") << format_schema_double(std::fabs(imag_))
          << 'j';
      return;
    case Kind::String: out << quote_schema_string(text_); return;
    case Kind::IntList:
    case Kind::BoolList:
    case Kind::DoubleList: {
      out << '[';
      const size_t n = kind_ == Kind::DoubleList ? doubles_.size() : ints_.size();
      for (size_t i = 0; i < n; ++i) {
        if (i > 0) out << ", ";
        if (kind_ == Kind::IntList) out << ints_[i];
        else if (kind_ == Kind::BoolList) out << (ints_[i] ? "True" : "False");
        else out << format_schema_double(doubles_[i]);
      }
      out << ']';
      return;
    }
  }
}

std::string DefaultValue::str() const {
  std::ostringstream out;
  print(out);
  return out.str();
}

bool operator==(const DefaultValue& a, const DefaultValue& b) {
  // An enum constant is its number (`ScalarType x=float` prints and means `x=6`, as in torch).
  using K = DefaultValue::Kind;
  const auto int_like = [](K k) { return k == K::Int || k == K::Enum; };
  if (int_like(a.kind_) && int_like(b.kind_)) return a.int_ == b.int_;
  // Doubles compare by value; a NaN default equals itself so that parse/print round trips hold.
  auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  if (a.kind_ != b.kind_ || a.int_ != b.int_ || !same(a.real_, b.real_) || !same(a.imag_, b.imag_) ||
      a.text_ != b.text_ || a.ints_ != b.ints_ || a.doubles_.size() != b.doubles_.size()) {
    return false;
  }
  for (size_t i = 0; i < a.doubles_.size(); ++i) {
    if (!same(a.doubles_[i], b.doubles_[i])) return false;
  }
  return true;
}

std::ostream& operator<<(std::ostream& out, const DefaultValue& value) {
  value.print(out);
  return out;
}

std::string format_schema_double(double d) {
  const int cls = std::fpclassify(d);
  if ((cls == FP_NORMAL || cls == FP_ZERO) && std::fabs(d) < 1e10) {
    const auto i = static_cast<int64_t>(d);
    if (static_cast<double>(i) == d) {
      // Keep the sign of -0.0 so that it parses back as itself.
      return (i == 0 && std::signbit(d) ? "-0" : std::to_string(i)) + ".";
    }
  }
  // 17 significant digits in %g style: the shortest fixed precision that round-trips.
  std::array<char, 32> buf{};
  const int n = std::snprintf(buf.data(), buf.size(), "%.17g", d);
  std::string text(buf.data(), static_cast<size_t>(n));
  // %g writes a large whole number without '.' or exponent (6e16 as 60000000000000000),
  // which would parse back as an int (found by fuzz_schema_parser).
  if (text.find_first_of(".eni") == std::string::npos) text += '.';
  return text;
}

std::string quote_schema_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      default: {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
          // Other control bytes as three octal digits, which the parser reads back.
          const char octal[] = {'\\', static_cast<char>('0' + (u >> 6)), static_cast<char>('0' + ((u >> 3) & 7)),
                                static_cast<char>('0' + (u & 7))};
          out.append(octal, sizeof(octal));
        } else {
          out += c;  // printable ASCII and UTF-8 bytes pass through
        }
      }
    }
  }
  out += '"';
  return out;
}

}  // namespace c10::inline tessera
