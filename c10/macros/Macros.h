// Small compiler helpers shared by all of Tessera: branch hints, inlining, stringify.
#pragma once

#include <c10/macros/Export.h>

#define C10_LIKELY(x) __builtin_expect(static_cast<bool>(x), 1)
#define C10_UNLIKELY(x) __builtin_expect(static_cast<bool>(x), 0)
#define C10_ALWAYS_INLINE inline __attribute__((always_inline))
#define C10_NOINLINE __attribute__((noinline))
#define C10_STRINGIZE_IMPL(x) #x
#define C10_STRINGIZE(x) C10_STRINGIZE_IMPL(x)
#define C10_CONCATENATE_IMPL(a, b) a##b
#define C10_CONCATENATE(a, b) C10_CONCATENATE_IMPL(a, b)
#define C10_UID __COUNTER__
#define C10_ANONYMOUS_VARIABLE(name) C10_CONCATENATE(name, __COUNTER__)

#define C10_DISABLE_COPY_AND_ASSIGN(classname) \
  classname(const classname&) = delete;        \
  classname& operator=(const classname&) = delete
