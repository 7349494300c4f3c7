// at::vec::Vectorized and the DispatchStub. The operations run through a kernel compiled
// once per CPU capability (cpu/VecTestKernel.cpp) and are compared with std:: on scalars:
// exactly, except the AVX2 float approximations (Note [AVX2 float approximations]),
// which get an ulp bound against the correctly rounded result. This file itself is
// compiled for the default ISA and also tests the generic Vectorized directly.
#include "vec_test_ops.h"

#include <aten/cpu/vec/vec.h>
#include <aten/native/DispatchStub.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace at::inline tessera::native {
DEFINE_DISPATCH(vec_test_stub);
DEFINE_DISPATCH(vec_convert_test_stub);
DEFINE_DISPATCH(loops_test_stub);
}  // namespace at::inline tessera::native

namespace {

using at::CPUCapability;
using at::native::VecTestOp;
using at::vec::Vectorized;

// The capabilities this build compiled and this CPU runs.
std::vector<CPUCapability> runnable_capabilities() {
  std::vector<CPUCapability> caps;
  for (int i = 0; i <= static_cast<int>(at::native::detail::best_cpu_capability()); ++i) {
    const auto c = static_cast<CPUCapability>(i);
    if (at::native::vec_test_stub.kernel_for(c) != nullptr) caps.push_back(c);
  }
  return caps;
}

// ---- scalar references ---------------------------------------------------------------

template <typename T>
using wide_t = std::conditional_t<std::is_floating_point_v<T>, T, std::conditional_t<(sizeof(T) < 8), int64_t, uint64_t>>;

template <typename T>
T ref_add(T a, T b) {
  return static_cast<T>(static_cast<wide_t<T>>(a) + static_cast<wide_t<T>>(b));
}
template <typename T>
T ref_sub(T a, T b) {
  return static_cast<T>(static_cast<wide_t<T>>(a) - static_cast<wide_t<T>>(b));
}
template <typename T>
T ref_mul(T a, T b) {
  return static_cast<T>(static_cast<wide_t<T>>(a) * static_cast<wide_t<T>>(b));
}
template <typename T>
T ref_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a / b;
  } else {
    if (b == 0) return 0;
    return static_cast<T>(static_cast<int64_t>(a) == std::numeric_limits<int64_t>::min() && b == T(-1)
                              ? a
                              : static_cast<T>(static_cast<int64_t>(a) / static_cast<int64_t>(b)));
  }
}
template <typename T>
T ref_neg(T a) {
  if constexpr (std::is_floating_point_v<T>) return -a;
  else return ref_sub(T(0), a);
}
template <typename T>
T ref_abs(T a) {
  if constexpr (std::is_floating_point_v<T>) return std::fabs(a);
  else if constexpr (std::is_unsigned_v<T>) return a;
  else return a < 0 ? ref_sub(T(0), a) : a;
}
template <typename T>
T ref_fmadd(T a, T b, T c) {
  if constexpr (std::is_floating_point_v<T>) return std::fma(a, b, c);
  else return ref_add(ref_mul(a, b), c);
}
template <typename T>
T ref_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a > b ? a : b;
}
template <typename T>
T ref_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? a : b;
}
template <typename T>
T ref_clamp_min(T a, T lo) {
  return lo > a ? lo : a;
}
template <typename T>
T ref_clamp_max(T a, T hi) {
  return hi < a ? hi : a;
}
template <typename T>
T ref_blend(int mask, T a, T b, int64_t i) {
  return (mask >> (i % Vectorized<T>::size())) & 1 ? b : a;
}
template <typename T>
T ref_shl(T a, T b) {
  if (static_cast<int64_t>(b) < 0 || static_cast<int64_t>(b) >= static_cast<int64_t>(8 * sizeof(T))) return 0;
  return static_cast<T>(static_cast<uint64_t>(a) << static_cast<uint64_t>(b));
}
template <typename T>
T ref_shr(T a, T b) {
  if (static_cast<int64_t>(b) < 0 || static_cast<int64_t>(b) >= static_cast<int64_t>(8 * sizeof(T))) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    else return T(0);
  }
  return static_cast<T>(static_cast<int64_t>(a) >> static_cast<int64_t>(b));
}
template <typename T>
T ref_sigmoid(T a) {
  const T e = std::exp(-std::fabs(a));
  return (a < T(0) ? e : T(1)) / (T(1) + e);
}
template <typename T>
T ref_erfinv(T a) {
  return at::vec::detail::erfinv(a);  // its accuracy is tested on its own below
}

