// Upsampling (F.interpolate's nearest, linear, bilinear and bicubic modes) as torch
// computes it, written separably: each spatial dim is resampled in turn by a few taps
// (index_select of source rows, weighted and summed), so autograd adds the grads of
// shared source rows together. Source positions follow torch's rules: nearest computes
// its scale in float; the linear modes map centres (align_corners=False) or corners; the
// antialiased modes average every input under a filter widened by the downscaling factor.
#include <aten/core/QTensorImpl.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/quantized/QuantizedOps.h>
#include <aten/ops/Functions.h>
#include <c10/util/safe_numerics.h>

#include <cmath>
#include <sstream>
#include <vector>

namespace at::inline tessera::native {

namespace {

// LinearAA and CubicAA: the antialiased forms (interpolate(antialias=True)), which widen
// the filter by the downscaling factor, as PIL's resize does.
enum class Mode { Nearest, Linear, Cubic, LinearAA, CubicAA };

// The output size of each spatial dim, from output_size or scale_factors (exactly one).
std::vector<int64_t> output_sizes(const Tensor& input, std::optional<IntArrayRef> output_size,
                                  std::optional<ArrayRef<double>> scale_factors, int64_t spatial) {
  TORCH_CHECK(output_size.has_value() != scale_factors.has_value(),
              "Must specify exactly one of output_size and scale_factors");
  std::vector<int64_t> out;
  if (output_size) {
    TORCH_CHECK(static_cast<int64_t>(output_size->size()) == spatial, "It is expected output_size equals to ",
                spatial, ", but got size ", output_size->size());
    out = output_size->vec();
  } else {
    TORCH_CHECK(static_cast<int64_t>(scale_factors->size()) == spatial, "It is expected scale_factors equals to ",
                spatial, ", but got size ", scale_factors->size());
    for (int64_t d = 0; d < spatial; ++d) {
      out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(input.size(input.dim() - spatial + d)) *
                                                    (*scale_factors)[static_cast<size_t>(d)])));
    }
  }
  return out;
}

void check_sizes(const Tensor& input, const std::vector<int64_t>& out) {
  const int64_t spatial = static_cast<int64_t>(out.size());
  TORCH_CHECK(input.dim() == spatial + 2, "Expected ", spatial + 2, "D input (got ", input.dim(), "D)");
  bool positive = true;
  for (int64_t d = 0; d < spatial; ++d) positive = positive && input.size(d + 2) > 0 && out[d] > 0;
  if (!positive) {
    const char* names[] = {"H", "W"};
    std::ostringstream msg;
    msg << "Input and output sizes should be greater than 0, but got input (";
    for (int64_t d = 0; d < spatial; ++d) msg << (d ? ", " : "") << names[d + 2 - spatial] << ": " << input.size(d + 2);
    msg << ") output (";
    for (int64_t d = 0; d < spatial; ++d) msg << (d ? ", " : "") << names[d + 2 - spatial] << ": " << out[d];
    msg << ")";
    TORCH_CHECK(false, msg.str());
  }
}

// torch allows an empty batch, but no other empty dim (checked after the sizes).
void check_nonempty(const Tensor& input) {
  int64_t per_sample = 1;
  for (int64_t d = 1; d < input.dim(); ++d) per_sample *= input.size(d);
  TORCH_CHECK(input.numel() != 0 || per_sample != 0, "Non-empty ", input.dim(),
              "D data tensor expected but got a tensor with sizes ", input.sizes());
}

