// Random operators on the CPU generator (c10::CPUGeneratorImpl, Philox4x32-10): the
// in-place samplers uniform_, normal_, random_, bernoulli_ (p a float or a tensor),
// exponential_, geometric_, log_normal_, cauchy_ and the
// functional bernoulli, multinomial and randperm, each with a Meta kernel that runs the
// same checks; their out= forms; and the factories rand / randn / randint / *_like,
// written over empty + an in-place sampler.
//
// A kernel reserves Philox counters under the generator's lock (one block of four 32-bit
// words per 1, 2 or 4 elements, by how many bits an element takes), then element i draws
// from block first + i / per_block on whichever thread runs it: the numbers depend on the
// seed and the call sequence only, not on the thread count.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/TensorIterator.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/random/PhiloxStream.h>
#include <aten/ops/Functions.h>
#include <c10/core/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>

namespace at::inline tessera::native {

using c10::CPUGeneratorImpl;
using Words = std::array<uint32_t, 4>;

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// Fills every element of self from Philox blocks: gen(words, values) turns one block into
// PerBlock values, which go to PerBlock consecutive elements (in memory order).
template <typename T, int PerBlock, typename Gen>
void fill_random(Tensor& self, const std::optional<Generator>& g, Gen gen) {
  const int64_t n = self.numel();
  if (n == 0) return;
  const auto [key, first] = reserve_counters(g, static_cast<uint64_t>((n + PerBlock - 1) / PerBlock));
  // A dense tensor is written in place, element k of memory order taking value k.
  Tensor dst = is_non_overlapping_and_dense(self) ? self : at::empty(self.sizes(), self.scalar_type());
  const char* origin = static_cast<const char*>(dst.data_ptr());
  TensorIterator iter = TensorIterator::nullary_op(dst);
  iter.for_each([&, key = key, first = first](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
    T values[PerBlock];
    uint64_t cached = ~uint64_t{0};
    for (int64_t j = 0; j < n1; ++j) {
      char* row = data[0] + j * strides[1];
      for (int64_t i = 0; i < n0; ++i) {
        char* p = row + i * strides[0];
        auto k = static_cast<uint64_t>((p - origin) / static_cast<int64_t>(sizeof(T)));
        uint64_t block = k / PerBlock;
        if (block != cached) {
          gen(CPUGeneratorImpl::philox(key, first + block), values);
          cached = block;
        }
        *reinterpret_cast<T*>(p) = values[k % PerBlock];
      }
    }
  });
  if (!dst.is_same(self)) self.copy_(dst);
}

[[noreturn]] void not_implemented(const char* op, c10::ScalarType t) {
  TORCH_CHECK(false, "\"", op, "\" not implemented for '", t, "'");
}

template <typename T>
constexpr int mantissa_bits() {
  if constexpr (std::is_same_v<T, c10::Half>) return 11;
  else if constexpr (std::is_same_v<T, c10::BFloat16>) return 8;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else return 53;
}

// The C++ type names torch's bound checks print.
template <typename T>
const char* cpp_type_name() {
  if constexpr (std::is_same_v<T, uint8_t>) return "unsigned char";
  else if constexpr (std::is_same_v<T, int8_t>) return "signed char";
  else if constexpr (std::is_same_v<T, int16_t>) return "short";
  else if constexpr (std::is_same_v<T, int32_t>) return "int";
  else if constexpr (std::is_same_v<T, int64_t>) return "long";
  else if constexpr (std::is_same_v<T, bool>) return "bool";
  else return "floating";
}

void check_uniform_type(c10::ScalarType t) {
  if (!c10::isFloatingType(t) && !c10::isComplexType(t)) not_implemented("check_uniform_bounds", t);
}
void check_normal_type(c10::ScalarType t) {
  if (!c10::isFloatingType(t) && !c10::isComplexType(t)) not_implemented("normal_kernel_cpu", t);
}
constexpr unsigned kSampleTypes = kFloating | kReducedFloat | kComplex | kComplexHalf;

void check_uniform_args(c10::ScalarType t, double from, double to) {
  check_uniform_type(t);
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  double limit = dispatch_types<kSampleTypes>(t, "check_uniform_bounds", [&]<typename T>() {
    if constexpr (c10::detail::is_complex_v<T>) {
      return static_cast<double>(std::numeric_limits<typename T::value_type>::max());
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<double>(std::numeric_limits<T>::max());
    } else {
      return static_cast<double>(std::is_same_v<T, c10::Half> ? 65504.0f : 3.38953139e38f);
    }
  });
  TORCH_CHECK(to - from <= limit, "uniform_ expects to-from <= std::numeric_limits<", t, ">::max(), but found to=", to,
              " and from=", from, " which result in to-from to exceed the limit");
}

// Uniform in [from, to) for a real type T from two words.
template <typename T>
T uniform_value(uint32_t hi, uint32_t lo, double from, double to) {
  using M = opmath_t<T>;
  M u;
  if constexpr (std::is_same_v<T, double>) {
    u = c10::uniform_double53(hi, lo);
  } else {
    constexpr int bits = mantissa_bits<T>();
    u = static_cast<M>(hi >> (32 - bits)) * static_cast<M>(1.0 / static_cast<double>(1ull << bits));
  }
  T v = cast<T>(static_cast<M>(from) + u * (static_cast<M>(to) - static_cast<M>(from)));
  // Rounding can reach `to`; the range is half-open.
  if (!(static_cast<double>(static_cast<M>(v)) < to) && from < to) v = cast<T>(static_cast<M>(from));
  return v;
}

// Two independent standard normals (Box-Muller) from one block.
std::pair<double, double> normal_pair(const Words& w) {
  double u1 = 1.0 - c10::uniform_double53(w[0], w[1]);  // (0, 1]: log is finite
  double u2 = c10::uniform_double53(w[2], w[3]);
  double r = std::sqrt(-2.0 * std::log(u1));
  return {r * std::cos(kTwoPi * u2), r * std::sin(kTwoPi * u2)};
}

// Bounds of random_: [from, from + range) with range as uint64 (0 means 2^64).
struct RandomRange {
  int64_t from;
  uint64_t range;
};

template <typename T>
RandomRange random_from_to_range(int64_t from, std::optional<int64_t> to) {
  if (to) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
  }
  if constexpr (std::is_integral_v<T>) {
    const int64_t lo = std::is_same_v<T, bool> ? 0 : static_cast<int64_t>(std::numeric_limits<T>::lowest());
    const int64_t hi = std::is_same_v<T, bool> ? 1 : static_cast<int64_t>(std::numeric_limits<T>::max());
    TORCH_CHECK(from >= lo && from <= hi, "from is out of bounds for ", cpp_type_name<T>());
    if (to) {
      TORCH_CHECK(*to - 1 >= lo && *to - 1 <= hi, "to - 1 is out of bounds for ", cpp_type_name<T>());
      return {from, static_cast<uint64_t>(*to) - static_cast<uint64_t>(from)};
    }
    TORCH_CHECK(from <= hi, "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, but got from=",
                from, " > to_inc=", hi);
    return {from, static_cast<uint64_t>(hi) - static_cast<uint64_t>(from) + 1};  // 0 (2^64) for the full int64 range
  } else {
    if (to) return {from, static_cast<uint64_t>(*to) - static_cast<uint64_t>(from)};
    const int64_t to_inc = int64_t(1) << mantissa_bits<T>();
    TORCH_CHECK(from <= to_inc, "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, but got from=",
                from, " > to_inc=", to_inc);
    return {from, static_cast<uint64_t>(to_inc - from) + 1};
  }
}