template <typename T>
T reference(VecTestOp op, T a, T b, T c, int64_t i) {
  using V = Vectorized<T>;
  (void)i;
#define TESSERA_VEC_REF(name, vexpr, sexpr) \
  case VecTestOp::name:                     \
    return static_cast<T>(sexpr);
  switch (op) {
    TESSERA_VEC_COMMON_OPS(TESSERA_VEC_REF)
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      TESSERA_VEC_FLOAT_OPS(TESSERA_VEC_REF)
      default:
        break;
    }
  } else {
    switch (op) {
      TESSERA_VEC_INT_OPS(TESSERA_VEC_REF)
      default:
        break;
    }
  }
#undef TESSERA_VEC_REF
  ADD_FAILURE() << "no reference for op " << static_cast<int>(op);
  return T(0);
}

const char* op_name(VecTestOp op) {
  switch (op) {
#define TESSERA_VEC_NAME(name, vexpr, sexpr) \
  case VecTestOp::name:                      \
    return #name;
    TESSERA_VEC_COMMON_OPS(TESSERA_VEC_NAME)
    TESSERA_VEC_FLOAT_OPS(TESSERA_VEC_NAME)
    TESSERA_VEC_INT_OPS(TESSERA_VEC_NAME)
#undef TESSERA_VEC_NAME
  }
  return "?";
}

// ---- inputs ----------------------------------------------------------------------------

template <typename T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_floating_point_v<T>) {
    return {T(0),        -T(0),        T(1),          T(-1),        T(0.5),        T(-0.5),      T(1.5),
            T(2.5),      T(-2.5),      T(3),          T(0.625),     T(-0.625),     T(0.999),     T(-0.999),
            T(1e-5),     T(-3e-4),     T(88.7),       T(-87.5),     T(-103.5),     T(89.5),      T(709),
            T(-745),     T(1e30),      T(-1e30),      L::min(),     -L::min(),     L::denorm_min(), -L::denorm_min(),
            L::min() / 3, L::max(),    L::lowest(),   L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(),
            T(3.14159265358979), T(-7.25), T(100.5), T(0.1), T(12345.678)};
  } else {
    std::vector<T> v = {T(0), T(1), T(2), T(3), T(7), T(8 * sizeof(T) - 1), T(8 * sizeof(T)), T(8 * sizeof(T) + 1),
                        T(100), L::max(), T(L::max() - 1), L::min(), T(L::min() + 1)};
    if constexpr (std::is_signed_v<T>) {
      for (T x : {T(-1), T(-2), T(-7), T(-100), T(-(8 * static_cast<int>(sizeof(T))))}) v.push_back(x);
    }
    return v;
  }
}

template <typename T>
T random_value(std::mt19937_64& rng, int kind) {
  if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    switch (kind % 4) {
      case 0: return std::bit_cast<T>(static_cast<Bits>(rng()));  // any pattern, NaNs included
      case 1: return std::uniform_real_distribution<T>(-10, 10)(rng);
      case 2: return std::uniform_real_distribution<T>(-1.2, 1.2)(rng);
      default: return std::uniform_real_distribution<T>(-100, 100)(rng);
    }
  } else {
    if (kind % 2 == 0) return static_cast<T>(rng());
    return static_cast<T>(static_cast<int64_t>(rng() % 141) - 70);  // shift counts, small products
  }
}

template <typename T>
struct Inputs {
  std::vector<T> a, b, c;
};

// Every pair of special values, then random triples; the count is no multiple of any
// vector size, so every run ends in a partial vector.
template <typename T>
Inputs<T> make_inputs() {
  Inputs<T> in;
  const std::vector<T> s = special_values<T>();
  for (size_t i = 0; i < s.size(); ++i) {
    for (size_t j = 0; j < s.size(); ++j) {
      in.a.push_back(s[i]);
      in.b.push_back(s[j]);
      in.c.push_back(s[(i * 7 + j) % s.size()]);
    }
  }
  std::mt19937_64 rng(42);
  const size_t n = in.a.size() + 4001;
  for (size_t k = in.a.size(); k < n; ++k) {
    in.a.push_back(random_value<T>(rng, static_cast<int>(k)));
    in.b.push_back(random_value<T>(rng, static_cast<int>(k / 4)));
    in.c.push_back(random_value<T>(rng, static_cast<int>(k / 16)));
  }
  return in;
}

