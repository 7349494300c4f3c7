// 3-D pooling over [C, T, H, W] or [N, C, T, H, W] inputs: max_pool3d, avg_pool3d and
// their adaptive forms, with backward kernels; max_unpool2d/3d, which scatter pooled values
// back to their recorded positions. CPU and Meta share the shape checks. Each plane (one
// n, c) is pooled by one thread over contiguous NCTHW data; a window is three index ranges,
// so every pooling here is one loop over output cells with a different window and reduction.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/Pooling.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace at::inline tessera::native {

namespace {

// [begin, end) with a step: the input rows one window reads along one dim.
struct Span {
  int64_t begin, end, step;
};

struct Pool3d {
  int64_t planes_total = 0;
  std::array<int64_t, 3> in{}, out{}, k{}, s{}, p{}, d{};
  std::vector<int64_t> output_sizes;

  int64_t plane_in() const { return in[0] * in[1] * in[2]; }
  int64_t plane_out() const { return out[0] * out[1] * out[2]; }
};

int64_t triple_at(IntArrayRef v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

std::string sizes_text(int64_t planes, const std::array<int64_t, 3>& v) {
  return std::to_string(planes) + "x" + std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" +
         std::to_string(v[2]);
}

// A 4-D (unbatched) or 5-D input whose non-batch dims are all non-empty.
void check_input_rank(const Tensor& self, const char* op) {
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "non-empty 4D or 5D (batch mode) tensor expected for input");
  for (int64_t dim = self.dim() - 4; dim < self.dim(); ++dim) {
    // (torch prints the dim's length, always 0, where it means to name the dim)
    TORCH_CHECK(self.size(dim) > 0, op, "(): Expected input's non-batch dimensions to have positive length, but "
                "input has a shape of ", self.sizes(), " and non-batch dimension ", self.size(dim),
                " has length zero!");
  }
}

Pool3d pool3d_geometry(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                       IntArrayRef dilation, bool ceil_mode, bool max) {
  const char* op = max ? "max_pool3d" : "avg_pool3d";
  TORCH_CHECK(kernel_size.size() == 1 || kernel_size.size() == 3, op, max
              ? ": kernel_size must either be a single int, or a tuple of three ints"
              : ": kernel_size must be a single int, or a tuple of three ints");
  TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3, op,
              ": stride must either be omitted, a single int, or a tuple of three ints");
  TORCH_CHECK(padding.size() == 1 || padding.size() == 3, op,
              ": padding must either be a single int, or a tuple of three ints");
  TORCH_CHECK(dilation.size() == 1 || dilation.size() == 3, op,
              ": dilation must be either a single int, or a tuple of three ints");
  check_input_rank(self, max ? "max_pool3d_with_indices_out_cpu_template" : "avg_pool3d");
  Pool3d g;
  g.planes_total = self.numel() / (self.size(-1) * self.size(-2) * self.size(-3));
  for (size_t i = 0; i < 3; ++i) {
    g.in[i] = self.size(self.dim() - 3 + static_cast<int64_t>(i));
    g.k[i] = triple_at(kernel_size, i);
    g.s[i] = stride.empty() ? g.k[i] : triple_at(stride, i);
    g.p[i] = triple_at(padding, i);
    g.d[i] = triple_at(dilation, i);
    g.out[i] = pooled_size(g.in[i], g.k[i], g.p[i], g.s[i], g.d[i], ceil_mode);
  }
  TORCH_CHECK(g.k[0] > 0 && g.k[1] > 0 && g.k[2] > 0, "kernel size should be greater than zero, but got kT: ", g.k[0],
              " kH: ", g.k[1], " kW: ", g.k[2]);
  TORCH_CHECK(g.s[0] > 0 && g.s[1] > 0 && g.s[2] > 0, "stride should be greater than zero, but got dT: ", g.s[0],
              " dH: ", g.s[1], " dW: ", g.s[2]);
  TORCH_CHECK(g.d[0] > 0 && g.d[1] > 0 && g.d[2] > 0, "dilation should be greater than zero, but got dilationT: ",
              g.d[0], " dilationH: ", g.d[1], " dilationW: ", g.d[2]);
  const int64_t channels = self.size(-4);
  if (!max) {
    TORCH_CHECK(g.in[0] + 2 * g.p[0] >= g.k[0] && g.in[1] + 2 * g.p[1] >= g.k[1] && g.in[2] + 2 * g.p[2] >= g.k[2],
                "input image (T: ", g.in[0], " H: ", g.in[1], " W: ", g.in[2], ") smaller than kernel size (kT: ",
                g.k[0], " kH: ", g.k[1], " kW: ", g.k[2], ")");
  }
  TORCH_CHECK(g.out[0] >= 1 && g.out[1] >= 1 && g.out[2] >= 1, "Given input size: (", sizes_text(channels, g.in),
              "). Calculated output size: (", sizes_text(channels, g.out), "). Output size is too small");
  g.output_sizes = self.sizes().vec();
  for (size_t i = 0; i < 3; ++i) g.output_sizes[self.dim() - 3 + i] = g.out[i];
  return g;
}

