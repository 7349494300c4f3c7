// The short-time Fourier transform and its inverse as composites over other operators
// (pad, unfold, mul, the transform kernels _fft_r2c / _fft_c2c / _fft_c2r, index_add), so
// autograd differentiates them through those ops' formulas, complex inputs included.
//
// stft: the signal (1-D, or 2-D batch x time) is cut into frames of n_fft points every
// hop_length points (unfold), each multiplied by the window (win_length points centred in
// n_fft zeros), then transformed: a (batch?, freq, frames) spectrum, one-sided (n_fft / 2
// + 1 bins) for a real signal and window unless onesided=False. stft.center first pads
// n_fft / 2 points on each side with pad_mode, which torch's Python wrapper does; here the
// operator does it (as current PyTorch's aten::stft.center does).
// istft: each frame's inverse transform, multiplied by the window again, is added into
// the signal where it came from (index_add); the sum is divided by the overlap-add of the
// squared window, which must not vanish (the NOLA condition).
//
// The schemas are current PyTorch's (the same as torch 1.13's). Where 1.13 and current
// PyTorch differ, current PyTorch is followed: a real input and window need return_complex
// (1.13 only warned). torch's warnings (return_complex=False is deprecated, istft of a
// real (..., 2) tensor, a `length` past the signal) come from the Python wrappers
// (python/tessera/functional.py).
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <optional>
#include <string_view>

namespace at::inline tessera::native {

namespace {

enum Norm : int64_t { kNone = 0, kByRootN = 1, kByN = 2 };  // as _fft_*'s normalization

Tensor defined_or_empty(const std::optional<Tensor>& t) { return t.has_value() ? *t : Tensor(); }

void check_signal(const Tensor& self) {
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "stft: expected a 1-D signal or a 2-D batch of signals, but got a ",
              self.dim(), "-D tensor of shape ", self.sizes());
}

// A window of win_length points, given or not, must be 1-D of that length and beside the input.
void check_window(const char* fname, const Tensor& window, int64_t win_length, const Tensor& self) {
  if (!window.defined()) return;
  TORCH_CHECK(window.dim() == 1 && window.size(0) == win_length, fname, ": expected a 1-D window of win_length=",
              win_length, " points, but got a window of shape ", window.sizes());
  TORCH_CHECK(window.device() == self.device(), fname, ": the input and the window must be on the same device, but ",
              "got the input on ", self.device(), " and the window on ", window.device());
}

// The window centred in n_fft points: (n_fft - win_length) / 2 zeros before it, the rest after.
Tensor centred(const Tensor& window, int64_t n_fft) {
  const int64_t win = window.size(0), left = (n_fft - win) / 2;
  return win == n_fft ? window : at::constant_pad_nd(window, {left, n_fft - win - left}, 0);
}

// The positions in the signal of each frame's points, frame by frame: f * hop + k.
Tensor frame_positions(int64_t n_frames, int64_t n_fft, int64_t hop, c10::Device device) {
  const Tensor starts = at::arange(n_frames, c10::kLong, std::nullopt, device, std::nullopt) * hop;
  const Tensor offsets = at::arange(n_fft, c10::kLong, std::nullopt, device, std::nullopt);
  return (starts.unsqueeze(1) + offsets).reshape({n_frames * n_fft});
}

// istft's input as complex numbers: a complex tensor as it is, or (as torch 1.13 still
// accepts, deprecated) a real one whose last dim of 2 holds the real and imaginary parts.
Tensor complex_spectrum(const Tensor& self) {
  if (self.is_complex()) return self;
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "istft: expected a complex tensor of 2 or 3 dims (batch?, freq, ",
              "frames), or a real one of 3 or 4 dims whose last holds (real, imaginary) pairs, but got a ",
              self.scalar_type(), " tensor of shape ", self.sizes());
  TORCH_CHECK(self.size(-1) == 2, "istft: expected the last dimension of a real input to be 2 (its real and ",
              "imaginary parts), but got ", self.size(-1));
  return at::view_as_complex(self.contiguous());
}

}  // namespace

