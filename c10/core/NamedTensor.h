// Dimension names of named tensors (torch's experimental named-tensor API): a Dimname is
// an interned identifier or the wildcard (an unnamed dim), and NamedTensorMeta is what a
// TensorImpl holds once any of its dims is named. Name propagation lives in aten/native/named.
#pragma once

#include <c10/macros/Macros.h>

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace c10::inline tessera {

class C10_API Dimname {
 public:
  // The wildcard: a dim without a name (Python's None).
  constexpr Dimname() = default;
  // An identifier (letters, digits, underscore; not starting with a digit), interned so
  // that comparing two names compares pointers. Raises torch's "Invalid name" otherwise.
  static Dimname fromString(std::string_view name);
  static constexpr Dimname wildcard() { return Dimname(); }

  bool isWildcard() const { return name_ == nullptr; }
  bool isBasic() const { return name_ != nullptr; }
  // The name; "None" for the wildcard (how torch's messages print it).
  std::string_view str() const;
  // Whether the two may stand for the same dim: equal, or either is a wildcard.
  bool matches(Dimname other) const { return isWildcard() || other.isWildcard() || name_ == other.name_; }
  // The more specific of two matching names (the non-wildcard one); unify() callers check matches() first.
  Dimname unify(Dimname other) const { return isWildcard() ? other : *this; }

  bool operator==(const Dimname& o) const { return name_ == o.name_; }
  bool operator!=(const Dimname& o) const { return name_ != o.name_; }

 private:
  explicit Dimname(const std::string* name) : name_(name) {}
  const std::string* name_ = nullptr;
};

using DimnameList = std::vector<Dimname>;

// What a TensorImpl holds for a named tensor: one name per dim, at least one of them basic
// (an all-wildcard list is stored as no meta at all).
struct C10_API NamedTensorMeta {
  DimnameList names;
};

// ['N', None] (torch's list format in messages) and Tensor['N', None].
C10_API std::string namesToString(const DimnameList& names);
C10_API std::string tensorNamesToString(const DimnameList& names);
// 'N' (quoted) or None: how torch's messages print one name.
C10_API std::ostream& operator<<(std::ostream& os, Dimname name);

}  // namespace c10::inline tessera
