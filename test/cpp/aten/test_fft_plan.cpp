// The FFT plans (aten/native/spectral/FFTPlan.h) against a direct DFT summed in long
// double: every length to 130 (each radix, the generic odd primes, Bluestein's large
// primes), some long smooth and awkward lengths, both directions, both precisions, and
// the real transforms with their even/odd and aligned/misaligned paths.
#include <aten/native/spectral/FFTPlan.h>
#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <thread>
#include <vector>

namespace {

namespace fft = at::native::fft;
using LD = long double;

std::vector<std::complex<LD>> direct_dft(const std::vector<std::complex<LD>>& x, bool forward) {
  const int64_t n = static_cast<int64_t>(x.size());
  const LD two_pi = 6.283185307179586476925286766559005768L;
  std::vector<std::complex<LD>> roots(n), out(n);
  for (int64_t q = 0; q < n; ++q) {
    const LD angle = two_pi * static_cast<LD>(q) / static_cast<LD>(n);
    roots[q] = {std::cos(angle), forward ? -std::sin(angle) : std::sin(angle)};
  }
  for (int64_t k = 0; k < n; ++k) {
    std::complex<LD> sum = 0;
    for (int64_t j = 0, q = 0; j < n; ++j, q = (q + k) % n) sum += x[j] * roots[q];
    out[k] = sum;
  }
  return out;
}

template <typename T>
std::vector<std::complex<LD>> random_line(int64_t n, unsigned seed, bool real) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::complex<LD>> x(n);
  // Values representable in T, so the reference sees exactly what the plan sees.
  for (auto& v : x) v = {static_cast<LD>(static_cast<T>(dist(gen))), real ? 0.0L : static_cast<LD>(static_cast<T>(dist(gen)))};
  return x;
}

// Error relative to the largest reference magnitude; an FFT's error grows like
// eps * log(n), a direct DFT's summation order aside.
template <typename T>
double tolerance(int64_t n) {
  const double eps = std::is_same_v<T, float> ? 6e-8 : 1.1e-16;
  return 8 * eps * (std::log2(static_cast<double>(n)) + 2);
}

template <typename T, typename Vec>
double relative_error(const Vec& got, const std::vector<std::complex<LD>>& want, int64_t count) {
  LD scale = 1e-30L, worst = 0;
  for (int64_t k = 0; k < count; ++k) scale = std::max(scale, std::abs(want[k]));
  for (int64_t k = 0; k < count; ++k) {
    const std::complex<LD> g(got[k].real(), got[k].imag());
    worst = std::max(worst, std::abs(g - want[k]));
  }
  return static_cast<double>(worst / scale);
}

template <typename T>
void check_complex(int64_t n, bool forward) {
  using C = c10::complex<T>;
  const auto x = random_line<T>(n, static_cast<unsigned>(n * 2 + forward), false);
  std::vector<C> in(n), out(n);
  for (int64_t j = 0; j < n; ++j) in[j] = C(static_cast<T>(x[j].real()), static_cast<T>(x[j].imag()));
  const fft::ComplexPlan<T> plan(n);
  std::vector<C> scratch(plan.scratch_size());
  plan.execute(in.data(), out.data(), scratch.data(), forward);
  EXPECT_LE(relative_error<T>(out, direct_dft(x, forward), n), tolerance<T>(n))
      << "n=" << n << (forward ? " forward" : " backward") << (plan.is_bluestein() ? " (Bluestein)" : "");
}