// Distance in representable values (0: same bits, or both NaN).
template <typename T>
int64_t ulp_distance(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y) ? 0 : std::numeric_limits<int64_t>::max();
    using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    auto ordered = [](T v) {
      const Bits b = std::bit_cast<Bits>(v);
      return b < 0 ? static_cast<int64_t>(std::numeric_limits<Bits>::min()) - static_cast<int64_t>(b)
                   : static_cast<int64_t>(b);
    };
    if (x == y && std::signbit(x) == std::signbit(y)) return 0;
    const int64_t d = ordered(x) - ordered(y);
    return d < 0 ? -d : (d == 0 ? 1 : d);
  } else {
    return x == y ? 0 : 1;
  }
}

// Ulp bounds of the approximations (0 everywhere else): against the correctly rounded
// result; the DEFAULT path's std:: functions and formulas stay within them too.
int64_t approx_ulp_bound(VecTestOp op) {
  switch (op) {
    case VecTestOp::exp:
    case VecTestOp::log:
    case VecTestOp::tanh:
      return 1;
    case VecTestOp::sigmoid:
      return 2;
    default:
      return 0;
  }
}

template <typename T>
double exact(VecTestOp op, T a) {
  const double x = a;
  switch (op) {
    case VecTestOp::exp: return std::exp(x);
    case VecTestOp::log: return std::log(x);
    case VecTestOp::tanh: return std::tanh(x);
    default: return 1.0 / (1.0 + std::exp(-x));
  }
}

template <typename T>
void check_all_ops(c10::ScalarType dtype, CPUCapability cap) {
  const Inputs<T> in = make_inputs<T>();
  const int64_t n = static_cast<int64_t>(in.a.size());
  std::vector<T> out(in.a.size());
  auto kernel = at::native::vec_test_stub.kernel_for(cap);
  int checked = 0;
  for (int o = 0; o <= static_cast<int>(VecTestOp::shr); ++o) {
    const auto op = static_cast<VecTestOp>(o);
    if (!kernel(op, dtype, in.a.data(), in.b.data(), in.c.data(), out.data(), n)) continue;
    ++checked;
    const bool approx = std::is_same_v<T, float> && cap == CPUCapability::AVX2 && approx_ulp_bound(op) > 0;
    int failures = 0;
    for (int64_t i = 0; i < n && failures < 5; ++i) {
      T expected = reference(op, in.a[i], in.b[i], in.c[i], i);
      int64_t bound = 0;
      if (approx) {
        expected = static_cast<T>(exact(op, in.a[i]));
        bound = approx_ulp_bound(op);
      }
      if (ulp_distance(out[i], expected) > bound) {
        ++failures;
        ADD_FAILURE() << op_name(op) << " on " << c10::toString(dtype) << " (" << at::cpu_capability_name(cap)
                      << "), element " << i << ": a=" << +in.a[i] << " b=" << +in.b[i] << " c=" << +in.c[i]
                      << " got " << +out[i] << " expected " << +expected;
      }
    }
  }
  EXPECT_GT(checked, 25);
}

TEST(Vectorized, EveryOpMatchesScalarReferenceOnEveryCapability) {
  const auto caps = runnable_capabilities();
  ASSERT_FALSE(caps.empty());
  for (CPUCapability cap : caps) {
    SCOPED_TRACE(at::cpu_capability_name(cap));
    check_all_ops<float>(c10::ScalarType::Float, cap);
    check_all_ops<double>(c10::ScalarType::Double, cap);
    check_all_ops<int8_t>(c10::ScalarType::Char, cap);
    check_all_ops<uint8_t>(c10::ScalarType::Byte, cap);
    check_all_ops<int16_t>(c10::ScalarType::Short, cap);
    check_all_ops<int32_t>(c10::ScalarType::Int, cap);
    check_all_ops<int64_t>(c10::ScalarType::Long, cap);
  }
}