template <typename acc_t>
acc_t cubic1(acc_t x, acc_t a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
template <typename acc_t>
acc_t cubic2(acc_t x, acc_t a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

// The taps and weights of the linear and cubic modes along one dim, computed in acc_t as
// torch computes them (float for float and reduced inputs, double for double): the scale
// in acc_t, the source position from it (in double, then rounded to acc_t), the weights
// from that position, so that the blends round as torch's do.
template <typename acc_t>
void interpolation_taps(int64_t n, int64_t m, Mode mode, bool align_corners, std::optional<double> scale,
                        std::vector<std::vector<int64_t>>& taps, std::vector<std::vector<double>>& weights) {
  acc_t s;
  if (align_corners) {
    s = m > 1 ? static_cast<acc_t>(n - 1) / static_cast<acc_t>(m - 1) : acc_t(0);
  } else {
    s = scale.has_value() && *scale > 0 ? static_cast<acc_t>(1.0 / *scale) : static_cast<acc_t>(n) / static_cast<acc_t>(m);
  }
  const int64_t k = mode == Mode::Linear ? 2 : 4;
  taps.resize(static_cast<size_t>(k));
  weights.resize(static_cast<size_t>(k));
  for (int64_t i = 0; i < m; ++i) {
    acc_t src = align_corners ? static_cast<acc_t>(s * static_cast<acc_t>(i))
                              : static_cast<acc_t>(static_cast<double>(s) * (static_cast<double>(i) + 0.5) - 0.5);
    if (mode == Mode::Linear) {
      if (!align_corners && src < 0) src = 0;
      const int64_t i0 = static_cast<int64_t>(src);
      const int64_t step = i0 < n - 1 ? 1 : 0;
      const acc_t lambda = src - static_cast<acc_t>(i0);
      taps[0].push_back(i0), taps[1].push_back(i0 + step);
      weights[0].push_back(static_cast<acc_t>(1) - lambda), weights[1].push_back(lambda);
    } else {
      const int64_t i0 = static_cast<int64_t>(std::floor(src));
      const acc_t t = src - static_cast<acc_t>(i0);
      constexpr acc_t kA = static_cast<acc_t>(-0.75);
      const acc_t w[4] = {cubic2<acc_t>(t + 1, kA), cubic1<acc_t>(t, kA), cubic1<acc_t>(1 - t, kA),
                          cubic2<acc_t>(2 - t, kA)};
      for (int64_t j = 0; j < 4; ++j) {
        taps[j].push_back(std::min(std::max<int64_t>(i0 - 1 + j, 0), n - 1));
        weights[j].push_back(w[j]);
      }
    }
  }
}

// The antialiased taps: output i averages the inputs within `support` of its centre, each
// weighted by the triangle (linear) or the a = -0.5 cubic (as PIL) filter stretched by the
// downscaling factor, the weights normalised to sum to one. Rows with fewer inputs are
// padded with zero-weight taps.
void antialias_taps(int64_t n, int64_t m, Mode mode, bool align_corners, std::optional<double> scale_factor,
                    std::vector<std::vector<int64_t>>& taps, std::vector<std::vector<double>>& weights) {
  double scale;
  if (align_corners) {
    scale = m > 1 ? static_cast<double>(n - 1) / static_cast<double>(m - 1) : 0.0;
  } else {
    scale = scale_factor.has_value() && *scale_factor > 0 ? 1.0 / *scale_factor
                                                          : static_cast<double>(n) / static_cast<double>(m);
  }
  const double half_width = mode == Mode::LinearAA ? 1.0 : 2.0;
  const double support = scale >= 1.0 ? half_width * scale : half_width;
  const double inv_scale = scale >= 1.0 ? 1.0 / scale : 1.0;
  auto filter = [&](double x) {
    x = std::abs(x);
    if (mode == Mode::LinearAA) return x < 1.0 ? 1.0 - x : 0.0;
    constexpr double a = -0.5;
    if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
  };
  std::vector<std::vector<int64_t>> rows_taps(static_cast<size_t>(m));
  std::vector<std::vector<double>> rows_weights(static_cast<size_t>(m));
  size_t width = 0;
  for (int64_t i = 0; i < m; ++i) {
    const double center = scale * (static_cast<double>(i) + 0.5);
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), n);
    double total = 0;
    for (int64_t j = lo; j < hi; ++j) {
      const double w = filter((static_cast<double>(j) - center + 0.5) * inv_scale);
      rows_taps[i].push_back(j);
      rows_weights[i].push_back(w);
      total += w;
    }
    if (total != 0)
      for (double& w : rows_weights[i]) w /= total;
    width = std::max(width, rows_taps[i].size());
  }
  taps.assign(width, {});
  weights.assign(width, {});
  for (int64_t i = 0; i < m; ++i)
    for (size_t j = 0; j < width; ++j) {
      const bool real = j < rows_taps[i].size();
      taps[j].push_back(real ? rows_taps[i][j] : 0);
      weights[j].push_back(real ? rows_weights[i][j] : 0.0);
    }
}