template <typename T>
void check_real(int64_t n, bool misaligned) {
  using C = c10::complex<T>;
  const auto x = random_line<T>(n, static_cast<unsigned>(n * 3 + misaligned), true);
  std::vector<T> buffer(n + 1);
  T* in = buffer.data() + (misaligned ? 1 : 0);
  for (int64_t j = 0; j < n; ++j) in[j] = static_cast<T>(x[j].real());
  const fft::RealPlan<T> plan(n);
  std::vector<C> scratch(plan.scratch_size()), spectrum(n / 2 + 1);
  plan.forward(in, spectrum.data(), scratch.data());
  const auto want = direct_dft(x, true);
  EXPECT_LE(relative_error<T>(spectrum, want, n / 2 + 1), tolerance<T>(n)) << "rfft n=" << n;

  // The inverse of the reference half spectrum, with junk in the imaginary parts that the
  // Hermitian extension ignores (index 0, and n/2 for even n).
  std::vector<C> half(n / 2 + 1);
  for (int64_t k = 0; k <= n / 2; ++k) half[k] = C(static_cast<T>(want[k].real()), static_cast<T>(want[k].imag()));
  half[0] = C(half[0].real(), T(0.75));
  if (n % 2 == 0) half[n / 2] = C(half[n / 2].real(), T(-0.5));
  std::vector<T> back_buffer(n + 1);
  T* back = back_buffer.data() + (misaligned ? 1 : 0);
  plan.inverse(half.data(), back, scratch.data());
  double worst = 0;
  for (int64_t j = 0; j < n; ++j) worst = std::max(worst, std::abs(static_cast<double>(back[j]) / n - static_cast<double>(x[j].real())));
  EXPECT_LE(worst, 4 * tolerance<T>(n)) << "irfft n=" << n;
}

TEST(FFTPlan, EveryShortLengthMatchesTheDirectDFT) {
  for (int64_t n = 1; n <= 130; ++n) {
    for (bool forward : {true, false}) {
      check_complex<float>(n, forward);
      check_complex<double>(n, forward);
    }
  }
}

TEST(FFTPlan, LongAndAwkwardLengths) {
  // smooth powers, mixed radices, generic odd primes (7 ... 31), Bluestein's large primes
  // alone and times small factors.
  for (int64_t n : {256, 720, 1000, 1024, 2048, 3 * 5 * 7 * 11, 29 * 31, 4 * 13 * 13, 1009, 2 * 1009, 4093, 37 * 64}) {
    check_complex<float>(n, true);
    check_complex<double>(n, true);
    check_complex<double>(n, false);
  }
}

TEST(FFTPlan, RealTransformsBothParities) {
  for (int64_t n = 1; n <= 70; ++n) {
    for (bool misaligned : {false, true}) {
      check_real<float>(n, misaligned);
      check_real<double>(n, misaligned);
    }
  }
  // even lengths whose half has a large prime (2 * 97, 2 * 1009, 4 * 37, 4 * 1009: the full
  // Bluestein path), a long even and a long odd line.
  for (int64_t n : {194, 2018, 148, 4 * 1009, 1024, 1000, 1001, 999}) {
    check_real<float>(n, n % 3 == 0);
    check_real<double>(n, n % 3 != 0);
  }
}

// Many lines at once (the vector lanes, then the lines left over), gapped rows in and out:
// each line equals its one-line transform to rounding (the compiler may order a lane's
// and a scalar's operations differently).
template <typename T>
void check_lines(int64_t n, int64_t lines) {
  using C = c10::complex<T>;
  const int64_t in_stride = n + 3, out_stride = n / 2 + 2;
  std::vector<T> in(lines * in_stride + 1);
  std::mt19937 gen(static_cast<unsigned>(n + lines));
  std::uniform_real_distribution<T> dist(-1, 1);
  for (auto& v : in) v = dist(gen);
  const fft::RealPlan<T> plan(n);
  std::vector<C> out(lines * out_stride, C(-7, -7)), one(n / 2 + 1), scratch(plan.scratch_size());
  std::vector<C> work(plan.lines_work_size());
  plan.forward_lines(in.data() + 1, in_stride, out.data(), out_stride, lines, work.data());
  for (int64_t i = 0; i < lines; ++i) {
    plan.forward(in.data() + 1 + i * in_stride, one.data(), scratch.data());
    double scale = 1e-30, worst = 0;
    for (int64_t k = 0; k <= n / 2; ++k) {
      scale = std::max(scale, static_cast<double>(c10::abs(one[k])));
      worst = std::max(worst, static_cast<double>(c10::abs(out[i * out_stride + k] - one[k])));
    }
    EXPECT_LE(worst / scale, tolerance<T>(n)) << "n=" << n << " line " << i;
    EXPECT_EQ(out[i * out_stride + n / 2 + 1], C(-7, -7));  // the gap is left alone
  }
  // and back: inverse_lines of those spectra against inverse() one line at a time
  const int64_t back_stride = n + 2;
  std::vector<T> back(lines * back_stride, T(-7)), one_back(n);
  plan.inverse_lines(out.data(), out_stride, back.data(), back_stride, lines, work.data());
  for (int64_t i = 0; i < lines; ++i) {
    plan.inverse(out.data() + i * out_stride, one_back.data(), scratch.data());
    double worst = 0;
    for (int64_t j = 0; j < n; ++j) {
      worst = std::max(worst, std::abs(static_cast<double>(back[i * back_stride + j] - one_back[j])) / n);
      // the round trip gives n times the input
      worst = std::max(worst, std::abs(static_cast<double>(back[i * back_stride + j]) / n - in[1 + i * in_stride + j]));
    }
    EXPECT_LE(worst, 8 * tolerance<T>(n)) << "inverse n=" << n << " line " << i;
    EXPECT_EQ(back[i * back_stride + n], T(-7));
  }
}

