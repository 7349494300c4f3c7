// FunctionSchema, Argument and AliasInfo: construction checks and torch's printed form.
#include <aten/schema/FunctionSchema.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <ostream>
#include <sstream>
#include <utility>

namespace c10::inline tessera {

namespace {

void print_sets(std::ostream& out, const std::vector<std::string>& sets) {
  for (size_t i = 0; i < sets.size(); ++i) {
    if (i > 0) out << '|';
    out << sets[i];
  }
}

// Prints `type` with `alias` where the schema language puts it: before any `?`
// (`Tensor(a!)?`, whichever order the source used) and, for a list whose elements are
// annotated, on the element (`Tensor(a!)[]`).
void print_annotated_type(std::ostream& out, const SchemaType& type, const AliasInfo* alias) {
  if (type.isOptional()) {
    print_annotated_type(out, type.elementType(), alias);
    out << '?';
    return;
  }
  if (alias && type.isList() && !alias->containedTypes().empty()) {
    print_annotated_type(out, type.elementType(), &alias->containedTypes()[0]);
    out << '[';
    if (auto n = type.fixedSize()) out << *n;
    out << ']';
    // A container annotation made only to hold the element's prints nothing of its own.
    if (!alias->beforeSets().empty()) out << *alias;
    return;
  }
  type.print(out);
  if (alias) out << *alias;
}

bool writes(const AliasInfo& info) {
  return info.isWrite() ||
         std::any_of(info.containedTypes().begin(), info.containedTypes().end(), [](const AliasInfo& c) { return writes(c); });
}

// torch prints `int[2] stride=[1, 1]` as `stride=1`. Only a list that fills its fixed size
// collapses, so that the printed default always parses back to the same list.
std::string canonical_default(const SchemaType& type, const DefaultValue& value) {
  if (value.isIntList()) {
    const auto& ints = value.toIntList();
    const auto n = type.unwrapOptional().fixedSize();
    if (ints.size() > 1 && n && static_cast<size_t>(*n) == ints.size() &&
        std::all_of(ints.begin(), ints.end(), [&](int64_t v) { return v == ints[0]; })) {
      return std::to_string(ints[0]);
    }
  }
  return value.str();
}

}  // namespace

std::string OperatorName::str() const { return overload_name.empty() ? name : name + "." + overload_name; }

std::ostream& operator<<(std::ostream& out, const OperatorName& name) {
  out << name.name;
  if (!name.overload_name.empty()) out << '.' << name.overload_name;
  return out;
}

AliasInfo::AliasInfo(std::vector<std::string> before_sets, bool is_write, std::vector<std::string> after_sets)
    : before_(std::move(before_sets)), after_(std::move(after_sets)), is_write_(is_write) {
  if (after_.empty()) after_ = before_;
}

bool AliasInfo::isWildcardBefore() const {
  return std::find(before_.begin(), before_.end(), kWildcard) != before_.end();
}

bool AliasInfo::isWildcardAfter() const { return std::find(after_.begin(), after_.end(), kWildcard) != after_.end(); }

std::string AliasInfo::str() const {
  std::ostringstream out;
  out << *this;
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const AliasInfo& info) {
  out << '(';
  print_sets(out, info.beforeSets());
  if (info.isWrite()) out << '!';
  if (info.afterSets() != info.beforeSets()) {
    out << " -> ";
    print_sets(out, info.afterSets());
  }
  return out << ')';
}

Argument::Argument(std::string name, SchemaType type, std::optional<DefaultValue> default_value, bool kwarg_only,
                   std::optional<AliasInfo> alias_info)
    : name_(std::move(name)),
      type_(std::move(type)),
      default_(std::move(default_value)),
      kwarg_only_(kwarg_only),
      alias_(std::move(alias_info)) {
  if (default_) default_text_ = canonical_default(type_, *default_);
  if (alias_ && !alias_->containedTypes().empty()) {
    TORCH_CHECK(type_.unwrapOptional().isList(), "argument '", name_, "' of type ", type_,
                " has an alias annotation on elements, but it is not a list");
  }
}

bool Argument::is_write() const { return alias_ && writes(*alias_); }

void Argument::print(std::ostream& out) const {
  print_annotated_type(out, type_, alias_info());
  if (!name_.empty()) out << ' ' << name_;
  if (default_) out << '=' << default_text_;
}

std::string Argument::str() const {
  std::ostringstream out;
  print(out);
  return out.str();
}

bool operator==(const Argument& a, const Argument& b) {
  return a.name_ == b.name_ && a.type_ == b.type_ && a.default_ == b.default_ && a.kwarg_only_ == b.kwarg_only_ &&
         a.alias_ == b.alias_;
}

std::ostream& operator<<(std::ostream& out, const Argument& arg) {
  arg.print(out);
  return out;
}

FunctionSchema::FunctionSchema(std::string name, std::string overload_name, std::vector<Argument> arguments,
                               std::vector<Argument> returns, bool is_vararg, bool is_varret)
    : name_{std::move(name), std::move(overload_name)},
      arguments_(std::move(arguments)),
      returns_(std::move(returns)),
      is_vararg_(is_vararg),
      is_varret_(is_varret) {
  TORCH_CHECK(!name_.name.empty(), "a schema needs an operator name");
  bool seen_kwarg_only = false;
  for (const auto& arg : arguments_) {
    TORCH_CHECK(!seen_kwarg_only || arg.kwarg_only(), "in schema of ", name_, ": positional argument '", arg.name(),
                "' follows a keyword-only argument");
    seen_kwarg_only = arg.kwarg_only();
  }
  for (const auto& ret : returns_) {
    TORCH_CHECK(!ret.default_value() && !ret.kwarg_only(), "in schema of ", name_, ": return '", ret.name(),
                "' has a default value or is keyword-only");
  }
}

std::string_view FunctionSchema::ns() const {
  const auto pos = name_.name.find("::");
  return pos == std::string::npos ? std::string_view() : std::string_view(name_.name).substr(0, pos);
}

std::string_view FunctionSchema::base_name() const {
  const auto pos = name_.name.find("::");
  return pos == std::string::npos ? std::string_view(name_.name) : std::string_view(name_.name).substr(pos + 2);
}

bool FunctionSchema::is_mutable() const {
  return std::any_of(arguments_.begin(), arguments_.end(), [](const Argument& a) { return a.is_write(); });
}

std::optional<size_t> FunctionSchema::argumentIndexWithName(std::string_view name) const {
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (arguments_[i].name() == name) return i;
  }
  return std::nullopt;
}

