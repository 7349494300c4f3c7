// torchvision::roi_pool (Fast R-CNN's max pooling over a roi's quantised bins, with the
// argmax kept for backward) and ps_roi_pool (the position-sensitive average: bin (i, j) of
// output channel c averages input channel (c * pooled_h + i) * pooled_w + j).
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <autograd/custom_function.h>

#include "VisionOps.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace tessera_vision {
namespace {

// A roi's bins on the feature map's integer grid: corners rounded (half away from zero);
// roi_pool counts both end pixels (+1), ps_roi_pool does not. Bins are clipped to the
// plane, and ps_roi_pool's (as torchvision's) stop one row and column short of its end:
// its bins never include the last row or column.
// Bin edges are computed in acc_t (float for float inputs), as torchvision's: a bin size of
// 4/3 in float times 3 rounds to exactly 4, where double arithmetic would give 4.0000001 and
// a ceiling one column further.
template <typename acc_t>
struct PoolGrid {
  int64_t batch, start_h, start_w;
  acc_t bin_h, bin_w;
  int64_t end_h, end_w;  // the clip of a bin's (exclusive) end

  void bin(int64_t i, int64_t j, int64_t& h0, int64_t& h1, int64_t& w0, int64_t& w1) const {
    h0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(static_cast<acc_t>(i) * bin_h)) + start_h, 0, end_h);
    h1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(static_cast<acc_t>(i + 1) * bin_h)) + start_h, 0, end_h);
    w0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(static_cast<acc_t>(j) * bin_w)) + start_w, 0, end_w);
    w1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(static_cast<acc_t>(j + 1) * bin_w)) + start_w, 0, end_w);
  }
};


template <typename T>
PoolGrid<coord_t<T>> pool_grid(const T* roi, double scale, int64_t ph, int64_t pw, bool position_sensitive, int64_t batch_size,
                   int64_t height, int64_t width) {
  using acc_t = coord_t<T>;
  const int64_t b = roi_batch_index(static_cast<acc_t>(roi[0]), batch_size);
  const acc_t s = static_cast<acc_t>(scale);
  // rounded half away from zero; a NaN or out-of-range corner (which would make the cast
  // undefined) becomes a bound that clips every bin away
  auto corner = [&](T v) -> int64_t {
    const acc_t c = std::round(static_cast<acc_t>(v) * s);
    return c == c ? static_cast<int64_t>(std::clamp<acc_t>(c, acc_t(-1e15), acc_t(1e15))) : int64_t{1} << 50;
  };
  const int64_t x1 = corner(roi[1]), y1 = corner(roi[2]), x2 = corner(roi[3]), y2 = corner(roi[4]);
  const int64_t extra = position_sensitive ? 0 : 1;
  const int64_t roi_w = std::max<int64_t>(x2 - x1 + extra, 1), roi_h = std::max<int64_t>(y2 - y1 + extra, 1);
  return {b, y1, x1, static_cast<acc_t>(roi_h) / static_cast<acc_t>(ph),
          static_cast<acc_t>(roi_w) / static_cast<acc_t>(pw), position_sensitive ? height - 1 : height,
          position_sensitive ? width - 1 : width};
}

std::tuple<at::Tensor, at::Tensor> roi_pool_cpu(const at::Tensor& input_, const at::Tensor& rois_, double scale,
                                                int64_t ph, int64_t pw) {
  check_roi_inputs(input_, rois_, "roi_pool_forward_kernel");
  const at::Tensor input = input_.contiguous(), rois = rois_.contiguous();
  const int64_t n = input.size(0), channels = input.size(1), height = input.size(2), width = input.size(3);
  const int64_t k_rois = rois.size(0);
  at::Tensor out = at::zeros({k_rois, channels, ph, pw}, input.options());
  at::Tensor argmax = at::zeros({k_rois, channels, ph, pw}, input.options().dtype(at::kInt));
  if (out.numel() == 0) return {out, argmax};
  if (height == 0 || width == 0) return {out, argmax.fill_(-1)};  // every bin empty
  at::dispatch_types<at::kFloating | at::kReducedFloat>(input.scalar_type(), "roi_pool_forward", [&]<typename T>() {
    const T* in = input.data_ptr<T>();
    const T* r = rois.data_ptr<T>();
    T* o = out.data_ptr<T>();
    int32_t* arg = argmax.data_ptr<int32_t>();
    at::parallel_for(0, k_rois, 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const auto g = pool_grid(r + k * 5, scale, ph, pw, false, n, height, width);
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = in + (g.batch * channels + c) * height * width;
          for (int64_t i = 0; i < ph; ++i)
            for (int64_t j = 0; j < pw; ++j) {
              int64_t h0, h1, w0, w1;
              g.bin(i, j, h0, h1, w0, w1);
              const bool empty = h1 <= h0 || w1 <= w0;
              double best = empty ? 0.0 : -static_cast<double>(FLT_MAX);
              int64_t best_at = -1;
              for (int64_t h = h0; h < h1; ++h)
                for (int64_t w = w0; w < w1; ++w)
                  if (static_cast<double>(plane[h * width + w]) > best) {
                    best = static_cast<double>(plane[h * width + w]);
                    best_at = h * width + w;
                  }
              const int64_t at = ((k * channels + c) * ph + i) * pw + j;
              o[at] = static_cast<T>(best);
              arg[at] = static_cast<int32_t>(best_at);
            }
        }
      }
    });
  });
  return {out, argmax};
}

