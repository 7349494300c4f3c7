// FFT plans (FFTPlan.h): factorisation into passes, twiddle tables, Bluestein's
// algorithm, the real-input transforms, and the plan cache.
#include <aten/core/Parallel.h>
#include <aten/native/spectral/FFTKernel.h>
#include <aten/native/spectral/FFTPlan.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <list>
#include <type_traits>
#include <mutex>
#include <utility>

namespace at::inline tessera::native::fft {

DEFINE_DISPATCH(fft_passes_stub);
DEFINE_DISPATCH(fft_lines_stub);

namespace {

// exp(-2 pi i num / den), computed in long double from the exact residue so that every
// table entry is correctly rounded to float and nearly so to double.
template <typename T>
c10::complex<T> unit_root(int64_t num, int64_t den) {
  num %= den;
  if (num < 0) num += den;
  constexpr long double two_pi = 6.283185307179586476925286766559005768L;
  const long double angle = two_pi * static_cast<long double>(num) / static_cast<long double>(den);
  return {static_cast<T>(std::cos(angle)), static_cast<T>(-std::sin(angle))};
}

// Radices in pass order: fours first (fewest passes), then a two, then the odd primes.
std::vector<int64_t> factorize(int64_t n) {
  std::vector<int64_t> radices;
  while (n % 4 == 0) {
    radices.push_back(4);
    n /= 4;
  }
  if (n % 2 == 0) {
    radices.push_back(2);
    n /= 2;
  }
  for (int64_t p = 3; p * p <= n; p += 2) {
    while (n % p == 0) {
      radices.push_back(p);
      n /= p;
    }
  }
  if (n > 1) radices.push_back(n);
  return radices;
}

// Whether an n-point transform runs on passes: no prime factor above kMaxDirectRadix.
bool runs_on_passes(int64_t n) {
  const std::vector<int64_t> radices = factorize(n);
  return radices.empty() || radices.back() <= kMaxDirectRadix;
}

// The complex transform a real line of length n runs: half length on passes, else full.
int64_t real_plan_inner_length(int64_t n) {
  return n > 0 && n <= kMaxLength && n % 2 == 0 && runs_on_passes(n / 2) ? n / 2 : n;
}

// The kernel's view of a plan's passes, for its many-line loops.
template <typename T>
LinesPlan lines_of(const ComplexPlan<T>& plan, LinesKind kind, bool forward, const c10::complex<T>* twiddles) {
  return {kind, forward, plan.size(), plan.passes().data(), plan.pass_count(), plan.table().data(), twiddles};
}

}  // namespace

int64_t next_smooth_length(int64_t n) {
  TORCH_CHECK(n >= 1 && n <= (int64_t{1} << 60), "next_smooth_length: length ", n, " out of range");
  int64_t best = int64_t{1} << 62;
  for (int64_t p5 = 1; p5 < best; p5 *= 5) {
    for (int64_t p35 = p5; p35 < best; p35 *= 3) {
      int64_t candidate = p35;
      while (candidate < n) candidate *= 2;
      if (candidate < best) best = candidate;
      if (p35 >= n) break;
    }
    if (p5 >= n) break;
  }
  return best;
}

// A long line's grid: columns (n1 points, n2 of them), rows (n2 points, n1 of them) and
// the twiddles between, w_n^(j2 k1) at k1 n2 + j2 (the column transforms' output offsets).
template <typename T>
struct ComplexPlan<T>::Split {
  ComplexPlan<T> columns, rows;
  std::vector<C> twiddles;
  Split(int64_t n1, int64_t n2) : columns(n1, false), rows(n2, false), twiddles(static_cast<size_t>(n1 * n2)) {
    for (int64_t k1 = 0; k1 < n1; ++k1) {
      for (int64_t j2 = 0; j2 < n2; ++j2) twiddles[k1 * n2 + j2] = unit_root<T>(j2 * k1, n1 * n2);
    }
  }
};

template <typename T>
ComplexPlan<T>::~ComplexPlan() = default;

template <typename T>
ComplexPlan<T>::ComplexPlan(int64_t n, bool may_split) : n_(n) {
  TORCH_CHECK(n >= 1 && n <= kMaxLength, "FFT length must be in [1, 2^40], got ", n);
  if (!runs_on_passes(n)) {
    // Bluestein: n-point DFT as a circular convolution of length m >= 2n - 1.
    const int64_t m = next_smooth_length(2 * n - 1);
    inner_ = std::make_unique<ComplexPlan<T>>(m, /*may_split=*/false);  // it runs whole lines
    chirp_.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      // exp(-i pi k^2 / n) = exp(-2 pi i (k^2 mod 2n) / (2n)); k^2 fits: n <= 2^31.
      chirp_[k] = unit_root<T>(static_cast<int64_t>((static_cast<unsigned __int128>(k) * k) % (2 * n)), 2 * n);
    }
    std::vector<C> b(m, C(0, 0));
    b[0] = c10::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) b[k] = b[m - k] = c10::conj(chirp_[k]);
    kernel_.resize(m);
    std::vector<C> scratch(inner_->scratch_size());
    inner_->execute(b.data(), kernel_.data(), scratch.data(), /*forward=*/true);
    for (auto& v : kernel_) v /= static_cast<T>(m);
    scratch_size_ = 2 * m + inner_->scratch_size();
    return;
  }
  int64_t span = 1;
  for (int64_t radix : factorize(n)) {
    FFTPass pass{radix, span, static_cast<int64_t>(table_.size()), 0};
    // Twiddles w_{span radix}^{r k}, row r - 1, k < span.
    for (int64_t r = 1; r < radix; ++r) {
      for (int64_t k = 0; k < span; ++k) table_.push_back(unit_root<T>(r * k, span * radix));
    }
    if (radix > 5) {
      pass.root_offset = static_cast<int64_t>(table_.size());
      for (int64_t q = 0; q < radix; ++q) table_.push_back(unit_root<T>(q, radix));
    }
    passes_.push_back(pass);
    span *= radix;
  }
  scratch_size_ = passes_.size() > 1 ? n : 0;
  if (may_split && n >= kMinSplitLength) {
    // n1: the radices' product up to about sqrt(n), so n1 <= n2.
    int64_t n1 = 1;
    for (const FFTPass& pass : passes_) {
      if (n1 * pass.radix * n1 * pass.radix <= n) n1 *= pass.radix;
    }
    if (n1 > 1) split_ = std::make_unique<Split>(n1, n / n1);
  }
}

