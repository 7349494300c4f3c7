#include <c10/util/Demangle.h>

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace c10::inline tessera {

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(mangled);
}

}  // namespace c10::inline tessera