at::Tensor roi_pool_backward_cpu(const at::Tensor& grad_, const at::Tensor& rois_, const at::Tensor& argmax_, double,
                                 int64_t ph, int64_t pw, int64_t batch_size, int64_t channels, int64_t height,
                                 int64_t width) {
  TORCH_CHECK(grad_.scalar_type() == rois_.scalar_type(), "roi_pool backward: grad and rois must have one dtype");
  TORCH_CHECK(rois_.dim() == 2 && rois_.size(1) == 5, "rois must have shape as Tensor[K, 5]");
  TORCH_CHECK(grad_.dim() == 4 && grad_.size(0) == rois_.size(0) && grad_.size(1) == channels && grad_.size(2) == ph &&
                  grad_.size(3) == pw,
              "roi_pool backward: grad must be [K, channels, pooled_height, pooled_width]");
  TORCH_CHECK(argmax_.scalar_type() == at::kInt && argmax_.sizes() == grad_.sizes(),
              "roi_pool backward: argmax must be an int32 tensor shaped like grad");
  const at::Tensor grad = grad_.contiguous(), rois = rois_.contiguous(), argmax = argmax_.contiguous();
  at::Tensor grad_input = at::zeros({batch_size, channels, height, width}, grad.options());
  if (grad.numel() == 0 || grad_input.numel() == 0) return grad_input;
  const int64_t k_rois = rois.size(0);
  at::dispatch_types<at::kFloating | at::kReducedFloat>(grad.scalar_type(), "roi_pool_backward", [&]<typename T>() {
    const T* g_out = grad.data_ptr<T>();
    const T* r = rois.data_ptr<T>();
    const int32_t* arg = argmax.data_ptr<int32_t>();
    T* g_in = grad_input.data_ptr<T>();
    at::parallel_for(0, channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c)
        for (int64_t k = 0; k < k_rois; ++k) {
          const int64_t b = roi_batch_index(static_cast<coord_t<T>>(r[k * 5]), batch_size);
          T* plane = g_in + (b * channels + c) * height * width;
          for (int64_t bin = 0; bin < ph * pw; ++bin) {
            const int64_t at = (k * channels + c) * ph * pw + bin;
            if (arg[at] < 0) continue;
            TORCH_CHECK_INDEX(arg[at] < height * width, "roi_pool backward: argmax entry ", arg[at],
                              " is outside the ", height, "x", width, " plane");
            plane[arg[at]] += g_out[at];
          }
        }
    });
  });
  return grad_input;
}

std::tuple<at::Tensor, at::Tensor> ps_roi_pool_cpu(const at::Tensor& input_, const at::Tensor& rois_, double scale,
                                                   int64_t ph, int64_t pw) {
  check_roi_inputs(input_, rois_, "ps_roi_pool_forward_kernel");
  check_position_sensitive_channels("ps_roi_pool", input_.size(1), ph, pw);
  const at::Tensor input = input_.contiguous(), rois = rois_.contiguous();
  const int64_t n = input.size(0), channels = input.size(1), height = input.size(2), width = input.size(3);
  const int64_t k_rois = rois.size(0), out_channels = channels / ph / pw;
  at::Tensor out = at::zeros({k_rois, out_channels, ph, pw}, input.options());
  at::Tensor mapping = at::zeros({k_rois, out_channels, ph, pw}, input.options().dtype(at::kInt));
  if (out.numel() == 0 || height == 0 || width == 0) return {out, mapping};
  at::dispatch_types<at::kFloating | at::kReducedFloat>(input.scalar_type(), "ps_roi_pool_forward", [&]<typename T>() {
    const T* in = input.data_ptr<T>();
    const T* r = rois.data_ptr<T>();
    T* o = out.data_ptr<T>();
    int32_t* map = mapping.data_ptr<int32_t>();
    at::parallel_for(0, k_rois, 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const auto g = pool_grid(r + k * 5, scale, ph, pw, true, n, height, width);
        for (int64_t c = 0; c < out_channels; ++c)
          for (int64_t i = 0; i < ph; ++i)
            for (int64_t j = 0; j < pw; ++j) {
              int64_t h0, h1, w0, w1;
              g.bin(i, j, h0, h1, w0, w1);
              const int64_t c_in = (c * ph + i) * pw + j;
              const T* plane = in + (g.batch * channels + c_in) * height * width;
              double sum = 0;
              for (int64_t h = h0; h < h1; ++h)
                for (int64_t w = w0; w < w1; ++w) sum += static_cast<double>(plane[h * width + w]);
              const int64_t area = (h1 - h0) * (w1 - w0);
              const int64_t at = ((k * out_channels + c) * ph + i) * pw + j;
              o[at] = static_cast<T>(h1 <= h0 || w1 <= w0 ? 0.0 : sum / static_cast<double>(area));
              map[at] = static_cast<int32_t>(c_in);
            }
      }
    });
  });
  return {out, mapping};
}

