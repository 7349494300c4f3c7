// The spelling table and printing of SchemaType.
#include <aten/schema/SchemaType.h>

#include <c10/util/Exception.h>

#include <array>
#include <ostream>
#include <sstream>
#include <utility>

namespace c10::inline tessera {

namespace {

using Kind = SchemaType::Kind;

struct Spelling {
  std::string_view name;
  Kind kind;
};

// The first spelling of each kind is the one torch prints; later ones are accepted aliases.
constexpr std::array<Spelling, 27> kLeafSpellings{{
    {"Tensor", Kind::Tensor},
    {"int", Kind::Int},
    {"SymInt", Kind::SymInt},
    {"float", Kind::Float},
    {"complex", Kind::Complex},
    {"bool", Kind::Bool},
    {"str", Kind::Str},
    {"Scalar", Kind::Scalar},
    {"ScalarType", Kind::ScalarType},
    {"Layout", Kind::Layout},
    {"MemoryFormat", Kind::MemoryFormat},
    {"QScheme", Kind::QScheme},
    {"Device", Kind::Device},
    {"Generator", Kind::Generator},
    {"Storage", Kind::Storage},
    {"Stream", Kind::Stream},
    {"Dimname", Kind::Dimname},
    {"ConstQuantizerPtr", Kind::ConstQuantizerPtr},
    {"Capsule", Kind::Capsule},
    {"Any", Kind::Any},
    {"AnyEnumType", Kind::AnyEnum},
    {"AnyClassType", Kind::AnyClass},
    {"AnyListType", Kind::AnyList},
    {"AnyTupleType", Kind::AnyTuple},
    {"NoneType", Kind::None},
    {"number", Kind::Scalar},
    {"None", Kind::None},
}};

bool is_leaf(Kind kind) { return kind < Kind::Var; }

std::string_view leaf_spelling(Kind kind) {
  for (const auto& s : kLeafSpellings) {
    if (s.kind == kind) return s.name;
  }
  TORCH_INTERNAL_ASSERT(false, "no spelling for ", kind_name(kind));
  return {};
}

void print_joined(std::ostream& out, const std::vector<SchemaType>& types) {
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0) out << ", ";
    types[i].print(out);
  }
}

}  // namespace

SchemaType::SchemaType(Kind kind) : kind_(kind) {
  TORCH_CHECK(is_leaf(kind), "SchemaType(", kind_name(kind), ") needs its factory function: it is not a plain leaf");
}

SchemaType::SchemaType(Kind kind, std::vector<SchemaType> contained) : kind_(kind), contained_(std::move(contained)) {}

SchemaType SchemaType::list(SchemaType element, std::optional<int64_t> fixed_size) {
  TORCH_CHECK(!fixed_size || *fixed_size >= 0, "a fixed list size must be non-negative, got ", *fixed_size);
  SchemaType t(Kind::List, {std::move(element)});
  t.fixed_size_ = fixed_size.value_or(-1);
  return t;
}

SchemaType SchemaType::optional(SchemaType element) { return SchemaType(Kind::Optional, {std::move(element)}); }

SchemaType SchemaType::dict(SchemaType key, SchemaType value) {
  std::vector<SchemaType> kv;
  kv.reserve(2);
  kv.push_back(std::move(key));
  kv.push_back(std::move(value));
  return SchemaType(Kind::Dict, std::move(kv));
}

SchemaType SchemaType::tuple(std::vector<SchemaType> elements) { return SchemaType(Kind::Tuple, std::move(elements)); }

SchemaType SchemaType::future(SchemaType element) { return SchemaType(Kind::Future, {std::move(element)}); }

SchemaType SchemaType::rref(SchemaType element) { return SchemaType(Kind::RRef, {std::move(element)}); }

SchemaType SchemaType::union_of(std::vector<SchemaType> alternatives) {
  TORCH_CHECK(!alternatives.empty(), "Union needs at least one alternative");
  return SchemaType(Kind::Union, std::move(alternatives));
}

