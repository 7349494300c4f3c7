// Kernels of the nn activations and their fused backward ops, compiled once per ISA (see
// aten/native/DispatchStub.h). Each op is written once as a scalar function over the
// compute type (float for Half/BFloat16) and once over Vectorized<T> for float and double.
#include <aten/native/DispatchStubs.h>
#include <aten/native/cpu/Loops.h>
#include <aten/native/cpu/MathScalar.h>
#include <aten/native/nn/Activation.h>
#include <c10/macros/Macros.h>

#include <cmath>
#include <limits>
#include <string_view>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

constexpr unsigned kFloatTypes = kFloating | kReducedFloat;

template <typename T>
inline constexpr bool has_vec_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

// out = f(x): vf on full vectors of float and double, f elsewhere (in opmath_t<T>).
template <typename T, typename F, typename VF>
void unary_loop(TensorIterator& iter, F f, VF vf) {
  if constexpr (has_vec_v<T>) {
    cpu_kernel_vec(iter, [f](T x) -> T { return f(x); }, [vf](Vectorized<T> x) { return vf(x); });
  } else {
    using O = opmath_t<T>;
    cpu_kernel(iter, [f](T x) -> T { return static_cast<T>(f(static_cast<O>(x))); });
  }
}

// out = f(a, b), the same way (backward ops: a is the incoming grad).
template <typename T, typename F, typename VF>
void binary_loop(TensorIterator& iter, F f, VF vf) {
  if constexpr (has_vec_v<T>) {
    cpu_kernel_vec(iter, [f](T a, T b) -> T { return f(a, b); },
                   [vf](Vectorized<T> a, Vectorized<T> b) { return vf(a, b); });
  } else {
    using O = opmath_t<T>;
    cpu_kernel(iter, [f](T a, T b) -> T { return static_cast<T>(f(static_cast<O>(a), static_cast<O>(b))); });
  }
}

// The standard normal's cdf Phi(x) and exp(-x^2 / 2) (gelu = x Phi(x); its derivative
// adds x exp(-x^2 / 2) / sqrt(2 pi)), sharing one exponential. Float lanes take erf from
// Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7) with the 1/2 of Phi folded
// into its coefficients: Phi(x) = 1 - h for x >= 0 and h below, h = P(t) exp(-x^2 / 2),
// t = 1 / (1 + p |x| / sqrt 2). Double lanes use std::erf. Inlined, so that the two
// vectors vectorized_row computes per step interleave.
template <typename V>
C10_ALWAYS_INLINE void normal_cdf_and_exp(V x, V& cdf, V& e) {
  if constexpr (std::is_same_v<typename V::value_type, float>) {
    const V z = x.abs() * V(float(M_SQRT1_2));
    const V t = V(1.0f) / fmadd(z, V(0.3275911f), V(1.0f));
    V p = fmadd(V(0.5f * 1.061405429f), t, V(0.5f * -1.453152027f));
    p = fmadd(p, t, V(0.5f * 1.421413741f));
    p = fmadd(p, t, V(0.5f * -0.284496736f));
    p = fmadd(p, t, V(0.5f * 0.254829592f));
    e = (z * z).neg().exp_nonpositive();
    const V h = p * t * e;
    cdf = V::blendv(V(1.0f) - h, h, x < V(0.0f));
  } else {
    using T = typename V::value_type;
    e = (x * x * V(T(-0.5))).exp();
    cdf = V(T(0.5)) * (V(T(1)) + (x * V(T(M_SQRT1_2))).erf());
  }
}

// erf on float lanes as z P(z^2) / Q(z^2) with z clamped to [-4, 4] (erf is 1 in float
// beyond 3.92): a rational fit of degree 5 over 5 in z^2, absolute error about 2e-8 before
// rounding. No exponential, so the gelu forward, which needs erf alone, costs ten FMAs and
// one division per vector instead of the shared cdf-and-exp path its backward takes.
C10_ALWAYS_INLINE Vectorized<float> erf_rational(Vectorized<float> z) {
  using V = Vectorized<float>;
  z = clamp_max(clamp_min(z, V(-4.0f)), V(4.0f));
  const V s = z * z;
  V p = fmadd(V(1.9747184285483482e-06f), s, V(2.880467216026293e-04f));
  p = fmadd(p, s, V(4.0040255680660625e-03f));
  p = fmadd(p, s, V(5.346864446694201e-02f));
  p = fmadd(p, s, V(1.9625829353698226e-01f));
  p = fmadd(p, s, V(1.1283789764276342f));
  V q = fmadd(V(3.747997579648092e-05f), s, V(1.2164457527289116e-03f));
  q = fmadd(q, s, V(1.5445186790748034e-02f));
  q = fmadd(q, s, V(1.1648021768430449e-01f));
  q = fmadd(q, s, V(5.072605415773677e-01f));
  q = fmadd(q, s, V(1.0f));
  return z * p / q;
}