Pool3d adaptive3d_geometry(const Tensor& self, IntArrayRef output_size, const char* op, const char* colon) {
  TORCH_CHECK(output_size.size() == 3, op, ": output_size must be 3");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, op, "(): Expected 4D or 5D tensor, but got", colon, " ",
              self.sizes());
  for (int64_t dim = self.dim() - 4; dim < self.dim(); ++dim) {
    TORCH_CHECK(self.size(dim) > 0, op, "(): Expected input to have non-zero size for non-batch dimensions, but "
                "input has sizes ", self.sizes(), " with dimension ", dim, " being empty");
  }
  for (int64_t v : output_size) {
    TORCH_CHECK(v >= 0, op, "(): elements of output_size must be greater than or equal to 0 but received ",
                output_size);
  }
  Pool3d g;
  g.planes_total = self.numel() / (self.size(-1) * self.size(-2) * self.size(-3));
  g.output_sizes = self.sizes().vec();
  for (size_t i = 0; i < 3; ++i) {
    g.in[i] = self.size(self.dim() - 3 + static_cast<int64_t>(i));
    g.out[i] = output_size[i];
    g.output_sizes[self.dim() - 3 + i] = g.out[i];
  }
  return g;
}

// cell(plane, flat output index, spans) for every output cell, planes split across threads.
template <typename WindowFn, typename CellFn>
void for_each_cell(const Pool3d& g, WindowFn window, CellFn cell) {
  for_each_plane(g.planes_total, [&](int64_t plane) {
    int64_t k = plane * g.plane_out();
    for (int64_t ot = 0; ot < g.out[0]; ++ot) {
      const Span t = window(0, ot);
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const Span h = window(1, oh);
        for (int64_t ow = 0; ow < g.out[2]; ++ow) cell(plane, k++, t, h, window(2, ow));
      }
    }
  });
}

// A max pooling window clipped to the input; the padding holds -inf.
auto max_window(const Pool3d& g) {
  return [&g](size_t i, int64_t o) {
    int64_t begin = o * g.s[i] - g.p[i];
    const int64_t end = std::min(begin + (g.k[i] - 1) * g.d[i] + 1, g.in[i]);
    while (begin < 0) begin += g.d[i];
    return Span{begin, end, g.d[i]};
  };
}

auto adaptive_window(const Pool3d& g) {
  return [&g](size_t i, int64_t o) {
    return Span{window_start(o, g.in[i], g.out[i]), window_end(o, g.in[i], g.out[i]), 1};
  };
}

