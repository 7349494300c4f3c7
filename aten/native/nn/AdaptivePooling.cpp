// Adaptive average and max pooling over [C, H, W] or [N, C, H, W]: output cell i of n
// covers input rows [floor(i * in / n), ceil((i + 1) * in / n)), so the windows tile the
// input whatever the sizes. The 1-D forms view their input as 2-D with H = 1.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/Pooling.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <limits>
#include <vector>

namespace at::inline tessera::native {

namespace {

struct Adaptive2d {
  int64_t planes_total, in_h, in_w, out_h, out_w;
  std::vector<int64_t> output_sizes;
};

Adaptive2d adaptive_geometry(const Tensor& self, IntArrayRef output_size, const char* op, const char* colon) {
  TORCH_CHECK(output_size.size() == 2, op, ": output_size must be 2");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, op, ": Expected 3D or 4D tensor, but got", colon, " ",
              self.sizes());
  for (int64_t d = self.dim() - 3; d < self.dim(); ++d) {
    TORCH_CHECK(self.size(d) > 0, op, ": Expected input to have non-zero size for non-batch dimensions, but input "
                "has sizes ", self.sizes(), " with dimension ", d, " being empty");
  }
  TORCH_CHECK(output_size[0] >= 0 && output_size[1] >= 0, op, ": elements of output_size must be greater than or "
              "equal to 0 but received {", output_size[0], ", ", output_size[1], "}");
  Adaptive2d g{self.numel() / (self.size(-1) * self.size(-2)), self.size(-2), self.size(-1), output_size[0],
               output_size[1], self.sizes().vec()};
  g.output_sizes[self.dim() - 2] = g.out_h;
  g.output_sizes[self.dim() - 1] = g.out_w;
  return g;
}


}  // namespace

