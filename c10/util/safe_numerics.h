// Checked integer arithmetic for tensor geometry (sizes, strides, storage offsets, byte
// counts): code that multiplies or adds them uses these, so an overflow is a clear error
// rather than a wrapped value that slips past a bounds check.
#pragma once

#include <cstdint>

namespace c10::inline tessera {

// *out = a + b; true when the exact result does not fit in int64.
inline bool add_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }
// *out = a - b; true when the exact result does not fit in int64.
inline bool sub_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_sub_overflow(a, b, out); }
// *out = a * b; true when the exact result does not fit in int64.
inline bool mul_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

}  // namespace c10::inline tessera
