// Hashing for c10::OperatorName (defined with FunctionSchema), so the dispatcher can
// index operators by name.
#pragma once

#include <aten/schema/FunctionSchema.h>

#include <functional>

template <>
struct std::hash<c10::OperatorName> {
  size_t operator()(const c10::OperatorName& n) const noexcept {
    return std::hash<std::string>()(n.name) ^ (std::hash<std::string>()(n.overload_name) * 31);
  }
};
