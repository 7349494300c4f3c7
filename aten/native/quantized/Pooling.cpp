// Pooling on quantized tensors, as torch 1.13 computes it: max_pool1d/2d (quantized::max_pool1d
// and max_pool2d, and aten's max_pool1d/2d on a quantized input), avg_pool2d and
// _adaptive_avg_pool2d (their QuantizedCPU kernels). The result keeps the input's qparams.
// Max pooling is an integer maximum. The averages sum integers and requantize in float, and
// torch has two kernels whose roundings differ: one for channels_last inputs (NHWC) and one
// for the rest (made contiguous first); both are reproduced, Note [Quantized average pooling].
#include <aten/core/QTensorImpl.h>
#include <aten/library.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/Pooling.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/QuantizedOps.h>
#include <aten/native/quantized/QuantizedPooling.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>


namespace at::inline tessera::native {

// Note [Quantized average pooling]: both kernels sum a window's integers and scale the sum by
// m = 1 / divisor in float. torch's generic kernel (contiguous NCHW input) subtracts the zero
// point times the window size from the sum in int32 and adds the zero point back in float
// before rounding: q = rint(acc * m + zp). Its channels_last kernel rounds first and adds the
// zero point after, as integers: q = rint(acc * m) + zp. The two differ on ties with an odd
// zero point. Adaptive pooling's generic kernel sums the raw integers and rounds sum * m,
// with m = (1 / kh) / kw in float; its channels_last kernel is the one above with
// m = 1 / (kh * kw).

namespace {

const PerTensorAffineQuantizer& affine(const Tensor& q, const char* kernel) { return checked_per_tensor(q, kernel); }

// The input rows [h0, h1) and columns [w0, w1) one output element reads.
struct Window {
  int64_t h0, h1, w0, w1;
};

// An average's window, the count of its elements inside the input and 1 / its divisor.
struct AvgWindow : Window {
  int64_t size;
  float m;
};

// Whether torch takes its channels_last kernel, and the layout of the result.
bool takes_nhwc(const Tensor& self) { return self.dim() == 4 && self.is_contiguous(MemoryFormat::ChannelsLast); }

// A result of self's shape with the last two sizes out_h, out_w and self's qparams, laid out
// as torch allocates it: channels_last inputs (its NHWC kernel) give self's suggested memory
// format, the rest contiguous. (Where the two disagree, a contiguous [N, C, 1, 1] input, torch 1.13 writes
// channels_last order into a contiguous result and scrambles it; the values here are the pooling's.)
Tensor pooled_like(const Tensor& self, int64_t out_h, int64_t out_w) {
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes[sizes.size() - 2] = out_h;
  sizes.back() = out_w;
  const auto& pt = static_cast<const PerTensorAffineQuantizer&>(*get_quantizer(self));
  return new_qtensor(sizes, takes_nhwc(self) ? suggest_memory_format(self) : MemoryFormat::Contiguous,
                     c10::make_intrusive<PerTensorAffineQuantizer>(self.scalar_type(), pt.scale(), pt.zero_point()),
                     self.device());
}

// One of a 2-d pooling's parameters as (height, width): one value serves both.
std::pair<int64_t, int64_t> pair_of(IntArrayRef v, int64_t fallback_h, int64_t fallback_w) {
  if (v.empty()) return {fallback_h, fallback_w};
  return {v[0], v.size() > 1 ? v[1] : v[0]};
}

// Runs body(plane_in, plane_out, channel_stride_in, channel_stride_out) for every (n, c)
// pair as int pointers: the integers of a [N, C, H, W] (or [C, H, W]) tensor in any layout
// are read through their strides.
struct Planes {
  int64_t batch, channels, in_h, in_w, out_h, out_w;
};

template <typename Int, typename Fn>
void for_each_output(const Tensor& in, const Tensor& out, const Planes& p, Fn fn) {
  const bool batched = in.dim() == 4;
  const Tensor in_ints = integer_alias(in), out_ints = integer_alias(out);
  const Int* src = static_cast<const Int*>(in_ints.data_ptr());
  Int* dst = static_cast<Int*>(out_ints.data_ptr());
  const int64_t sn = batched ? in_ints.stride(0) : 0, sc = in_ints.stride(batched ? 1 : 0);
  const int64_t sh = in_ints.stride(batched ? 2 : 1), sw = in_ints.stride(batched ? 3 : 2);
  const int64_t on = batched ? out_ints.stride(0) : 0, oc = out_ints.stride(batched ? 1 : 0);
  const int64_t oh_stride = out_ints.stride(batched ? 2 : 1), ow_stride = out_ints.stride(batched ? 3 : 2);
  at::parallel_for(0, p.batch * p.channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / p.channels, c = plane % p.channels;
      const Int* in_plane = src + n * sn + c * sc;
      Int* out_plane = dst + n * on + c * oc;
      for (int64_t oh = 0; oh < p.out_h; ++oh) {
        for (int64_t ow = 0; ow < p.out_w; ++ow) {
          out_plane[oh * oh_stride + ow * ow_stride] = fn(in_plane, sh, sw, c, oh, ow);
        }
      }
    }
  });
}