constexpr unsigned kRandomTypes = kIntegral | kBoolType | kFloating | kReducedFloat;

Tensor& random_impl(Tensor& self, int64_t from, std::optional<int64_t> to, const std::optional<Generator>& g,
                    bool run) {
  c10::ScalarType t = self.scalar_type();
  if (c10::isComplexType(t)) not_implemented("random_from_to_range_calc", t);
  dispatch_types<kRandomTypes>(t, "random_", [&]<typename T>() {
    RandomRange r = random_from_to_range<T>(from, to);
    if (!run) return;
    auto value = [r](uint64_t pick) { return cast<T>(static_cast<int64_t>(static_cast<uint64_t>(r.from) + pick)); };
    if (r.range != 0 && r.range <= (1ull << 32)) {  // 32 random bits per element
      fill_random<T, 4>(self, g, [r, value](const Words& w, T* out) {
        for (int s = 0; s < 4; ++s) out[s] = value(w[s] % r.range);
      });
    } else {
      fill_random<T, 2>(self, g, [r, value](const Words& w, T* out) {
        for (int s = 0; s < 2; ++s) {
          uint64_t bits = c10::combine64(w[2 * s], w[2 * s + 1]);
          out[s] = value(r.range == 0 ? bits : bits % r.range);
        }
      });
    }
  });
  return self;
}

void check_bernoulli_p(double p) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
}

void check_multinomial(const Tensor& self, int64_t n_sample, bool replacement) {
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()),
              "multinomial only supports floating-point dtypes for input, got: ", self.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  int64_t categories = self.size(-1);
  TORCH_CHECK(replacement || n_sample <= categories,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  TORCH_CHECK(categories <= (int64_t(1) << 24), "number of categories cannot exceed 2^24");
}

std::vector<int64_t> multinomial_shape(const Tensor& self, int64_t n_sample) {
  return self.dim() == 1 ? std::vector<int64_t>{n_sample} : std::vector<int64_t>{self.size(0), n_sample};
}

void check_randperm(int64_t n, c10::ScalarType t) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  if (!(c10::isIntegralType(t, false) || c10::isFloatingType(t))) {
    not_implemented("randperm", t);
  }
  if (t == c10::kHalf) TORCH_CHECK(n <= (int64_t(1) << 11) + 1, "n cannot be greater than 2049 for Half type.");
  // Beyond 2^8 + 1 BFloat16 cannot hold every index (torch 1.13 returned duplicates there;
  // current torch checks every floating type against its precision).
  if (t == c10::kBFloat16) TORCH_CHECK(n <= (int64_t(1) << 8) + 1, "n cannot be greater than 257 for BFloat16 type.");
  if (t == c10::kFloat) TORCH_CHECK(n <= (int64_t(1) << 24) + 1, "n cannot be greater than 2^24+1 for Float type.");
  if (t == c10::kDouble) TORCH_CHECK(n <= (int64_t(1) << 53) + 1, "n cannot be greater than 2^53+1 for Double type.");
  if (c10::isIntegralType(t, false)) {
    dispatch_types<kIntegral>(t, "randperm", [&]<typename T>() { (void)Scalar(n > 0 ? n - 1 : n).to<T>(); });
  }
}

}  // namespace