// Complex lines, both directions, against execute() line by line.
template <typename T>
void check_complex_lines(int64_t n, int64_t lines, bool forward) {
  using C = c10::complex<T>;
  const int64_t in_stride = n + 1, out_stride = n + 2;
  std::vector<C> in(lines * in_stride), out(lines * out_stride, C(-7, -7)), one(n);
  std::mt19937 gen(static_cast<unsigned>(n * 5 + lines));
  std::uniform_real_distribution<T> dist(-1, 1);
  for (auto& v : in) v = C(dist(gen), dist(gen));
  const fft::ComplexPlan<T> plan(n);
  std::vector<C> work(plan.lines_work_size()), scratch(plan.scratch_size());
  plan.execute_lines(in.data(), in_stride, out.data(), out_stride, lines, work.data(), forward);
  for (int64_t i = 0; i < lines; ++i) {
    plan.execute(in.data() + i * in_stride, one.data(), scratch.data(), forward);
    double scale = 1e-30, worst = 0;
    for (int64_t k = 0; k < n; ++k) {
      scale = std::max(scale, static_cast<double>(c10::abs(one[k])));
      worst = std::max(worst, static_cast<double>(c10::abs(out[i * out_stride + k] - one[k])));
    }
    EXPECT_LE(worst / scale, tolerance<T>(n)) << "n=" << n << " line " << i;
    EXPECT_EQ(out[i * out_stride + n], C(-7, -7));
  }
}

TEST(FFTPlan, ManyComplexLinesAtOnceMatchOneAtATime) {
  for (int64_t n : {1, 2, 3, 8, 12, 49, 64, 97, 360, 1000}) {
    for (int64_t lines : {int64_t{0}, int64_t{3}, int64_t{8}, int64_t{11}, int64_t{20}}) {
      for (bool forward : {true, false}) {
        check_complex_lines<float>(n, lines, forward);
        check_complex_lines<double>(n, lines, forward);
      }
    }
  }
}

// Lines laid out as a matrix's columns (neighbouring lines 1 apart, points `lines`
// apart), transformed in place and with post-twiddles, against execute() of each column.
template <typename T>
void check_strided_lines(int64_t n, int64_t lines, bool forward) {
  using C = c10::complex<T>;
  std::vector<C> grid(n * lines), tw(n * lines), one_in(n), one(n);
  std::mt19937 gen(static_cast<unsigned>(n * 3 + lines));
  std::uniform_real_distribution<T> dist(-1, 1);
  for (auto& v : grid) v = C(dist(gen), dist(gen));
  for (auto& v : tw) v = C(dist(gen), dist(gen));
  const std::vector<C> original = grid;
  const fft::ComplexPlan<T> plan(n);
  std::vector<C> work(plan.lines_work_size(lines)), scratch(plan.scratch_size());
  const bool twiddled = !plan.is_bluestein();
  plan.execute_lines(grid.data(), 1, lines, grid.data(), 1, lines, lines, work.data(), forward,
                     twiddled ? tw.data() : nullptr);
  for (int64_t i = 0; i < lines; ++i) {
    for (int64_t j = 0; j < n; ++j) one_in[j] = original[j * lines + i];
    plan.execute(one_in.data(), one.data(), scratch.data(), forward);
    double scale = 1e-30, worst = 0;
    for (int64_t k = 0; k < n; ++k) {
      C expect = one[k];
      if (twiddled) expect *= forward ? tw[k * lines + i] : c10::conj(tw[k * lines + i]);
      scale = std::max(scale, static_cast<double>(c10::abs(expect)));
      worst = std::max(worst, static_cast<double>(c10::abs(grid[k * lines + i] - expect)));
    }
    EXPECT_LE(worst / scale, 4 * tolerance<T>(n)) << "n=" << n << " lines " << lines << " line " << i;
  }
}

