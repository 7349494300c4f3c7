// 3-d average pooling of quantized tensors (avg_pool3d and _adaptive_avg_pool3d on
// QuantizedCPU and QuantizedMeta), as torch 1.13 computes them, Note [Quantized 3-d average
// pooling]. The result keeps the input's qparams.
#include <aten/core/Parallel.h>
#include <aten/core/QTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/Pooling.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/QuantizedOps.h>
#include <aten/native/quantized/QuantizedPooling.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace at::inline tessera::native {

// Note [Quantized 3-d average pooling]: torch's avg_pool3d has one kernel, channels-last
// (NDHWC; the input is made channels_last_3d, so only 5-d inputs work). Per window it sums
// the integers minus zp * (elements inside the input) in a wrapping int32 and scales by
// m = 1 / divisor in float; 8-bit channels in blocks of 8 take the vector quantizer
// (rint(min(acc * m, 2147483520)) + zp), the rest and qint32 quantize_val with scale 1 / m
// (so they multiply by 1 / (1 / m)). _adaptive_avg_pool3d has two: a channels_last_3d input
// takes the channels-last one (quantize_val(1 / m, zp, acc), m = 1 / size, every channel),
// anything else the contiguous one, which rounds the raw sum times ((1 / kd) / kh) / kw and
// converts it as x86 converts, with no zero point and no clamp (an average of stored integers
// stays in range). The output size (1, 1, 1) is mean over the last three dims, as torch's
// adaptive_avg_pool3d makes it. torch writes its channels-last kernels' output in
// channels-last order whatever layout it allocated, which scrambles an [N, C, 1, 1, 1] input's
// padded pooling; here the values are the pooling's in the allocated layout. Research with a
// NumPy reference checked on 32M outputs: docs/plans/quantized-pool3d-bilinear-*.

namespace {

using Triple = std::array<int64_t, 3>;

// A pooling parameter given as one value or three (stride: also none, meaning the kernel's).
Triple triple_of(IntArrayRef v, const Triple& fallback, const char* message, bool allow_empty) {
  TORCH_CHECK(v.size() == 1 || v.size() == 3 || (allow_empty && v.empty()), message);
  if (v.empty()) return fallback;
  return v.size() == 1 ? Triple{v[0], v[0], v[0]} : Triple{v[0], v[1], v[2]};
}

// What one output pixel reads: the window [d0, d1) x [h0, h1) x [w0, w1) inside the input.
struct Window3 {
  int64_t d0, d1, h0, h1, w0, w1;
  int64_t size() const { return (d1 - d0) * (h1 - h0) * (w1 - w0); }
};

// Runs fn(od, oh, ow, in_batch, out_pixel, acc) over the output pixels of 5-d tensors whose
// channels have unit stride in both (the channels-last kernels); acc is a per-thread buffer
// of C uint32 for the window sums.
template <typename Int, typename Fn>
void for_each_pixel_ndhwc(const Tensor& in, const Tensor& out, Fn fn) {
  const Tensor in_ints = integer_alias(in), out_ints = integer_alias(out);
  const Int* src = static_cast<const Int*>(in_ints.data_ptr());
  Int* dst = static_cast<Int*>(out_ints.data_ptr());
  const int64_t od_n = out.size(2), oh_n = out.size(3), ow_n = out.size(4);
  at::parallel_for(0, out.size(0) * od_n * oh_n, 1, [&](int64_t begin, int64_t end) {
    std::vector<uint32_t> acc(static_cast<size_t>(in.size(1)));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / (od_n * oh_n), od = row / oh_n % od_n, oh = row % oh_n;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        fn(od, oh, ow, src + n * in_ints.stride(0),
           dst + n * out_ints.stride(0) + od * out_ints.stride(2) + oh * out_ints.stride(3) + ow * out_ints.stride(4),
           acc.data());
      }
    }
  });
}

// The window's integers summed channel by channel into acc, minus zp per element, wrapping
// as torch's int32 accumulator does.
template <typename Int>
void centred_window_sum(const Tensor& in_ints, const Int* batch, const Window3& w, int64_t channels, int64_t zp,
                        uint32_t* __restrict acc) {
  std::fill(acc, acc + channels, static_cast<uint32_t>(0) - static_cast<uint32_t>(w.size() * zp));
  const int64_t sd = in_ints.stride(2), sh = in_ints.stride(3), sw = in_ints.stride(4);
  for (int64_t d = w.d0; d < w.d1; ++d) {
    for (int64_t h = w.h0; h < w.h1; ++h) {
      for (int64_t x = w.w0; x < w.w1; ++x) {
        const Int* __restrict v = batch + d * sd + h * sh + x * sw;
        add_into(acc, v, channels);
      }
    }
  }
}

Tensor pooled_like(const Tensor& self, IntArrayRef sizes, MemoryFormat format, const char* op) {
  const auto& q = checked_per_tensor(self, op);
  return new_qtensor(sizes, format,
                     c10::make_intrusive<PerTensorAffineQuantizer>(self.scalar_type(), q.scale(), q.zero_point()),
                     self.device());
}

