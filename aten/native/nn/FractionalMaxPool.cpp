// Fractional max pooling (Graham, 2014) over [C, H, W] / [N, C, H, W] (2-D) and
// [C, T, H, W] / [N, C, T, H, W] (3-D) inputs: each plane's windows start at a
// pseudo-random, non-decreasing sequence of offsets drawn from one uniform sample per plane
// and dimension (random_samples, [N, C, dims]), so the output has exactly output_size
// cells. The kernel records the argmax (flat within the plane) of each window; the backward
// is a scatter_add of the grad at those indices (autograd/FunctionsManualNN.cpp), so it
// differentiates again. CPU and Meta share the checks.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

namespace at::inline tessera::native {

namespace {

constexpr const char* kDimNames[3] = {"time", "height", "width"};

struct FractionalGeometry {
  int64_t batch = 1, planes = 0, dims = 0;
  std::array<int64_t, 3> in{}, out{}, k{};
  std::vector<int64_t> output_sizes;
};

FractionalGeometry fractional_geometry(const Tensor& self, IntArrayRef kernel_size, IntArrayRef output_size,
                                       const Tensor& random_samples, int64_t dims) {
  const char* op = dims == 2 ? "fractional_max_pool2d()" : "fractional_max_pool3d_out()";
  const int64_t rank = self.dim();
  TORCH_CHECK(rank == dims + 1 || rank == dims + 2, op, ": Expected ", dims + 1, "D or ", dims + 2,
              "D tensor, but got: ", self.sizes());
  for (int64_t d = rank - dims - 1; d < rank; ++d) {
    TORCH_CHECK(self.size(d) > 0, op, ": Expected input to have non-zero size for non-batch dimensions, but got",
                self.sizes(), " with dimension ", d, " being empty.");
  }
  TORCH_CHECK(static_cast<int64_t>(kernel_size.size()) == dims && static_cast<int64_t>(output_size.size()) == dims,
              op, ": kernel_size and output_size must have ", dims, " elements each");
  if (!c10::isFloatingType(self.scalar_type()) || self.scalar_type() == c10::kHalf ||
      self.scalar_type() == c10::kBFloat16) {
    dtype_not_implemented(dims == 2 ? "fractional_max_pool2d_out_frame" : "fractional_max_pool3d_out_frame",
                          self.scalar_type());
  }
  TORCH_CHECK(random_samples.scalar_type() == self.scalar_type(), "expected scalar type ", self.scalar_type(),
              " but found ", random_samples.scalar_type());
  FractionalGeometry g;
  g.dims = dims;
  const bool batched = rank == dims + 2;
  g.batch = batched ? self.size(0) : 1;
  g.planes = self.size(rank - dims - 1);
  TORCH_CHECK(random_samples.dim() == 3 && random_samples.size(0) == g.batch && random_samples.size(1) == g.planes &&
                  random_samples.size(2) == dims,
              op, ": expected random_samples of shape [", g.batch, ", ", g.planes, ", ", dims, "], but got ",
              random_samples.sizes());
  if (batched) g.output_sizes.push_back(g.batch);
  g.output_sizes.push_back(g.planes);
  for (int64_t i = 0; i < dims; ++i) {
    const size_t u = static_cast<size_t>(i);
    const char* name = kDimNames[3 - dims + i];
    g.in[u] = self.size(rank - dims + i);
    g.k[u] = kernel_size[u];
    g.out[u] = output_size[u];
    TORCH_CHECK(g.k[u] > 0, op, ": kernel_size must be greater than zero, but got ", kernel_size);
    TORCH_CHECK(g.out[u] > 0, op, ": output_size must be greater than zero, but got ", output_size);
    // (torch 1.13's 3-D check is strict: the last window may not end at the input's end)
    const int64_t reach = g.out[u] + g.k[u] - 1;
    TORCH_CHECK(dims == 2 ? reach <= g.in[u] : reach < g.in[u], op, ": pool ", name, " ", g.k[u],
                " too large relative to input ", name, " ", g.in[u]);
    g.output_sizes.push_back(g.out[u]);
  }
  return g;
}

// The window offsets along one dim: with alpha = (in - k) / (out - 1), offset i is
// floor((i + u) * alpha) - floor(u * alpha), and the last window ends at the input's end.
// Computed in the input's dtype, as torch does, so both pick the same windows.
template <typename T>
std::vector<int64_t> window_starts(T u, int64_t in, int64_t out, int64_t k) {
  std::vector<int64_t> starts(static_cast<size_t>(out));
  // A sample outside [0, 1) or NaN (torch reads outside the input then) is brought inside
  // first, so the float-to-int conversions below stay defined.
  if (!(u >= T(0))) u = T(0);
  if (!(u < T(1))) u = std::nextafter(T(1), T(0));
  if (out > 1) {
    const T alpha = static_cast<T>(in - k) / static_cast<T>(out - 1);
    for (int64_t i = 0; i < out - 1; ++i) {
      const int64_t start =
          static_cast<int64_t>(static_cast<int>((static_cast<T>(i) + u) * alpha) - static_cast<int>(u * alpha));
      starts[static_cast<size_t>(i)] = std::clamp<int64_t>(start, 0, in - k);  // (rounding at the last one)
    }
  }
  starts[static_cast<size_t>(out - 1)] = in - k;
  return starts;
}

std::tuple<Tensor, Tensor> fractional_max_pool_impl(const Tensor& self, IntArrayRef kernel_size,
                                                    IntArrayRef output_size, const Tensor& random_samples,
                                                    int64_t dims, bool meta) {
  const FractionalGeometry g = fractional_geometry(self, kernel_size, output_size, random_samples, dims);
  Tensor output = make_empty(g.output_sizes, self.scalar_type(), self.device());
  Tensor indices = make_empty(g.output_sizes, c10::kLong, self.device());
  if (meta) return {output, indices};
  const Tensor input = self.contiguous();
  const Tensor samples = random_samples.contiguous();
  // Unused leading dims count as size 1 so 2-D pooling is 3-D pooling with one time step.
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1};
  for (int64_t i = 0; i < dims; ++i) {
    in[static_cast<size_t>(3 - dims + i)] = g.in[static_cast<size_t>(i)];
    out[static_cast<size_t>(3 - dims + i)] = g.out[static_cast<size_t>(i)];
    k[static_cast<size_t>(3 - dims + i)] = g.k[static_cast<size_t>(i)];
  }
  const int64_t plane_in = in[0] * in[1] * in[2], plane_out = out[0] * out[1] * out[2];
  dispatch_types<kFloating>(self.scalar_type(), "fractional_max_pool", [&]<typename T>() {
    const T* x = input.data_ptr<T>();
    const T* u = samples.data_ptr<T>();
    T* y = output.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    at::parallel_for(0, g.batch * g.planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        // torch's sample order: (width, height) in 2-D, (time, height, width) in 3-D.
        std::array<std::vector<int64_t>, 3> starts;
        for (int64_t i = 0; i < 3; ++i) {
          const size_t s = static_cast<size_t>(i);
          const int64_t sample = dims == 3 ? i : 2 - i;
          starts[s] = i < 3 - dims ? std::vector<int64_t>{0}
                                   : window_starts<T>(u[plane * dims + sample], in[s], out[s], k[s]);
        }
        const T* xp = x + plane * plane_in;
        T* yp = y + plane * plane_out;
        int64_t* ip = idx + plane * plane_out;
        for (int64_t ot = 0; ot < out[0]; ++ot) {
          for (int64_t oh = 0; oh < out[1]; ++oh) {
            for (int64_t ow = 0; ow < out[2]; ++ow) {
              const int64_t t0 = starts[0][static_cast<size_t>(ot)], h0 = starts[1][static_cast<size_t>(oh)],
                            w0 = starts[2][static_cast<size_t>(ow)];
              int64_t best = (t0 * in[1] + h0) * in[2] + w0;
              T best_value = -std::numeric_limits<T>::infinity();
              for (int64_t t = t0; t < t0 + k[0]; ++t) {
                for (int64_t h = h0; h < h0 + k[1]; ++h) {
                  for (int64_t w = w0; w < w0 + k[2]; ++w) {
                    const int64_t at = (t * in[1] + h) * in[2] + w;
                    const T v = xp[at];
                    if (v > best_value || std::isnan(v)) {  // NaN wins; of several, the last
                      best_value = v;
                      best = at;
                    }
                  }
                }
              }
              const int64_t o = (ot * out[1] + oh) * out[2] + ow;
              yp[o] = best_value;
              ip[o] = best;
            }
          }
        }
      }
    });
  });
  return {output, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> fractional_max_pool2d_cpu(const Tensor& self, IntArrayRef kernel_size,
                                                     IntArrayRef output_size, const Tensor& random_samples) {
  return fractional_max_pool_impl(self, kernel_size, output_size, random_samples, 2, false);
}
std::tuple<Tensor, Tensor> fractional_max_pool2d_meta(const Tensor& self, IntArrayRef kernel_size,
                                                      IntArrayRef output_size, const Tensor& random_samples) {
  return fractional_max_pool_impl(self, kernel_size, output_size, random_samples, 2, true);
}
std::tuple<Tensor, Tensor> fractional_max_pool3d_cpu(const Tensor& self, IntArrayRef kernel_size,
                                                     IntArrayRef output_size, const Tensor& random_samples) {
  return fractional_max_pool_impl(self, kernel_size, output_size, random_samples, 3, false);
}
std::tuple<Tensor, Tensor> fractional_max_pool3d_meta(const Tensor& self, IntArrayRef kernel_size,
                                                      IntArrayRef output_size, const Tensor& random_samples) {
  return fractional_max_pool_impl(self, kernel_size, output_size, random_samples, 3, true);
}

}  // namespace at::inline tessera::native