// ---------------------------------------------------------------- in-place samplers

Tensor& uniform_cpu_(Tensor& self, double from, double to, std::optional<at::Generator> generator) {
  check_uniform_args(self.scalar_type(), from, to);
  dispatch_types<kSampleTypes>(self.scalar_type(), "uniform_", [&]<typename T>() {
    if constexpr (c10::detail::is_complex_v<T>) {
      using R = typename T::value_type;
      if constexpr (std::is_same_v<R, double>) {
        fill_random<T, 1>(self, generator, [from, to](const Words& w, T* out) {
          out[0] = T(uniform_value<R>(w[0], w[1], from, to), uniform_value<R>(w[2], w[3], from, to));
        });
      } else {
        fill_random<T, 2>(self, generator, [from, to](const Words& w, T* out) {
          out[0] = T(uniform_value<R>(w[0], 0, from, to), uniform_value<R>(w[1], 0, from, to));
          out[1] = T(uniform_value<R>(w[2], 0, from, to), uniform_value<R>(w[3], 0, from, to));
        });
      }
    } else if constexpr (std::is_same_v<T, double>) {
      fill_random<T, 2>(self, generator, [from, to](const Words& w, T* out) {
        out[0] = uniform_value<T>(w[0], w[1], from, to);
        out[1] = uniform_value<T>(w[2], w[3], from, to);
      });
    } else {
      fill_random<T, 4>(self, generator, [from, to](const Words& w, T* out) {
        for (int s = 0; s < 4; ++s) out[s] = uniform_value<T>(w[s], 0, from, to);
      });
    }
  });
  return self;
}

Tensor& uniform_meta_(Tensor& self, double from, double to, std::optional<at::Generator> generator) {
  check_uniform_args(self.scalar_type(), from, to);
  return self;
}

static void check_normal_args(c10::ScalarType t, double std) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  check_normal_type(t);
}

Tensor& normal_cpu_(Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  check_normal_args(self.scalar_type(), std);
  dispatch_types<kSampleTypes>(self.scalar_type(), "normal_kernel_cpu", [&]<typename T>() {
    if constexpr (c10::detail::is_complex_v<T>) {
      using R = typename T::value_type;
      const double s = std / std::sqrt(2.0);  // each component carries half the variance
      fill_random<T, 1>(self, generator, [mean, s](const Words& w, T* out) {
        auto [z0, z1] = normal_pair(w);
        out[0] = T(static_cast<R>(mean + s * z0), static_cast<R>(mean + s * z1));
      });
    } else {
      // Both Box-Muller outputs: one block makes two elements.
      fill_random<T, 2>(self, generator, [mean, std](const Words& w, T* out) {
        auto [z0, z1] = normal_pair(w);
        out[0] = cast<T>(mean + std * z0);
        out[1] = cast<T>(mean + std * z1);
      });
    }
  });
  return self;
}

Tensor& normal_meta_(Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  check_normal_args(self.scalar_type(), std);
  return self;
}

// ---------------------------------------------------------------- samplers by inversion
// exponential_, geometric_, log_normal_ and cauchy_: each element transforms one uniform (or,
// for log_normal_, one normal) draw, a double per two words.

