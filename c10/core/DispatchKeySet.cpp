#include <c10/core/DispatchKeySet.h>

#include <c10/util/Exception.h>

#include <ostream>

namespace c10::inline tessera {

std::string toString(DispatchKeySet ks) {
  std::string out = "DispatchKeySet(";
  bool first = true;
  for (DispatchKey k : ks) {
    if (!first) out += ", ";
    out += toString(k);
    first = false;
  }
  out += ')';
  return out;
}

std::ostream& operator<<(std::ostream& os, DispatchKeySet ks) { return os << toString(ks); }

namespace detail {
void throwNotARuntimeKey(DispatchKey k) {
  TORCH_CHECK_VALUE(!isAliasDispatchKey(k), "DispatchKeySet cannot hold the alias key ", toString(k),
                    "; expand it with getRuntimeDispatchKeySet()");
  TORCH_ERROR_WITH(ValueError, "DispatchKeySet cannot hold ", toString(k), " (value ", static_cast<int>(k),
                   "): it is not a runtime dispatch key");
}
}  // namespace detail

}  // namespace c10::inline tessera
