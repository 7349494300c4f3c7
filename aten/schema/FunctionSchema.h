// c10::FunctionSchema and its parts (OperatorName, AliasInfo, Argument): an operator's
// signature as torch's schema language states it, `aten::add.Tensor(Tensor self, Tensor
// other, *, Scalar alpha=1) -> Tensor`. Printing reproduces torch's str(schema) exactly.
#pragma once

#include <aten/schema/DefaultValue.h>
#include <aten/schema/SchemaType.h>

#include <c10/macros/Macros.h>

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace c10::inline tessera {

// "aten::add" + "Tensor"; an empty overload name is the default overload.
struct TORCH_API OperatorName {
  std::string name;
  std::string overload_name;

  std::string str() const;  // "aten::add.Tensor", or "aten::add" without an overload
  friend bool operator==(const OperatorName&, const OperatorName&) = default;
};
TORCH_API std::ostream& operator<<(std::ostream& out, const OperatorName& name);

// Which alias sets a value belongs to before and after the call, and whether the call
// writes it: `(a)` a view of set a, `(a!)` written in place, `(a -> *)` enters the
// wildcard set, `(*)` may alias anything, `(b|a)` in either set. Annotations on list
// elements (`Tensor(a!)[]`) are contained types of an annotation on the list itself.
class TORCH_API AliasInfo {
 public:
  static constexpr std::string_view kWildcard = "*";

  AliasInfo() = default;
  // `after_sets` empty means "the same as before".
  AliasInfo(std::vector<std::string> before_sets, bool is_write, std::vector<std::string> after_sets = {});

  const std::vector<std::string>& beforeSets() const { return before_; }
  const std::vector<std::string>& afterSets() const { return after_; }
  bool isWrite() const { return is_write_; }
  bool isWildcardBefore() const;
  bool isWildcardAfter() const;
  const std::vector<AliasInfo>& containedTypes() const { return contained_; }
  void addContainedType(AliasInfo info) { contained_.push_back(std::move(info)); }
  void setIsWrite(bool w) { is_write_ = w; }

  // "(a!)", "(a -> *)", "(b|a)"; contained annotations are printed by Argument, on the element.
  std::string str() const;

  friend bool operator==(const AliasInfo&, const AliasInfo&) = default;

 private:
  std::vector<std::string> before_;
  std::vector<std::string> after_;
  bool is_write_ = false;
  std::vector<AliasInfo> contained_;
};
TORCH_API std::ostream& operator<<(std::ostream& out, const AliasInfo& info);

// One argument or return. Returns use the same class; they have no default and may be unnamed.
class TORCH_API Argument {
 public:
  Argument(std::string name, SchemaType type, std::optional<DefaultValue> default_value = std::nullopt,
           bool kwarg_only = false, std::optional<AliasInfo> alias_info = std::nullopt);

  const std::string& name() const { return name_; }
  const SchemaType& type() const { return type_; }
  // N of a fixed-size list `int[N]` (through `?`), as torch's Argument::N().
  std::optional<int64_t> N() const { return type_.unwrapOptional().fixedSize(); }
  const std::optional<DefaultValue>& default_value() const { return default_; }
  // The default as torch prints it (`1`, `[0, 1]`, `1.0000000000000001e-05`); empty if none.
  const std::string& default_text() const { return default_text_; }
  bool kwarg_only() const { return kwarg_only_; }
  // The argument's own annotation: `Tensor(a!)`, `Tensor?(a!)`, `t[](a)`. For `Tensor(a!)[]`
  // it is a container annotation with no sets whose contained type holds `(a!)`.
  const AliasInfo* alias_info() const { return alias_ ? &*alias_ : nullptr; }
  // The call writes this argument (or an element of it).
  bool is_write() const;
  // torch's out= arguments: written and keyword-only.
  bool is_out() const { return kwarg_only_ && is_write(); }

  std::string str() const;
  void print(std::ostream& out) const;

  friend TORCH_API bool operator==(const Argument& a, const Argument& b);

 private:
  std::string name_;
  SchemaType type_;
  std::optional<DefaultValue> default_;
  std::string default_text_;
  bool kwarg_only_;
  std::optional<AliasInfo> alias_;
};
TORCH_API std::ostream& operator<<(std::ostream& out, const Argument& arg);

class TORCH_API FunctionSchema {
 public:
  // `name` is namespace-qualified ("aten::add") or bare; positional arguments must precede
  // keyword-only ones, since the printed form marks the boundary with one `*`.
  FunctionSchema(std::string name, std::string overload_name, std::vector<Argument> arguments,
                 std::vector<Argument> returns, bool is_vararg = false, bool is_varret = false);

  const std::string& name() const { return name_.name; }
  const std::string& overload_name() const { return name_.overload_name; }
  const OperatorName& operator_name() const { return name_; }
  // "aten::add.Tensor".
  std::string full_name() const { return name_.str(); }
  // "aten" of "aten::add" (empty when unqualified), and "add".
  std::string_view ns() const;
  std::string_view base_name() const;

  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<Argument>& returns() const { return returns_; }
  bool is_vararg() const { return is_vararg_; }
  bool is_varret() const { return is_varret_; }

  // Some argument is written by the call (in-place and out= overloads).
  bool is_mutable() const;
  std::optional<size_t> argumentIndexWithName(std::string_view name) const;

  // Exactly torch's str(schema).
  std::string toString() const;
  void print(std::ostream& out) const;

  friend TORCH_API bool operator==(const FunctionSchema& a, const FunctionSchema& b);

 private:
  OperatorName name_;
  std::vector<Argument> arguments_;
  std::vector<Argument> returns_;
  bool is_vararg_;
  bool is_varret_;
};
TORCH_API std::ostream& operator<<(std::ostream& out, const FunctionSchema& schema);

}  // namespace c10::inline tessera
