// The Vectorized operations the tests run through each capability's kernel
// (cpu/VecTestKernel.cpp, compiled per ISA) and compare with a scalar reference
// (test_vectorized.cpp). Each entry: name, the vector expression over x, y, z
// (Vectorized<T>, V its type), the scalar reference over a, b, c (T).
#pragma once

#include <aten/native/DispatchStub.h>
#include <c10/core/ScalarType.h>

#include <cstdint>

// Every type: arithmetic, masks (through blendv), 1/0 comparisons, max/min/clamp.
#define TESSERA_VEC_COMMON_OPS(_)                                        \
  _(add, x + y, ref_add(a, b))                                           \
  _(sub, x - y, ref_sub(a, b))                                           \
  _(mul, x * y, ref_mul(a, b))                                           \
  _(div, x / y, ref_div(a, b))                                           \
  _(neg, x.neg(), ref_neg(a))                                            \
  _(neg_op, -x, ref_neg(a))                                              \
  _(abs, x.abs(), ref_abs(a))                                            \
  _(fmadd, fmadd(x, y, z), ref_fmadd(a, b, c))                           \
  _(maximum, maximum(x, y), ref_max(a, b))                               \
  _(minimum, minimum(x, y), ref_min(a, b))                               \
  _(clamp, clamp(x, y, z), ref_clamp_max(ref_clamp_min(a, b), c))        \
  _(clamp_min, clamp_min(x, y), ref_clamp_min(a, b))                     \
  _(clamp_max, clamp_max(x, y), ref_clamp_max(a, b))                     \
  _(eq, x.eq(y), T(a == b))                                              \
  _(ne, x.ne(y), T(a != b))                                              \
  _(lt, x.lt(y), T(a < b))                                               \
  _(le, x.le(y), T(a <= b))                                              \
  _(gt, x.gt(y), T(a > b))                                               \
  _(ge, x.ge(y), T(a >= b))                                              \
  _(mask_eq, V::blendv(x, z, x == y), a == b ? c : a)                    \
  _(mask_ne, V::blendv(x, z, x != y), a != b ? c : a)                    \
  _(mask_lt, V::blendv(x, z, x < y), a < b ? c : a)                      \
  _(mask_le, V::blendv(x, z, x <= y), a <= b ? c : a)                    \
  _(mask_gt, V::blendv(x, z, x > y), a > b ? c : a)                      \
  _(mask_ge, V::blendv(x, z, x >= y), a >= b ? c : a)                    \
  _(mask_and, V::blendv(x, z, (x < y) & (y < z)), (a < b && b < c) ? c : a) \
  _(mask_or, V::blendv(x, z, (x < y) | (y < z)), (a < b || b < c) ? c : a)  \
  _(mask_xor, V::blendv(x, z, (x < y) ^ (y < z)), ((a < b) != (b < c)) ? c : a) \
  _(blend_5, V::template blend<5>(x, y), ref_blend(5, a, b, i))         \
  _(set_3, V::set(x, y, 3), (i % V::size()) < 3 ? b : a)