// Resamples dim `d` (of n elements) to `m` elements.
Tensor resample_dim(const Tensor& x, int64_t d, int64_t m, Mode mode, bool align_corners, std::optional<double> scale) {
  const int64_t n = x.size(d);
  std::vector<std::vector<int64_t>> taps;
  std::vector<std::vector<double>> weights;
  if (mode == Mode::Nearest) {
    // torch's nearest: float arithmetic, source = min(floor(dst * scale), n - 1)
    const float s = scale.has_value() && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                                    : static_cast<float>(n) / static_cast<float>(m);
    taps.resize(1);
    for (int64_t i = 0; i < m; ++i) {
      taps[0].push_back(std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * s)), n - 1));
    }
  } else if (mode == Mode::LinearAA || mode == Mode::CubicAA) {
    antialias_taps(n, m, mode, align_corners, scale, taps, weights);
  } else if (x.scalar_type() == kDouble) {
    interpolation_taps<double>(n, m, mode, align_corners, scale, taps, weights);
  } else {
    interpolation_taps<float>(n, m, mode, align_corners, scale, taps, weights);
  }
  std::vector<int64_t> wshape(static_cast<size_t>(x.dim()), 1);
  wshape[static_cast<size_t>(d)] = m;
  Tensor out;
  for (size_t j = 0; j < taps.size(); ++j) {
    Tensor picked = x.index_select(d, tensor_from_vector(taps[j], x.device()));
    if (!weights.empty()) {
      picked = picked * tensor_from_vector(weights[j], x.device()).to(x.scalar_type()).view(wshape);
    }
    out = out.defined() ? out + picked : picked;
  }
  return out;
}

Tensor upsample(const Tensor& input, std::optional<IntArrayRef> output_size, std::optional<ArrayRef<double>> scales,
                int64_t spatial, Mode mode, bool align_corners) {
  const std::vector<int64_t> out = output_sizes(input, output_size, scales, spatial);
  check_sizes(input, out);
  check_nonempty(input);
  TORCH_CHECK(mode == Mode::Nearest || c10::isFloatingType(input.scalar_type()), "\"upsample\" not implemented for '",
              input.scalar_type(), "'");
  TORCH_CHECK((mode != Mode::LinearAA && mode != Mode::CubicAA) || input.dim() == 4,
              "Anti-alias option is only supported for bilinear and bicubic modes on 4-D input, got ", input.dim(), "-D");
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end() - spatial);
  shape.insert(shape.end(), out.begin(), out.end());
  // An empty batch needs no index tables, however large the spatial sizes: a reshape keeps
  // the autograd graph (its grad is empty too).
  if (input.numel() == 0) return input.reshape(shape).clone();
  // torch allocates the result before any work, so an output too large to allocate fails at
  // once. The passes below allocate as they go; for a large output (>= 1 GiB, or a size that
  // overflows) the allocation is tried first, rather than failing after passes as large.
  int64_t bytes = static_cast<int64_t>(input.itemsize());
  bool large = false;
  for (int64_t s : shape) large = large || c10::mul_overflows(bytes, s, &bytes);
  if (large || bytes >= (int64_t{1} << 30)) (void)at::empty(shape, input.options());
  // Last dim first: the sums then associate as torch's 2-D and 3-D kernels do (each row's
  // horizontal blend, then the vertical blend of those), so values torch computes exactly,
  // such as an exact .5 that uint8 images round, come out the same.
  Tensor x = input;
  for (int64_t d = spatial - 1; d >= 0; --d) {
    std::optional<double> scale;
    if (scales) scale = (*scales)[static_cast<size_t>(d)];
    x = resample_dim(x, input.dim() - spatial + d, out[static_cast<size_t>(d)], mode, align_corners, scale);
  }
  return x;
}