// log1p(u) for u >= 0 on vector lanes, from log: log(1 + u) * u / ((1 + u) - 1) cancels the
// rounding of 1 + u (where 1 + u rounds to 1, log1p(u) = u). Keeps softplus, log_sigmoid
// and mish accurate where exp(x) is tiny, in step with the scalar tails' std::log1p.
template <typename V>
C10_ALWAYS_INLINE V vec_log1p(V u) {
  using T = typename V::value_type;
  const V w = u + V(T(1));
  const V d = w - V(T(1));
  return V::blendv(w.log() * (u / d), u, (d == V(T(0))) | (u == V(std::numeric_limits<T>::infinity())));
}

constexpr double kSqrt2OverPi = M_2_SQRTPI * M_SQRT1_2;
constexpr double kInvSqrt2Pi = M_2_SQRTPI * M_SQRT1_2 * 0.5;
constexpr double kGeluC = 0.044715;

void leaky_relu_kernel(TensorIterator& iter, const c10::Scalar& negative_slope) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "leaky_relu", [&]<typename T>() {
    using O = opmath_t<T>;
    const O s = negative_slope.to<O>();
    unary_loop<T>(iter, [s](O x) { return x > O(0) ? x : x * s; },
                  [s](auto v) { using V = decltype(v); return V::blendv(v * V(s), v, v > V(0)); });
  });
}

void elu_kernel(TensorIterator& iter, const c10::Scalar& alpha, const c10::Scalar& scale,
                const c10::Scalar& input_scale) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "elu", [&]<typename T>() {
    using O = opmath_t<T>;
    const O neg = alpha.to<O>() * scale.to<O>(), pos = scale.to<O>(), in = input_scale.to<O>();
    unary_loop<T>(iter, [=](O x) { return x > O(0) ? x * pos : std::expm1(x * in) * neg; },
                  [=](auto v) {
                    using V = decltype(v);
                    return V::blendv(((v * V(in)).exp() - V(1)) * V(neg), v * V(pos), v > V(0));
                  });
  });
}

void gelu_kernel(TensorIterator& iter, std::string_view approximate) {
  const bool tanh = approximate == "tanh";
  dispatch_types<kFloatTypes>(iter.common_dtype(), "gelu", [&]<typename T>() {
    using O = opmath_t<T>;
    if (tanh) {
      const O k = O(kSqrt2OverPi), c = O(kGeluC);
      unary_loop<T>(iter, [=](O x) { return O(0.5) * x * (O(1) + std::tanh(k * (x + c * x * x * x))); },
                    [=](auto v) {
                      using V = decltype(v);
                      return V(0.5) * v * (V(1) + (V(k) * (v + V(c) * v * v * v)).tanh());
                    });
    } else {
      unary_loop<T>(iter, [](O x) { return O(0.5) * x * (O(1) + std::erf(x * O(M_SQRT1_2))); },
                    [](auto v) {
                      using V = decltype(v);
                      if constexpr (std::is_same_v<V, Vectorized<float>>) {
                        // 1 + erf clamped at 0: the fit may overshoot -1 by an ulp in the
                        // far negative tail, which would flip gelu's sign there.
                        const V one_plus_erf = V(1.0f) + erf_rational(v * V(float(M_SQRT1_2)));
                        return v * V(0.5f) * clamp_min(one_plus_erf, V(0.0f));
                      } else {
                        V cdf, e;
                        normal_cdf_and_exp(v, cdf, e);
                        return v * cdf;
                      }
                    });
    }
  });
}

void silu_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes | kComplex>(iter.common_dtype(), "silu", [&]<typename T>() {
    if constexpr (is_complex_v<T>) {
      cpu_kernel(iter, [](T x) -> T { return apply_math<T>(x, [](auto z) { return z / (decltype(z)(1) + std::exp(-z)); }); });
    } else {
      using O = opmath_t<T>;
      unary_loop<T>(iter, [](O x) { return x * sigmoid_any(x); }, [](auto v) { return v * v.sigmoid(); });
    }
  });
}

