// Upsampling (F.interpolate's nearest, linear, bilinear and bicubic modes) as torch
// computes it, written separably: each spatial dim is resampled in turn by a few taps
// (index_select of source rows, weighted and summed), so autograd adds the grads of
// shared source rows together. Source positions follow torch's rules: nearest computes
// its scale in float; the linear modes map centres (align_corners=False) or corners.
#include <aten/core/TensorOperators.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>
#include <c10/util/safe_numerics.h>

#include <cmath>
#include <sstream>
#include <vector>

namespace at::inline tessera::native {

namespace {

enum class Mode { Nearest, Linear, Cubic };

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

double cubic1(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double cubic2(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

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
  } else {
    double s;
    if (align_corners) {
      s = m > 1 ? static_cast<double>(n - 1) / static_cast<double>(m - 1) : 0.0;
    } else {
      s = scale.has_value() && *scale > 0 ? 1.0 / *scale : static_cast<double>(n) / static_cast<double>(m);
    }
    const int64_t k = mode == Mode::Linear ? 2 : 4;
    taps.resize(static_cast<size_t>(k));
    weights.resize(static_cast<size_t>(k));
    for (int64_t i = 0; i < m; ++i) {
      double src = align_corners ? s * static_cast<double>(i) : s * (static_cast<double>(i) + 0.5) - 0.5;
      if (mode == Mode::Linear) {
        if (!align_corners && src < 0) src = 0;
        const int64_t i0 = static_cast<int64_t>(src);
        const int64_t step = i0 < n - 1 ? 1 : 0;
        const double lambda = src - static_cast<double>(i0);
        taps[0].push_back(i0), taps[1].push_back(i0 + step);
        weights[0].push_back(1 - lambda), weights[1].push_back(lambda);
      } else {
        const int64_t i0 = static_cast<int64_t>(std::floor(src));
        const double t = src - static_cast<double>(i0);
        constexpr double kA = -0.75;
        const double w[4] = {cubic2(t + 1, kA), cubic1(t, kA), cubic1(1 - t, kA), cubic2(2 - t, kA)};
        for (int64_t j = 0; j < 4; ++j) {
          taps[j].push_back(std::min(std::max<int64_t>(i0 - 1 + j, 0), n - 1));
          weights[j].push_back(w[j]);
        }
      }
    }
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
  Tensor x = input;
  for (int64_t d = 0; d < spatial; ++d) {
    std::optional<double> scale;
    if (scales) scale = (*scales)[static_cast<size_t>(d)];
    x = resample_dim(x, input.dim() - spatial + d, out[static_cast<size_t>(d)], mode, align_corners, scale);
  }
  return x;
}

}  // namespace

Tensor upsample_nearest1d_vec(const Tensor& input, std::optional<IntArrayRef> output_size,
                              std::optional<ArrayRef<double>> scale_factors) {
  return upsample(input, output_size, scale_factors, 1, Mode::Nearest, false);
}

Tensor upsample_nearest2d_vec(const Tensor& input, std::optional<IntArrayRef> output_size,
                              std::optional<ArrayRef<double>> scale_factors) {
  return upsample(input, output_size, scale_factors, 2, Mode::Nearest, false);
}

Tensor upsample_linear1d_vec(const Tensor& input, std::optional<IntArrayRef> output_size, bool align_corners,
                             std::optional<ArrayRef<double>> scale_factors) {
  return upsample(input, output_size, scale_factors, 1, Mode::Linear, align_corners);
}

Tensor upsample_bilinear2d_vec(const Tensor& input, std::optional<IntArrayRef> output_size, bool align_corners,
                               std::optional<ArrayRef<double>> scale_factors) {
  return upsample(input, output_size, scale_factors, 2, Mode::Linear, align_corners);
}

Tensor upsample_bicubic2d_vec(const Tensor& input, std::optional<IntArrayRef> output_size, bool align_corners,
                              std::optional<ArrayRef<double>> scale_factors) {
  return upsample(input, output_size, scale_factors, 2, Mode::Cubic, align_corners);
}

}  // namespace at::inline tessera::native
