#include <c10/core/NamedTensor.h>

#include <c10/util/Exception.h>

#include <mutex>
#include <ostream>
#include <unordered_set>

namespace c10::inline tessera {

namespace {

bool isValidIdentifier(std::string_view name) {
  if (name.empty()) return false;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto is_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (is_digit(name[0])) return false;
  for (char c : name) {
    if (!is_digit(c) && !is_alpha(c) && c != '_') return false;
  }
  return true;
}

// Names live for the process: node-based, so the interned strings never move.
const std::string* intern(std::string_view name) {
  static std::mutex mutex;
  static auto* table = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  return &*table->emplace(name).first;
}

}  // namespace

Dimname Dimname::fromString(std::string_view name) {
  TORCH_CHECK(isValidIdentifier(name),
              "Invalid name: a valid identifier contains only digits, alphabetical characters, and/or underscore and "
              "starts with a non-digit. got: '",
              std::string(name), "'.");
  return Dimname(intern(name));
}

std::string_view Dimname::str() const { return name_ == nullptr ? std::string_view("None") : *name_; }

std::ostream& operator<<(std::ostream& os, Dimname name) {
  if (name.isWildcard()) return os << "None";
  return os << '\'' << name.str() << '\'';
}

std::string namesToString(const DimnameList& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    if (names[i].isWildcard()) {
      out += "None";
    } else {
      out += '\'';
      out.append(names[i].str());
      out += '\'';
    }
  }
  return out + "]";
}

std::string tensorNamesToString(const DimnameList& names) { return "Tensor" + namesToString(names); }

}  // namespace c10::inline tessera
