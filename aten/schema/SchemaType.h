// c10::SchemaType: the type of an operator argument or return as the schema language
// spells it (Tensor, int[2], Tensor?[], Dict(str, t), ...). A small value tree, independent
// of any run-time type system, that the dispatcher and the Python argument parser query.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace c10::inline tessera {

class TORCH_API SchemaType {
 public:
  enum class Kind : uint8_t {
    // Leaves, spelled by a fixed name.
    Tensor,
    Int,
    SymInt,  // an int at run time, kept apart so that the schema prints back as written
    Float,
    Complex,
    Bool,
    Str,
    Scalar,  // also spelled `number`
    ScalarType,
    Layout,
    MemoryFormat,
    QScheme,
    Device,
    Generator,
    Storage,
    Stream,
    Dimname,
    ConstQuantizerPtr,
    Capsule,
    Any,
    AnyEnum,
    AnyClass,
    AnyList,
    AnyTuple,
    None,  // NoneType
    // Leaves that carry a name.
    Var,    // a type variable: t, t1, tVal
    Class,  // a custom class: __torch__.torch.classes.quantized.Conv2dPackedParamsBase
    // Containers.
    List,      // T[] or T[N]
    Optional,  // T?
    Dict,      // Dict(K, V)
    Tuple,     // (T1, T2, ...)
    Future,    // Future(T)
    RRef,      // RRef(T)
    Union,     // Union(T1, T2, ...)
  };

  // A leaf of fixed spelling; containers and named leaves have factories below.
  explicit SchemaType(Kind kind);

  static SchemaType list(SchemaType element, std::optional<int64_t> fixed_size = std::nullopt);
  static SchemaType optional(SchemaType element);
  static SchemaType dict(SchemaType key, SchemaType value);
  static SchemaType tuple(std::vector<SchemaType> elements);
  static SchemaType future(SchemaType element);
  static SchemaType rref(SchemaType element);
  static SchemaType union_of(std::vector<SchemaType> alternatives);
  static SchemaType var(std::string name);
  static SchemaType custom_class(std::string qualified_name);
  // The leaf that a schema spells `name` (int, Tensor, number, NoneType, ...), if any.
  static std::optional<SchemaType> from_name(std::string_view name);

  Kind kind() const { return kind_; }
  // Element types, in order: one for List/Optional/Future/RRef, key then value for Dict.
  const std::vector<SchemaType>& contained() const { return contained_; }
  // The single element of a List, Optional, Future or RRef.
  const SchemaType& elementType() const;
  // The N of `int[N]`; nullopt for `int[]` and for non-lists.
  std::optional<int64_t> fixedSize() const {
    return fixed_size_ < 0 ? std::nullopt : std::optional<int64_t>(fixed_size_);
  }
  // The type variable's or custom class's name; empty otherwise.
  const std::string& name() const { return name_; }

  bool is(Kind k) const { return kind_ == k; }
  bool isTensor() const { return kind_ == Kind::Tensor; }
  bool isOptional() const { return kind_ == Kind::Optional; }
  bool isList() const { return kind_ == Kind::List; }
  // int or SymInt: the same C++ value at run time.
  bool isIntLike() const { return kind_ == Kind::Int || kind_ == Kind::SymInt; }
  bool isSymInt() const { return kind_ == Kind::SymInt; }
  // Tensor[] (any fixed size).
  bool isTensorList() const { return isList() && contained_[0].isTensor(); }
  // Tensor?[]: a list whose elements may be None (index, for example).
  bool isOptionalTensorList() const {
    return isList() && contained_[0].isOptional() && contained_[0].contained_[0].isTensor();
  }
  // int[] or SymInt[] (any fixed size).
  bool isIntList() const { return isList() && contained_[0].isIntLike(); }
  // Tensor or Tensor? : what the dispatcher reads dispatch keys from, with lists above.
  bool isTensorOrOptionalTensor() const {
    return isTensor() || (isOptional() && contained_[0].isTensor());
  }
  // The type with one level of `?` removed (itself when not optional).
  const SchemaType& unwrapOptional() const { return isOptional() ? contained_[0] : *this; }

  // The schema spelling, which parses back to an equal type.
  std::string str() const;
  void print(std::ostream& out) const;

  // Structural equality, fixed list sizes and names included.
  friend TORCH_API bool operator==(const SchemaType& a, const SchemaType& b);

 private:
  SchemaType(Kind kind, std::vector<SchemaType> contained);

  Kind kind_;
  int64_t fixed_size_ = -1;
  std::vector<SchemaType> contained_;
  std::string name_;
};

TORCH_API std::ostream& operator<<(std::ostream& out, const SchemaType& type);
// The enum's own name ("Tensor", "List", "Var"), for diagnostics.
TORCH_API const char* kind_name(SchemaType::Kind kind);

}  // namespace c10::inline tessera
