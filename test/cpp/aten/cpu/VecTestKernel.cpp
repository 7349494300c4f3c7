// Runs the operations of vec_test_ops.h with Vectorized<T>, compiled once per CPU
// capability like aten/native/cpu/*.cpp, so the tests can compare the capabilities.
#include "../vec_test_ops.h"

#include <aten/cpu/vec/vec.h>
#include <aten/native/DispatchStub.h>
#include <aten/native/cpu/Loops.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

template <typename T>
bool apply(VecTestOp op, const Vectorized<T>& x, const Vectorized<T>& y, const Vectorized<T>& z,
           Vectorized<T>& r) {
  using V = Vectorized<T>;
#define TESSERA_VEC_CASE(name, vexpr, sexpr) \
  case VecTestOp::name:                      \
    r = vexpr;                               \
    return true;
  switch (op) {
    TESSERA_VEC_COMMON_OPS(TESSERA_VEC_CASE)
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      TESSERA_VEC_FLOAT_OPS(TESSERA_VEC_CASE)
      default:
        break;
    }
  } else {
    switch (op) {
      TESSERA_VEC_INT_OPS(TESSERA_VEC_CASE)
      default:
        break;
    }
  }
#undef TESSERA_VEC_CASE
  return false;
}

template <typename T>
bool run(VecTestOp op, const T* a, const T* b, const T* c, T* out, int64_t n) {
  using V = Vectorized<T>;
  for (int64_t i = 0; i < n; i += V::size()) {
    const int64_t count = std::min<int64_t>(V::size(), n - i);
    V r;
    if (!apply(op, V::loadu(a + i, count), V::loadu(b + i, count), V::loadu(c + i, count), r)) return false;
    r.store(out + i, count);
  }
  return true;
}

bool vec_test_kernel(VecTestOp op, c10::ScalarType dtype, const void* a, const void* b, const void* c, void* out,
                     int64_t n) {
  auto go = [&]<typename T>() {
    return run(op, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<const T*>(c), static_cast<T*>(out), n);
  };
  switch (dtype) {
    case c10::ScalarType::Float: return go.operator()<float>();
    case c10::ScalarType::Double: return go.operator()<double>();
    case c10::ScalarType::Char: return go.operator()<int8_t>();
    case c10::ScalarType::Byte: return go.operator()<uint8_t>();
    case c10::ScalarType::Short: return go.operator()<int16_t>();
    case c10::ScalarType::Int: return go.operator()<int32_t>();
    case c10::ScalarType::Long: return go.operator()<int64_t>();
    default: return false;
  }
}

template <typename R>
void convert(const uint16_t* bits, float* widened, const float* values, uint16_t* narrowed, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t count = std::min<int64_t>(16, n - i);
    auto [lo, hi] = vec::load_as_float(reinterpret_cast<const R*>(bits + i), count);
    lo.store(widened + i, std::min<int64_t>(count, 8));
    if (count > 8) hi.store(widened + i + 8, count - 8);
    const auto v0 = Vectorized<float>::loadu(values + i, std::min<int64_t>(count, 8));
    const auto v1 = count > 8 ? Vectorized<float>::loadu(values + i + 8, count - 8) : Vectorized<float>();
    vec::store_from_float(reinterpret_cast<R*>(narrowed + i), v0, v1, count);
  }
}

void vec_convert_test_kernel(c10::ScalarType reduced, const uint16_t* bits, float* widened, const float* values,
                             uint16_t* narrowed, int64_t n) {
  if (reduced == c10::ScalarType::Half) convert<c10::Half>(bits, widened, values, narrowed, n);
  else convert<c10::BFloat16>(bits, widened, values, narrowed, n);
}

template <typename Op, typename VOp>
void run_loop(Op op, VOp vop, char** data, const int64_t* strides, int64_t size0, int64_t size1) {
  loops::vectorized_or_scalar_loop(op, vop)(data, strides, size0, size1);
}

void loops_test_kernel(int which, char** data, const int64_t* strides, int64_t size0, int64_t size1) {
  using VF = Vectorized<float>;
  switch (which) {
    case 0:
      return run_loop([](float a, float b) { return a - b; }, [](VF a, VF b) { return a + b; }, data, strides, size0,
                      size1);
    case 1:
      return run_loop([](float a, float b, float c) { return a * b - c; },
                      [](VF a, VF b, VF c) { return fmadd(a, b, c); }, data, strides, size0, size1);
    case 2:
      return run_loop([](int64_t a) { return a * 3; },
                      [](Vectorized<int64_t> a) { return a * Vectorized<int64_t>(2); }, data, strides, size0, size1);
    case 3:
      return run_loop([](float a, float b) { return a < b; }, [](VF a, VF b) { return a < b; }, data, strides, size0,
                      size1);
    default:
      return run_loop([]() { return int32_t(7); }, []() { return Vectorized<int32_t>(5); }, data, strides, size0,
                      size1);
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(vec_test_stub, &vec_test_kernel);
REGISTER_DISPATCH(vec_convert_test_stub, &vec_convert_test_kernel);
REGISTER_DISPATCH(loops_test_stub, &loops_test_kernel);

}  // namespace at::inline tessera::native