namespace {

// Fills self with f(u) for u uniform in (0, 1], computed in double and cast to T.
template <unsigned Types, typename F>
void fill_by_inversion(Tensor& self, const std::optional<Generator>& g, const char* op, F f) {
  dispatch_types<Types>(self.scalar_type(), op, [&]<typename T>() {
    fill_random<T, 2>(self, g, [&f](const Words& w, T* out) {
      out[0] = cast<T>(f(1.0 - c10::uniform_double53(w[0], w[1])));
      out[1] = cast<T>(f(1.0 - c10::uniform_double53(w[2], w[3])));
    });
  });
}

constexpr unsigned kRealFloating = kFloating | kReducedFloat;

void check_exponential(c10::ScalarType t, double lambd) {
  TORCH_CHECK(lambd >= 0.0, "exponential_ expects lambda >= 0.0, but found lambda=", lambd);
  if (!c10::isFloatingType(t)) not_implemented("exponential_cpu", t);
}
void check_geometric(c10::ScalarType t, double p) {
  TORCH_CHECK(0 < p && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  if (!c10::isFloatingType(t) && !(c10::isIntegralType(t, false))) not_implemented("geometric_cpu", t);
}
void check_log_normal(c10::ScalarType t, double std) {
  TORCH_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  if (!c10::isFloatingType(t)) not_implemented("log_normal_cpu", t);
}
void check_cauchy(c10::ScalarType t) {
  if (!c10::isFloatingType(t)) not_implemented("cauchy_cpu", t);
}

}  // namespace

Tensor& exponential_cpu_(Tensor& self, double lambd, std::optional<at::Generator> generator) {
  check_exponential(self.scalar_type(), lambd);
  fill_by_inversion<kRealFloating>(self, generator, "exponential_cpu", [lambd](double u) {
    return -std::log(u) / lambd;
  });
  return self;
}
Tensor& exponential_meta_(Tensor& self, double lambd, std::optional<at::Generator> generator) {
  check_exponential(self.scalar_type(), lambd);
  return self;
}

// The number of Bernoulli(p) trials up to the first success: ceil(log(u) / log(1 - p)).
Tensor& geometric_cpu_(Tensor& self, double p, std::optional<at::Generator> generator) {
  check_geometric(self.scalar_type(), p);
  const double scale = 1.0 / std::log1p(-p);
  fill_by_inversion<kRealFloating | kIntegral>(self, generator, "geometric_cpu", [scale](double u) {
    return std::max(1.0, std::ceil(std::log(u) * scale));
  });
  return self;
}
Tensor& geometric_meta_(Tensor& self, double p, std::optional<at::Generator> generator) {
  check_geometric(self.scalar_type(), p);
  return self;
}

Tensor& log_normal_cpu_(Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  check_log_normal(self.scalar_type(), std);
  dispatch_types<kRealFloating>(self.scalar_type(), "log_normal_cpu", [&]<typename T>() {
    fill_random<T, 2>(self, generator, [mean, std](const Words& w, T* out) {
      auto [z0, z1] = normal_pair(w);
      out[0] = cast<T>(std::exp(mean + std * z0));
      out[1] = cast<T>(std::exp(mean + std * z1));
    });
  });
  return self;
}
Tensor& log_normal_meta_(Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  check_log_normal(self.scalar_type(), std);
  return self;
}

Tensor& cauchy_cpu_(Tensor& self, double median, double sigma, std::optional<at::Generator> generator) {
  check_cauchy(self.scalar_type());
  constexpr double kPi = kTwoPi / 2;
  fill_by_inversion<kRealFloating>(self, generator, "cauchy_cpu", [median, sigma](double u) {
    return median + sigma * std::tan(kPi * (u - 0.5));
  });
  return self;
}
Tensor& cauchy_meta_(Tensor& self, double median, double sigma, std::optional<at::Generator> generator) {
  check_cauchy(self.scalar_type());
  return self;
}

// ---------------------------------------------------------------- normal with tensor moments, poisson

namespace {
void check_std_tensor(const Tensor& std) {
  TORCH_CHECK(!std.is_complex(), "normal expects standard deviation to be non-complex");
  if (!std.is_meta() && std.numel() > 0) {
    TORCH_CHECK(std.min().ge(0).item().toBool(), "normal expects all elements of std >= 0.0");
  }
}
}  // namespace

// Samples around a tensor of means (or with a tensor of deviations): standard normals from
// normal_, scaled and shifted. Their derivative is zero, as torch's (no reparameterization).
Tensor normal_Tensor_float(const Tensor& mean, double std, std::optional<at::Generator> generator) {
  check_normal_args(mean.scalar_type(), std);
  Tensor out = at::empty_like(mean);
  if (out.is_meta()) return out;
  return out.normal_(0.0, std, generator).add_(mean);
}

Tensor normal_float_Tensor(double mean, const Tensor& std, std::optional<at::Generator> generator) {
  check_std_tensor(std);
  Tensor out = at::empty_like(std);
  if (out.is_meta()) return out;
  return out.normal_(0.0, 1.0, generator).mul_(std).add_(mean);
}

Tensor normal_Tensor_Tensor(const Tensor& mean, const Tensor& std, std::optional<at::Generator> generator) {
  check_std_tensor(std);
  const auto sizes = infer_size(mean.sizes(), std.sizes());
  Tensor out = at::empty(sizes, TensorOptions().dtype(c10::promoteTypes(mean.scalar_type(), std.scalar_type()))
                                    .device(mean.device()));
  if (out.is_meta()) return out;
  return out.normal_(0.0, 1.0, generator).mul_(std).add_(mean);
}

Tensor normal_float_float(double mean, double std, IntArrayRef size, std::optional<at::Generator> generator,
                          std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                          std::optional<at::Device> device, std::optional<bool> pin_memory) {
  Tensor out = at::empty(size, dtype, layout, device, pin_memory, std::nullopt);
  if (out.is_meta()) {
    check_normal_args(out.scalar_type(), std);
    return out;
  }
  return out.normal_(mean, std, generator);
}

// A Poisson draw per element with that element's rate: each element seeds its own engine
// from its Philox block, so the draws depend on the seed and call order only.
Tensor poisson_cpu(const Tensor& self, std::optional<at::Generator> generator) {
  if (!c10::isFloatingType(self.scalar_type())) not_implemented("poisson_cpu", self.scalar_type());
  const Tensor rates = self.contiguous();
  Tensor out = at::empty_like(rates);
  const int64_t n = rates.numel();
  if (n == 0) return out;
  TORCH_CHECK(rates.min().ge(0).item().toBool(), "invalid Poisson rate, expected rate to be non-negative");
  const auto [key, first] = reserve_counters(generator, static_cast<uint64_t>(n));
  dispatch_types<kFloating | kReducedFloat>(self.scalar_type(), "poisson_cpu", [&]<typename T>() {
    const T* rate = rates.data_ptr<T>();
    T* o = out.data_ptr<T>();
    at::parallel_for(0, n, 1024, [&, key = key, first = first](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        ElementEngine engine = element_engine(key, first + static_cast<uint64_t>(i));
        const double lambda = static_cast<double>(rate[i]);
        o[i] = lambda == 0 ? T(0) : cast<T>(static_cast<double>(std::poisson_distribution<int64_t>(lambda)(engine)));
      }
    });
  });
  return out;
}