// The channels_last loop: body(in_batch, s_h, s_w, out_pixel, oh, ow, acc) per output pixel,
// whose channels (unit stride in both tensors) the body runs innermost, so the reads stay
// dense; acc is a per-thread buffer of C uint32 for sums.
template <typename Int, typename Fn>
void for_each_pixel_nhwc(const Tensor& in, const Tensor& out, const Planes& p, Fn fn) {
  const Tensor in_ints = integer_alias(in), out_ints = integer_alias(out);
  const Int* src = static_cast<const Int*>(in_ints.data_ptr());
  Int* dst = static_cast<Int*>(out_ints.data_ptr());
  const int64_t sn = in_ints.stride(0), sh = in_ints.stride(2), sw = in_ints.stride(3);
  const int64_t on = out_ints.stride(0), oh_stride = out_ints.stride(2), ow_stride = out_ints.stride(3);
  at::parallel_for(0, p.batch * p.out_h, 1, [&](int64_t begin, int64_t end) {
    std::vector<uint32_t> acc(static_cast<size_t>(p.channels));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / p.out_h, oh = row % p.out_h;
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        fn(src + n * sn, sh, sw, dst + n * on + oh * oh_stride + ow * ow_stride, oh, ow, acc.data());
      }
    }
  });
}

// One window element's channels folded into the running maxima (restrict: the compiler
// vectorises it).
template <typename Int>
inline void max_into(Int* __restrict out, const Int* __restrict v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] < v[i] ? v[i] : out[i];
}

// Whether both tensors are 4-d with unit channel stride (the dense channels_last loop applies).
bool dense_channels(const Tensor& in, const Tensor& out) {
  return in.dim() == 4 && in.is_contiguous(MemoryFormat::ChannelsLast) && out.is_contiguous(MemoryFormat::ChannelsLast);
}

}  // namespace

// ---- max pooling