template <typename T>
void ComplexPlan<T>::run_passes(const C* in, C* out, C* scratch, bool forward) const {
  fft_passes_stub(std::is_same_v<T, double>, false, n_, passes_.data(), static_cast<int64_t>(passes_.size()), table_.data(),
                  in, out, scratch, forward);
}

template <typename T>
void ComplexPlan<T>::execute_lanes(const T* in, T* out, T* scratch, bool forward) const {
  TORCH_CHECK(!inner_, "ComplexPlan::execute_lanes: a Bluestein plan runs one line at a time");
  fft_passes_stub(std::is_same_v<T, double>, true, n_, passes_.data(), static_cast<int64_t>(passes_.size()),
                  table_.data(), in, out, scratch, forward);
}

// The kernel's work (FFTKernel.h), in complex values: lanes for kBatchLanes lines or more,
// one line's buffers for fewer.
namespace {
template <typename T>
int64_t kernel_work_size(int64_t n, int64_t lines) {
  return lines >= kBatchLanes<T> ? kBatchLanes<T> * (4 * n + 1) : 3 * (n + 1);
}
}  // namespace

template <typename T>
int64_t ComplexPlan<T>::lines_work_size(int64_t lines) const {
  return inner_ ? scratch_size_ : kernel_work_size<T>(n_, lines);
}

template <typename T>
void ComplexPlan<T>::execute_lines(const C* in, int64_t in_stride, int64_t in_point_stride, C* out, int64_t out_stride,
                                   int64_t out_point_stride, int64_t lines, C* work, bool forward,
                                   const C* post_twiddles) const {
  if (inner_) {
    TORCH_CHECK(!post_twiddles, "ComplexPlan::execute_lines: no twiddles on a Bluestein plan");
    for (int64_t i = 0; i < lines; ++i) {
      run_bluestein(in + i * in_stride, in_point_stride, out + i * out_stride, out_point_stride, work, forward);
    }
    return;
  }
  const LinesIO io{in, in_stride, in_point_stride, out, out_stride, out_point_stride, post_twiddles};
  fft_lines_stub(std::is_same_v<T, double>, lines_of(*this, LinesKind::c2c, forward, static_cast<const C*>(nullptr)),
                 io, lines, work);
}