// binomial: count and prob broadcast together; each draw from its own engine seeded by the
// generator's counter-based stream (like poisson). A count below 1 or prob <= 0 draws 0,
// prob >= 1 draws the whole (floored) count, NaN in either gives NaN, an infinite count
// infinity.
Tensor binomial_impl(const Tensor& count, const Tensor& prob, std::optional<at::Generator> generator, bool meta) {
  const c10::ScalarType dtype = count.scalar_type();
  if (!c10::isFloatingType(dtype) || dtype == c10::kHalf || dtype == c10::kBFloat16) {
    not_implemented("binomial_cpu", dtype);
  }
  TORCH_CHECK(prob.scalar_type() == dtype, "Found dtype ", prob.scalar_type(), " but expected ", dtype);
  std::vector<Tensor> both = at::broadcast_tensors({count, prob});
  Tensor out = make_empty(both[0].sizes(), dtype, count.device());
  const int64_t n = out.numel();
  if (meta || n == 0) return out;
  const Tensor c = both[0].contiguous(), p = both[1].contiguous();
  const auto [key, first] = reserve_counters(generator, static_cast<uint64_t>(n));
  dispatch_types<kFloating>(dtype, "binomial_cpu", [&]<typename T>() {
    const T* cv = c.data_ptr<T>();
    const T* pv = p.data_ptr<T>();
    T* o = out.data_ptr<T>();
    at::parallel_for(0, n, 1024, [&, key = key, first = first](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const double trials = std::floor(static_cast<double>(cv[i])), chance = static_cast<double>(pv[i]);
        if (std::isnan(trials) || std::isnan(chance)) {
          o[i] = std::numeric_limits<T>::quiet_NaN();
        } else if (trials < 1 || chance <= 0) {
          o[i] = T(0);
        } else if (chance >= 1 || std::isinf(trials)) {
          o[i] = static_cast<T>(chance >= 1 ? trials : trials * chance);
        } else {
          ElementEngine engine = element_engine(key, first + static_cast<uint64_t>(i));
          if (trials < 0x1p62) {
            o[i] = static_cast<T>(std::binomial_distribution<int64_t>(static_cast<int64_t>(trials), chance)(engine));
          } else {  // past int64's trial counts: the normal limit, exact to double's precision there
            const double mean = trials * chance, sd = std::sqrt(mean * (1 - chance));
            o[i] = static_cast<T>(std::clamp(std::round(std::normal_distribution<double>(mean, sd)(engine)), 0.0, trials));
          }
        }
      }
    });
  });
  return out;
}

Tensor binomial_cpu(const Tensor& count, const Tensor& prob, std::optional<at::Generator> generator) {
  return binomial_impl(count, prob, generator, false);
}
Tensor binomial_meta(const Tensor& count, const Tensor& prob, std::optional<at::Generator> generator) {
  return binomial_impl(count, prob, generator, true);
}

Tensor poisson_meta(const Tensor& self, std::optional<at::Generator> generator) {
  if (!c10::isFloatingType(self.scalar_type())) not_implemented("poisson_cpu", self.scalar_type());
  return at::empty_like(self);
}

Tensor& random_from_cpu_(Tensor& self, int64_t from, std::optional<int64_t> to, std::optional<at::Generator> generator) {
  return random_impl(self, from, to, generator, true);
}

Tensor& random_from_meta_(Tensor& self, int64_t from, std::optional<int64_t> to,
                          std::optional<at::Generator> generator) {
  return random_impl(self, from, to, generator, false);
}

Tensor& random__to(Tensor& self, int64_t to, std::optional<at::Generator> generator) {
  return self.random_(0, to, generator);
}

Tensor& random_(Tensor& self, std::optional<at::Generator> generator) {
  return self.random_(0, std::nullopt, generator);
}

Tensor& bernoulli_float_cpu_(Tensor& self, double p, std::optional<at::Generator> generator) {
  check_bernoulli_p(p);
  dispatch_types<kRandomTypes | kComplex>(self.scalar_type(), "bernoulli_scalar_cpu_", [&]<typename T>() {
    fill_random<T, 2>(self, generator, [p](const Words& w, T* out) {
      out[0] = cast<T>(c10::uniform_double53(w[0], w[1]) < p ? 1 : 0);
      out[1] = cast<T>(c10::uniform_double53(w[2], w[3]) < p ? 1 : 0);
    });
  });
  return self;
}