Tensor quantized_max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                            IntArrayRef dilation, bool ceil_mode) {
  TORCH_CHECK(kernel_size.size() == 1 || kernel_size.size() == 2, "Expected 1d or 2d kernel size, got ",
              kernel_size.size());
  TORCH_CHECK(stride.empty() || stride.size() == 2, "Expected no strides or 2d strides, got", stride.size());
  TORCH_CHECK(padding.size() == 1 || padding.size() == 2, "Expected 1d or 2d padding, got ", padding.size());
  TORCH_CHECK(dilation.size() == 1 || dilation.size() == 2, "Expected 1d or 2d dilation, got ", dilation.size());
  const auto [kh, kw] = pair_of(kernel_size, 0, 0);
  const auto [sh, sw] = pair_of(stride, kh, kw);
  const auto [ph, pw] = pair_of(padding, 0, 0);
  const auto [dh, dw] = pair_of(dilation, 1, 1);
  TORCH_CHECK(kh > 0 && kw > 0, "kernel_size should be greater than zero.");
  TORCH_CHECK(sh > 0 && sw > 0, "strides should be greater than zero.");
  TORCH_CHECK(dh > 0 && dw > 0, "dilation should be greater than zero. Got (", dh, ", ", dw, ")");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "Expecting the input tensor of rank 3 or 4.");
  const int64_t c = self.size(-3), h = self.size(-2), w = self.size(-1);
  TORCH_CHECK(c > 0 && h > 0 && w > 0, "input dimensions must be non-zero.");
  TORCH_CHECK(kh / 2 >= ph && kw / 2 >= pw, "padding should be smaller than half of kernel_size.");
  const int64_t out_h = pooled_size(h, kh, ph, sh, dh, ceil_mode), out_w = pooled_size(w, kw, pw, sw, dw, ceil_mode);
  TORCH_CHECK(out_h > 0 && out_w > 0, "Given input size: (", c, "x", h, "x", w, "). Calculated output size: (", c, "x",
              out_h, "x", out_w, "). Output size is too small.");
  affine(self, "max_pool2d");
  Tensor out = pooled_like(self, out_h, out_w);
  if (out.is_meta() || out.numel() == 0) return out;
  const Planes p{self.dim() == 4 ? self.size(0) : 1, c, h, w, out_h, out_w};
  // windows start inside the input or its padding and step by the dilation into the input
  auto max_window = [&](int64_t oh, int64_t ow) {
    Window win{oh * sh - ph, 0, ow * sw - pw, 0};
    win.h1 = std::min(win.h0 + (kh - 1) * dh + 1, h);
    win.w1 = std::min(win.w0 + (kw - 1) * dw + 1, w);
    while (win.h0 < 0) win.h0 += dh;
    while (win.w0 < 0) win.w0 += dw;
    return win;
  };
  dispatch_quantized_int(self.scalar_type(), [&]<typename Int>(Int) {
    if (dense_channels(self, out)) {
      for_each_pixel_nhwc<Int>(self, out, p,
                               [&](const Int* in, int64_t s_h, int64_t s_w, Int* o, int64_t oh, int64_t ow, uint32_t*) {
                                 const Window win = max_window(oh, ow);
                                 std::fill(o, o + c, std::numeric_limits<Int>::lowest());
                                 for (int64_t y = win.h0; y < win.h1; y += dh) {
                                   for (int64_t x = win.w0; x < win.w1; x += dw) {
                                     const Int* v = in + y * s_h + x * s_w;
                                     max_into(o, v, c);
                                   }
                                 }
                               });
      return;
    }
    for_each_output<Int>(self, out, p,
                         [&](const Int* plane, int64_t s_h, int64_t s_w, int64_t, int64_t oh, int64_t ow) {
                           const Window win = max_window(oh, ow);
                           Int best = std::numeric_limits<Int>::lowest();
                           for (int64_t y = win.h0; y < win.h1; y += dh) {
                             for (int64_t x = win.w0; x < win.w1; x += dw)
                               best = std::max(best, plane[y * s_h + x * s_w]);
                           }
                           return best;
                         });
  });
  return out;
}

Tensor quantized_max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                            IntArrayRef dilation, bool ceil_mode) {
  auto unit = [](IntArrayRef v, int64_t first) -> std::vector<int64_t> {
    if (v.empty()) return {};
    return {first, v[0]};
  };
  const int64_t dim = self.dim() - 1;
  return quantized_max_pool2d(self.unsqueeze(dim), unit(kernel_size, 1), unit(stride, 1), unit(padding, 0),
                              unit(dilation, 1), ceil_mode)
      .squeeze(dim);
}

// ---- average pooling