// Nearest upsampling of a quantized tensor (torch's QuantizedCPU kernels): the integers move
// as any dense tensor's do, and keep the input's qparams and layout.
Tensor upsample_nearest_quantized(const Tensor& input, std::optional<IntArrayRef> output_size,
                                  std::optional<ArrayRef<double>> scales, int64_t spatial) {
  checked_per_tensor(input, "upsample_nearest");
  const std::vector<int64_t> out = output_sizes(input, output_size, scales, spatial);
  check_sizes(input, out);
  check_nonempty(input);
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end() - spatial);
  shape.insert(shape.end(), out.begin(), out.end());
  // channels_last inputs keep their layout (torch's NHWC kernel); the rest come out contiguous
  const MemoryFormat format = input.dim() == 4 && input.is_contiguous(MemoryFormat::ChannelsLast)
                                  ? suggest_memory_format(input)
                                  : MemoryFormat::Contiguous;
  Tensor result = new_qtensor(shape, format, get_quantizer(input), input.device());
  if (result.is_meta() || result.numel() == 0) return result;
  integer_alias(result).copy_(upsample(integer_alias(input), output_size, scales, spatial, Mode::Nearest, false));
  return result;
}

}  // namespace

Tensor _upsample_bilinear2d_aa_vec(const Tensor& input, std::optional<IntArrayRef> output_size, bool align_corners,
                                   std::optional<ArrayRef<double>> scale_factors) {
  return upsample(input, output_size, scale_factors, 2, Mode::LinearAA, align_corners);
}

Tensor _upsample_bicubic2d_aa_vec(const Tensor& input, std::optional<IntArrayRef> output_size, bool align_corners,
                                  std::optional<ArrayRef<double>> scale_factors) {
  return upsample(input, output_size, scale_factors, 2, Mode::CubicAA, align_corners);
}

Tensor upsample_nearest1d_vec(const Tensor& input, std::optional<IntArrayRef> output_size,
                              std::optional<ArrayRef<double>> scale_factors) {
  // torch 1.13 has quantized nearest upsampling in 2-d and 3-d only
  TORCH_CHECK_NOT_IMPLEMENTED(!input.is_quantized(), "upsample_nearest1d has no kernel for quantized tensors (torch ",
                              "1.13 has none either)");
  return upsample(input, output_size, scale_factors, 1, Mode::Nearest, false);
}

Tensor upsample_nearest2d_vec(const Tensor& input, std::optional<IntArrayRef> output_size,
                              std::optional<ArrayRef<double>> scale_factors) {
  if (input.is_quantized()) return upsample_nearest_quantized(input, output_size, scale_factors, 2);
  return upsample(input, output_size, scale_factors, 2, Mode::Nearest, false);
}

Tensor upsample_linear1d_vec(const Tensor& input, std::optional<IntArrayRef> output_size, bool align_corners,
                             std::optional<ArrayRef<double>> scale_factors) {
  return upsample(input, output_size, scale_factors, 1, Mode::Linear, align_corners);
}

Tensor upsample_bilinear2d_vec(const Tensor& input, std::optional<IntArrayRef> output_size, bool align_corners,
                               std::optional<ArrayRef<double>> scale_factors) {
  if (input.is_quantized()) return upsample_bilinear2d_quantized(input, output_size, align_corners, scale_factors);
  return upsample(input, output_size, scale_factors, 2, Mode::Linear, align_corners);
}

Tensor upsample_bicubic2d_vec(const Tensor& input, std::optional<IntArrayRef> output_size, bool align_corners,
                              std::optional<ArrayRef<double>> scale_factors) {
  return upsample(input, output_size, scale_factors, 2, Mode::Cubic, align_corners);
}

}  // namespace at::inline tessera::native
