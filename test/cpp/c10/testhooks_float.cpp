// extern "C" array conversions between float and c10's narrow float types, for the
// Python tests that compare them with numpy and torch over every bit pattern (ctypes).
// Bits travel as unsigned integers so no Python-side float can quietly alter a NaN.
#include <c10/util/BFloat16.h>
#include <c10/util/Float8_e4m3fn.h>
#include <c10/util/Float8_e5m2.h>
#include <c10/util/Half.h>

#include <cstddef>
#include <cstdint>

#define TESSERA_TESTHOOK extern "C" __attribute__((visibility("default")))

namespace {

template <typename T, typename Bits>
void narrow(const float* in, Bits* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = T(in[i]).x;
}

template <typename T, typename Bits>
void widen(const Bits* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(T(in[i], T::from_bits()));
}

}  // namespace

TESSERA_TESTHOOK void tessera_float_to_half(const float* in, uint16_t* out, size_t n) {
  narrow<c10::Half>(in, out, n);
}
TESSERA_TESTHOOK void tessera_half_to_float(const uint16_t* in, float* out, size_t n) {
  widen<c10::Half>(in, out, n);
}
TESSERA_TESTHOOK void tessera_float_to_bfloat16(const float* in, uint16_t* out, size_t n) {
  narrow<c10::BFloat16>(in, out, n);
}
TESSERA_TESTHOOK void tessera_bfloat16_to_float(const uint16_t* in, float* out, size_t n) {
  widen<c10::BFloat16>(in, out, n);
}
TESSERA_TESTHOOK void tessera_float_to_float8_e4m3fn(const float* in, uint8_t* out, size_t n) {
  narrow<c10::Float8_e4m3fn>(in, out, n);
}
TESSERA_TESTHOOK void tessera_float8_e4m3fn_to_float(const uint8_t* in, float* out, size_t n) {
  widen<c10::Float8_e4m3fn>(in, out, n);
}
TESSERA_TESTHOOK void tessera_float_to_float8_e5m2(const float* in, uint8_t* out, size_t n) {
  narrow<c10::Float8_e5m2>(in, out, n);
}
TESSERA_TESTHOOK void tessera_float8_e5m2_to_float(const uint8_t* in, float* out, size_t n) {
  widen<c10::Float8_e5m2>(in, out, n);
}
