// grid_sampler (nn.functional.grid_sample) on 4-D and 5-D inputs: each output pixel reads
// the input at the point its grid entry names ([-1, 1] spans the image), bi- or trilinearly
// or from the nearest pixel, with zeros, the border or the mirrored image outside. Written over
// differentiable ops
// (gather, where, arithmetic), so the grads reach both the input and the grid.
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>

#include <string>
#include <vector>

namespace at::inline tessera::native {

namespace {

enum Interpolation : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum GridPadding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

void check_grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation, int64_t padding) {
  const bool known = input.dim() == 4 || input.dim() == 5;
  TORCH_CHECK(known && input.dim() == grid.dim(), "grid_sampler(): expected ",
              known ? std::to_string(input.dim()) + "D" : std::string("4D or 5D"), " input and grid with same number "
              "of dimensions, but got input with sizes ", input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(input.size(0) == grid.size(0), "grid_sampler(): expected grid and input to have same batch size, but got "
              "input with sizes ", input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(grid.size(-1) == input.dim() - 2, "grid_sampler(): expected grid to have size ", input.dim() - 2,
              " in last dimension, but got grid with sizes ", grid.sizes());
  for (int64_t d = 2; d < input.dim(); ++d) {
    TORCH_CHECK(input.size(d) > 0, "grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                "sizes ", input.sizes(), " with dimension ", d, " being empty");
  }
  TORCH_CHECK(input.scalar_type() == grid.scalar_type(), "expected scalar type ", toString(input.scalar_type()),
              " but found ", toString(grid.scalar_type()));  // torch 1.13's words
  TORCH_CHECK(c10::isFloatingType(input.scalar_type()), "grid_sampler(): expected a floating input, but got ",
              toString(input.scalar_type()));
  TORCH_CHECK(interpolation >= kBilinear && interpolation <= kBicubic, "grid_sampler(): unknown interpolation mode ",
              interpolation);
  TORCH_CHECK(padding >= kZeros && padding <= kReflection, "grid_sampler(): unknown padding mode ", padding);
  TORCH_CHECK_NOT_IMPLEMENTED(interpolation != kBicubic, "grid_sample: mode='bicubic' is not implemented in tessera "
                              "yet");
}

// Grid coordinate in [-1, 1] to pixel coordinate: -1 and 1 are the corner pixels' centres
// (align_corners) or their outer edges.
Tensor unnormalize(const Tensor& coord, int64_t size, bool align_corners) {
  if (align_corners) return (coord + 1) * (0.5 * static_cast<double>(size - 1));
  return ((coord + 1) * static_cast<double>(size) - 1) * 0.5;
}

// A pixel coordinate mirrored into the image: folded about the edges (the corner pixels'
// centres with align_corners, their outer edges without) until it lands inside, then
// clamped to the pixels (the outer half-pixels reflect onto the edge ones).
Tensor reflect(const Tensor& coord, int64_t size, bool align_corners) {
  const double low = align_corners ? 0.0 : -0.5;
  const double span = align_corners ? static_cast<double>(size - 1) : static_cast<double>(size);
  if (span == 0) return at::zeros_like(coord);
  const Tensor distance = (coord - low).abs();
  const Tensor within = at::fmod(distance, span);
  const Tensor folds = (distance / span).floor();  // zero grad: the fold count is piecewise constant
  const Tensor forward = at::eq(at::remainder(folds, 2), 0);
  return at::where(forward, within + low, (span - within) + low).clamp(0, static_cast<double>(size - 1));
}

}  // namespace

namespace {

// grid_sampler_2d and _3d: the grid's last dim holds (x, y[, z]) for the input's last,
// second-last[, third-last] dims. Bilinear / trilinear interpolation reads the 2^dims
// neighbouring pixels, each weighted by the product of its per-dim weights.
Tensor grid_sample_impl(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                        bool align_corners, int64_t dims) {
  check_grid_sampler(input, grid, interpolation_mode, padding_mode);
  const char* op = dims == 2 ? "grid_sampler_2d()" : "grid_sampler_3d()";
  TORCH_CHECK(input.dim() == dims + 2, op, ": expected ", dims + 2, "D input and grid, but got input with sizes ",
              input.sizes());
  TORCH_CHECK(dims == 2 || interpolation_mode != kBicubic, "grid_sampler(): bicubic interpolation only supports 4D "
              "input");
  if (c10::isReducedFloatingType(input.scalar_type())) {  // coordinates in float32: bfloat16 has 8 bits
    const c10::ScalarType t = input.scalar_type();
    return grid_sample_impl(input.to(c10::kFloat), grid.to(c10::kFloat), interpolation_mode, padding_mode,
                            align_corners, dims)
        .to(t);
  }
  const int64_t n = input.size(0), c = input.size(1);
  std::vector<int64_t> out_sizes{n, c};
  int64_t points = 1, pixels = 1;
  for (int64_t d = 0; d < dims; ++d) {
    out_sizes.push_back(grid.size(1 + d));
    points *= grid.size(1 + d);
    pixels *= input.size(2 + d);
  }
  if (input.is_meta() || grid.is_meta()) {
    return at::empty(out_sizes, TensorOptions().dtype(input.scalar_type()).device(c10::kMeta));
  }
  // coord[k]: the pixel coordinate along the input's dim (dims + 1 - k), k = 0 for x.
  std::vector<Tensor> coord;
  std::vector<int64_t> extent;
  for (int64_t k = 0; k < dims; ++k) {
    const int64_t size = input.size(dims + 1 - k);
    extent.push_back(size);
    Tensor v = unnormalize(grid.select(-1, k), size, align_corners).reshape({n, 1, points});
    if (padding_mode == kBorder) v = v.clamp(0, static_cast<double>(size - 1));
    else if (padding_mode == kReflection) v = reflect(v, size, align_corners);
    coord.push_back(v);
  }
  const Tensor flat = input.reshape({n, c, pixels});
  const Tensor coord_zero = at::zeros({}, TensorOptions().dtype(coord[0].scalar_type()));
  const Tensor value_zero = at::zeros({}, TensorOptions().dtype(input.scalar_type()));
  // The input at integer pixel p (one coordinate per k) per point, times `weight`; zero
  // outside the image (NaN coordinates included).
  auto sample = [&](const std::vector<Tensor>& p, const Tensor& weight) {
    Tensor inside;
    for (int64_t k = 0; k < dims; ++k) {
      const Tensor in_k = at::logical_and(at::ge(p[k], 0), at::le(p[k], static_cast<double>(extent[k] - 1)));
      inside = inside.defined() ? at::logical_and(inside, in_k) : in_k;
    }
    // pixel indices in int64 (floats hold integers exactly only so far)
    Tensor at_pixel;
    for (int64_t k = dims - 1; k >= 0; --k) {  // the slowest-varying dim (the last coordinate) first
      const Tensor index = at::where(inside, p[k], coord_zero).to(c10::kLong);
      at_pixel = at_pixel.defined() ? at_pixel * extent[k] + index : index;
    }
    const Tensor values = flat.gather(2, at_pixel.expand({n, c, points}));
    return at::where(inside, weight.defined() ? values * weight : values, value_zero);
  };
  Tensor out;
  if (interpolation_mode == kNearest) {
    std::vector<Tensor> nearest;
    for (const Tensor& v : coord) nearest.push_back(v.round());  // half to even, as torch; a zero grad
    out = sample(nearest, Tensor());
  } else {
    std::vector<Tensor> low, upper_weight, lower_weight;
    for (const Tensor& v : coord) {
      low.push_back(v.floor());  // zero grads: the weights carry the grid's
      upper_weight.push_back(v - low.back());
      lower_weight.push_back(1 - upper_weight.back());
    }
    for (int64_t corner = 0; corner < (int64_t{1} << dims); ++corner) {
      std::vector<Tensor> p;
      Tensor weight;
      for (int64_t k = 0; k < dims; ++k) {
        const bool up = (corner >> k) & 1;
        p.push_back(up ? low[k] + 1 : low[k]);
        const Tensor& w = up ? upper_weight[k] : lower_weight[k];
        weight = weight.defined() ? weight * w : w;
      }
      const Tensor term = sample(p, weight);
      out = out.defined() ? out + term : term;
    }
  }
  return out.reshape(out_sizes);
}

}  // namespace

Tensor grid_sampler_2d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                       bool align_corners) {
  return grid_sample_impl(input, grid, interpolation_mode, padding_mode, align_corners, 2);
}

Tensor grid_sampler_3d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                       bool align_corners) {
  return grid_sample_impl(input, grid, interpolation_mode, padding_mode, align_corners, 3);
}

Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                    bool align_corners) {
  check_grid_sampler(input, grid, interpolation_mode, padding_mode);
  if (input.dim() == 5) return at::grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners);
  return at::grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners);
}