SchemaType SchemaType::var(std::string name) {
  TORCH_CHECK(!name.empty(), "a type variable needs a name");
  SchemaType t(Kind::Var, {});
  t.name_ = std::move(name);
  return t;
}

SchemaType SchemaType::custom_class(std::string qualified_name) {
  TORCH_CHECK(!qualified_name.empty(), "a custom class type needs a name");
  SchemaType t(Kind::Class, {});
  t.name_ = std::move(qualified_name);
  return t;
}

std::optional<SchemaType> SchemaType::from_name(std::string_view name) {
  for (const auto& s : kLeafSpellings) {
    if (s.name == name) return SchemaType(s.kind);
  }
  return std::nullopt;
}

const SchemaType& SchemaType::elementType() const {
  TORCH_CHECK(kind_ == Kind::List || kind_ == Kind::Optional || kind_ == Kind::Future || kind_ == Kind::RRef,
              "elementType() of ", str(), ": only List, Optional, Future and RRef have one element type");
  return contained_[0];
}

void SchemaType::print(std::ostream& out) const {
  switch (kind_) {
    case Kind::Var:
    case Kind::Class:
      out << name_;
      return;
    case Kind::List:
      contained_[0].print(out);
      out << '[';
      if (fixed_size_ >= 0) out << fixed_size_;
      out << ']';
      return;
    case Kind::Optional:
      contained_[0].print(out);
      out << '?';
      return;
    case Kind::Dict:
      out << "Dict(";
      print_joined(out, contained_);
      out << ')';
      return;
    case Kind::Tuple:
      out << '(';
      print_joined(out, contained_);
      out << ')';
      return;
    case Kind::Future:
    case Kind::RRef:
    case Kind::Union:
      out << (kind_ == Kind::Future ? "Future(" : kind_ == Kind::RRef ? "RRef(" : "Union(");
      print_joined(out, contained_);
      out << ')';
      return;
    default:
      out << leaf_spelling(kind_);
      return;
  }
}

std::string SchemaType::str() const {
  std::ostringstream out;
  print(out);
  return out.str();
}

bool operator==(const SchemaType& a, const SchemaType& b) {
  return a.kind_ == b.kind_ && a.fixed_size_ == b.fixed_size_ && a.name_ == b.name_ && a.contained_ == b.contained_;
}

std::ostream& operator<<(std::ostream& out, const SchemaType& type) {
  type.print(out);
  return out;
}

const char* kind_name(SchemaType::Kind kind) {
  switch (kind) {
    case Kind::Tensor: return "Tensor";
    case Kind::Int: return "Int";
    case Kind::SymInt: return "SymInt";
    case Kind::Float: return "Float";
    case Kind::Complex: return "Complex";
    case Kind::Bool: return "Bool";
    case Kind::Str: return "Str";
    case Kind::Scalar: return "Scalar";
    case Kind::ScalarType: return "ScalarType";
    case Kind::Layout: return "Layout";
    case Kind::MemoryFormat: return "MemoryFormat";
    case Kind::QScheme: return "QScheme";
    case Kind::Device: return "Device";
    case Kind::Generator: return "Generator";
    case Kind::Storage: return "Storage";
    case Kind::Stream: return "Stream";
    case Kind::Dimname: return "Dimname";
    case Kind::ConstQuantizerPtr: return "ConstQuantizerPtr";
    case Kind::Capsule: return "Capsule";
    case Kind::Any: return "Any";
    case Kind::AnyEnum: return "AnyEnum";
    case Kind::AnyClass: return "AnyClass";
    case Kind::AnyList: return "AnyList";
    case Kind::AnyTuple: return "AnyTuple";
    case Kind::None: return "None";
    case Kind::Var: return "Var";
    case Kind::Class: return "Class";
    case Kind::List: return "List";
    case Kind::Optional: return "Optional";
    case Kind::Dict: return "Dict";
    case Kind::Tuple: return "Tuple";
    case Kind::Future: return "Future";
    case Kind::RRef: return "RRef";
    case Kind::Union: return "Union";
  }
  return "?";
}

}  // namespace c10::inline tessera