at::Tensor ps_roi_pool_backward_cpu(const at::Tensor& grad_, const at::Tensor& rois_, const at::Tensor& mapping_,
                                    double scale, int64_t ph, int64_t pw, int64_t batch_size, int64_t channels,
                                    int64_t height, int64_t width) {
  check_position_sensitive_backward("ps_roi_pool", grad_, rois_, mapping_, ph, pw, channels);
  const at::Tensor grad = grad_.contiguous(), rois = rois_.contiguous(), mapping = mapping_.contiguous();
  at::Tensor grad_input = at::zeros({batch_size, channels, height, width}, grad.options());
  if (grad.numel() == 0 || grad_input.numel() == 0) return grad_input;
  const int64_t k_rois = rois.size(0), out_channels = grad.size(1);
  at::dispatch_types<at::kFloating | at::kReducedFloat>(grad.scalar_type(), "ps_roi_pool_backward", [&]<typename T>() {
    const T* g_out = grad.data_ptr<T>();
    const T* r = rois.data_ptr<T>();
    const int32_t* map = mapping.data_ptr<int32_t>();
    T* g_in = grad_input.data_ptr<T>();
    for (int64_t k = 0; k < k_rois; ++k) {  // serial: rois may share an input plane
      const auto g = pool_grid(r + k * 5, scale, ph, pw, true, batch_size, height, width);
      for (int64_t c = 0; c < out_channels; ++c)
        for (int64_t i = 0; i < ph; ++i)
          for (int64_t j = 0; j < pw; ++j) {
            int64_t h0, h1, w0, w1;
            g.bin(i, j, h0, h1, w0, w1);
            if (h1 <= h0 || w1 <= w0) continue;
            const int64_t at = ((k * out_channels + c) * ph + i) * pw + j;
            TORCH_CHECK_INDEX(map[at] >= 0 && map[at] < channels, "ps_roi_pool backward: channel_mapping entry ",
                              map[at], " is out of range for ", channels, " channels");
            T* plane = g_in + (g.batch * channels + map[at]) * height * width;
            const double share = static_cast<double>(g_out[at]) / static_cast<double>((h1 - h0) * (w1 - w0));
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) plane[h * width + w] += static_cast<T>(share);
          }
    }
  });
  return grad_input;
}

std::tuple<at::Tensor, at::Tensor> roi_pool_meta(const at::Tensor& input, const at::Tensor& rois, double, int64_t ph,
                                                 int64_t pw) {
  check_roi_inputs(input, rois, "roi_pool_forward_kernel");
  const std::vector<int64_t> shape{rois.size(0), input.size(1), ph, pw};
  return {at::empty(shape, input.options()), at::empty(shape, input.options().dtype(at::kInt))};
}

std::tuple<at::Tensor, at::Tensor> ps_roi_pool_meta(const at::Tensor& input, const at::Tensor& rois, double, int64_t ph,
                                                    int64_t pw) {
  check_roi_inputs(input, rois, "ps_roi_pool_forward_kernel");
  check_position_sensitive_channels("ps_roi_pool", input.size(1), ph, pw);
  const std::vector<int64_t> shape{rois.size(0), input.size(1) / ph / pw, ph, pw};
  return {at::empty(shape, input.options()), at::empty(shape, input.options().dtype(at::kInt))};
}

at::Tensor pool_backward_meta(const at::Tensor& grad, const at::Tensor&, const at::Tensor&, double, int64_t, int64_t,
                              int64_t batch_size, int64_t channels, int64_t height, int64_t width) {
  return at::empty({batch_size, channels, height, width}, grad.options());
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using PoolSig = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, double, int64_t, int64_t);
using PoolBackwardSig = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, double, int64_t, int64_t,
                                   int64_t, int64_t, int64_t, int64_t);