template <typename T>
void ComplexPlan<T>::execute_split(const C* in, int64_t in_point_stride, C* out, int64_t out_point_stride, C* tmp,
                                   bool forward) const {
  TORCH_CHECK(split_, "ComplexPlan::execute_split: the plan of length ", n_, " is not split");
  const ComplexPlan<T>& columns = split_->columns;
  const ComplexPlan<T>& rows = split_->rows;
  const int64_t n1 = columns.size(), n2 = rows.size();
  // Blocks of lines worth handing to a thread (about 2^15 points each).
  const auto block = [](int64_t points) { return std::max<int64_t>(1, (int64_t{1} << 15) / points); };
  // Column j2 (points x[j1 n2 + j2]) to tmp[k1 n2 + j2], times w_n^(j2 k1).
  at::parallel_for(0, n2, block(n1), [&](int64_t b, int64_t e) {
    LinesWork<T> work(columns.lines_work_size(e - b));
    columns.execute_lines(in + b * in_point_stride, in_point_stride, n2 * in_point_stride, tmp + b, 1, n2, e - b,
                          work.data(), forward, split_->twiddles.data() + b);
  });
  // Row k1 (tmp[k1 n2 + j2]) to X[k1 + n1 k2].
  at::parallel_for(0, n1, block(n2), [&](int64_t b, int64_t e) {
    LinesWork<T> work(rows.lines_work_size(e - b));
    rows.execute_lines(tmp + b * n2, n2, 1, out + b * out_point_stride, out_point_stride, n1 * out_point_stride, e - b,
                       work.data(), forward);
  });
}

template <typename T>
void ComplexPlan<T>::run_bluestein(const C* in, int64_t in_step, C* out, int64_t out_step, C* scratch,
                                   bool forward) const {
  // A backward transform is the conjugate of the forward one of the conjugate input. The
  // input is read whole before the output is written (so in place is fine).
  const int64_t m = inner_->size();
  C* a = scratch;
  C* conv = scratch + m;
  C* inner_scratch = scratch + 2 * m;
  for (int64_t k = 0; k < n_; ++k) a[k] = (forward ? in[k * in_step] : c10::conj(in[k * in_step])) * chirp_[k];
  for (int64_t k = n_; k < m; ++k) a[k] = C(0, 0);
  inner_->execute(a, conv, inner_scratch, /*forward=*/true);
  for (int64_t k = 0; k < m; ++k) conv[k] *= kernel_[k];
  inner_->execute(conv, a, inner_scratch, /*forward=*/false);
  for (int64_t k = 0; k < n_; ++k) {
    const C v = a[k] * chirp_[k];
    out[k * out_step] = forward ? v : c10::conj(v);
  }
}

template <typename T>
void ComplexPlan<T>::execute(const C* in, C* out, C* scratch, bool forward) const {
  if (inner_) {
    run_bluestein(in, 1, out, 1, scratch, forward);
  } else {
    run_passes(in, out, scratch, forward);
  }
}

template <typename T>
RealPlan<T>::RealPlan(int64_t n) : n_(n), complex_(real_plan_inner_length(n), /*may_split=*/false) {
  if (on_passes()) {
    const int64_t h = n / 2;
    twiddles_.resize(h + 1);
    for (int64_t k = 0; k <= h; ++k) twiddles_[k] = unit_root<T>(k, n);
    // the kernel's one-line work: 6h + 4 reals
    scratch_size_ = 3 * h + 2 + complex_.scratch_size();
  } else {
    // the whole complex line in and out, and the plan's own scratch
    scratch_size_ = 2 * n + complex_.scratch_size();
  }
}

template <typename T>
void RealPlan<T>::forward(const T* in, C* out, C* scratch) const {
  if (on_passes()) {
    // The kernel's one-line path (the same arithmetic as its many-line one): with
    // z_j = x_2j + i x_2j+1 and Z = FFT_h(z) = E + i O (the even and odd samples'
    // transforms), E_k = (Z_k + conj Z_{h-k}) / 2, O_k = (Z_k - conj Z_{h-k}) / 2i and
    // X_k = E_k + w^k O_k.
    fft_lines_stub(std::is_same_v<T, double>, lines_of(complex_, LinesKind::r2c, true, twiddles_.data()),
                   LinesIO{in, 0, 1, out, 0, 1, nullptr}, 1, scratch);
    return;
  }
  C* line = scratch;
  C* spectrum = scratch + n_;
  for (int64_t j = 0; j < n_; ++j) line[j] = C(in[j], 0);
  complex_.execute(line, spectrum, scratch + 2 * n_, true);
  for (int64_t k = 0; k <= n_ / 2; ++k) out[k] = spectrum[k];
}