Tensor avg_pool2d_quantized(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                            bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  TORCH_CHECK(kernel_size.size() == 1 || kernel_size.size() == 2,
              "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  TORCH_CHECK(stride.size() <= 2, "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
  TORCH_CHECK(padding.size() == 1 || padding.size() == 2,
              "avg_pool2d: padding must either be a single int, or a tuple of two ints");
  TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "avg_pool2d: expected a 3-D or 4-D quantized input, got ", self.dim(),
              "-D");
  const auto [kh, kw] = pair_of(kernel_size, 0, 0);
  const auto [sh, sw] = pair_of(stride, kh, kw);
  const auto [ph, pw] = pair_of(padding, 0, 0);
  TORCH_CHECK(kh >= 0 && kw >= 0, "avg_pool2d: kernel_size must be non-negative, got (", kh, ", ", kw, ")");
  const int64_t c = self.size(-3), h = self.size(-2), w = self.size(-1);
  const int64_t out_h = std::max<int64_t>(pooled_size(h, kh, ph, sh, 1, ceil_mode), 0);
  const int64_t out_w = std::max<int64_t>(pooled_size(w, kw, pw, sw, 1, ceil_mode), 0);
  const auto& pt = affine(self, "avg_pool2d_quantized_cpu");
  const bool nhwc = takes_nhwc(self);
  Tensor out = pooled_like(self, out_h, out_w);
  if (out.is_meta() || out.numel() == 0) return out;
  // the generic kernel reads a contiguous copy; the values do not depend on the layout
  const Tensor& in = self;
  const int64_t zp = pt.zero_point();
  const Planes p{self.dim() == 4 ? self.size(0) : 1, c, h, w, out_h, out_w};
  // the window clipped to the padded input gives pool_size, clipped to the input size
  auto avg_window = [&](int64_t oh, int64_t ow) {
    AvgWindow win;
    win.h0 = oh * sh - ph, win.w0 = ow * sw - pw;
    win.h1 = std::min(win.h0 + kh, h + ph), win.w1 = std::min(win.w0 + kw, w + pw);
    const int64_t pool_size = (win.h1 - win.h0) * (win.w1 - win.w0);
    win.h0 = std::max<int64_t>(win.h0, 0), win.w0 = std::max<int64_t>(win.w0, 0);
    win.h1 = std::min(win.h1, h), win.w1 = std::min(win.w1, w);
    win.size = (win.h1 - win.h0) * (win.w1 - win.w0);
    const int64_t divisor = divisor_override ? *divisor_override : count_include_pad ? pool_size : win.size;
    win.m = static_cast<float>(1.0 / static_cast<double>(divisor));
    return win;
  };
  dispatch_quantized_int(self.scalar_type(), [&]<typename Int>(Int) {
    constexpr int64_t qmin = std::numeric_limits<Int>::min(), qmax = std::numeric_limits<Int>::max();
    // torch's NHWC kernel takes 8-bit channels in blocks of 8 through its vector quantizer
    const int64_t vector_channels = sizeof(Int) == 1 ? c / 8 * 8 : 0;
    if (dense_channels(in, out)) {
      for_each_pixel_nhwc<Int>(
          in, out, p, [&](const Int* base, int64_t s_h, int64_t s_w, Int* o, int64_t oh, int64_t ow, uint32_t* acc) {
            const AvgWindow win = avg_window(oh, ow);
            std::fill(acc, acc + c,
                      static_cast<uint32_t>(0) - static_cast<uint32_t>(win.size) * static_cast<uint32_t>(zp));
            for (int64_t y = win.h0; y < win.h1; ++y) {
              for (int64_t x = win.w0; x < win.w1; ++x) {
                const Int* v = base + y * s_h + x * s_w;
                add_into(acc, v, c);
              }
            }
            requantize_vector(o, acc, vector_channels, win.m, zp);
            requantize_scalar(o + vector_channels, acc + vector_channels, c - vector_channels, win.m, zp);
          });
      return;
    }
    for_each_output<Int>(
        in, out, p, [&](const Int* plane, int64_t s_h, int64_t s_w, int64_t ch, int64_t oh, int64_t ow) {
          const AvgWindow win = avg_window(oh, ow);
          uint32_t sum = 0;  // int32, wrapping as torch's
          for (int64_t y = win.h0; y < win.h1; ++y) {
            for (int64_t x = win.w0; x < win.w1; ++x)
              sum += static_cast<uint32_t>(static_cast<int32_t>(plane[y * s_h + x * s_w]));
          }
          const uint32_t centred = sum - static_cast<uint32_t>(win.size) * static_cast<uint32_t>(zp);
          const float scaled = static_cast<float>(static_cast<int32_t>(centred)) * win.m;
          int64_t q;
          if (!nhwc) {
            const float y = round_even(scaled + static_cast<float>(zp));
            q = y >= -2147483648.0f && y < 2147483648.0f ? static_cast<int32_t>(y)
                                                         : std::numeric_limits<int32_t>::min();
          } else if (ch < vector_channels) {
            const float r = round_even(scaled);
            const int32_t k = r >= -2147483648.0f && r < 2147483648.0f ? static_cast<int32_t>(r)
                                                                       : std::numeric_limits<int32_t>::min();
            q = static_cast<int32_t>(static_cast<uint32_t>(k) + static_cast<uint32_t>(zp));
          } else {
            q = truncate_like_x86(static_cast<float>(zp) + round_even(scaled));
          }
          return static_cast<Int>(std::min(std::max(q, qmin), qmax));
        });
  });
  return out;
}