Tensor& bernoulli_float_meta_(Tensor& self, double p, std::optional<at::Generator> generator) {
  check_bernoulli_p(p);
  return self;
}

// bernoulli_(p tensor): element i of self is 1 with probability p[i], p broadcast to self.
// torch's order of checks: self's dtype, then the broadcast, then p's dtype, then values.
static Tensor bernoulli_probabilities(const Tensor& self, const Tensor& p) {
  if (c10::isComplexType(self.scalar_type())) not_implemented("bernoulli_tensor_cpu_self_", self.scalar_type());
  Tensor expanded = p.expand(self.sizes());
  if (!c10::isFloatingType(p.scalar_type())) not_implemented("bernoulli_tensor_cpu_p_", p.scalar_type());
  return expanded;
}

Tensor& bernoulli_tensor_cpu_(Tensor& self, const Tensor& p, std::optional<at::Generator> generator) {
  Tensor expanded = bernoulli_probabilities(self, p);
  const int64_t n = self.numel();
  if (n == 0) return self;
  // The probabilities in self's row-major order, as doubles.
  Tensor pd_t = at::empty(self.sizes(), c10::kDouble);
  pd_t.copy_(expanded);
  const double* pd = pd_t.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK(pd[i] >= 0 && pd[i] <= 1, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  }
  // Two draws (53-bit uniforms) per Philox block, element i taking draw i.
  const auto [key, first] = reserve_counters(generator, static_cast<uint64_t>((n + 1) / 2));
  Tensor dst = self.is_contiguous() ? self : at::empty(self.sizes(), self.scalar_type());
  dispatch_types<kRandomTypes>(self.scalar_type(), "bernoulli_tensor_cpu_self_", [&]<typename T>() {
    T* out = dst.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      Words w = CPUGeneratorImpl::philox(key, first + static_cast<uint64_t>(i / 2));
      double u = (i % 2 == 0) ? c10::uniform_double53(w[0], w[1]) : c10::uniform_double53(w[2], w[3]);
      out[i] = cast<T>(u < pd[i] ? 1 : 0);
    }
  });
  if (!dst.is_same(self)) self.copy_(dst);
  return self;
}

Tensor& bernoulli_tensor_meta_(Tensor& self, const Tensor& p, std::optional<at::Generator> generator) {
  bernoulli_probabilities(self, p);
  return self;
}

// ---------------------------------------------------------------- functional samplers

// Probabilities (any floating dtype, any layout) as a contiguous double buffer.
static Tensor contiguous_double(const Tensor& self) {
  Tensor p = at::empty(self.sizes(), c10::kDouble);
  p.copy_(self);
  return p;
}

Tensor bernoulli_cpu(const Tensor& self, std::optional<at::Generator> generator) {
  c10::ScalarType t = self.scalar_type();
  if (!c10::isFloatingType(t)) not_implemented("bernoulli_tensor_cpu_p_", t);
  const int64_t n = self.numel();
  Tensor result = at::empty(self.sizes(), t);
  if (n == 0) return result;
  Tensor p = contiguous_double(self);
  const double* pd = p.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK(pd[i] >= 0 && pd[i] <= 1, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  }
  const std::pair<uint64_t, uint64_t> counters = reserve_counters(generator, static_cast<uint64_t>(n));
  const uint64_t key = counters.first, first = counters.second;
  dispatch_types<kFloating | kReducedFloat>(t, "bernoulli_tensor_cpu_p_", [&]<typename T>() {
    T* out = result.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      Words w = CPUGeneratorImpl::philox(key, first + static_cast<uint64_t>(i));
      out[i] = cast<T>(c10::uniform_double53(w[0], w[1]) < pd[i] ? 1 : 0);
    }
  });
  return result;
}

Tensor bernoulli_meta(const Tensor& self, std::optional<at::Generator> generator) {
  c10::ScalarType t = self.scalar_type();
  if (!c10::isFloatingType(t)) not_implemented("bernoulli_tensor_cpu_p_", t);
  return at::empty(self.sizes(), t, std::nullopt, self.device(), std::nullopt, std::nullopt);
}

Tensor bernoulli_p(const Tensor& self, double p, std::optional<at::Generator> generator) {
  Tensor result = at::empty_like(self, std::nullopt, std::nullopt, std::nullopt, std::nullopt, c10::MemoryFormat::Contiguous);
  result.bernoulli_(p, generator);
  return result;
}

Tensor bernoulli_Tensor(const Tensor& self, const Tensor& p, std::optional<at::Generator> generator) {
  Tensor result = at::empty_like(self, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt);
  result.bernoulli_(p, generator);
  return result;
}

// out= of bernoulli(self): out takes self's shape (resized as torch's resize_ does) and
// draws with self as the probabilities.
Tensor& bernoulli_out(const Tensor& self, std::optional<at::Generator> generator, Tensor& out) {
  resize_factory_out(out, self.sizes());
  return out.bernoulli_(self, generator);
}