TEST(FFTPlan, StridedInPlaceTwiddledLinesMatchOneAtATime) {
  for (int64_t n : {1, 4, 12, 49, 97, 360}) {
    for (int64_t lines : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{11}, int64_t{20}}) {
      for (bool forward : {true, false}) {
        check_strided_lines<float>(n, lines, forward);
        check_strided_lines<double>(n, lines, forward);
      }
    }
  }
}

// A long line run split (columns, twiddles, rows across threads) against the same plan
// unsplit (itself checked against the direct DFT above); strided in and out, in place.
template <typename T>
void check_split(int64_t n, int64_t step, bool forward) {
  using C = c10::complex<T>;
  const fft::ComplexPlan<T> plan(n), whole(n, /*may_split=*/false);
  ASSERT_TRUE(plan.splits()) << n;
  const auto x = random_line<T>(n, static_cast<unsigned>(n), false);
  std::vector<C> line(n), expect(n), scratch(whole.scratch_size());
  for (int64_t j = 0; j < n; ++j) line[j] = C(static_cast<T>(x[j].real()), static_cast<T>(x[j].imag()));
  whole.execute(line.data(), expect.data(), scratch.data(), forward);
  std::vector<C> in(n * step), out(n * step, C(-7, -7)), tmp(n);
  for (int64_t j = 0; j < n; ++j) in[j * step] = line[j];
  plan.execute_split(in.data(), step, out.data(), step, tmp.data(), forward);
  plan.execute_split(in.data(), step, in.data(), step, tmp.data(), forward);
  double scale = 1e-30, worst = 0;
  for (int64_t k = 0; k < n; ++k) {
    scale = std::max(scale, static_cast<double>(c10::abs(expect[k])));
    worst = std::max(worst, static_cast<double>(c10::abs(out[k * step] - expect[k])));
    EXPECT_EQ(in[k * step], out[k * step]) << "in place differs at " << k;
    if (step > 1) {
      EXPECT_EQ(out[k * step + 1], C(-7, -7));
    }
  }
  EXPECT_LE(worst / scale, tolerance<T>(n)) << "n=" << n << " step " << step;
}

TEST(FFTPlan, SplitLongLinesMatchTheWholeTransform) {
  EXPECT_FALSE(fft::ComplexPlan<float>(fft::kMinSplitLength - 1).splits());
  EXPECT_FALSE(fft::ComplexPlan<float>(fft::kMinSplitLength, /*may_split=*/false).splits());
  for (int64_t n : {fft::kMinSplitLength, int64_t{2 * 3 * 5 * 7 * 11 * 13}, int64_t{1} << 15, int64_t{2 * 29 * 31 * 11}}) {
    for (bool forward : {true, false}) {
      check_split<double>(n, 1, forward);
      check_split<float>(n, 2, forward);
    }
  }
}

TEST(FFTPlan, ManyRealLinesAtOnceMatchOneAtATime) {
  for (int64_t n : {2, 4, 6, 10, 16, 30, 62, 64, 74, 194, 1000, 1024, 1001}) {
    for (int64_t lines : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{8}, int64_t{13}, int64_t{19}}) {
      check_lines<float>(n, lines);
      check_lines<double>(n, lines);
    }
  }
}