// The approximations over every 509th finite float of both signs (33M values), and their
// special values exactly.
TEST(Vectorized, Avx2ApproximationsWithinUlpBound) {
  if (at::native::detail::best_cpu_capability() < CPUCapability::AVX2) GTEST_SKIP() << "no AVX2 here";
  auto kernel = at::native::vec_test_stub.kernel_for(CPUCapability::AVX2);
  std::vector<float> x;
  for (uint32_t bits = 0; bits < 0x7F800000u; bits += 509) {
    x.push_back(std::bit_cast<float>(bits));
    x.push_back(-std::bit_cast<float>(bits));
  }
  std::vector<float> out(x.size());
  for (VecTestOp op : {VecTestOp::exp, VecTestOp::log, VecTestOp::tanh, VecTestOp::sigmoid}) {
    ASSERT_TRUE(kernel(op, c10::ScalarType::Float, x.data(), x.data(), x.data(), out.data(),
                       static_cast<int64_t>(x.size())));
    int64_t worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const int64_t d = ulp_distance(out[i], static_cast<float>(exact(op, x[i])));
      if (d > worst) {
        worst = d;
        worst_x = x[i];
      }
    }
    EXPECT_LE(worst, approx_ulp_bound(op)) << op_name(op) << " worst at x=" << worst_x;
  }
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> s = {0.0f, -0.0f, inf, -inf, nan, 1.0f, -1.0f, 1e-45f, 100.0f, -200.0f};
  std::vector<float> r(s.size());
  auto run = [&](VecTestOp op) {
    EXPECT_TRUE(kernel(op, c10::ScalarType::Float, s.data(), s.data(), s.data(), r.data(), static_cast<int64_t>(s.size())));
    return r;
  };
  auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); };
  auto e = run(VecTestOp::exp);
  for (float v : {e[0], e[1]}) EXPECT_EQ(v, 1.0f);
  EXPECT_TRUE(same(e[2], inf) && same(e[3], 0.0f) && std::isnan(e[4]) && same(e[8], inf) && same(e[9], 0.0f));
  auto l = run(VecTestOp::log);
  EXPECT_TRUE(same(l[0], -inf) && same(l[1], -inf) && same(l[2], inf) && std::isnan(l[3]) && std::isnan(l[4]) &&
              same(l[5], 0.0f) && std::isnan(l[6]));
  auto t = run(VecTestOp::tanh);
  EXPECT_TRUE(same(t[0], 0.0f) && same(t[1], -0.0f) && same(t[2], 1.0f) && same(t[3], -1.0f) && std::isnan(t[4]) &&
              same(t[7], 1e-45f) && same(t[8], 1.0f));
  auto g = run(VecTestOp::sigmoid);
  EXPECT_TRUE(same(g[0], 0.5f) && same(g[2], 1.0f) && same(g[3], 0.0f) && std::isnan(g[4]) && same(g[9], 0.0f));
}

// Partial loads and stores at every count and at unaligned addresses: nothing is read
// into the lanes past count, nothing written past it.
TEST(Vectorized, TailsAndUnalignedAddressesOnEveryCapability) {
  for (CPUCapability cap : runnable_capabilities()) {
    SCOPED_TRACE(at::cpu_capability_name(cap));
    auto kernel = at::native::vec_test_stub.kernel_for(cap);
    for (int offset = 0; offset < 4; ++offset) {
      for (int64_t n = 0; n <= 2 * Vectorized<float>::size() + 1; ++n) {
        std::vector<float> a(64, 0.0f), b(64, 0.0f), out(64, -7.0f);
        for (int64_t i = 0; i < n; ++i) {
          a[offset + i] = static_cast<float>(i + 1);
          b[offset + i] = 10.0f * static_cast<float>(i);
        }
        ASSERT_TRUE(kernel(VecTestOp::add, c10::ScalarType::Float, a.data() + offset, b.data() + offset,
                           b.data() + offset, out.data() + offset, n));
        for (int64_t i = 0; i < 64; ++i) {
          const bool written = i >= offset && i < offset + n;
          EXPECT_EQ(out[i], written ? 11.0f * static_cast<float>(i - offset) + 1.0f : -7.0f) << "n=" << n << " i=" << i;
        }
      }
    }
    for (int64_t n = 0; n <= Vectorized<int64_t>::size(); ++n) {
      std::vector<int64_t> a(8, 3), out(8, -1);
      ASSERT_TRUE(kernel(VecTestOp::mul, c10::ScalarType::Long, a.data() + 1, a.data() + 1, a.data() + 1, out.data() + 1, n));
      for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(out[i], i >= 1 && i <= n ? 9 : -1);
    }
  }
}

