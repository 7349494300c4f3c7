// im2col / col2im: the sliding windows of an image as the columns of a matrix, and the
// adjoint that adds such columns back into an image. One N-d loop nest (up to three
// spatial dims) serves the GEMM convolution; the 2-D operators im2col and col2im (unfold
// and fold in nn.functional) are thin wrappers over it.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/ConvUtils.h>
#include <aten/ops/Functions.h>

#include <vector>

namespace at::inline tessera::native {

namespace {

// ConvShape's used dims padded in front to three (size 1, kernel 1, no padding).
struct Dims3 {
  int64_t src[3], dst[3], k[3], stride[3], pad[3], dil[3];
  explicit Dims3(const ConvShape& s) {
    const int lead = 3 - s.spatial;
    for (int i = 0; i < 3; ++i) {
      const bool used = i >= lead;
      const int j = i - lead;
      src[i] = used ? s.src[j] : 1;
      dst[i] = used ? s.dst[j] : 1;
      k[i] = used ? s.kernel[j] : 1;
      stride[i] = used ? s.stride[j] : 1;
      pad[i] = used ? s.padding[j] : 0;
      dil[i] = used ? s.dilation[j] : 1;
    }
  }
};

// f(row of `columns`, image offset or -1 when in the padding) for each element, one
// row (channel, kernel offset) at a time.
template <typename F>
void for_each_window_element(const Dims3& d, int64_t channels, F f) {
  const int64_t rows = channels * d.k[0] * d.k[1] * d.k[2];
  const int64_t cols = d.dst[0] * d.dst[1] * d.dst[2];
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t k2 = r % d.k[2], k1 = (r / d.k[2]) % d.k[1], k0 = (r / (d.k[2] * d.k[1])) % d.k[0];
    const int64_t c = r / (d.k[0] * d.k[1] * d.k[2]);
    const int64_t plane = c * d.src[0] * d.src[1] * d.src[2];
    int64_t col = r * cols;
    for (int64_t o0 = 0; o0 < d.dst[0]; ++o0) {
      const int64_t i0 = o0 * d.stride[0] - d.pad[0] + k0 * d.dil[0];
      const bool in0 = i0 >= 0 && i0 < d.src[0];
      for (int64_t o1 = 0; o1 < d.dst[1]; ++o1) {
        const int64_t i1 = o1 * d.stride[1] - d.pad[1] + k1 * d.dil[1];
        const bool in01 = in0 && i1 >= 0 && i1 < d.src[1];
        const int64_t base = plane + (i0 * d.src[1] + i1) * d.src[2];
        for (int64_t o2 = 0; o2 < d.dst[2]; ++o2, ++col) {
          const int64_t i2 = o2 * d.stride[2] - d.pad[2] + k2 * d.dil[2];
          f(col, in01 && i2 >= 0 && i2 < d.src[2] ? base + i2 : -1);
        }
      }
    }
  }
}

}  // namespace

template <typename T>
void im2col_image(const T* image, T* columns, int64_t channels, const ConvShape& s) {
  for_each_window_element(Dims3(s), channels, [&](int64_t col, int64_t at) {
    columns[col] = at >= 0 ? image[at] : T(0);
  });
}

template <typename T>
void col2im_image(const T* columns, T* image, int64_t channels, const ConvShape& s) {
  for_each_window_element(Dims3(s), channels, [&](int64_t col, int64_t at) {
    if (at >= 0) image[at] += columns[col];
  });
}

#define TESSERA_IM2COL_INSTANTIATE(T)                                                  \
  template void im2col_image<T>(const T*, T*, int64_t, const ConvShape&);              \
  template void col2im_image<T>(const T*, T*, int64_t, const ConvShape&);
TESSERA_IM2COL_INSTANTIATE(float)
TESSERA_IM2COL_INSTANTIATE(double)
TESSERA_IM2COL_INSTANTIATE(c10::Half)
TESSERA_IM2COL_INSTANTIATE(c10::BFloat16)
TESSERA_IM2COL_INSTANTIATE(c10::complex<float>)
TESSERA_IM2COL_INSTANTIATE(c10::complex<double>)
#undef TESSERA_IM2COL_INSTANTIATE

// ---------------------------------------------------------------- im2col / col2im ops