void mish_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "mish", [&]<typename T>() {
    using O = opmath_t<T>;
    unary_loop<T>(iter, [](O x) { return x * std::tanh(std::log1p(std::exp(x))); },
                  [](auto v) { return v * vec_log1p(v.exp()).tanh(); });
  });
}

void softplus_kernel(TensorIterator& iter, const c10::Scalar& beta, const c10::Scalar& threshold) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "softplus", [&]<typename T>() {
    using O = opmath_t<T>;
    const O b = beta.to<O>(), th = threshold.to<O>();
    unary_loop<T>(iter, [=](O x) { return x * b > th ? x : std::log1p(std::exp(x * b)) / b; },
                  [=](auto v) {
                    using V = decltype(v);
                    const V vb = v * V(b);
                    return V::blendv(vec_log1p(vb.exp()) / V(b), v, vb > V(th));
                  });
  });
}

// hardtanh and threshold also take integers, as torch's do.
void hardtanh_kernel(TensorIterator& iter, const c10::Scalar& min_val, const c10::Scalar& max_val) {
  dispatch_types<kFloatTypes | kIntegral>(iter.common_dtype(), "hardtanh", [&]<typename T>() {
    using O = opmath_t<T>;
    const O lo = min_val.to<O>(), hi = max_val.to<O>();
    if constexpr (std::is_integral_v<T>) {
      // clamp's order: the lower bound, then the upper one (min_val > max_val gives max_val)
      cpu_kernel(iter, [=](T x) -> T {
        const O y = x < lo ? lo : static_cast<O>(x);
        return static_cast<T>(y > hi ? hi : y);
      });
    } else {
      unary_loop<T>(iter, [=](O x) {
                      const O y = x < lo ? lo : x;
                      return y > hi ? hi : y;
                    },
                    [=](auto v) { using V = decltype(v); return clamp(v, V(lo), V(hi)); });
    }
  });
}

void hardsigmoid_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "hardsigmoid", [&]<typename T>() {
    using O = opmath_t<T>;
    unary_loop<T>(iter, [](O x) { return std::min(std::max(x + O(3), O(0)), O(6)) / O(6); },
                  [](auto v) { using V = decltype(v); return clamp(v + V(3), V(0), V(6)) / V(6); });
  });
}

void hardswish_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "hardswish", [&]<typename T>() {
    using O = opmath_t<T>;
    unary_loop<T>(iter, [](O x) { return x * std::min(std::max(x + O(3), O(0)), O(6)) / O(6); },
                  [](auto v) { using V = decltype(v); return v * clamp(v + V(3), V(0), V(6)) / V(6); });
  });
}

void threshold_kernel(TensorIterator& iter, const c10::Scalar& threshold, const c10::Scalar& value) {
  dispatch_types<kFloatTypes | kIntegral>(iter.common_dtype(), "threshold", [&]<typename T>() {
    using O = opmath_t<T>;
    const O th = threshold.to<O>(), val = value.to<O>();
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(iter, [=](T x) -> T { return x <= th ? static_cast<T>(val) : x; });
    } else {
      unary_loop<T>(iter, [=](O x) { return x <= th ? val : x; },
                    [=](auto v) { using V = decltype(v); return V::blendv(v, V(val), v <= V(th)); });
    }
  });
}

void softshrink_kernel(TensorIterator& iter, const c10::Scalar& lambd) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "softshrink", [&]<typename T>() {
    using O = opmath_t<T>;
    const O l = lambd.to<O>();
    unary_loop<T>(iter, [=](O x) { return x > l ? x - l : (x < -l ? x + l : O(0)); },
                  [=](auto v) {
                    using V = decltype(v);
                    return V::blendv(V::blendv(V(0), v + V(l), v < V(-l)), v - V(l), v > V(l));
                  });
  });
}

void hardshrink_kernel(TensorIterator& iter, const c10::Scalar& lambd) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "hardshrink", [&]<typename T>() {
    using O = opmath_t<T>;
    const O l = lambd.to<O>();
    unary_loop<T>(iter, [=](O x) { return x >= -l && x <= l ? O(0) : x; },
                  [=](auto v) { using V = decltype(v); return V::blendv(v, V(0), (v >= V(-l)) & (v <= V(l))); });
  });
}

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): no overflow at either end.
void log_sigmoid_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "log_sigmoid", [&]<typename T>() {
    using O = opmath_t<T>;
    unary_loop<T>(iter, [](O x) { return std::min(x, O(0)) - std::log1p(std::exp(-std::fabs(x))); },
                  [](auto v) {
                    using V = decltype(v);
                    return minimum(v, V(0)) - vec_log1p(v.abs().neg().exp());
                  });
  });
}