void FunctionSchema::print(std::ostream& out) const {
  out << name_ << '(';
  bool seen_kwarg_only = false;
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (i > 0) out << ", ";
    if (arguments_[i].kwarg_only() && !seen_kwarg_only) {
      out << "*, ";
      seen_kwarg_only = true;
    }
    out << arguments_[i];
  }
  if (is_vararg_) out << (arguments_.empty() ? "..." : ", ...");
  out << ") -> ";

  // One return prints bare, unless its text starts with '(' (a tuple, or a list of tuples):
  // the parser reads a '(' after the arrow as the start of the return list.
  if (returns_.size() == 1 && !is_varret_) {
    const std::string ret = returns_[0].str();
    if (ret.front() == '(') out << '(' << ret << ')';
    else out << ret;
    return;
  }
  if (returns_.empty() && is_varret_) {
    out << "...";
    return;
  }
  out << '(';
  for (size_t i = 0; i < returns_.size(); ++i) {
    if (i > 0) out << ", ";
    out << returns_[i];
  }
  if (is_varret_) out << (returns_.empty() ? "..." : ", ...");
  out << ')';
}

std::string FunctionSchema::toString() const {
  std::ostringstream out;
  print(out);
  return out.str();
}

bool operator==(const FunctionSchema& a, const FunctionSchema& b) {
  return a.name_ == b.name_ && a.arguments_ == b.arguments_ && a.returns_ == b.returns_ &&
         a.is_vararg_ == b.is_vararg_ && a.is_varret_ == b.is_varret_;
}

std::ostream& operator<<(std::ostream& out, const FunctionSchema& schema) {
  schema.print(out);
  return out;
}

}  // namespace c10::inline tessera