namespace {

constexpr unsigned kUnfoldTypes = kFloating | kReducedFloat | kComplex;

void check_pair(IntArrayRef v, const char* name) {
  TORCH_CHECK(v.size() == 2, "It is expected ", name, " equals to 2, but got size ", v.size());
}

// torch's im2col/col2im shape checks on the window parameters; returns the 2-D shape.
void check_blocks(const ConvShape& s, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding) {
  TORCH_CHECK(s.dst[0] >= 1 && s.dst[1] >= 1, "Given input with spatial size (", s.src[0], ", ", s.src[1],
              "), kernel_size=(", kernel_size[0], ", ", kernel_size[1], "), dilation=(", dilation[0], ", ",
              dilation[1], "), padding=(", padding[0], ", ", padding[1], "), calculated shape of the array of "
              "sliding blocks as (", s.dst[0], ", ", s.dst[1], "), but its components must be at least one.");
}

// (col2im checks the block count first, as torch, so it asks for no blocks here.)
ConvShape unfold_shape(IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride,
                       int64_t height, int64_t width, bool require_blocks = true) {
  check_pair(kernel_size, "kernel_size");
  check_pair(dilation, "dilation");
  check_pair(padding, "padding");
  check_pair(stride, "stride");
  TORCH_CHECK(kernel_size[0] > 0 && kernel_size[1] > 0, "kernel size should be greater than zero, but got "
              "kernel_height: ", kernel_size[0], " kernel_width: ", kernel_size[1]);
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0, "stride should be greater than zero, but got stride_height: ",
              stride[0], " stride_width: ", stride[1]);
  TORCH_CHECK(dilation[0] > 0 && dilation[1] > 0, "dilation should be greater than zero, but got "
              "dilation_height: ", dilation[0], " dilation_width: ", dilation[1]);
  TORCH_CHECK(padding[0] >= 0 && padding[1] >= 0, "padding should be non-negative, but got pad_height: ",
              padding[0], " pad_width: ", padding[1]);
  ConvShape s;
  s.spatial = 2;
  for (int i = 0; i < 2; ++i) {
    s.src[i] = i == 0 ? height : width;
    s.kernel[i] = kernel_size[i], s.stride[i] = stride[i], s.padding[i] = padding[i], s.dilation[i] = dilation[i];
    s.dst[i] = conv_output_length(s.src[i], s.kernel[i], s.padding[i], s.stride[i], s.dilation[i]);
  }
  if (require_blocks) check_blocks(s, kernel_size, dilation, padding);
  return s;
}

}  // namespace

Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride) {
  const bool ok = (self.dim() == 3 || self.dim() == 4) && self.size(-1) != 0 && self.size(-2) != 0 &&
                  self.size(-3) != 0;
  TORCH_CHECK(ok, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
              "for input, but got: ", self.sizes());
  const ConvShape s = unfold_shape(kernel_size, dilation, padding, stride, self.size(-2), self.size(-1));
  const bool batched = self.dim() == 4;
  const int64_t batch = batched ? self.size(0) : 1, channels = self.size(-3);
  const int64_t rows = channels * s.kernel[0] * s.kernel[1], cols = s.dst[0] * s.dst[1];
  std::vector<int64_t> sizes{rows, cols};
  if (batched) sizes.insert(sizes.begin(), batch);
  Tensor out = make_empty(sizes, self.scalar_type(), self.device());
  if (self.is_meta() || out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  dispatch_types<kUnfoldTypes>(self.scalar_type(), "im2col", [&]<typename T>() {
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const int64_t image = channels * s.src[0] * s.src[1];
    at::parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) im2col_image(in + b * image, o + b * rows * cols, channels, s);
    });
  });
  return out;
}

Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  check_pair(output_size, "output_size");
  const bool ok = (self.dim() == 2 || self.dim() == 3) && self.size(-1) != 0 && self.size(-2) != 0;
  TORCH_CHECK(ok, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
              "dimensions for input, but got: ", self.sizes());
  const ConvShape s = unfold_shape(kernel_size, dilation, padding, stride, output_size[0], output_size[1], false);
  const int64_t window = s.kernel[0] * s.kernel[1];
  TORCH_CHECK(self.size(-2) % window == 0, "Expected size of input's dimension 1 to be divisible by the product of "
              "kernel_size, but got input.size(1)=", self.size(-2), " and kernel_size=(", kernel_size[0], ", ",
              kernel_size[1], ").");
  TORCH_CHECK(self.size(-1) == s.dst[0] * s.dst[1], "Given output_size=(", output_size[0], ", ", output_size[1],
              "), kernel_size=(", kernel_size[0], ", ", kernel_size[1], "), dilation=(", dilation[0], ", ",
              dilation[1], "), padding=(", padding[0], ", ", padding[1], "), stride=(", stride[0], ", ", stride[1],
              "), expected size of input's dimension 2 to match the calculated number of sliding blocks ", s.dst[0],
              " * ", s.dst[1], " = ", s.dst[0] * s.dst[1], ", but got input.size(2)=", self.size(-1), ".");
  check_blocks(s, kernel_size, dilation, padding);
  const bool batched = self.dim() == 3;
  const int64_t batch = batched ? self.size(0) : 1, channels = self.size(-2) / window;
  std::vector<int64_t> sizes{channels, output_size[0], output_size[1]};
  if (batched) sizes.insert(sizes.begin(), batch);
  Tensor out = at::zeros(sizes, TensorOptions().dtype(self.scalar_type()).device(self.device()));
  if (self.is_meta() || out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  dispatch_types<kUnfoldTypes>(self.scalar_type(), "col2im", [&]<typename T>() {
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const int64_t image = channels * s.src[0] * s.src[1], matrix = self.size(-2) * self.size(-1);
    at::parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) col2im_image(in + b * matrix, o + b * image, channels, s);
    });
  });
  return out;
}

}  // namespace at::inline tessera::native