Tensor multinomial_cpu(const Tensor& self, int64_t num_samples, bool replacement,
                       std::optional<at::Generator> generator) {
  check_multinomial(self, num_samples, replacement);
  const int64_t rows = self.dim() == 1 ? 1 : self.size(0), k = self.size(-1);
  Tensor result = at::empty(multinomial_shape(self, num_samples), c10::kLong);
  Tensor p = contiguous_double(self);
  const double* pd = p.data_ptr<double>();
  for (int64_t i = 0; i < rows * k; ++i) {
    TORCH_CHECK(std::isfinite(pd[i]) && pd[i] >= 0, "probability tensor contains either `inf`, `nan` or element < 0");
  }
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t c = 0; c < k; ++c) total += pd[r * k + c];
    TORCH_CHECK(total > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  const int64_t per_row = replacement ? num_samples : k;
  auto [key, first] = reserve_counters(generator, static_cast<uint64_t>(rows * per_row));
  int64_t* out = result.data_ptr<int64_t>();
  std::vector<double> cum(static_cast<size_t>(k));
  std::vector<std::pair<double, int64_t>> keys(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = pd + r * k;
    const uint64_t base = first + static_cast<uint64_t>(r * per_row);
    if (replacement) {
      // Inverse CDF: the first category whose cumulative weight exceeds u * total.
      std::partial_sum(row, row + k, cum.begin());
      const double total = cum.back();
      for (int64_t j = 0; j < num_samples; ++j) {
        Words w = CPUGeneratorImpl::philox(key, base + static_cast<uint64_t>(j));
        double u = c10::uniform_double53(w[0], w[1]) * total;
        auto it = std::upper_bound(cum.begin(), cum.end(), u);
        int64_t c = std::min<int64_t>(it - cum.begin(), k - 1);
        while (row[c] == 0 && c > 0) --c;  // u landed on the total's rounding edge
        out[r * num_samples + j] = c;
      }
    } else {
      // Without replacement: the num_samples largest p_c / E_c, E_c ~ Exp(1) independent
      // (the exponential-race form of sequential sampling).
      for (int64_t c = 0; c < k; ++c) {
        Words w = CPUGeneratorImpl::philox(key, base + static_cast<uint64_t>(c));
        double e = -std::log(1.0 - c10::uniform_double53(w[0], w[1]));
        keys[static_cast<size_t>(c)] = {row[c] > 0 ? row[c] / e : 0.0, c};
      }
      std::partial_sort(keys.begin(), keys.begin() + num_samples, keys.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      for (int64_t j = 0; j < num_samples; ++j) out[r * num_samples + j] = keys[static_cast<size_t>(j)].second;
    }
  }
  return result;
}

Tensor multinomial_meta(const Tensor& self, int64_t num_samples, bool replacement,
                        std::optional<at::Generator> generator) {
  check_multinomial(self, num_samples, replacement);
  return at::empty(multinomial_shape(self, num_samples), c10::kLong, std::nullopt, self.device(), std::nullopt,
                   std::nullopt);
}

Tensor& multinomial_out(const Tensor& self, int64_t num_samples, bool replacement,
                        std::optional<at::Generator> generator, Tensor& out) {
  TORCH_CHECK(out.device() == self.device(), "multinomial arguments must have the same device");
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()),
              "multinomial only supports floating-point dtypes for input, got: ", self.scalar_type());
  TORCH_CHECK(out.scalar_type() == c10::kLong, "multinomial expects Long tensor out, got: ", out.scalar_type());
  Tensor result = at::multinomial(self, num_samples, replacement, generator);
  resize_factory_out(out, result.sizes());
  out.copy_(result);
  return out;
}

Tensor& randperm_out_cpu(int64_t n, std::optional<at::Generator> generator, Tensor& out) {
  check_randperm(n, out.scalar_type());
  resize_factory_out(out, {n});
  if (n == 0) return out;
  // Fisher-Yates: position i swaps with a uniform j in [0, i], from the top down.
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  auto [key, first] = reserve_counters(generator, static_cast<uint64_t>(n));
  for (int64_t i = n - 1; i > 0; --i) {
    Words w = CPUGeneratorImpl::philox(key, first + static_cast<uint64_t>(i));
    auto j = static_cast<int64_t>(c10::combine64(w[0], w[1]) % static_cast<uint64_t>(i + 1));
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
  }
  Tensor dst = out.is_contiguous() ? out : at::empty({n}, out.scalar_type());
  dispatch_types<kIntegral | kFloating | kReducedFloat>(out.scalar_type(), "randperm", [&]<typename T>() {
    T* data = dst.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) data[i] = cast<T>(perm[static_cast<size_t>(i)]);
  });
  if (!dst.is_same(out)) out.copy_(dst);
  return out;
}

Tensor& randperm_out_meta(int64_t n, std::optional<at::Generator> generator, Tensor& out) {
  check_randperm(n, out.scalar_type());
  resize_factory_out(out, {n});
  return out;
}

// ---------------------------------------------------------------- factories over the samplers

Tensor rand(IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
            std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return rand_generator(size, std::nullopt, dtype, layout, device, pin_memory);
}

Tensor rand_generator(IntArrayRef size, std::optional<at::Generator> generator, std::optional<at::ScalarType> dtype,
                      std::optional<at::Layout> layout, std::optional<at::Device> device,
                      std::optional<bool> pin_memory) {
  Tensor t = at::empty(size, dtype, layout, device, pin_memory, std::nullopt);
  t.uniform_(0, 1, generator);
  return t;
}