Tensor adaptive_avg_pool2d_quantized(const Tensor& self, IntArrayRef output_size) {
  TORCH_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "non-empty 3D or 4D (batch mode) tensor expected for input");
  for (int64_t d = 1; d < self.dim(); ++d) {  // torch checks every dimension but the first
    TORCH_CHECK(self.size(d) > 0, "adaptive_avg_pooling2d(): expected input to have non-empty spatial dimensions, ",
                "but input has sizes ", self.sizes(), " with dimension ", d, " being empty");
  }
  TORCH_CHECK(output_size[0] >= 0 && output_size[1] >= 0, "adaptive_avg_pool2d: elements of output_size must be ",
              "greater than or equal to 0 but received {", output_size[0], ", ", output_size[1], "}");
  const auto& pt = affine(self, "adaptive_avg_pool2d_quantized_cpu");
  const bool nhwc = takes_nhwc(self);
  const int64_t c = self.size(-3), h = self.size(-2), w = self.size(-1);
  const int64_t out_h = output_size[0], out_w = output_size[1];
  Tensor out = pooled_like(self, out_h, out_w);
  if (out.is_meta() || out.numel() == 0) return out;
  // the generic kernel reads a contiguous copy; the values do not depend on the layout
  const Tensor& in = self;
  const int64_t zp = pt.zero_point();
  // torch's window bounds, computed in float (exact below 2^24; kept inside the input)
  auto start = [](int64_t o, int64_t in_size, int64_t out_size) {
    return static_cast<int64_t>(std::floor(static_cast<float>(o * in_size) / static_cast<float>(out_size)));
  };
  auto end = [](int64_t o, int64_t in_size, int64_t out_size) {
    return std::min<int64_t>(
        static_cast<int64_t>(std::ceil(static_cast<float>((o + 1) * in_size) / static_cast<float>(out_size))), in_size);
  };
  const Planes p{self.dim() == 4 ? self.size(0) : 1, c, h, w, out_h, out_w};
  dispatch_quantized_int(self.scalar_type(), [&]<typename Int>(Int) {
    constexpr int64_t qmin = std::numeric_limits<Int>::min(), qmax = std::numeric_limits<Int>::max();
    if (dense_channels(in, out)) {
      for_each_pixel_nhwc<Int>(
          in, out, p, [&](const Int* base, int64_t s_h, int64_t s_w, Int* o, int64_t oh, int64_t ow, uint32_t* acc) {
            const int64_t h0 = start(oh, h, out_h), h1 = end(oh, h, out_h);
            const int64_t w0 = start(ow, w, out_w), w1 = end(ow, w, out_w);
            const int64_t size = (h1 - h0) * (w1 - w0);
            const float m = 1.0f / static_cast<float>(size);
            std::fill(acc, acc + c, static_cast<uint32_t>(0) - static_cast<uint32_t>(size) * static_cast<uint32_t>(zp));
            for (int64_t y = h0; y < h1; ++y) {
              for (int64_t x = w0; x < w1; ++x) {
                const Int* v = base + y * s_h + x * s_w;
                add_into(acc, v, c);
              }
            }
            requantize_scalar(o, acc, c, m, zp);
          });
      return;
    }
    for_each_output<Int>(in, out, p, [&](const Int* plane, int64_t s_h, int64_t s_w, int64_t, int64_t oh, int64_t ow) {
      const int64_t h0 = start(oh, h, out_h), h1 = end(oh, h, out_h);
      const int64_t w0 = start(ow, w, out_w), w1 = end(ow, w, out_w);
      const int64_t kh = h1 - h0, kw = w1 - w0;
      int64_t sum = 0;
      for (int64_t y = h0; y < h1; ++y) {
        for (int64_t x = w0; x < w1; ++x) sum += plane[y * s_h + x * s_w];
      }
      if (!nhwc) {
        float r = static_cast<float>(1.0 / 1.0);
        r = r / static_cast<float>(kh);
        r = r / static_cast<float>(kw);
        const float y = round_even(static_cast<float>(sum) * r);
        return static_cast<Int>(truncate_like_x86(y));
      }
      const float m = 1.0f / static_cast<float>(kh * kw);
      const uint32_t acc = static_cast<uint32_t>(sum) - static_cast<uint32_t>(kh * kw) * static_cast<uint32_t>(zp);
      const int64_t q =
          truncate_like_x86(static_cast<float>(zp) + round_even(static_cast<float>(static_cast<int32_t>(acc)) * m));
      return static_cast<Int>(std::min(std::max(q, qmin), qmax));
    });
  });
  return out;
}

}  // namespace at::inline tessera::native

namespace {
namespace qn = at::native;

void register_pooling(torch::Library& m) {
  m.impl("max_pool1d", TORCH_FN(qn::quantized_max_pool1d));
  m.impl("max_pool2d", TORCH_FN(qn::quantized_max_pool2d));
}
}  // namespace

TORCH_LIBRARY_IMPL(quantized, QuantizedCPU, m) { register_pooling(m); }
TORCH_LIBRARY_IMPL(quantized, QuantizedMeta, m) { register_pooling(m); }