TEST(Vectorized, GenericLoadStoreCountsAndLanes) {
  using V = Vectorized<float>;
  static_assert(V::size() == 8 && Vectorized<double>::size() == 4 && Vectorized<int8_t>::size() == 32 &&
                Vectorized<c10::complex<double>>::size() == 2);
  alignas(64) unsigned char raw[64 + 3];
  for (int count = 0; count <= V::size(); ++count) {
    for (int off = 0; off < 4; ++off) {
      float src[8];
      for (int i = 0; i < 8; ++i) src[i] = static_cast<float>(i + 1);
      std::memcpy(raw + off, src, sizeof(src));
      const V v = V::loadu(raw + off, count);
      for (int i = 0; i < 8; ++i) EXPECT_EQ(v[i], i < count ? static_cast<float>(i + 1) : 0.0f);
      std::memset(raw, 0xAB, sizeof(raw));
      v.store(raw + off, count);
      for (int b = 0; b < static_cast<int>(sizeof(raw)); ++b) {
        if (b < off || b >= off + 4 * count) {
          EXPECT_EQ(raw[b], 0xAB) << "count " << count << " byte " << b;
        }
      }
    }
  }
  const V r = V::arange(1.0f, 0.5f);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(r[i], 1.0f + 0.5f * static_cast<float>(i));
  const V s = V::set(V(0.0f), V(1.0f), 3);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(s[i], i < 3 ? 1.0f : 0.0f);
  const V b = V::blend<0b10000001>(V(0.0f), V(2.0f));
  EXPECT_EQ(b[0], 2.0f);
  EXPECT_EQ(b[1], 0.0f);
  EXPECT_EQ(b[7], 2.0f);
  const Vectorized<int32_t> lanes(1, 2, 3, 4, 5, 6, 7, 8);
  EXPECT_EQ(lanes[7], 8);
}