// roi_pool and ps_roi_pool differ in their operators only: Name picks them.
template <const char* Name, const char* BackwardName>
struct PoolFunction : torch::autograd::Function<PoolFunction<Name, BackwardName>> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& rois, double scale,
                               int64_t ph, int64_t pw) {
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["ph"] = ph;
    ctx->saved_data["pw"] = pw;
    ctx->saved_data["input_shape"] = input.sizes().vec();
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [out, index] = vision_op(Name).typed<PoolSig>().call(input, rois, scale, ph, pw);
    ctx->save_for_backward({rois, index});
    ctx->mark_non_differentiable({index});
    return {out, index};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto shape = ctx->saved_data["input_shape"].toIntVector();
    at::Tensor grad_input = vision_op(BackwardName)
                                .typed<PoolBackwardSig>()
                                .call(grads[0], saved[0], saved[1], ctx->saved_data["scale"].toDouble(),
                                      ctx->saved_data["ph"].toInt(), ctx->saved_data["pw"].toInt(), shape[0], shape[1],
                                      shape[2], shape[3]);
    return {grad_input, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

template <const char* BackwardName>
struct PoolBackwardFunction : torch::autograd::Function<PoolBackwardFunction<BackwardName>> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& grad, const at::Tensor& rois, const at::Tensor& index,
                            double scale, int64_t ph, int64_t pw, int64_t batch_size, int64_t channels, int64_t height,
                            int64_t width) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return vision_op(BackwardName)
        .typed<PoolBackwardSig>()
        .call(grad, rois, index, scale, ph, pw, batch_size, channels, height, width);
  }
  static variable_list backward(AutogradContext*, variable_list) {
    TORCH_CHECK(false, "double backwards on ", BackwardName + 1, " not supported");
  }
};

constexpr char kRoiPool[] = "roi_pool", kRoiPoolBackward[] = "_roi_pool_backward";
constexpr char kPsRoiPool[] = "ps_roi_pool", kPsRoiPoolBackward[] = "_ps_roi_pool_backward";

template <const char* Name, const char* BackwardName>
std::tuple<at::Tensor, at::Tensor> pool_autograd(const at::Tensor& input, const at::Tensor& rois, double scale,
                                                 int64_t ph, int64_t pw) {
  auto out = PoolFunction<Name, BackwardName>::apply(input, rois, scale, ph, pw);
  return {out[0], out[1]};
}

template <const char* BackwardName>
at::Tensor pool_backward_autograd(const at::Tensor& grad, const at::Tensor& rois, const at::Tensor& index, double scale,
                                  int64_t ph, int64_t pw, int64_t batch_size, int64_t channels, int64_t height,
                                  int64_t width) {
  return PoolBackwardFunction<BackwardName>::apply(grad, rois, index, scale, ph, pw, batch_size, channels, height,
                                                   width);
}

}  // namespace
}  // namespace tessera_vision

TORCH_LIBRARY_IMPL(torchvision, CPU, m) {
  m.impl("roi_pool", TORCH_FN(tessera_vision::roi_pool_cpu));
  m.impl("_roi_pool_backward", TORCH_FN(tessera_vision::roi_pool_backward_cpu));
  m.impl("ps_roi_pool", TORCH_FN(tessera_vision::ps_roi_pool_cpu));
  m.impl("_ps_roi_pool_backward", TORCH_FN(tessera_vision::ps_roi_pool_backward_cpu));
}
TORCH_LIBRARY_IMPL(torchvision, Meta, m) {
  m.impl("roi_pool", TORCH_FN(tessera_vision::roi_pool_meta));
  m.impl("_roi_pool_backward", TORCH_FN(tessera_vision::pool_backward_meta));
  m.impl("ps_roi_pool", TORCH_FN(tessera_vision::ps_roi_pool_meta));
  m.impl("_ps_roi_pool_backward", TORCH_FN(tessera_vision::pool_backward_meta));
}
TORCH_LIBRARY_IMPL(torchvision, Autograd, m) {
  using namespace tessera_vision;
  m.impl("roi_pool", TORCH_FN((pool_autograd<kRoiPool, kRoiPoolBackward>)));
  m.impl("_roi_pool_backward", TORCH_FN(pool_backward_autograd<kRoiPoolBackward>));
  m.impl("ps_roi_pool", TORCH_FN((pool_autograd<kPsRoiPool, kPsRoiPoolBackward>)));
  m.impl("_ps_roi_pool_backward", TORCH_FN(pool_backward_autograd<kPsRoiPoolBackward>));
}