// affine_grid_generator (nn.functional.affine_grid): the sampling grid of an affine map
// theta (N x 2 x 3, or N x 3 x 4 in 3-D) over an output of `size`: each output pixel's
// normalized coordinates (x, y[, z], 1) times theta^T. Composite, so theta's grad is a matmul's.
namespace {

// n normalized coordinates across [-1, 1]: pixel centres, or with align_corners the corner
// pixels' centres at -1 and 1. One pixel sits at 0.
Tensor normalized_axis(int64_t n, bool align_corners, const Tensor& like) {
  if (n <= 1) return at::zeros({n}, TensorOptions().dtype(like.scalar_type()).device(like.device()));
  const Tensor axis = at::linspace(-1, 1, n, like.scalar_type(), std::nullopt, like.device(), std::nullopt);
  return align_corners ? axis : axis * (static_cast<double>(n - 1) / static_cast<double>(n));
}

}  // namespace

Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners) {
  TORCH_CHECK(size.size() == 4 || size.size() == 5,
              "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.");
  const int64_t spatial = static_cast<int64_t>(size.size()) - 2;
  TORCH_CHECK(theta.dim() == 3 && theta.size(0) == size[0] && theta.size(1) == spatial &&
              theta.size(2) == spatial + 1, "affine_grid_generator: expected theta of size [", size[0], ", ", spatial,
              ", ", spatial + 1, "] for an output of size ", size, ", but got ", theta.sizes());
  // Output dims run (D,) H, W; coordinates run x (over W), y (over H)[, z (over D)].
  const std::vector<int64_t> extent(size.begin() + 2, size.end());
  std::vector<Tensor> coords;
  for (int64_t c = 0; c < spatial; ++c) {
    const int64_t dim = spatial - 1 - c;  // x varies along the last output dim
    std::vector<int64_t> shape(spatial, 1);
    shape[dim] = extent[dim];
    coords.push_back(normalized_axis(extent[dim], align_corners, theta).view(shape).expand(extent));
  }
  coords.push_back(at::ones(extent, TensorOptions().dtype(theta.scalar_type()).device(theta.device())));
  int64_t points = 1;
  for (int64_t e : extent) points *= e;
  const Tensor base = at::stack(coords, -1).view({1, points, spatial + 1});
  std::vector<int64_t> out_sizes{size[0]};
  out_sizes.insert(out_sizes.end(), extent.begin(), extent.end());
  out_sizes.push_back(spatial);
  return at::matmul(base, theta.transpose(1, 2)).view(out_sizes);
}

}  // namespace at::inline tessera::native
