// The gamma-family samplers under torch.distributions: _standard_gamma (Gamma(alpha, 1)
// draws, reparameterized), its derivative _standard_gamma_grad, and _sample_dirichlet
// (normalised gamma draws along the last dim). Float and double, as torch's CPU kernels.
//
// The derivative is the implicit one: a draw x = F^-1(u; alpha) at a fixed uniform u moves
// with alpha by dx/dalpha = -(dF/dalpha) / f(x; alpha). Both the regularised incomplete
// gamma F and its alpha-derivative come from one evaluation in dual numbers: the power
// series below x = alpha + 1, Legendre's continued fraction above, each divided by the
// density so that nothing under- or overflows.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/cpu/MathScalar.h>
#include <aten/native/random/PhiloxStream.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

namespace at::inline tessera::native {

namespace {

void check_gamma_dtype(c10::ScalarType t, const char* op) {
  TORCH_CHECK(t == c10::kFloat || t == c10::kDouble, "\"", op, "\" not implemented for '", c10::toString(t), "'");
}

// Marsaglia and Tsang's squeeze-and-reject method for alpha >= 1; below 1, a draw for
// alpha + 1 times U^(1/alpha) (in logs, so tiny alphas do not underflow early). A shape
// that is not positive (or NaN) draws 0, which the caller lifts to the smallest normal
// number as torch does.
double sample_standard_gamma(double alpha, ElementEngine& engine) {
  if (!(alpha > 0)) return 0;
  if (std::isinf(alpha)) return alpha;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  double log_boost = 0;
  if (alpha < 1) {
    log_boost = std::log1p(-uniform(engine)) / alpha;  // log of U^(1/alpha), U in (0, 1]
    alpha += 1;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double z, v;
    do {
      z = normal(engine);
      v = 1.0 + c * z;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform(engine);
    const double z2 = z * z;
    if (u < 1.0 - 0.0331 * z2 * z2 || std::log(u) < 0.5 * z2 + d * (1.0 - v + std::log(v))) {
      return log_boost == 0 ? d * v : std::exp(std::log(d * v) + log_boost);
    }
  }
}

// A value with its derivative in alpha (forward-mode differentiation of the series).
struct Dual {
  double v, d;
};
Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
Dual operator/(Dual a, Dual b) { return {a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)}; }

constexpr int kMaxTerms = 1 << 20;
// Where a sum or fraction stops: at double's precision (2 ulp of 1, so the Lentz step
// can meet it without landing on 1 exactly), or well past float's.
template <typename T>
constexpr double kTolerance = std::is_same_v<T, float> ? 1e-9 : 4.5e-16;

// P(alpha, x) / f(x) / x as a power series: the sum of s_n, s_0 = 1/alpha,
// s_{n+1} = s_n x / (alpha + n + 1). Converges fast for x < alpha + 1.
Dual lower_series(double alpha, double x, double tolerance) {
  Dual term{1.0 / alpha, -1.0 / (alpha * alpha)};
  Dual sum = term;
  for (int n = 0; n < kMaxTerms; ++n) {
    term = term * Dual{x, 0} / Dual{alpha + n + 1, 1};
    sum = sum + term;
    if (std::abs(term.v) <= tolerance * std::abs(sum.v) && std::abs(term.d) <= tolerance * std::abs(sum.d)) break;
  }
  return sum;
}

// Q(alpha, x) / f(x) / x as Legendre's continued fraction, by the modified Lentz method.
Dual upper_fraction(double alpha, double x, double tolerance) {
  constexpr double tiny = 1e-300;
  auto guard = [](Dual t) { return std::abs(t.v) < tiny ? Dual{tiny, t.d} : t; };
  Dual b{x + 1 - alpha, -1};
  Dual c{1.0 / tiny, 0};
  Dual d = Dual{1, 0} / guard(b);
  Dual h = d;
  for (int i = 1; i < kMaxTerms; ++i) {
    const Dual an{-i * (i - alpha), static_cast<double>(i)};
    b = b + Dual{2, 0};
    d = Dual{1, 0} / guard(an * d + b);
    c = guard(b + an / c);
    const Dual delta = d * c;
    h = h * delta;
    if (std::abs(delta.v - 1) <= tolerance && std::abs(delta.d) <= tolerance * (1 + std::abs(h.d / h.v))) break;
  }
  return h;
}

// Past this shape the series needs ~sqrt(74 alpha) terms; Wilson and Hilferty's cube-root
// normal approximation is exact there to far below float precision instead.
constexpr double kLargeShape = 1e6;

// x = alpha t^3 with t = 1 - 1/(9 alpha) + z / (3 sqrt(alpha)) at a fixed normal quantile z:
// dx/dalpha = t^3 + 3 alpha t^2 dt/dalpha.
double wilson_hilferty_grad(double alpha, double x) {
  const double t = std::cbrt(x / alpha), root = std::sqrt(alpha);
  const double z = (t - 1 + 1 / (9 * alpha)) * 3 * root;
  const double dt = 1 / (9 * alpha * alpha) - z / (6 * alpha * root);
  return t * t * t + 3 * alpha * t * t * dt;
}

// dx/dalpha of a Gamma(alpha, 1) draw x: with F/f = x S, dF/dalpha = f x (S' + S (log x -
// digamma(alpha))), and the upper tail's Q the same with the opposite sign.
double standard_gamma_grad_one(double alpha, double x, double tolerance) {
  if (!(alpha > 0) || std::isnan(x) || std::isinf(alpha) || std::isinf(x)) {
    return std::numeric_limits<double>::quiet_NaN();  // as torch
  }
  if (!(x > 0)) return 0;
  if (alpha > kLargeShape) return wilson_hilferty_grad(alpha, x);
  const double log_term = std::log(x) - digamma_double(alpha);
  if (x < alpha + 1) {
    const Dual s = lower_series(alpha, x, tolerance);
    return -x * (s.d + s.v * log_term);
  }
  const Dual q = upper_fraction(alpha, x, tolerance);
  return x * (q.d + q.v * log_term);
}

template <typename T>
void fill_standard_gamma(const Tensor& alpha, const Tensor& out, const std::optional<Generator>& generator) {
  const int64_t n = out.numel();
  const auto [key, first] = reserve_counters(generator, static_cast<uint64_t>(n));
  const T* a = alpha.data_ptr<T>();
  T* o = out.data_ptr<T>();
  at::parallel_for(0, n, 1024, [&, key = key, first = first](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      ElementEngine engine = element_engine(key, first + static_cast<uint64_t>(i));
      const auto draw = static_cast<T>(sample_standard_gamma(static_cast<double>(a[i]), engine));
      o[i] = std::max(std::numeric_limits<T>::min(), draw);
    }
  });
}

Tensor standard_gamma_impl(const Tensor& self, const std::optional<Generator>& generator, bool meta) {
  check_gamma_dtype(self.scalar_type(), "gamma_cpu");
  const Tensor alpha = self.contiguous();
  Tensor out = at::empty(alpha.sizes(), alpha.options());
  if (meta || out.numel() == 0) return out;
  dispatch_types<kFloating>(self.scalar_type(), "gamma_cpu",
                            [&]<typename T>() { fill_standard_gamma<T>(alpha, out, generator); });
  return out;
}

}  // namespace