// float and double.
#define TESSERA_VEC_FLOAT_OPS(_)                                            \
  _(sqrt, x.sqrt(), std::sqrt(a))                                           \
  _(rsqrt, x.rsqrt(), T(1) / std::sqrt(a))                                  \
  _(reciprocal, x.reciprocal(), T(1) / a)                                   \
  _(exp, x.exp(), std::exp(a))                                              \
  _(exp2, x.exp2(), std::exp2(a))                                           \
  _(expm1, x.expm1(), std::expm1(a))                                        \
  _(log, x.log(), std::log(a))                                              \
  _(log2, x.log2(), std::log2(a))                                           \
  _(log10, x.log10(), std::log10(a))                                        \
  _(log1p, x.log1p(), std::log1p(a))                                        \
  _(sin, x.sin(), std::sin(a))                                              \
  _(cos, x.cos(), std::cos(a))                                              \
  _(tan, x.tan(), std::tan(a))                                              \
  _(asin, x.asin(), std::asin(a))                                           \
  _(acos, x.acos(), std::acos(a))                                           \
  _(atan, x.atan(), std::atan(a))                                           \
  _(sinh, x.sinh(), std::sinh(a))                                           \
  _(cosh, x.cosh(), std::cosh(a))                                           \
  _(tanh, x.tanh(), std::tanh(a))                                           \
  _(asinh, x.asinh(), std::asinh(a))                                        \
  _(acosh, x.acosh(), std::acosh(a))                                        \
  _(atanh, x.atanh(), std::atanh(a))                                        \
  _(erf, x.erf(), std::erf(a))                                              \
  _(erfc, x.erfc(), std::erfc(a))                                           \
  _(erfinv, x.erfinv(), ref_erfinv(a))                                      \
  _(lgamma, x.lgamma(), std::lgamma(a))                                     \
  _(floor, x.floor(), std::floor(a))                                        \
  _(ceil, x.ceil(), std::ceil(a))                                           \
  _(round, x.round(), std::nearbyint(a))                                    \
  _(trunc, x.trunc(), std::trunc(a))                                        \
  _(frac, x.frac(), a - std::trunc(a))                                      \
  _(sigmoid, x.sigmoid(), ref_sigmoid(a))                                   \
  _(isnan, V::blendv(y, z, x.isnan()), std::isnan(a) ? c : b)               \
  _(atan2, x.atan2(y), std::atan2(a, b))                                    \
  _(pow, x.pow(y), std::pow(a, b))                                          \
  _(fmod, x.fmod(y), std::fmod(a, b))                                       \
  _(hypot, x.hypot(y), std::hypot(a, b))                                    \
  _(copysign, x.copysign(y), std::copysign(a, b))

// int8, uint8, int16, int32, int64.
#define TESSERA_VEC_INT_OPS(_)                  \
  _(bit_and, x & y, T(a & b))                   \
  _(bit_or, x | y, T(a | b))                    \
  _(bit_xor, x ^ y, T(a ^ b))                   \
  _(bit_not, ~x, T(~a))                         \
  _(shl, x << y, ref_shl(a, b))                 \
  _(shr, x >> y, ref_shr(a, b))

namespace at::inline tessera::native {

enum class VecTestOp : int {
#define TESSERA_VEC_ENUM(name, v, s) name,
  TESSERA_VEC_COMMON_OPS(TESSERA_VEC_ENUM) TESSERA_VEC_FLOAT_OPS(TESSERA_VEC_ENUM) TESSERA_VEC_INT_OPS(TESSERA_VEC_ENUM)
#undef TESSERA_VEC_ENUM
};

// out[i] = op(a[i], b[i], c[i]) for i < n, a vector at a time with a partial last one;
// returns false if the op does not apply to the dtype. Also:
// Half/BFloat16 round trips: src (uint16 bits) -> float -> dst (bits), and float -> bits.
using vec_test_fn = bool (*)(VecTestOp op, c10::ScalarType dtype, const void* a, const void* b, const void* c,
                             void* out, int64_t n);
using vec_convert_test_fn = void (*)(c10::ScalarType reduced, const uint16_t* bits, float* widened,
                                     const float* values, uint16_t* narrowed, int64_t n);
// Loops.h's 2-D loop (no iterator): `which` picks an op pair whose vector and scalar forms
// give different results, so the test sees which elements took which path:
// 0: float out = a + b (vector) / a - b (scalar); 1: float fmadd(a, b, c) / a * b - c;
// 2: int64 2x / 3x; 3: bool out = a < b over floats (scalar only); 4: int32 5 / 7 (no inputs).
using loops_test_fn = void (*)(int which, char** data, const int64_t* strides, int64_t size0, int64_t size1);
DECLARE_DISPATCH(vec_test_fn, vec_test_stub);
DECLARE_DISPATCH(loops_test_fn, loops_test_stub);
DECLARE_DISPATCH(vec_convert_test_fn, vec_convert_test_stub);

}  // namespace at::inline tessera::native