Tensor stft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
            const std::optional<Tensor>& window_opt, bool normalized, std::optional<bool> onesided_opt,
            std::optional<bool> return_complex_opt) {
  const Tensor window = defined_or_empty(window_opt);
  const bool return_complex =
      return_complex_opt.value_or(self.is_complex() || (window.defined() && window.is_complex()));
  TORCH_CHECK(return_complex || return_complex_opt.has_value(),
              "stft: a real input with a real window needs return_complex: return_complex=True returns the complex "
              "spectrum (recommended), return_complex=False its real and imaginary parts in a last dimension of "
              "size 2 (deprecated)");
  check_signal(self);
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()) || self.is_complex(),
              "stft: expected a tensor of floating point or complex values, but got ", self.scalar_type());
  const Tensor input = self.dim() == 1 ? self.unsqueeze(0) : self;
  const int64_t length = input.size(1);
  const int64_t hop = hop_length.value_or(n_fft / 4), win = win_length.value_or(n_fft);
  TORCH_CHECK(n_fft > 0 && n_fft <= length, "stft: expected 0 < n_fft <= ", length,
              " (the length of the signal, padded if centred), but got n_fft=", n_fft);
  TORCH_CHECK(hop > 0, "stft: expected hop_length > 0, but got hop_length=", hop);
  TORCH_CHECK(win > 0 && win <= n_fft, "stft: expected 0 < win_length <= n_fft=", n_fft, ", but got win_length=", win);
  check_window("stft", window, win, self);

  Tensor taper = window;
  if (win < n_fft) {
    taper = centred(window.defined() ? window : at::ones({win}, self.options()), n_fft);
  }
  Tensor frames = input.unfold(1, n_fft, hop);  // (batch, frames, n_fft), overlapping views of the signal
  if (taper.defined()) frames = frames * taper;
  const bool complex_fft = frames.is_complex();
  const bool onesided = onesided_opt.value_or(!complex_fft);
  const int64_t norm = normalized ? kByRootN : kNone;
  Tensor spectrum;
  if (complex_fft) {
    TORCH_CHECK(!onesided, "stft: a complex input or window has no one-sided spectrum: onesided must be False");
    spectrum = at::_fft_c2c(frames, {2}, norm, true);
  } else {
    spectrum = at::_fft_r2c(frames, {2}, norm, onesided);
  }
  spectrum = spectrum.transpose(1, 2);  // (batch, freq, frames)
  if (self.dim() == 1) spectrum = spectrum.squeeze(0);
  return return_complex ? spectrum : at::view_as_real(spectrum);
}

Tensor stft_center(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length,
                   std::optional<int64_t> win_length, const std::optional<Tensor>& window, bool center,
                   std::string_view pad_mode, bool normalized, std::optional<bool> onesided,
                   std::optional<bool> return_complex) {
  if (!center) return native::stft(self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex);
  check_signal(self);
  TORCH_CHECK(n_fft > 0, "stft: expected n_fft > 0, but got n_fft=", n_fft);
  // at::pad's non-constant modes pad the last dim of a 2-D or 3-D (batch, channel, time) input.
  Tensor signal = self;
  while (signal.dim() < 3) signal = signal.unsqueeze(0);
  signal = at::pad(signal, {n_fft / 2, n_fft / 2}, pad_mode, std::nullopt);
  for (int64_t d = self.dim(); d < 3; ++d) signal = signal.squeeze(0);
  return native::stft(signal, n_fft, hop_length, win_length, window, normalized, onesided, return_complex);
}