// The flat (t, h, w) index of each window's maximum (a NaN wins, the first one stays).
template <typename WindowFn>
std::tuple<Tensor, Tensor> max_pool3d_kernel(const Tensor& self, const Pool3d& g, WindowFn window, const char* op) {
  Tensor out = make_empty(g.output_sizes, self.scalar_type(), self.device());
  Tensor indices = make_empty(g.output_sizes, c10::kLong, self.device());
  if (self.is_meta() || out.numel() == 0) return {out, indices};
  const Tensor x = self.contiguous();
  dispatch_types<kPoolFloatTypes>(self.scalar_type(), op, [&]<typename T>() {
    using O = opmath_t<T>;
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    const int64_t hw = g.in[1] * g.in[2];
    for_each_cell(g, window, [&](int64_t plane, int64_t k, Span t, Span h, Span w) {
      const T* base = in + plane * g.plane_in();
      O best = -std::numeric_limits<O>::infinity();
      int64_t best_at = t.begin * hw + h.begin * g.in[2] + w.begin;
      for (int64_t a = t.begin; a < t.end; a += t.step) {
        for (int64_t b = h.begin; b < h.end; b += h.step) {
          for (int64_t c = w.begin; c < w.end; c += w.step) {
            const int64_t at_ = a * hw + b * g.in[2] + c;
            const O v = static_cast<O>(base[at_]);
            if (v > best || (std::isnan(v) && !std::isnan(best))) best = v, best_at = at_;
          }
        }
      }
      o[k] = static_cast<T>(best);
      idx[k] = best_at;
    });
  });
  return {out, indices};
}

// Averaging windows, tabulated once per call: per dim and output index, the input span
// clipped to the input and the span's length counting padding; the divisor of an output is
// then a product of three table entries (or the override).
struct AverageWindows {
  std::array<std::vector<Span>, 3> span;
  std::array<std::vector<int64_t>, 3> padded;
  bool count_include_pad = true;
  std::optional<int64_t> divisor_override;
  // windows along w of one length at one step (no clipping): no per-window table reads
  int64_t first_w = 0, step_w = 1, uniform_w = 0;

  void find_uniform_w() {
    const std::vector<Span>& ws = span[2];
    if (ws.empty()) return;
    first_w = ws[0].begin;
    step_w = ws.size() > 1 ? ws[1].begin - ws[0].begin : 1;
    uniform_w = ws[0].end - ws[0].begin;
    for (size_t ow = 0; ow < ws.size() && uniform_w > 0; ++ow) {
      if (ws[ow].begin != first_w + static_cast<int64_t>(ow) * step_w || ws[ow].end - ws[ow].begin != uniform_w) {
        uniform_w = 0;
      }
    }
  }

  int64_t divisor(int64_t ot, int64_t oh, int64_t ow) const {
    if (divisor_override) return *divisor_override;
    if (count_include_pad) return padded[0][ot] * padded[1][oh] * padded[2][ow];
    return (span[0][ot].end - span[0][ot].begin) * (span[1][oh].end - span[1][oh].begin) *
           (span[2][ow].end - span[2][ow].begin);
  }
  bool empty(int64_t ot, int64_t oh, int64_t ow) const {
    return span[0][ot].begin >= span[0][ot].end || span[1][oh].begin >= span[1][oh].end ||
           span[2][ow].begin >= span[2][ow].end;
  }
};

AverageWindows avg_windows(const Pool3d& g, bool count_include_pad, std::optional<int64_t> divisor_override) {
  AverageWindows w;
  w.count_include_pad = count_include_pad;
  w.divisor_override = divisor_override;
  for (size_t i = 0; i < 3; ++i) {
    for (int64_t o = 0; o < g.out[i]; ++o) {
      const int64_t begin = o * g.s[i] - g.p[i], end = std::min(begin + g.k[i], g.in[i] + g.p[i]);
      w.padded[i].push_back(end - begin);
      w.span[i].push_back({std::max<int64_t>(begin, 0), std::min(end, g.in[i]), 1});
    }
  }
  w.find_uniform_w();
  return w;
}

AverageWindows adaptive_windows(const Pool3d& g) {
  AverageWindows w;
  for (size_t i = 0; i < 3; ++i) {
    for (int64_t o = 0; o < g.out[i]; ++o) {
      const Span span{window_start(o, g.in[i], g.out[i]), window_end(o, g.in[i], g.out[i]), 1};
      w.span[i].push_back(span);
      w.padded[i].push_back(span.end - span.begin);
    }
  }
  w.find_uniform_w();
  return w;
}