Tensor standard_gamma_cpu(const Tensor& self, std::optional<at::Generator> generator) {
  return standard_gamma_impl(self, generator, false);
}
Tensor standard_gamma_meta(const Tensor& self, std::optional<at::Generator> generator) {
  return standard_gamma_impl(self, generator, true);
}

Tensor standard_gamma_grad(const Tensor& self, const Tensor& output) {
  check_gamma_dtype(self.scalar_type(), "_standard_gamma_grad_cpu");
  TORCH_CHECK(output.scalar_type() == self.scalar_type(), "Found dtype ", output.scalar_type(), " but expected ",
              self.scalar_type());
  std::vector<Tensor> both = at::broadcast_tensors({self, output});
  Tensor out = at::empty(both[0].sizes(), self.options());
  if (out.is_meta() || out.numel() == 0) return out;
  const Tensor alpha = both[0].contiguous(), x = both[1].contiguous();
  dispatch_types<kFloating>(self.scalar_type(), "_standard_gamma_grad_cpu", [&]<typename T>() {
    const T* a = alpha.data_ptr<T>();
    const T* xs = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    at::parallel_for(0, out.numel(), 256, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        o[i] = static_cast<T>(
            standard_gamma_grad_one(static_cast<double>(a[i]), static_cast<double>(xs[i]), kTolerance<T>));
      }
    });
  });
  return out;
}

// Gamma draws normalised along the last dim (a 0-dim input is its own last dim). Shapes
// that all draw the floor value split evenly, as torch's do.
Tensor sample_dirichlet(const Tensor& self, std::optional<at::Generator> generator) {
  check_gamma_dtype(self.scalar_type(), "dirichlet");
  if (self.is_meta() || self.numel() == 0) return at::empty(self.sizes(), self.options());
  // Drawn and normalised in double, then kept inside (0, 1) as torch does: float draws of
  // small concentrations would underflow to whole rows of ties and exact ones.
  const Tensor gammas = standard_gamma_impl(self.to(c10::kDouble), generator, false);
  const Tensor shares = self.dim() == 0 ? at::div(gammas, gammas) : at::div(gammas, gammas.sum({-1}, true));
  Tensor out = shares.to(self.scalar_type());
  dispatch_types<kFloating>(self.scalar_type(), "dirichlet", [&]<typename T>() {
    out.clamp_(static_cast<double>(std::numeric_limits<T>::min()), static_cast<double>(std::nextafter(T(1), T(0))));
  });
  return out;
}

}  // namespace at::inline tessera::native