Tensor _adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  const Adaptive2d g = adaptive_geometry(self, output_size, "adaptive_avg_pool2d()", "");
  Tensor out = make_empty(g.output_sizes, self.scalar_type(), self.device());
  if (self.is_meta() || out.numel() == 0) return like_input_layout(out, self);
  const Tensor x = self.contiguous();
  dispatch_types<kPoolFloatTypes>(self.scalar_type(), "adaptive_avg_pool2d", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for_each_plane(g.planes_total, [&](int64_t p) {
      const T* plane = in + p * g.in_h * g.in_w;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        const int64_t h0 = window_start(oh, g.in_h, g.out_h), h1 = window_end(oh, g.in_h, g.out_h);
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const int64_t w0 = window_start(ow, g.in_w, g.out_w), w1 = window_end(ow, g.in_w, g.out_w);
          O sum = 0;
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) sum += static_cast<O>(plane[h * g.in_w + w]);
          }
          o[(p * g.out_h + oh) * g.out_w + ow] = static_cast<T>(sum / static_cast<O>((h1 - h0) * (w1 - w0)));
        }
      }
    });
  });
  return like_input_layout(out, self);
}

Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  const Adaptive2d g = adaptive_geometry(self, grad_output.sizes().slice(grad_output.dim() - 2),
                                         "adaptive_avg_pool2d_backward()", "");
  TORCH_CHECK(grad_output.sizes() == IntArrayRef(g.output_sizes), "adaptive_avg_pool2d_backward(): grad_output of "
              "size ", grad_output.sizes(), " does not match the input's ", self.sizes());
  Tensor grad_input = at::zeros(self.sizes(), TensorOptions().dtype(self.scalar_type()).device(self.device()));
  if (self.is_meta() || grad_output.numel() == 0) return like_input_layout(grad_input, self);
  const Tensor go = grad_output.to(self.scalar_type()).contiguous();
  dispatch_types<kPoolFloatTypes>(self.scalar_type(), "adaptive_avg_pool2d_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* gp = go.data_ptr<T>();
    T* gi = grad_input.data_ptr<T>();
    for_each_plane(g.planes_total, [&](int64_t p) {
      T* plane = gi + p * g.in_h * g.in_w;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        const int64_t h0 = window_start(oh, g.in_h, g.out_h), h1 = window_end(oh, g.in_h, g.out_h);
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const int64_t w0 = window_start(ow, g.in_w, g.out_w), w1 = window_end(ow, g.in_w, g.out_w);
          const O share =
              static_cast<O>(gp[(p * g.out_h + oh) * g.out_w + ow]) / static_cast<O>((h1 - h0) * (w1 - w0));
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) {
              plane[h * g.in_w + w] = static_cast<T>(static_cast<O>(plane[h * g.in_w + w]) + share);
            }
          }
        }
      }
    });
  });
  return like_input_layout(grad_input, self);
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  if (self.is_mkldnn()) {
    TORCH_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
    return at::mkldnn_adaptive_avg_pool2d(self, output_size);
  }
  return at::_adaptive_avg_pool2d(self, output_size);
}

Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size) {
  TORCH_CHECK(self.dim() == 2 || self.dim() == 3, "adaptive_avg_pool1d() argument 'input' (position 1) must be 2D "
              "or 3D tensor, but got ", self.dim(), "D");
  TORCH_CHECK(output_size.size() == 1, "adaptive_avg_pool1d: output_size must be 1");
  return at::adaptive_avg_pool2d(self.unsqueeze(-2), {1, output_size[0]}).squeeze(-2);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntArrayRef output_size) {
  const Adaptive2d g = adaptive_geometry(self, output_size, "adaptive_max_pool2d()", ":");
  Tensor out = make_empty(g.output_sizes, self.scalar_type(), self.device());
  Tensor indices = make_empty(g.output_sizes, c10::kLong, self.device());
  if (self.is_meta() || out.numel() == 0) return {like_input_layout(out, self), like_input_layout(indices, self)};
  const Tensor x = self.contiguous();
  dispatch_types<kPoolFloatTypes>(self.scalar_type(), "adaptive_max_pool2d", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    for_each_plane(g.planes_total, [&](int64_t p) {
      const T* plane = in + p * g.in_h * g.in_w;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        const int64_t h0 = window_start(oh, g.in_h, g.out_h), h1 = window_end(oh, g.in_h, g.out_h);
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const int64_t w0 = window_start(ow, g.in_w, g.out_w), w1 = window_end(ow, g.in_w, g.out_w);
          const auto [best, best_at] = window_max<O>(plane, g.in_w, h0, h1, 1, w0, w1, 1);
          const int64_t k = (p * g.out_h + oh) * g.out_w + ow;
          o[k] = static_cast<T>(best);
          idx[k] = best_at;
        }
      }
    });
  });
  return {like_input_layout(out, self), like_input_layout(indices, self)};
}

Tensor adaptive_max_pool2d_backward(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "adaptive_max_pool2d_backward(): Expected 3D or 4D grad_output, "
              "but got: ", grad_output.sizes());
  TORCH_CHECK(grad_output.dim() == self.dim() && grad_output.sizes().slice(0, self.dim() - 2) ==
              self.sizes().slice(0, self.dim() - 2), "adaptive_max_pool2d_backward(): grad_output of size ",
              grad_output.sizes(), " does not match the input's ", self.sizes());
  const int64_t plane_in = self.size(-1) * self.size(-2);
  const int64_t plane_out = grad_output.size(-1) * grad_output.size(-2);
  return scatter_by_indices(grad_output, self, indices, plane_in == 0 ? 0 : self.numel() / plane_in, plane_in,
                            plane_out, "adaptive_max_pool2d_backward");
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size) {
  TORCH_CHECK(self.dim() == 2 || self.dim() == 3, "adaptive_max_pool1d() argument 'input' (position 1) must be 2D "
              "or 3D tensor, but got ", self.dim(), "D");
  TORCH_CHECK(output_size.size() == 1, "adaptive_max_pool1d: output_size must be 1");
  auto [out, indices] = at::adaptive_max_pool2d(self.unsqueeze(-2), {1, output_size[0]});
  return {out.squeeze(-2), indices.squeeze(-2)};
}

}  // namespace at::inline tessera::native