Tensor& rand_out(IntArrayRef size, Tensor& out) { return rand_generator_out(size, std::nullopt, out); }

Tensor& rand_generator_out(IntArrayRef size, std::optional<at::Generator> generator, Tensor& out) {
  resize_factory_out(out, size);
  return out.uniform_(0, 1, generator);
}

Tensor randn(IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
             std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return randn_generator(size, std::nullopt, dtype, layout, device, pin_memory);
}

Tensor randn_generator(IntArrayRef size, std::optional<at::Generator> generator, std::optional<at::ScalarType> dtype,
                       std::optional<at::Layout> layout, std::optional<at::Device> device,
                       std::optional<bool> pin_memory) {
  Tensor t = at::empty(size, dtype, layout, device, pin_memory, std::nullopt);
  t.normal_(0, 1, generator);
  return t;
}

Tensor& randn_out(IntArrayRef size, Tensor& out) { return randn_generator_out(size, std::nullopt, out); }

Tensor& randn_generator_out(IntArrayRef size, std::optional<at::Generator> generator, Tensor& out) {
  resize_factory_out(out, size);
  return out.normal_(0, 1, generator);
}

Tensor randint(int64_t high, IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
               std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return randint_low_generator(0, high, size, std::nullopt, dtype, layout, device, pin_memory);
}

Tensor randint_generator(int64_t high, IntArrayRef size, std::optional<at::Generator> generator,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                         std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return randint_low_generator(0, high, size, generator, dtype, layout, device, pin_memory);
}

Tensor randint_low(int64_t low, int64_t high, IntArrayRef size, std::optional<at::ScalarType> dtype,
                   std::optional<at::Layout> layout, std::optional<at::Device> device,
                   std::optional<bool> pin_memory) {
  return randint_low_generator(low, high, size, std::nullopt, dtype, layout, device, pin_memory);
}

Tensor randint_low_generator(int64_t low, int64_t high, IntArrayRef size, std::optional<at::Generator> generator,
                             std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                             std::optional<at::Device> device, std::optional<bool> pin_memory) {
  Tensor t = at::empty(size, dtype.value_or(c10::kLong), layout, device, pin_memory, std::nullopt);
  t.random_(low, high, generator);
  return t;
}

Tensor& randint_out(int64_t high, IntArrayRef size, Tensor& out) {
  return randint_low_generator_out(0, high, size, std::nullopt, out);
}

Tensor& randint_generator_out(int64_t high, IntArrayRef size, std::optional<at::Generator> generator, Tensor& out) {
  return randint_low_generator_out(0, high, size, generator, out);
}

Tensor& randint_low_out(int64_t low, int64_t high, IntArrayRef size, Tensor& out) {
  return randint_low_generator_out(low, high, size, std::nullopt, out);
}

Tensor& randint_low_generator_out(int64_t low, int64_t high, IntArrayRef size, std::optional<at::Generator> generator,
                                  Tensor& out) {
  resize_factory_out(out, size);
  return out.random_(low, high, generator);
}

Tensor randperm(int64_t n, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return randperm_generator(n, std::nullopt, dtype, layout, device, pin_memory);
}

Tensor randperm_generator(int64_t n, std::optional<at::Generator> generator, std::optional<at::ScalarType> dtype,
                          std::optional<at::Layout> layout, std::optional<at::Device> device,
                          std::optional<bool> pin_memory) {
  Tensor t = at::empty({n}, dtype.value_or(c10::kLong), layout, device, pin_memory, std::nullopt);
  return at::randperm_out(t, n, generator);
}

Tensor& randperm_out(int64_t n, Tensor& out) { return at::randperm_out(out, n, std::nullopt); }

Tensor rand_like(const Tensor& self, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                 std::optional<at::Device> device, std::optional<bool> pin_memory,
                 std::optional<at::MemoryFormat> memory_format) {
  Tensor t = at::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  t.uniform_(0, 1, std::nullopt);
  return t;
}

Tensor randn_like(const Tensor& self, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                  std::optional<at::Device> device, std::optional<bool> pin_memory,
                  std::optional<at::MemoryFormat> memory_format) {
  Tensor t = at::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  t.normal_(0, 1, std::nullopt);
  return t;
}

Tensor randint_like(const Tensor& self, int64_t high, std::optional<at::ScalarType> dtype,
                    std::optional<at::Layout> layout, std::optional<at::Device> device,
                    std::optional<bool> pin_memory, std::optional<at::MemoryFormat> memory_format) {
  return randint_like_low_dtype(self, 0, high, dtype, layout, device, pin_memory, memory_format);
}

Tensor randint_like_low_dtype(const Tensor& self, int64_t low, int64_t high, std::optional<at::ScalarType> dtype,
                              std::optional<at::Layout> layout, std::optional<at::Device> device,
                              std::optional<bool> pin_memory, std::optional<at::MemoryFormat> memory_format) {
  Tensor t = at::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  t.random_(low, high, std::nullopt);
  return t;
}

}  // namespace at::inline tessera::native