TEST(Vectorized, GenericEdgeSemantics) {
  // Round half to even, trunc/frac, fused fmadd.
  const Vectorized<double> h(0.5, 1.5, 2.5, -0.5);
  const auto rounded = h.round();
  EXPECT_EQ(rounded[0], 0.0);
  EXPECT_EQ(rounded[1], 2.0);
  EXPECT_EQ(rounded[2], 2.0);
  EXPECT_TRUE(std::signbit(rounded[3]));
  EXPECT_EQ(Vectorized<double>(-2.75).frac()[0], -0.75);
  const double tiny = std::ldexp(1.0, -30);
  EXPECT_EQ(fmadd(Vectorized<double>(1.0 + tiny), Vectorized<double>(1.0 - tiny), Vectorized<double>(-1.0))[0],
            -tiny * tiny);  // one rounding: the product's low bits survive
  // Integers wrap; division by zero gives 0; shifts past the width give 0 or the sign.
  using I = Vectorized<int32_t>;
  EXPECT_EQ((I(std::numeric_limits<int32_t>::max()) + I(1))[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ((I(std::numeric_limits<int32_t>::min()) / I(-1))[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ((I(5) / I(0))[0], 0);
  EXPECT_EQ((I(-7) / I(2))[0], -3);
  EXPECT_EQ((I(1) << I(32))[0], 0);
  EXPECT_EQ((I(-8) >> I(40))[0], -1);
  EXPECT_EQ((I(-8) >> I(1))[0], -4);
  EXPECT_EQ(I(std::numeric_limits<int32_t>::min()).abs()[0], std::numeric_limits<int32_t>::min());
  using B = Vectorized<uint8_t>;
  EXPECT_EQ((B(200) * B(2))[0], 144);
  EXPECT_EQ(B(3).neg()[0], 253);
  // NaN-propagating max/min, clamp keeps a NaN input, comparisons give masks and 1/0.
  using F = Vectorized<float>;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(maximum(F(nan), F(1.0f))[0]));
  EXPECT_TRUE(std::isnan(minimum(F(1.0f), F(nan))[0]));
  EXPECT_TRUE(std::isnan(clamp(F(nan), F(0.0f), F(1.0f))[0]));
  EXPECT_EQ(clamp(F(5.0f), F(0.0f), F(1.0f))[0], 1.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>((F(1.0f) < F(2.0f))[0]), 0xFFFFFFFFu);
  EXPECT_EQ((F(1.0f) > F(2.0f))[0], 0.0f);
  EXPECT_EQ(F(nan).ne(F(nan))[0], 1.0f);
  EXPECT_EQ(F(nan).eq(F(nan))[0], 0.0f);
  // bool and complex lanes through the generic template.
  using Bool = Vectorized<bool>;
  EXPECT_EQ((~Bool(true))[0], false);
  EXPECT_EQ((Bool(true) & Bool(false))[5], false);
  EXPECT_EQ(Bool::blendv(Bool(false), Bool(true), Bool(true) == Bool(true))[0], true);
  using C = Vectorized<c10::complex<float>>;
  const auto z = C(c10::complex<float>(1, 2)) * C(c10::complex<float>(3, -1)) + C(c10::complex<float>(0, 1));
  EXPECT_EQ(z[2].real(), 5.0f);
  EXPECT_EQ(z[2].imag(), 6.0f);
}

TEST(Vectorized, ErfinvInvertsErf) {
  EXPECT_NEAR(at::vec::detail::erfinv(0.5), 0.47693627620446987, 1e-16);
  EXPECT_NEAR(at::vec::detail::erfinv(-0.9), -1.1630871536766743, 1e-15);
  EXPECT_TRUE(std::isinf(at::vec::detail::erfinv(1.0)));
  EXPECT_TRUE(std::isnan(at::vec::detail::erfinv(1.5)));
  EXPECT_TRUE(std::signbit(at::vec::detail::erfinv(-0.0)));
  for (double y = -0.999999; y < 1.0; y += 0.0123) {
    const double x = at::vec::detail::erfinv(y);
    EXPECT_NEAR(std::erf(x), y, 4e-16) << y;
  }
  for (double d : {1e-3, 1e-6, 1e-10, 1e-15, 0x1p-53}) {  // near 1, where erfc carries the precision
    const double y = 1.0 - d;
    const double x = at::vec::detail::erfinv(y);
    EXPECT_NEAR(std::erfc(x) / (1.0 - y), 1.0, 1e-13) << d;
  }
  EXPECT_DOUBLE_EQ(at::vec::detail::erfinv(1e-300), 1e-300 * 0.88622692545275801);
  for (float y : {0.1f, 0.5f, -0.75f, 0.999f}) {
    EXPECT_EQ(at::vec::detail::erfinv(y), static_cast<float>(at::vec::detail::erfinv(static_cast<double>(y))));
  }
}

// Every Half and BFloat16 pattern widens, and floats around every rounding boundary
// narrow, exactly as c10's scalar conversions, on every capability.
TEST(Vectorized, HalfAndBFloat16ConversionsAreBitExact) {
  std::vector<uint16_t> bits(65536 + 5);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  for (CPUCapability cap : runnable_capabilities()) {
    SCOPED_TRACE(at::cpu_capability_name(cap));
    auto kernel = at::native::vec_convert_test_stub.kernel_for(cap);
    for (c10::ScalarType t : {c10::ScalarType::Half, c10::ScalarType::BFloat16}) {
      const bool half = t == c10::ScalarType::Half;
      auto widen = [&](uint16_t b) {
        return half ? static_cast<float>(c10::Half(b, c10::Half::from_bits()))
                    : static_cast<float>(c10::BFloat16(b, c10::BFloat16::from_bits()));
      };
      auto narrow = [&](float f) { return half ? c10::Half::from_float(f) : c10::BFloat16::from_float(f); };
      // Floats to narrow: every value of the format, the midpoints to its neighbours and
      // one float ulp either side, special floats, and a sweep over all float patterns.
      std::vector<float> values;
      for (uint32_t b = 0; b < 65536; ++b) {
        const float f = widen(static_cast<uint16_t>(b));
        const float g = widen(static_cast<uint16_t>(b + 1));
        values.push_back(f);
        if (std::isfinite(f) && std::isfinite(g) && (b & 0x7FFF) != 0x7FFF) {
          const float mid = static_cast<float>((static_cast<double>(f) + static_cast<double>(g)) / 2);
          values.push_back(mid);
          values.push_back(std::nextafter(mid, std::numeric_limits<float>::infinity()));
          values.push_back(std::nextafter(mid, -std::numeric_limits<float>::infinity()));
        }
      }
      for (uint64_t b = 0; b < (1ull << 32); b += 4093) values.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
      for (uint32_t b : {0x7F800001u, 0xFFC00001u, 0x7FFFFFFFu, 0x477FF000u, 0x477FEFFFu, 0x7F7FFFFFu, 0x00000001u}) {
        values.push_back(std::bit_cast<float>(b));
      }
      const size_t n = std::max(values.size(), bits.size());
      values.resize(n, 1.0f);
      std::vector<uint16_t> all_bits(n);
      for (size_t i = 0; i < n; ++i) all_bits[i] = static_cast<uint16_t>(i);
      std::vector<float> widened(n);
      std::vector<uint16_t> narrowed(n);
      kernel(t, all_bits.data(), widened.data(), values.data(), narrowed.data(), static_cast<int64_t>(n) - 3);
      int failures = 0;
      for (size_t i = 0; i + 3 < n && failures < 5; ++i) {
        if (std::bit_cast<uint32_t>(widened[i]) != std::bit_cast<uint32_t>(widen(all_bits[i]))) {
          ++failures;
          ADD_FAILURE() << c10::toString(t) << " widening 0x" << std::hex << all_bits[i] << " gave 0x"
                        << std::bit_cast<uint32_t>(widened[i]);
        }
        if (narrowed[i] != narrow(values[i])) {
          ++failures;
          ADD_FAILURE() << c10::toString(t) << " narrowing float 0x" << std::hex << std::bit_cast<uint32_t>(values[i])
                        << " gave 0x" << narrowed[i] << " expected 0x" << narrow(values[i]);
        }
      }
    }
  }
}

// Loops.h: rows whose operands are contiguous or broadcast (stride 0) run the vector op on
// full vectors and the scalar op on the tail; any other row runs the scalar op throughout.
TEST(Loops, VectorPathOnContiguousAndBroadcastRowsScalarElsewhere) {
  struct Layout {
    int64_t out, a, b;  // inner strides in elements (0: broadcast)
  };
  const std::vector<Layout> layouts = {{1, 1, 1}, {1, 0, 1}, {1, 1, 0}, {1, 2, 1}, {2, 1, 1}, {1, 1, 3}};
  for (CPUCapability cap : runnable_capabilities()) {
    SCOPED_TRACE(at::cpu_capability_name(cap));
    auto kernel = at::native::loops_test_stub.kernel_for(cap);
    for (const Layout& l : layouts) {
      for (int64_t size0 : {0, 1, 7, 8, 9, 16, 17, 35}) {
        const int64_t size1 = 3;
        for (int which : {0, 1, 2, 3, 4}) {
          const int64_t width = which == 2 ? 8 : (which == 3 ? 1 : 4);
          const int64_t lanes = which == 2 ? 4 : 8;
          const int ninputs = which == 1 ? 3 : (which == 2 ? 1 : (which == 4 ? 0 : 2));
          const bool vector_row = l.out == 1 && (ninputs < 1 || l.a <= 1) && (ninputs < 2 || l.b <= 1);
          // Outer strides: each row starts 100 elements after the previous one.
          std::vector<float> a(400), b(400), c(400);
          std::vector<int64_t> la(400);
          for (int i = 0; i < 400; ++i) {
            a[i] = static_cast<float>(i % 13) - 4.0f;
            b[i] = static_cast<float>(i % 7) + 0.5f;
            c[i] = static_cast<float>(i % 5);
            la[i] = i - 50;
          }
          std::vector<unsigned char> out(400 * 8, 0xEE);
          const int64_t in_width = which == 2 ? 8 : 4;
          char* data[4] = {reinterpret_cast<char*>(out.data()),
                           which == 2 ? reinterpret_cast<char*>(la.data()) : reinterpret_cast<char*>(a.data()),
                           reinterpret_cast<char*>(b.data()), reinterpret_cast<char*>(c.data())};
          const int nt = ninputs + 1;
          std::vector<int64_t> strides(2 * nt);
          const int64_t inner[4] = {l.out, l.a, l.b, 1};
          for (int k = 0; k < nt; ++k) {
            strides[k] = inner[k] * (k == 0 ? width : in_width);
            strides[nt + k] = 100 * (k == 0 ? width : in_width);
          }
          kernel(which, data, strides.data(), size0, size1);
          for (int64_t j = 0; j < size1; ++j) {
            const int64_t full = (vector_row && which != 3) ? size0 / lanes * lanes : 0;
            for (int64_t i = 0; i < size0; ++i) {
              const bool vec = i < full;
              const int64_t ia = j * 100 + i * l.a, ib = j * 100 + i * l.b, ic = j * 100 + i, io = j * 100 + i * l.out;
              SCOPED_TRACE(testing::Message() << "which " << which << " layout " << l.out << l.a << l.b << " size0 "
                                              << size0 << " row " << j << " i " << i);
              switch (which) {
                case 0:
                  EXPECT_EQ(reinterpret_cast<float*>(out.data())[io], vec ? a[ia] + b[ib] : a[ia] - b[ib]);
                  break;
                case 1:
                  EXPECT_EQ(reinterpret_cast<float*>(out.data())[io],
                            vec ? std::fma(a[ia], b[ib], c[ic]) : a[ia] * b[ib] - c[ic]);
                  break;
                case 2:
                  EXPECT_EQ(reinterpret_cast<int64_t*>(out.data())[io], la[ia] * (vec ? 2 : 3));
                  break;
                case 3:
                  EXPECT_EQ(reinterpret_cast<bool*>(out.data())[io], a[ia] < b[ib]);
                  break;
                default:
                  EXPECT_EQ(reinterpret_cast<int32_t*>(out.data())[io], vec ? 5 : 7);
              }
            }
          }
        }
      }
    }
  }
}

// ---- DispatchStub ------------------------------------------------------------------------

TEST(DispatchStub, ChoiceRule) {
  static std::string warned;
  auto warn = [](const char* m) { warned = m; };
  using at::native::detail::choose_cpu_capability;
  EXPECT_EQ(choose_cpu_capability(nullptr, CPUCapability::AVX2, warn), CPUCapability::AVX2);
  EXPECT_EQ(choose_cpu_capability("", CPUCapability::AVX2, warn), CPUCapability::AVX2);
  EXPECT_EQ(choose_cpu_capability("default", CPUCapability::AVX2, warn), CPUCapability::DEFAULT);
  EXPECT_EQ(choose_cpu_capability("AVX2", CPUCapability::AVX2, warn), CPUCapability::AVX2);
  EXPECT_TRUE(warned.empty());
  EXPECT_EQ(choose_cpu_capability("avx2", CPUCapability::DEFAULT, warn), CPUCapability::DEFAULT);
  EXPECT_NE(warned.find("not supported by this CPU or build; using default"), std::string::npos) << warned;
  warned.clear();
  EXPECT_EQ(choose_cpu_capability("avx512", CPUCapability::AVX2, warn), CPUCapability::AVX2);
  EXPECT_NE(warned.find("not one of default, avx2"), std::string::npos) << warned;
}

// The best capability on this machine, unless TESSERA_CPU_CAPABILITY lowers it (CTest runs
// the aten tests once more with it set to default).
TEST(DispatchStub, PicksBestCapabilityOrTheForcedOne) {
  CPUCapability expected = CPUCapability::DEFAULT;
#if defined(TESSERA_CPU_AVX2_KERNELS)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) expected = CPUCapability::AVX2;
#endif
  EXPECT_EQ(at::native::detail::best_cpu_capability(), expected);
  const char* env = std::getenv("TESSERA_CPU_CAPABILITY");
  if (env != nullptr && std::string(env) == "default") expected = CPUCapability::DEFAULT;
  EXPECT_EQ(at::get_cpu_capability(), expected);
  EXPECT_STREQ(at::cpu_capability(), at::cpu_capability_name(expected));
  EXPECT_EQ(at::native::vec_test_stub.get(), at::native::vec_test_stub.kernel_for(expected));
}

TEST(DispatchStub, CallsTheChosenKernel) {
  const float a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
  float out[3] = {};
  EXPECT_TRUE(at::native::vec_test_stub(c10::DeviceType::CPU, VecTestOp::add, c10::ScalarType::Float, a, b, b, out, 3));
  EXPECT_EQ(out[2], 33.0f);
  const int64_t la[3] = {1, 2, 3};
  int64_t lout[3] = {};
  EXPECT_FALSE(at::native::vec_test_stub(VecTestOp::exp, c10::ScalarType::Long, la, la, la, lout, 3));
  EXPECT_THROW(at::native::vec_test_stub(c10::DeviceType::CUDA, VecTestOp::add, c10::ScalarType::Float, a, b, b, out, 3),
               c10::Error);
  EXPECT_STREQ(at::native::vec_test_stub.name(), "vec_test_stub");
}

}  // namespace
