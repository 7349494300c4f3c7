// The convolution backend for what oneDNN does not take (float64, unusual paddings):
// per sample, im2col turns the input into a [C * prod(kernel), prod(out)] matrix whose
// product with the weight (one GEMM per group, batched) is the output; the backward
// passes are the transposed products, col2im folding columns back into images.
#include <aten/core/Dispatch.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/linalg/Blas.h>
#include <aten/native/nn/ConvUtils.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native::gemm_conv {

namespace {

int64_t product(const std::array<int64_t, 3>& v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= v[i];
  return p;
}

struct GemmDims {
  int64_t groups, src_per_group, dst_per_group, window, src_plane, dst_plane;
  explicit GemmDims(const ConvShape& s)
      : groups(s.groups),
        src_per_group(s.src_channels / s.groups),
        dst_per_group(s.dst_channels / s.groups),
        window(product(s.kernel, s.spatial)),
        src_plane(product(s.src, s.spatial)),
        dst_plane(product(s.dst, s.spatial)) {}
  int64_t rows() const { return src_per_group * window; }  // of one group's column matrix
};

// Writes `out` from `compute(contiguous out)`: directly when out is contiguous.
template <typename F>
void into(const Tensor& out, F compute) {
  if (out.is_contiguous()) {
    compute(out);
    return;
  }
  Tensor tmp = make_empty(out.sizes(), out.scalar_type(), out.device());
  compute(tmp);
  out.copy_(tmp);
}

template <typename F>
void with_float_type(const Tensor& t, const char* op, F f) {
  dispatch_types<kFloating>(t.scalar_type(), op, f);
}

}  // namespace

void conv_forward(const Tensor& dst, const Tensor& src, const Tensor& weight, const ConvShape& s) {
  const GemmDims g(s);
  const Tensor x = src.contiguous();
  const Tensor w = weight.contiguous().view({g.groups, g.dst_per_group, g.rows()});
  Tensor columns = make_empty({g.groups, g.rows(), g.dst_plane}, src.scalar_type(), src.device());
  into(dst, [&](const Tensor& out) {
    with_float_type(src, "conv_forward", [&]<typename T>() {
      for (int64_t n = 0; n < s.batch; ++n) {
        im2col_image(x.data_ptr<T>() + n * s.src_channels * g.src_plane, columns.data_ptr<T>(), s.src_channels, s);
        batched_gemm(out.select(0, n).view({g.groups, g.dst_per_group, g.dst_plane}), w, columns, 0, 1,
                     "convolution");
      }
    });
  });
}

void conv_backward_data(const Tensor& src_grad, const Tensor& dst_grad, const Tensor& weight, const ConvShape& s) {
  const GemmDims g(s);
  const Tensor gy = dst_grad.contiguous();
  const Tensor w_t = weight.contiguous().view({g.groups, g.dst_per_group, g.rows()}).transpose(1, 2);
  Tensor columns = make_empty({g.groups, g.rows(), g.dst_plane}, dst_grad.scalar_type(), dst_grad.device());
  into(src_grad, [&](const Tensor& out) {
    out.zero_();
    with_float_type(dst_grad, "conv_backward_data", [&]<typename T>() {
      for (int64_t n = 0; n < s.batch; ++n) {
        batched_gemm(columns, w_t, gy.select(0, n).view({g.groups, g.dst_per_group, g.dst_plane}), 0, 1,
                     "convolution_backward");
        col2im_image(columns.data_ptr<T>(), out.data_ptr<T>() + n * s.src_channels * g.src_plane, s.src_channels,
                     s);
      }
    });
  });
}

void conv_backward_weights(const Tensor& weight_grad, const Tensor& dst_grad, const Tensor& src, const ConvShape& s) {
  const GemmDims g(s);
  const Tensor x = src.contiguous(), gy = dst_grad.contiguous();
  Tensor columns = make_empty({g.groups, g.rows(), g.dst_plane}, src.scalar_type(), src.device());
  into(weight_grad, [&](const Tensor& out) {
    const Tensor gw = out.view({g.groups, g.dst_per_group, g.rows()});
    if (s.batch == 0) gw.zero_();
    with_float_type(src, "conv_backward_weights", [&]<typename T>() {
      for (int64_t n = 0; n < s.batch; ++n) {
        im2col_image(x.data_ptr<T>() + n * s.src_channels * g.src_plane, columns.data_ptr<T>(), s.src_channels, s);
        batched_gemm(gw, gy.select(0, n).view({g.groups, g.dst_per_group, g.dst_plane}), columns.transpose(1, 2),
                     n == 0 ? 0 : 1, 1, "convolution_backward");
      }
    });
  });
}

}  // namespace at::inline tessera::native::gemm_conv
