// c10::str(args...): concatenates anything printable with operator<< into one string.
// Used by TORCH_CHECK and friends to build error messages the way PyTorch's do.
#pragma once

#include <c10/macros/Macros.h>

#include <sstream>
#include <string>
#include <string_view>

namespace c10::inline tessera {

namespace detail {
inline std::ostream& write_all(std::ostream& os) { return os; }
template <typename T, typename... Rest>
std::ostream& write_all(std::ostream& os, const T& first, const Rest&... rest) {
  os << first;
  return write_all(os, rest...);
}
}  // namespace detail

template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  detail::write_all(os, args...);
  return os.str();
}
// The common one-string cases skip the stream entirely.
inline std::string str() { return {}; }
inline std::string str(const std::string& s) { return s; }
inline std::string str(const char* s) { return s; }
inline std::string str(std::string_view s) { return std::string(s); }

// Joins the items of a range with a separator: join(", ", {"a","b"}) == "a, b".
template <typename Range>
std::string join(std::string_view sep, const Range& items) {
  std::ostringstream os;
  bool first = true;
  for (const auto& item : items) {
    if (!first) os << sep;
    os << item;
    first = false;
  }
  return os.str();
}

}  // namespace c10::inline tessera