// adaptive pooling's window bounds, computed in float as torch computes them
int64_t adaptive_start(int64_t o, int64_t in, int64_t out) {
  return static_cast<int64_t>(std::floor(static_cast<float>(o * in) / static_cast<float>(out)));
}
int64_t adaptive_end(int64_t o, int64_t in, int64_t out) {
  return static_cast<int64_t>(std::ceil(static_cast<float>((o + 1) * in) / static_cast<float>(out)));
}

}  // namespace

Tensor avg_pool3d_quantized(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                            bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const Triple k = triple_of(kernel_size, {},
                             "avg_pool3d: kernel_size must either be a single int, or a tuple of "
                             "three ints",
                             false);
  const Triple s = triple_of(stride, k,
                             "avg_pool3d: stride must either be omitted, a single int, or a tuple of "
                             "three ints",
                             true);
  const Triple p =
      triple_of(padding, {}, "avg_pool3d: padding must either be a single int, or a tuple of three ints", false);
  TORCH_CHECK_INDEX(self.dim() >= 4, "Dimension out of range (expected to be in range of [",
                    -std::max<int64_t>(self.dim(), 1), ", ", std::max<int64_t>(self.dim(), 1) - 1, "], but got -4)");
  TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  const Triple in{self.size(-3), self.size(-2), self.size(-1)};
  Triple out;
  for (int d = 0; d < 3; ++d) out[d] = pooled_size(in[d], k[d], p[d], s[d], 1, ceil_mode);
  TORCH_CHECK(self.dim() == 5, "required rank 5 tensor to use channels_last_3d format");
  const std::vector<int64_t> sizes{self.size(0), self.size(1), out[0], out[1], out[2]};
  for (int64_t v : sizes) {
    TORCH_CHECK(v >= 0, "Trying to create tensor with negative dimension ", v, ": ", IntArrayRef(sizes));
  }
  const Tensor input = self.contiguous(MemoryFormat::ChannelsLast3d);
  Tensor result = pooled_like(self, sizes, suggest_memory_format(input), "avg_pool3d");
  if (result.is_meta() || result.numel() == 0) return result;
  const Tensor dense = result.is_contiguous(MemoryFormat::ChannelsLast3d)
                           ? result
                           : pooled_like(self, sizes, MemoryFormat::ChannelsLast3d, "avg_pool3d");
  const auto& q = per_tensor_quantizer(self, "avg_pool3d");
  const int64_t channels = self.size(1), zp = q.zero_point();
  // torch's multiplier is (scale / scale) / divisor in float: NaN for a scale of 0 or inf
  const float unit = static_cast<float>(q.scale()) / static_cast<float>(q.scale());
  const Tensor in_ints = integer_alias(input);
  dispatch_quantized_int(self.scalar_type(), [&]<typename Int>(Int) {
    const int64_t vector_channels = sizeof(Int) == 1 ? channels / 8 * 8 : 0;
    for_each_pixel_ndhwc<Int>(
        input, dense, [&](int64_t od, int64_t oh, int64_t ow, const Int* batch, Int* o, uint32_t* acc) {
          const int64_t d0 = od * s[0] - p[0], h0 = oh * s[1] - p[1], w0 = ow * s[2] - p[2];
          const int64_t d1 = std::min(d0 + k[0], in[0] + p[0]), h1 = std::min(h0 + k[1], in[1] + p[1]);
          const int64_t w1 = std::min(w0 + k[2], in[2] + p[2]);
          const int64_t padded = (d1 - d0) * (h1 - h0) * (w1 - w0);
          const Window3 win{std::max<int64_t>(d0, 0), std::min(d1, in[0]),      std::max<int64_t>(h0, 0),
                            std::min(h1, in[1]),      std::max<int64_t>(w0, 0), std::min(w1, in[2])};
          const int64_t size = win.size();
          const int64_t divisor = divisor_override ? *divisor_override : count_include_pad ? padded : size;
          const float m = unit / static_cast<float>(divisor);
          centred_window_sum<Int>(in_ints, batch, win, channels, zp, acc);
          // the tail's quantize_val takes scale 1 / m, so it multiplies by 1 / (1 / m)
          requantize_vector(o, acc, vector_channels, m, zp);
          requantize_scalar(o + vector_channels, acc + vector_channels, channels - vector_channels, 1.0f / (1.0f / m),
                            zp);
        });
  });
  if (!dense.is_same(result)) integer_alias(result).copy_(integer_alias(dense));
  return result;
}