Tensor istft(const Tensor& self, int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
             const std::optional<Tensor>& window_opt, bool center, bool normalized, std::optional<bool> onesided_opt,
             std::optional<int64_t> length, bool return_complex) {
  const Tensor window = defined_or_empty(window_opt);
  const Tensor spectrum = complex_spectrum(self);
  TORCH_CHECK(spectrum.dim() == 2 || spectrum.dim() == 3, "istft: expected a complex tensor of 2 or 3 dims (batch?, ",
              "freq, frames), but got one of shape ", spectrum.sizes());
  TORCH_CHECK(spectrum.numel() > 0, "istft: the input tensor cannot be empty, but got shape ", spectrum.sizes());
  const int64_t hop = hop_length.value_or(n_fft / 4), win = win_length.value_or(n_fft);
  TORCH_CHECK(hop > 0 && hop <= win, "istft: expected 0 < hop_length <= win_length=", win, ", but got hop_length=",
              hop);
  TORCH_CHECK(win > 0 && win <= n_fft, "istft: expected 0 < win_length <= n_fft=", n_fft, ", but got win_length=",
              win);
  check_window("istft", window, win, self);
  TORCH_CHECK(!length || *length > 0, "istft: expected length > 0, but got length=", length.value_or(0));

  const bool batched = spectrum.dim() == 3;
  const Tensor input = batched ? spectrum : spectrum.unsqueeze(0);
  const int64_t batch = input.size(0), bins = input.size(1), n_frames = input.size(2);
  const bool onesided = onesided_opt.value_or(bins != n_fft);
  if (onesided) {
    TORCH_CHECK(bins == n_fft / 2 + 1, "istft: expected the frequency dimension (3rd to last) of the input to have ",
                "n_fft / 2 + 1 = ", n_fft / 2 + 1, " bins for a one-sided spectrum, but got ", bins);
  } else {
    TORCH_CHECK(bins == n_fft, "istft: expected the frequency dimension (3rd to last) of the input to have n_fft = ",
                n_fft, " bins for a two-sided spectrum (onesided=False), but got ", bins);
  }
  Tensor taper = window.defined() ? window
                                  : at::ones({win}, c10::toRealValueType(input.scalar_type()), std::nullopt,
                                             input.device(), std::nullopt);
  taper = centred(taper, n_fft);

  Tensor frames = input.transpose(1, 2);  // (batch, frames, freq)
  const int64_t norm = normalized ? kByRootN : kByN;
  if (return_complex) {
    TORCH_CHECK(!onesided, "istft: return_complex=True needs the two-sided spectrum (onesided=False): a one-sided ",
                "one stands for a real signal");
    frames = at::_fft_c2c(frames, {2}, norm, false);
  } else {
    TORCH_CHECK(!taper.is_complex(), "istft: a complex window needs return_complex=True");
    if (!onesided) frames = frames.narrow(2, 0, n_fft / 2 + 1);
    frames = at::_fft_c2r(frames, {2}, norm, n_fft);
  }
  frames = frames * taper;  // (batch, frames, n_fft)

  // Overlap-add of the frames, and of the squared window for the envelope that divides them.
  const int64_t span = n_fft + hop * (n_frames - 1);
  const Tensor positions = frame_positions(n_frames, n_fft, hop, input.device());
  Tensor signal = at::zeros({batch, span}, frames.options())
                      .index_add(1, positions, frames.reshape({batch, n_frames * n_fft}));
  const Tensor squared = taper.pow(2);
  Tensor envelope = at::zeros({span}, squared.options())
                        .index_add(0, positions, squared.expand({n_frames, n_fft}).reshape({n_frames * n_fft}));

  // The centred padding comes off the front, and off the end unless `length` says how much to keep.
  const int64_t start = center ? n_fft / 2 : 0;
  const int64_t end = length ? start + *length : (center ? span - n_fft / 2 : span);
  const int64_t stop = std::min(end, span);
  signal = signal.narrow(1, start, stop - start);
  envelope = envelope.narrow(0, start, stop - start);
  if (!envelope.is_meta()) {  // (a Meta call has no values to check)
    const double lowest = envelope.abs().min().item().toDouble();
    TORCH_CHECK(!(lowest < 1e-11), "istft: window overlap add min: ", lowest, " (below 1e-11): the squared window's ",
                "overlap-add vanishes there, so the signal cannot be recovered (the NOLA condition fails; a smaller ",
                "hop_length or another window helps)");
  }
  signal = signal / envelope;
  if (end > span) signal = at::constant_pad_nd(signal, {0, end - span}, 0);  // zeros past the frames
  return batched ? signal : signal.squeeze(0);
}

}  // namespace at::inline tessera::native
