// c10::DefaultValue: the parsed default of a schema argument (`=None`, `=1e-05`, `=[1]`,
// `="mean"`, `=contiguous_format`). Self-contained so that schemas need no IValue; whoever
// calls an operator converts it to a run-time value once, at registration.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace c10::inline tessera {

class TORCH_API DefaultValue {
 public:
  enum class Kind : uint8_t { None, Bool, Int, Double, Complex, String, IntList, DoubleList, BoolList, Enum };

  DefaultValue() = default;  // None

  // Named factories rather than overloaded constructors: `1` must not silently pick bool.
  static DefaultValue none() { return {}; }
  static DefaultValue boolean(bool b);
  static DefaultValue integer(int64_t i);
  static DefaultValue floating(double d);
  static DefaultValue complex(double real, double imag);
  static DefaultValue string(std::string s);
  static DefaultValue int_list(std::vector<int64_t> values);
  static DefaultValue double_list(std::vector<double> values);
  static DefaultValue bool_list(const std::vector<bool>& values);
  // A named enum constant of torch's (long, contiguous_format, Mean, ...) and the integer
  // torch stores for it; toInt() gives the integer, as it does for an int default.
  static DefaultValue enum_value(std::string name, int64_t code);
  // The enum constants the schema language accepts as defaults, by name.
  static std::optional<DefaultValue> from_enum_name(std::string_view name);

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isDouble() const { return kind_ == Kind::Double; }
  bool isComplex() const { return kind_ == Kind::Complex; }
  bool isString() const { return kind_ == Kind::String; }
  bool isIntList() const { return kind_ == Kind::IntList; }
  bool isDoubleList() const { return kind_ == Kind::DoubleList; }
  bool isBoolList() const { return kind_ == Kind::BoolList; }
  bool isEnum() const { return kind_ == Kind::Enum; }

  bool toBool() const;
  int64_t toInt() const;  // Int or Enum
  double toDouble() const;
  double complexReal() const;
  double complexImag() const;
  const std::string& toStringRef() const;  // String
  const std::string& enumName() const;     // Enum
  const std::vector<int64_t>& toIntList() const;
  const std::vector<double>& toDoubleList() const;
  std::vector<bool> toBoolList() const;

  // torch's spelling of the value in a printed schema: None, True, 1., 1.0000000000000001e-05,
  // "mean" (quoted and escaped), [0, 1]; enum constants print as their integer, as torch's do.
  std::string str() const;
  void print(std::ostream& out) const;

  friend TORCH_API bool operator==(const DefaultValue& a, const DefaultValue& b);

 private:
  explicit DefaultValue(Kind kind) : kind_(kind) {}

  Kind kind_ = Kind::None;
  int64_t int_ = 0;      // Bool (0/1), Int, Enum code
  double real_ = 0.0;    // Double, Complex
  double imag_ = 0.0;    // Complex
  std::string text_;     // String, Enum name
  std::vector<int64_t> ints_;  // IntList, BoolList (0/1)
  std::vector<double> doubles_;
};

TORCH_API std::ostream& operator<<(std::ostream& out, const DefaultValue& value);

// A double as torch prints it in schemas: integral values below 1e10 as "2." or "-0.",
// everything else with 17 significant digits ("1.0000000000000001e-05", "0.5", "inf").
TORCH_API std::string format_schema_double(double d);
// A string literal in double quotes with C escapes, as torch prints string defaults.
TORCH_API std::string quote_schema_string(std::string_view s);

}  // namespace c10::inline tessera
