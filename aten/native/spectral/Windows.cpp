// torch's window factories (hann, hamming, blackman, bartlett, kaiser), the tapers that
// stft and istft multiply their frames by. Each is written over other operators (arange,
// cos, i0, ...), computed in the requested dtype as torch computes it, so the values agree
// with torch's to the dtype's rounding, and a Meta request gives a Meta result. Lengths 0
// and 1 are fixed (empty, [1.]); a periodic window (the default) is the symmetric window
// of length N + 1 without its last point, for use with spectral analysis. The out= forms
// are generated (ops.yaml `functional:`).
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>
#include <c10/core/DefaultDtype.h>

#include <cmath>
#include <optional>

namespace at::inline tessera::native {

namespace {

// What a window factory was asked for besides its length and shape parameters.
struct WindowRequest {
  c10::ScalarType dtype;
  std::optional<at::Layout> layout;
  std::optional<at::Device> device;
  std::optional<bool> pin_memory;
};

// torch's checks, in its order: a dense layout, a floating dtype (default: the default
// float dtype), a length that is not negative.
WindowRequest check_window(const char* name, int64_t window_length, std::optional<at::ScalarType> dtype,
                           std::optional<at::Layout> layout, std::optional<at::Device> device,
                           std::optional<bool> pin_memory) {
  TORCH_CHECK(layout.value_or(c10::kStrided) == c10::kStrided, name,
              " is not implemented for sparse types, got layout ", *layout);
  const c10::ScalarType type = dtype.value_or(c10::get_default_dtype());
  TORCH_CHECK(c10::isFloatingType(type), name, " expects floating point dtypes, got: ", type);
  TORCH_CHECK(window_length >= 0, name, " requires non-negative window_length, got window_length=", window_length);
  return {type, layout, device, pin_memory};
}

// The shared frame of every window: the trivial lengths, then `symmetric(k, n)` on the
// sample indices k = 0, 1, ..., n - 1 (in the window's dtype) of the symmetric window of
// n points, n = window_length (+ 1 when periodic, the extra point dropped).
template <typename Symmetric>
Tensor make_window(const char* name, int64_t window_length, bool periodic, std::optional<at::ScalarType> dtype,
                   std::optional<at::Layout> layout, std::optional<at::Device> device,
                   std::optional<bool> pin_memory, Symmetric symmetric) {
  const WindowRequest r = check_window(name, window_length, dtype, layout, device, pin_memory);
  if (window_length == 0) return at::empty({0}, r.dtype, r.layout, r.device, r.pin_memory, std::nullopt);
  if (window_length == 1) return at::ones({1}, r.dtype, r.layout, r.device, r.pin_memory);
  const int64_t n = periodic ? window_length + 1 : window_length;
  const Tensor k = at::arange(n, r.dtype, r.layout, r.device, r.pin_memory);
  const Tensor window = symmetric(k, n);
  return periodic ? window.narrow(0, 0, window_length) : window;
}

// alpha - beta cos(2 pi k / (n - 1)): the generalised Hamming window (Hann: 0.5, 0.5).
Tensor hamming_impl(const char* name, int64_t window_length, bool periodic, double alpha, double beta,
                    std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                    std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return make_window(name, window_length, periodic, dtype, layout, device, pin_memory,
                     [alpha, beta](const Tensor& k, int64_t n) {
                       const Tensor phase = k * (2.0 * M_PI / static_cast<double>(n - 1));
                       return phase.cos() * (-beta) + alpha;
                     });
}

constexpr double kHammingAlpha = 0.54, kHammingBeta = 0.46, kKaiserBeta = 12.0;

}  // namespace

Tensor hann_window(int64_t window_length, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                   std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return hann_window_periodic(window_length, true, dtype, layout, device, pin_memory);
}

Tensor hann_window_periodic(int64_t window_length, bool periodic, std::optional<at::ScalarType> dtype,
                            std::optional<at::Layout> layout, std::optional<at::Device> device,
                            std::optional<bool> pin_memory) {
  return hamming_impl("hann_window", window_length, periodic, 0.5, 0.5, dtype, layout, device, pin_memory);
}

Tensor hamming_window(int64_t window_length, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                      std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return hamming_window_periodic(window_length, true, dtype, layout, device, pin_memory);
}

Tensor hamming_window_periodic(int64_t window_length, bool periodic, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory) {
  return hamming_impl("hamming_window", window_length, periodic, kHammingAlpha, kHammingBeta, dtype, layout, device,
                      pin_memory);
}

Tensor hamming_window_periodic_alpha(int64_t window_length, bool periodic, double alpha,
                                     std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                                     std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return hamming_impl("hamming_window", window_length, periodic, alpha, kHammingBeta, dtype, layout, device,
                      pin_memory);
}

Tensor hamming_window_periodic_alpha_beta(int64_t window_length, bool periodic, double alpha, double beta,
                                          std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                                          std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return hamming_impl("hamming_window", window_length, periodic, alpha, beta, dtype, layout, device, pin_memory);
}

Tensor blackman_window(int64_t window_length, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                       std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return blackman_window_periodic(window_length, true, dtype, layout, device, pin_memory);
}

// 0.42 - 0.5 cos(2 pi k / (n - 1)) + 0.08 cos(4 pi k / (n - 1)).
Tensor blackman_window_periodic(int64_t window_length, bool periodic, std::optional<at::ScalarType> dtype,
                                std::optional<at::Layout> layout, std::optional<at::Device> device,
                                std::optional<bool> pin_memory) {
  return make_window("blackman_window", window_length, periodic, dtype, layout, device, pin_memory,
                     [](const Tensor& k, int64_t n) {
                       const Tensor phase = k * (M_PI / static_cast<double>(n - 1));
                       return (phase * 4).cos() * 0.08 - (phase * 2).cos() * 0.5 + 0.42;
                     });
}

Tensor bartlett_window(int64_t window_length, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                       std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return bartlett_window_periodic(window_length, true, dtype, layout, device, pin_memory);
}

// The triangle 2 k / (n - 1) rising to the middle, then 2 - 2 k / (n - 1) falling.
Tensor bartlett_window_periodic(int64_t window_length, bool periodic, std::optional<at::ScalarType> dtype,
                                std::optional<at::Layout> layout, std::optional<at::Device> device,
                                std::optional<bool> pin_memory) {
  return make_window("bartlett_window", window_length, periodic, dtype, layout, device, pin_memory,
                     [](const Tensor& k, int64_t n) {
                       const Tensor ramp = k * (2.0 / static_cast<double>(n - 1));
                       const int64_t rising = (n - 1) / 2 + 1;
                       return at::cat({ramp.narrow(0, 0, rising), 2 - ramp.narrow(0, rising, n - rising)}, 0);
                     });
}

Tensor kaiser_window(int64_t window_length, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                     std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return kaiser_window_beta(window_length, true, kKaiserBeta, dtype, layout, device, pin_memory);
}

Tensor kaiser_window_periodic(int64_t window_length, bool periodic, std::optional<at::ScalarType> dtype,
                              std::optional<at::Layout> layout, std::optional<at::Device> device,
                              std::optional<bool> pin_memory) {
  return kaiser_window_beta(window_length, periodic, kKaiserBeta, dtype, layout, device, pin_memory);
}

// I0(beta sqrt(1 - ((k - m) / m)^2)) / I0(beta), m = (n - 1) / 2 the window's middle. The
// denominator is a one-element tensor of the window's dtype and device (no host read, so
// a Meta request works too).
Tensor kaiser_window_beta(int64_t window_length, bool periodic, double beta, std::optional<at::ScalarType> dtype,
                          std::optional<at::Layout> layout, std::optional<at::Device> device,
                          std::optional<bool> pin_memory) {
  return make_window("kaiser_window", window_length, periodic, dtype, layout, device, pin_memory,
                     [&](const Tensor& k, int64_t n) {
                       const double middle = static_cast<double>(n - 1) / 2.0;
                       const Tensor offset = (k - middle) / middle;
                       // (clamped: rounding may push 1 - offset^2 a hair below zero at the ends)
                       const Tensor root = (1 - offset * offset).clamp_min(0).sqrt();
                       const Tensor peak = at::full({1}, beta, k.scalar_type(), layout, k.device(), pin_memory);
                       return at::i0(root * beta) / at::i0(peak);
                     });
}

}  // namespace at::inline tessera::native