// The sum of n consecutive values in 32 interleaved partial sums, in the accumulation type
// A: independent additions the compiler vectorizes into eight registers, enough to hide
// the adder's latency (two registers left a whole-plane sum latency-bound at ~2 floats
// per cycle, slower than torch's AVX2 loop).
template <typename A, typename T>
A row_sum(const T* p, int64_t n) {
  constexpr int64_t kParts = 32;
  if (n < kParts) {
    A sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<A>(p[i]);
    return sum;
  }
  A part[kParts] = {};
  int64_t i = 0;
  for (; i + kParts <= n; i += kParts) {
    for (int64_t j = 0; j < kParts; ++j) part[j] += static_cast<A>(p[i + j]);
  }
  for (; i < n; ++i) part[0] += static_cast<A>(p[i]);
  for (int64_t width = kParts / 2; width > 0; width /= 2) {
    for (int64_t j = 0; j < width; ++j) part[j] += part[j + width];
  }
  return part[0];
}

// Windows one element wide along w at step one (a pooling over channels only, as
// local_response_norm's): every output row is a sum of whole input rows, added as vectors.
// A loop of its own: folded into the general loops as one more branch, it slowed them 1.5x.
template <typename T, typename A>
void one_wide_average_forward(const T* in, T* o, const Pool3d& g, const AverageWindows& win) {
  for_each_plane(g.planes_total, [&](int64_t plane) {
    const T* base = in + plane * g.plane_in() + win.first_w;
    T* dst = o + plane * g.plane_out();
    std::vector<A> acc(static_cast<size_t>(g.out[2]));
    for (int64_t ot = 0; ot < g.out[0]; ++ot) {
      for (int64_t oh = 0; oh < g.out[1]; ++oh, dst += g.out[2]) {
        const Span t = win.span[0][ot], h = win.span[1][oh];
        std::fill(acc.begin(), acc.end(), A(0));
        A* sum = acc.data();
        for (int64_t a = t.begin; a < t.end; ++a) {
          for (int64_t b = h.begin; b < h.end; ++b) {
            const T* row = base + (a * g.in[1] + b) * g.in[2];
            for (int64_t ow = 0; ow < g.out[2]; ++ow) sum[ow] += static_cast<A>(row[ow]);
          }
        }
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          dst[ow] = win.empty(ot, oh, ow) ? T(0) : static_cast<T>(sum[ow] / static_cast<A>(win.divisor(ot, oh, ow)));
        }
      }
    }
  });
}

// Its adjoint: each output row's shares (grad / divisor) added as vectors into the input
// rows of its windows; every element gets its shares in the cells' order, as the general
// loop adds them.
template <typename T, typename A>
void one_wide_average_backward(const T* gp, T* gi, const Pool3d& g, const AverageWindows& win) {
  for_each_plane(g.planes_total, [&](int64_t plane) {
    T* base = gi + plane * g.plane_in() + win.first_w;
    const T* src = gp + plane * g.plane_out();
    std::vector<A> shares(static_cast<size_t>(g.out[2]));
    for (int64_t ot = 0; ot < g.out[0]; ++ot) {
      for (int64_t oh = 0; oh < g.out[1]; ++oh, src += g.out[2]) {
        const Span t = win.span[0][ot], h = win.span[1][oh];
        A* share = shares.data();
        for (int64_t ow = 0; ow < g.out[2]; ++ow) {
          share[ow] = static_cast<A>(src[ow]) / static_cast<A>(win.divisor(ot, oh, ow));
        }
        for (int64_t a = t.begin; a < t.end; ++a) {
          for (int64_t b = h.begin; b < h.end; ++b) {
            T* row = base + (a * g.in[1] + b) * g.in[2];
            for (int64_t ow = 0; ow < g.out[2]; ++ow) row[ow] = static_cast<T>(static_cast<A>(row[ow]) + share[ow]);
          }
        }
      }
    }
  });
}