TEST(FFTPlan, LanesLayoutMatchesOneLineAtATime) {
  using C = c10::complex<double>;
  constexpr int64_t W = fft::kBatchLanes<double>;
  for (int64_t n : {1, 12, 360, 7 * 11 * 8}) {
    const fft::ComplexPlan<double> plan(n);
    std::vector<double> packed(2 * W * n), result(2 * W * n), scratch(2 * W * n);
    std::mt19937 gen(static_cast<unsigned>(n));
    std::normal_distribution<double> dist;
    for (auto& v : packed) v = dist(gen);
    for (bool forward : {true, false}) {
    plan.execute_lanes(packed.data(), result.data(), scratch.data(), forward);
    std::vector<C> line(n), out(n), line_scratch(plan.scratch_size());
    for (int64_t l = 0; l < W; ++l) {
      for (int64_t j = 0; j < n; ++j) line[j] = C(packed[2 * W * j + l], packed[2 * W * j + W + l]);
      plan.execute(line.data(), out.data(), line_scratch.data(), forward);
      double scale = 1e-30, worst = 0;
      for (int64_t k = 0; k < n; ++k) {
        scale = std::max(scale, c10::abs(out[k]));
        worst = std::max(worst, c10::abs(C(result[2 * W * k + l], result[2 * W * k + W + l]) - out[k]));
      }
      EXPECT_LE(worst / scale, tolerance<double>(n)) << "n=" << n << " lane " << l;
    }
    }
  }
  EXPECT_THROW(fft::ComplexPlan<double>(37).execute_lanes(nullptr, nullptr, nullptr, true), c10::Error);
}

TEST(FFTPlan, ForwardThenBackwardIsNTimesTheInput) {
  using C = c10::complex<double>;
  for (int64_t n : {1 << 16, 3 * 5 * 7 * 64, 65537}) {
    const fft::ComplexPlan<double> plan(n);
    std::vector<C> x(n), spectrum(n), back(n), scratch(plan.scratch_size());
    std::mt19937 gen(7);
    std::normal_distribution<double> dist;
    for (auto& v : x) v = C(dist(gen), dist(gen));
    plan.execute(x.data(), spectrum.data(), scratch.data(), true);
    plan.execute(spectrum.data(), back.data(), scratch.data(), false);
    double worst = 0;
    for (int64_t j = 0; j < n; ++j) worst = std::max(worst, c10::abs(back[j] / static_cast<double>(n) - x[j]));
    EXPECT_LE(worst, 1e-13) << "n=" << n;
  }
}

TEST(FFTPlan, SmoothLengths) {
  EXPECT_EQ(fft::next_smooth_length(1), 1);
  EXPECT_EQ(fft::next_smooth_length(7), 8);
  EXPECT_EQ(fft::next_smooth_length(11), 12);
  EXPECT_EQ(fft::next_smooth_length(2017), 2025);  // 3^4 5^2
  EXPECT_EQ(fft::next_smooth_length(4097), 4320);  // 2^5 3^3 5
  EXPECT_THROW(fft::ComplexPlan<float>(0), c10::Error);
  EXPECT_THROW(fft::ComplexPlan<float>(fft::kMaxLength + 1), c10::Error);
  EXPECT_THROW(fft::RealPlan<double>(0), c10::Error);
  EXPECT_THROW(fft::RealPlan<double>(-2), c10::Error);
  EXPECT_THROW(fft::next_smooth_length(0), c10::Error);
}

TEST(FFTPlan, CacheSharesPlansAcrossThreads) {
  // Threads asking for 24 lengths at once (more than the cache holds, so entries are
  // evicted while others are found) get plans that transform random lines exactly as a
  // plan made alone does; a repeat gets the same plan.
  using C = c10::complex<double>;
  const auto transform = [](const fft::ComplexPlan<double>& plan, int64_t n) {
    std::vector<C> in(n), out(n), scratch(plan.scratch_size());
    for (int64_t j = 0; j < n; ++j) in[j] = C(std::sin(0.3 * j + 1), std::cos(0.7 * j));
    plan.execute(in.data(), out.data(), scratch.data(), true);
    return out;
  };
  std::vector<std::vector<C>> expected;
  for (int64_t n = 40; n < 64; ++n) expected.push_back(transform(fft::ComplexPlan<double>(n), n));
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &failures, &expected, &transform] {
      for (int round = 0; round < 48; ++round) {
        const int64_t n = 40 + (t * 7 + round) % 24;
        if (transform(*fft::cached_complex_plan<double>(n), n) != expected[n - 40]) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
  EXPECT_EQ(fft::cached_real_plan<float>(100).get(), fft::cached_real_plan<float>(100).get());
}

}  // namespace