// ---------------------------------------------------------------- backward (grad, input)

void threshold_backward_kernel(TensorIterator& iter, const c10::Scalar& threshold) {
  dispatch_types<kFloatTypes | kIntegral>(iter.common_dtype(), "threshold_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    const O th = threshold.to<O>();
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(iter, [=](T g, T x) -> T { return x <= th ? T(0) : g; });
    } else {
      binary_loop<T>(iter, [=](O g, O x) { return x <= th ? O(0) : g; },
                     [=](auto g, auto x) { using V = decltype(g); return V::blendv(g, V(0), x <= V(th)); });
    }
  });
}

void leaky_relu_backward_kernel(TensorIterator& iter, const c10::Scalar& negative_slope, bool) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "leaky_relu_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    const O s = negative_slope.to<O>();
    binary_loop<T>(iter, [=](O g, O x) { return x > O(0) ? g : g * s; },
                   [=](auto g, auto x) { using V = decltype(g); return V::blendv(g * V(s), g, x > V(0)); });
  });
}

void elu_backward_kernel(TensorIterator& iter, const c10::Scalar& alpha, const c10::Scalar& scale,
                         const c10::Scalar& input_scale, bool is_result) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "elu_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    const O neg = alpha.to<O>() * scale.to<O>(), pos = scale.to<O>(), in = input_scale.to<O>();
    if (is_result) {  // y = neg * (exp(x * in) - 1) below zero, so dy/dx = in * (y + neg)
      binary_loop<T>(iter, [=](O g, O y) { return y <= O(0) ? g * in * (y + neg) : g * pos; },
                     [=](auto g, auto y) {
                       using V = decltype(g);
                       return V::blendv(g * V(pos), g * V(in) * (y + V(neg)), y <= V(0));
                     });
    } else {
      binary_loop<T>(iter, [=](O g, O x) { return x <= O(0) ? g * in * neg * std::exp(x * in) : g * pos; },
                     [=](auto g, auto x) {
                       using V = decltype(g);
                       return V::blendv(g * V(pos), g * V(in * neg) * (x * V(in)).exp(), x <= V(0));
                     });
    }
  });
}

void gelu_backward_kernel(TensorIterator& iter, std::string_view approximate) {
  const bool tanh = approximate == "tanh";
  dispatch_types<kFloatTypes>(iter.common_dtype(), "gelu_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    if (tanh) {
      const O k = O(kSqrt2OverPi), c = O(kGeluC);
      binary_loop<T>(iter,
                     [=](O g, O x) {
                       const O x2 = x * x;
                       const O t = std::tanh(k * (x + c * x2 * x));
                       return g * (O(0.5) * (O(1) + t) + O(0.5) * x * (O(1) - t * t) * k * (O(1) + O(3) * c * x2));
                     },
                     [=](auto g, auto x) {
                       using V = decltype(g);
                       const V x2 = x * x;
                       const V t = (V(k) * (x + V(c) * x2 * x)).tanh();
                       const V half(0.5), one(1);
                       return g * (half * (one + t) + half * x * (one - t * t) * V(k) * (one + V(3 * c) * x2));
                     });
    } else {
      const O inv = O(kInvSqrt2Pi);
      binary_loop<T>(iter,
                     [=](O g, O x) {
                       const O cdf = O(0.5) * (O(1) + std::erf(x * O(M_SQRT1_2)));
                       return g * (cdf + x * inv * std::exp(O(-0.5) * x * x));
                     },
                     [=](auto g, auto x) {
                       using V = decltype(g);
                       V cdf, e;
                       normal_cdf_and_exp(x, cdf, e);
                       return g * fmadd(x * V(inv), e, cdf);
                     });
    }
  });
}

void silu_backward_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "silu_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    binary_loop<T>(iter,
                   [](O g, O x) {
                     const O s = sigmoid_any(x);
                     return g * s * (O(1) + x * (O(1) - s));
                   },
                   [](auto g, auto x) {
                     using V = decltype(g);
                     const V s = x.sigmoid();
                     return g * s * (V(1) + x * (V(1) - s));
                   });
  });
}

