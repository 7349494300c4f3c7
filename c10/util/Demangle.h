// The readable C++ name of a mangled type name (typeid(T).name()), for messages and for
// the names of C++ autograd Functions; the mangled name itself when it cannot be decoded.
#pragma once

#include <c10/macros/Macros.h>

#include <string>

namespace c10::inline tessera {

C10_API std::string demangle(const char* mangled);

}  // namespace c10::inline tessera