Tensor average_forward(const Tensor& self, const Pool3d& g, const AverageWindows& win, unsigned types,
                       const char* op) {
  Tensor out = make_empty(g.output_sizes, self.scalar_type(), self.device());
  if (self.is_meta() || out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  auto run = [&]<typename T>() {
    using A = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    if (win.uniform_w == 1 && win.step_w == 1) {
      one_wide_average_forward<T, A>(in, o, g, win);
      return;
    }
    for_each_plane(g.planes_total, [&](int64_t plane) {
      const T* base = in + plane * g.plane_in();
      T* dst = o + plane * g.plane_out();
      std::vector<A> acc(static_cast<size_t>(g.out[2]));
      const int64_t first_w = win.first_w, step_w = win.step_w, uniform_w = win.uniform_w;
      // one output row at a time: stream through the input rows of its windows, adding each
      // row's window sums into the row's accumulators
      for (int64_t ot = 0; ot < g.out[0]; ++ot) {
        const Span t = win.span[0][ot];
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          const Span h = win.span[1][oh];
          std::fill(acc.begin(), acc.end(), A(0));
          const bool whole_rows = g.out[2] == 1 && uniform_w == g.in[2];
          for (int64_t a = t.begin; a < t.end; ++a) {
            if (whole_rows) {  // the window's rows are one contiguous block: one long sum
              acc[0] += row_sum<A>(base + (a * g.in[1] + h.begin) * g.in[2], (h.end - h.begin) * g.in[2]);
              continue;
            }
            for (int64_t b = h.begin; b < h.end; ++b) {
              const T* row = base + (a * g.in[1] + b) * g.in[2];
              if (uniform_w == 2 && step_w == 2) {  // the common 2-wide, stride-2 windows
                const T* p = row + first_w;
                for (int64_t ow = 0; ow < g.out[2]; ++ow) acc[ow] += static_cast<A>(p[2 * ow]) + static_cast<A>(p[2 * ow + 1]);
              } else if (uniform_w > 0) {
                for (int64_t ow = 0; ow < g.out[2]; ++ow) acc[ow] += row_sum<A>(row + first_w + ow * step_w, uniform_w);
              } else {
                for (int64_t ow = 0; ow < g.out[2]; ++ow) {
                  const Span w = win.span[2][ow];
                  acc[ow] += row_sum<A>(row + w.begin, w.end - w.begin);
                }
              }
            }
          }
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            *dst++ = win.empty(ot, oh, ow) ? T(0) : static_cast<T>(acc[ow] / static_cast<A>(win.divisor(ot, oh, ow)));
          }
        }
      }
    });
  };
  if (types & kIntegral) {
    dispatch_types<kPoolFloatTypes | kIntegral>(self.scalar_type(), op, run);
  } else {
    dispatch_types<kPoolFloatTypes>(self.scalar_type(), op, run);
  }
  return out;
}

// grad_input += grad_output / divisor over each window, the adjoint of an averaging.
Tensor average_backward(const Tensor& grad_output, const Tensor& self, const Pool3d& g, const AverageWindows& win,
                        const char* op) {
  TORCH_CHECK(grad_output.sizes() == IntArrayRef(g.output_sizes), op, ": expected grad_output of size ",
              IntArrayRef(g.output_sizes), ", got ", grad_output.sizes());
  Tensor grad_input = at::zeros(self.sizes(), TensorOptions().dtype(self.scalar_type()).device(self.device()));
  if (self.is_meta() || grad_input.numel() == 0 || grad_output.numel() == 0) return grad_input;
  const Tensor go = grad_output.to(self.scalar_type()).contiguous();
  dispatch_types<kPoolFloatTypes | kIntegral>(self.scalar_type(), op, [&]<typename T>() {
    using A = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;
    const T* gp = go.data_ptr<T>();
    T* gi = grad_input.data_ptr<T>();
    if (win.uniform_w == 1 && win.step_w == 1) {
      one_wide_average_backward<T, A>(gp, gi, g, win);
      return;
    }
    for_each_plane(g.planes_total, [&](int64_t plane) {
      T* base = gi + plane * g.plane_in();
      const T* src = gp + plane * g.plane_out();
      for (int64_t ot = 0; ot < g.out[0]; ++ot) {
        const Span t = win.span[0][ot];
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          const Span h = win.span[1][oh];
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const Span w = win.span[2][ow];
            const A share = static_cast<A>(*src++) / static_cast<A>(win.divisor(ot, oh, ow));
            for (int64_t a = t.begin; a < t.end; ++a) {
              for (int64_t b = h.begin; b < h.end; ++b) {
                T* row = base + (a * g.in[1] + b) * g.in[2];
                for (int64_t c = w.begin; c < w.end; ++c) row[c] = static_cast<T>(static_cast<A>(row[c]) + share);
              }
            }
          }
        }
      }
    });
  });
  return grad_input;
}