Tensor adaptive_avg_pool3d_quantized(const Tensor& self, IntArrayRef output_size) {
  TORCH_CHECK(output_size.size() == 3, "adaptive_avg_pool3d: output_size must be 3");
  TORCH_CHECK(output_size[0] >= 0 && output_size[1] >= 0 && output_size[2] >= 0,
              "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {",
              output_size[0], ", ", output_size[1], ",", output_size[2], "}");
  for (int64_t d = 1; d < self.dim(); ++d) {
    TORCH_CHECK(self.size(d) > 0, "adaptive_avg_pooling3d(): expected input to have non-empty spatial dimensions, ",
                "but input has sizes ", self.sizes(), " with dimension ", d, " being empty");
  }
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "non-empty 4D or 5D (batch mode) tensor expected for input");
  const auto& q = checked_per_tensor(self, "adaptive_avg_pool3d");
  // torch's channels-last kernel takes a 5-d channels_last_3d input, and also a 4-d one that
  // passes its 2-d channels-last test, whose channels its vector loads then misread (8 or more)
  // and whose result it writes in another order than it allocated (2 or more): such a 4-d
  // input gets that kernel's rounding here, read correctly, in the layout torch allocates
  const bool channels_last = self.dim() == 5 && self.is_contiguous(MemoryFormat::ChannelsLast3d);
  const bool rounds_centred = channels_last || (self.dim() == 4 && self.is_contiguous(MemoryFormat::ChannelsLast));
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - 3);
  sizes.insert(sizes.end(), output_size.begin(), output_size.end());
  Tensor result = pooled_like(self, sizes, rounds_centred ? suggest_memory_format(self) : MemoryFormat::Contiguous,
                              "adaptive_avg_pool3d");
  if (result.is_meta() || result.numel() == 0) return result;
  const Triple in{self.size(-3), self.size(-2), self.size(-1)};
  const Triple out{output_size[0], output_size[1], output_size[2]};
  auto window = [&](int64_t od, int64_t oh, int64_t ow) {
    return Window3{adaptive_start(od, in[0], out[0]), adaptive_end(od, in[0], out[0]),
                   adaptive_start(oh, in[1], out[1]), adaptive_end(oh, in[1], out[1]),
                   adaptive_start(ow, in[2], out[2]), adaptive_end(ow, in[2], out[2])};
  };
  const int64_t channels = self.size(-4), zp = q.zero_point();
  const float unit = static_cast<float>(q.scale()) / static_cast<float>(q.scale());
  dispatch_quantized_int(self.scalar_type(), [&]<typename Int>(Int) {
    if (channels_last) {
      const Tensor dense = result.is_contiguous(MemoryFormat::ChannelsLast3d)
                               ? result
                               : pooled_like(self, sizes, MemoryFormat::ChannelsLast3d, "adaptive_avg_pool3d");
      const Tensor in_ints = integer_alias(self);
      for_each_pixel_ndhwc<Int>(self, dense,
                                [&](int64_t od, int64_t oh, int64_t ow, const Int* batch, Int* o, uint32_t* acc) {
                                  const Window3 win = window(od, oh, ow);
                                  const int64_t size = win.size();
                                  const float m = unit / static_cast<float>(size);
                                  centred_window_sum<Int>(in_ints, batch, win, channels, zp, acc);
                                  requantize_scalar(o, acc, channels, 1.0f / (1.0f / m), zp);
                                });
      if (!dense.is_same(result)) integer_alias(result).copy_(integer_alias(dense));
      return;
    }
    const Tensor in_ints = integer_alias(self.contiguous());
    const Tensor dense = result.is_contiguous() ? result : pooled_like(self, sizes, MemoryFormat::Contiguous, "");
    const Int* src = static_cast<const Int*>(in_ints.data_ptr());
    Int* dst = static_cast<Int*>(integer_alias(dense).data_ptr());
    const int64_t planes = self.numel() / (in[0] * in[1] * in[2]);
    at::parallel_for(0, planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const Int* x = src + plane * in[0] * in[1] * in[2];
        Int* o = dst + plane * out[0] * out[1] * out[2];
        for (int64_t od = 0; od < out[0]; ++od) {
          for (int64_t oh = 0; oh < out[1]; ++oh) {
            for (int64_t ow = 0; ow < out[2]; ++ow) {
              const Window3 win = window(od, oh, ow);
              int64_t sum = 0;
              for (int64_t d = win.d0; d < win.d1; ++d) {
                for (int64_t h = win.h0; h < win.h1; ++h) {
                  for (int64_t w = win.w0; w < win.w1; ++w) sum += x[(d * in[1] + h) * in[2] + w];
                }
              }
              if (rounds_centred) {
                const uint32_t acc = static_cast<uint32_t>(sum) - static_cast<uint32_t>(win.size() * zp);
                const float m = unit / static_cast<float>(win.size());
                requantize_scalar(o + (od * out[1] + oh) * out[2] + ow, &acc, 1, 1.0f / (1.0f / m), zp);
                continue;
              }
              const auto kd = static_cast<float>(1.0 / static_cast<double>(win.d1 - win.d0));
              const float r = kd / static_cast<float>(win.h1 - win.h0) / static_cast<float>(win.w1 - win.w0);
              const float y = round_even(static_cast<float>(sum) * r);
              o[(od * out[1] + oh) * out[2] + ow] = static_cast<Int>(truncate_to_int32_like_x86(y));
            }
          }
        }
      }
    });
    if (!dense.is_same(result)) integer_alias(result).copy_(integer_alias(dense));
  });
  return result;
}

}  // namespace at::inline tessera::native