void mish_backward_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "mish_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    binary_loop<T>(iter,
                   [](O g, O x) {
                     const O s = sigmoid_any(x);
                     const O t = std::tanh(std::log1p(std::exp(x)));
                     return g * (t + x * s * (O(1) - t * t));
                   },
                   [](auto g, auto x) {
                     using V = decltype(g);
                     const V s = x.sigmoid();
                     const V t = vec_log1p(x.exp()).tanh();
                     return g * (t + x * s * (V(1) - t * t));
                   });
  });
}

void softplus_backward_kernel(TensorIterator& iter, const c10::Scalar& beta, const c10::Scalar& threshold) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "softplus_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    const O b = beta.to<O>(), th = threshold.to<O>();
    binary_loop<T>(iter, [=](O g, O x) { return x * b > th ? g : g * sigmoid_any(x * b); },
                   [=](auto g, auto x) {
                     using V = decltype(g);
                     const V xb = x * V(b);
                     return V::blendv(g * xb.sigmoid(), g, xb > V(th));
                   });
  });
}

void hardtanh_backward_kernel(TensorIterator& iter, const c10::Scalar& min_val, const c10::Scalar& max_val) {
  dispatch_types<kFloatTypes | kIntegral>(iter.common_dtype(), "hardtanh_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    const O lo = min_val.to<O>(), hi = max_val.to<O>();
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(iter, [=](T g, T x) -> T { return x <= lo || x >= hi ? T(0) : g; });
    } else {
      binary_loop<T>(iter, [=](O g, O x) { return x <= lo || x >= hi ? O(0) : g; },
                     [=](auto g, auto x) {
                       using V = decltype(g);
                       return V::blendv(g, V(0), (x <= V(lo)) | (x >= V(hi)));
                     });
    }
  });
}

void hardsigmoid_backward_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "hardsigmoid_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    binary_loop<T>(iter, [](O g, O x) { return x > O(-3) && x < O(3) ? g / O(6) : O(0); },
                   [](auto g, auto x) {
                     using V = decltype(g);
                     return V::blendv(V(0), g / V(6), (x > V(-3)) & (x < V(3)));
                   });
  });
}

void hardswish_backward_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "hardswish_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    binary_loop<T>(iter, [](O g, O x) { return x < O(-3) ? O(0) : (x <= O(3) ? g * (x / O(3) + O(0.5)) : g); },
                   [](auto g, auto x) {
                     using V = decltype(g);
                     const V mid = V::blendv(g, g * (x / V(3) + V(0.5)), x <= V(3));
                     return V::blendv(mid, V(0), x < V(-3));
                   });
  });
}

// softshrink and hardshrink pass the grad outside [-lambd, lambd] and stop it inside.
void shrink_backward(TensorIterator& iter, const c10::Scalar& lambd, const char* name) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), name, [&]<typename T>() {
    using O = opmath_t<T>;
    const O l = lambd.to<O>();
    binary_loop<T>(iter, [=](O g, O x) { return x >= -l && x <= l ? O(0) : g; },
                   [=](auto g, auto x) {
                     using V = decltype(g);
                     return V::blendv(g, V(0), (x >= V(-l)) & (x <= V(l)));
                   });
  });
}

void softshrink_backward_kernel(TensorIterator& iter, const c10::Scalar& lambd) {
  shrink_backward(iter, lambd, "softshrink_backward");
}
void hardshrink_backward_kernel(TensorIterator& iter, const c10::Scalar& lambd) {
  shrink_backward(iter, lambd, "hardshrink_backward");
}

// d/dx log(sigmoid(x)) = sigmoid(-x).
void log_sigmoid_backward_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "log_sigmoid_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    binary_loop<T>(iter, [](O g, O x) { return g * sigmoid_any(-x); },
                   [](auto g, auto x) { return g * x.neg().sigmoid(); });
  });
}

void prelu_kernel(TensorIterator& iter) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "prelu", [&]<typename T>() {
    using O = opmath_t<T>;
    binary_loop<T>(iter, [](O x, O w) { return x > O(0) ? x : w * x; },
                   [](auto x, auto w) { using V = decltype(x); return V::blendv(w * x, x, x > V(0)); });
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

// The stubs of ops.yaml's iterator operators, generated from it (each runs its <op>_kernel).
#include <aten/native/cpu/RegisterActivationKernel.h>

REGISTER_DISPATCH(mish_backward_stub, &mish_backward_kernel);
REGISTER_DISPATCH(log_sigmoid_backward_stub, &log_sigmoid_backward_kernel);
REGISTER_DISPATCH(prelu_stub, &prelu_kernel);

}  // namespace at::inline tessera::native