Pool3d avg3d_geometry(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, std::optional<int64_t> divisor_override) {
  TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  const int64_t one = 1;
  return pool3d_geometry(self, kernel_size, stride, padding, IntArrayRef(&one, 1), ceil_mode, false);
}

}  // namespace

// ---------------------------------------------------------------- max pooling

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const Pool3d g = pool3d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, true);
  return max_pool3d_kernel(self, g, max_window(g), "max_pool3d_with_indices_cpu");
}

Tensor max_pool3d_with_indices_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices) {
  const Pool3d g = pool3d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, true);
  TORCH_CHECK(grad_output.sizes() == IntArrayRef(g.output_sizes), "max_pool3d_with_indices_backward: expected "
              "grad_output of size ", IntArrayRef(g.output_sizes), ", got ", grad_output.sizes());
  return scatter_by_indices(grad_output, self, indices, g.planes_total, g.plane_in(), g.plane_out(),
                            "max_pool3d_with_indices_backward");
}

Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  if (self.is_mkldnn()) return at::mkldnn_max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode);
  return std::get<0>(at::max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size) {
  const Pool3d g = adaptive3d_geometry(self, output_size, "adaptive_max_pool3d", ":");
  return max_pool3d_kernel(self, g, adaptive_window(g), "adaptive_max_pool3d_cpu");
}

Tensor adaptive_max_pool3d_backward(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "adaptive_max_pool3d_backward(): Expected 4D or 5D grad_output, "
              "but got: ", grad_output.sizes());
  TORCH_CHECK(grad_output.dim() == self.dim() && grad_output.sizes().slice(0, self.dim() - 3) ==
              self.sizes().slice(0, self.dim() - 3), "adaptive_max_pool3d_backward(): grad_output of size ",
              grad_output.sizes(), " does not match the input's ", self.sizes());
  const int64_t plane_in = self.size(-1) * self.size(-2) * self.size(-3);
  const int64_t plane_out = grad_output.size(-1) * grad_output.size(-2) * grad_output.size(-3);
  return scatter_by_indices(grad_output, self, indices, plane_in == 0 ? 0 : self.numel() / plane_in, plane_in,
                            plane_out, "adaptive_max_pool3d_backward");
}

// ---------------------------------------------------------------- average pooling

Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  const Pool3d g = avg3d_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  return average_forward(self, g, avg_windows(g, count_include_pad, divisor_override), kIntegral,
                         "avg_pool3d_out_frame");
}

Tensor avg_pool3d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const Pool3d g = avg3d_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  return average_backward(grad_output, self, g, avg_windows(g, count_include_pad, divisor_override),
                          "avg_pool3d_backward");
}

Tensor _adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size) {
  const Pool3d g = adaptive3d_geometry(self, output_size, "adaptive_avg_pool3d", "");
  return average_forward(self, g, adaptive_windows(g), 0, "adaptive_avg_pool3d_cpu");
}