template <typename T>
void RealPlan<T>::inverse(const C* in, T* out, C* scratch) const {
  if (on_passes()) {
    // Z_k = 2 E_k + 2i O_k with 2 E_k = X_k + conj X_{h-k}, 2 O_k = (X_k - conj X_{h-k}) w^-k;
    // the backward h-point transform of Z is n (x_2j + i x_2j+1).
    fft_lines_stub(std::is_same_v<T, double>, lines_of(complex_, LinesKind::c2r, false, twiddles_.data()),
                   LinesIO{in, 0, 1, out, 0, 1, nullptr}, 1, scratch);
    return;
  }
  // The Hermitian extension, without the imaginary parts of X_0 and (even n) X_{n/2}.
  C* line = scratch;
  C* result = scratch + n_;
  line[0] = C(in[0].real(), 0);
  for (int64_t k = 1; 2 * k < n_; ++k) {
    line[k] = in[k];
    line[n_ - k] = c10::conj(in[k]);
  }
  if (n_ % 2 == 0) line[n_ / 2] = C(in[n_ / 2].real(), 0);
  complex_.execute(line, result, scratch + 2 * n_, false);
  for (int64_t j = 0; j < n_; ++j) out[j] = result[j].real();
}

template <typename T>
int64_t RealPlan<T>::lines_work_size(int64_t lines) const {
  return on_passes() ? std::max(kernel_work_size<T>(n_ / 2, lines), scratch_size_) : scratch_size_;
}

template <typename T>
void RealPlan<T>::forward_lines(const T* in, int64_t in_stride, C* out, int64_t out_stride, int64_t lines,
                                C* work) const {
  if (on_passes()) {
    fft_lines_stub(std::is_same_v<T, double>, lines_of(complex_, LinesKind::r2c, true, twiddles_.data()),
                   LinesIO{in, in_stride, 1, out, out_stride, 1, nullptr}, lines, work);
    return;
  }
  for (int64_t i = 0; i < lines; ++i) forward(in + i * in_stride, out + i * out_stride, work);
}

template <typename T>
void RealPlan<T>::inverse_lines(const C* in, int64_t in_stride, T* out, int64_t out_stride, int64_t lines,
                                C* work) const {
  if (on_passes()) {
    fft_lines_stub(std::is_same_v<T, double>, lines_of(complex_, LinesKind::c2r, false, twiddles_.data()),
                   LinesIO{in, in_stride, 1, out, out_stride, 1, nullptr}, lines, work);
    return;
  }
  for (int64_t i = 0; i < lines; ++i) inverse(in + i * in_stride, out + i * out_stride, work);
}

namespace {

// A small most-recently-used list per plan type: transforms of a few lengths dominate.
// Never destroyed, so a transform during static destruction still finds it.
template <typename Plan>
struct PlanCache {
  std::mutex mutex;
  std::list<std::pair<int64_t, std::shared_ptr<const Plan>>> plans;

  // The plan for n, moved to the front; null when absent. Caller holds the mutex.
  std::shared_ptr<const Plan> find(int64_t n) {
    for (auto it = plans.begin(); it != plans.end(); ++it) {
      if (it->first == n) {
        plans.splice(plans.begin(), plans, it);
        return plans.front().second;
      }
    }
    return nullptr;
  }
};

template <typename Plan>
std::shared_ptr<const Plan> cached_plan(int64_t n) {
  constexpr size_t kCapacity = 16;
  static auto* cache = new PlanCache<Plan>();
  {
    std::lock_guard<std::mutex> lock(cache->mutex);
    if (auto plan = cache->find(n)) return plan;
  }
  auto plan = std::make_shared<const Plan>(n);  // outside the lock: large plans take a while
  std::lock_guard<std::mutex> lock(cache->mutex);
  if (auto raced = cache->find(n)) return raced;  // another thread made it meanwhile: one copy
  cache->plans.emplace_front(n, plan);
  if (cache->plans.size() > kCapacity) cache->plans.pop_back();
  return plan;
}

}  // namespace

template <typename T>
std::shared_ptr<const ComplexPlan<T>> cached_complex_plan(int64_t n) {
  return cached_plan<ComplexPlan<T>>(n);
}
template <typename T>
std::shared_ptr<const RealPlan<T>> cached_real_plan(int64_t n) {
  return cached_plan<RealPlan<T>>(n);
}

template class ComplexPlan<float>;
template class ComplexPlan<double>;
template class RealPlan<float>;
template class RealPlan<double>;
template TORCH_API std::shared_ptr<const ComplexPlan<float>> cached_complex_plan<float>(int64_t);
template TORCH_API std::shared_ptr<const ComplexPlan<double>> cached_complex_plan<double>(int64_t);
template TORCH_API std::shared_ptr<const RealPlan<float>> cached_real_plan<float>(int64_t);
template TORCH_API std::shared_ptr<const RealPlan<double>> cached_real_plan<double>(int64_t);

}  // namespace at::inline tessera::native::fft