Tensor _adaptive_avg_pool3d_backward(const Tensor& grad_output, const Tensor& self) {
  TORCH_CHECK(grad_output.dim() == self.dim(), "adaptive_avg_pool3d_backward(): grad_output of size ",
              grad_output.sizes(), " does not match the input's ", self.sizes());
  const Pool3d g = adaptive3d_geometry(self, grad_output.sizes().slice(grad_output.dim() - 3),
                                       "adaptive_avg_pool3d_backward", "");
  return average_backward(grad_output, self, g, adaptive_windows(g), "adaptive_avg_pool3d_backward");
}

Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size) {
  // torch makes a (1, 1, 1) output a mean over the last three dims; on a quantized tensor that
  // rounds as the quantized mean does (its fast path or its float fallback)
  if (self.is_quantized() && output_size.size() == 3 && output_size[0] == 1 && output_size[1] == 1 &&
      output_size[2] == 1) {
    const std::vector<int64_t> last_three{-1, -2, -3};
    return at::mean(self, IntArrayRef(last_three), true, std::nullopt);
  }
  return at::_adaptive_avg_pool3d(self, output_size);
}

// ---------------------------------------------------------------- max unpooling

namespace {

// out (input's leading dims, then output_size) zero but for self's values at `indices`
// within each plane; an index outside the plane is an error, as in torch.
Tensor unpool(const Tensor& self, const Tensor& indices, IntArrayRef output_size, int spatial, const char* op) {
  TORCH_CHECK(indices.scalar_type() == c10::kLong, "elements in indices should be type int64 but got: ",
              indices.scalar_type());
  TORCH_CHECK(static_cast<int>(output_size.size()) == spatial, "There should be exactly ",
              spatial == 2 ? "two elements (height, width)" : "three elements (depth, height, width)",
              " in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == spatial + 1 || self.dim() == spatial + 2, "Input to ", op, " should be a ",
              spatial + 1, "d or ", spatial + 2, "d Tensor, but got a tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(), "Expected shape of indices to be same as that of the input tensor (",
              self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t d = 1; d < self.dim(); ++d) {
    TORCH_CHECK(self.size(d) > 0, op, ": Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", d, " being empty.");
  }
  std::vector<int64_t> sizes = self.sizes().vec();
  int64_t plane_out = 1;
  std::string volume;
  for (int i = 0; i < spatial; ++i) {
    sizes[self.dim() - spatial + i] = output_size[i];
    plane_out *= output_size[i];
    if (i) volume.push_back('x');
    volume.append(std::to_string(output_size[i]));
  }
  Tensor out = at::zeros(sizes, TensorOptions().dtype(self.scalar_type()).device(self.device()));
  if (self.is_meta() || self.numel() == 0) return out;
  int64_t plane_in = 1;
  for (int i = 0; i < spatial; ++i) plane_in *= self.size(self.dim() - spatial + i);
  const int64_t planes = self.numel() / plane_in;
  const Tensor x = self.contiguous(), ind = indices.contiguous();
  dispatch_types<kPoolFloatTypes>(self.scalar_type(), spatial == 2 ? "max_unpool2d" : "max_unpool3d",
                                  [&]<typename T>() {
    const T* xp = x.data_ptr<T>();
    const int64_t* ip = ind.data_ptr<int64_t>();
    T* o = out.data_ptr<T>();
    at::parallel_for(0, planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        for (int64_t k = p * plane_in; k < (p + 1) * plane_in; ++k) {
          const int64_t at_ = ip[k];
          TORCH_CHECK(at_ >= 0 && at_ < plane_out, "Found an invalid max index: ", at_, " (output volumes are of size ",
                      volume);
          o[p * plane_out + at_] = xp[k];
        }
      }
    });
  });
  return out;
}

}  // namespace

Tensor max_unpool2d(const Tensor& self, const Tensor& indices, IntArrayRef output_size) {
  return unpool(self, indices, output_size, 2, "max_unpooling2d");
}

Tensor max_unpool3d(const Tensor& self, const Tensor& indices, IntArrayRef output_size, IntArrayRef stride,
                    IntArrayRef padding) {
  TORCH_CHECK(stride.size() == 3, "There should be exactly three elements (depth, height, width) in stride, but got: ",
              stride.size(), " elements.");
  TORCH_CHECK(padding.size() == 3, "There should be exactly three elements (depth, height, width) in padding, but "
              "got: ", padding.size(), " elements.");
  TORCH_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0, "strides should be greater than zero, but got stride: ",
              stride);
  return unpool(self, indices, output_size, 3, "max_unpooling3d");
}

}  // namespace at::inline tessera::native
