// torchvision::ps_roi_align (position-sensitive RoIAlign, R-FCN): bin (i, j) of output
// channel c reads input channel (c * pooled_h + i) * pooled_w + j, averaging a grid of
// bilinear samples as roi_align with aligned=True does. As torchvision's, a roi with an
// empty sampling grid gives 0/0 = NaN (roi_align gives 0 there).
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <autograd/custom_function.h>

#include "VisionOps.h"

#include <array>
#include <limits>

namespace tessera_vision {
namespace {

template <typename T>
AlignGrid<coord_t<T>> ps_grid(const T* rois, int64_t k, double scale, int64_t ph, int64_t pw, int64_t sampling_ratio,
                              int64_t batch) {
  std::array<coord_t<T>, 5> r;
  for (int i = 0; i < 5; ++i) r[i] = static_cast<coord_t<T>>(rois[k * 5 + i]);
  return align_grid(r.data(), scale, ph, pw, sampling_ratio, /*aligned=*/true, batch);
}


std::tuple<at::Tensor, at::Tensor> ps_roi_align_cpu(const at::Tensor& input_, const at::Tensor& rois_, double scale,
                                                    int64_t ph, int64_t pw, int64_t sampling_ratio) {
  check_roi_inputs(input_, rois_, "ps_roi_align_forward_kernel");
  check_position_sensitive_channels("ps_roi_align", input_.size(1), ph, pw);
  const at::Tensor input = input_.contiguous(), rois = rois_.contiguous();
  const int64_t n = input.size(0), channels = input.size(1), height = input.size(2), width = input.size(3);
  const int64_t k_rois = rois.size(0), out_channels = channels / ph / pw;
  at::Tensor out = at::zeros({k_rois, out_channels, ph, pw}, input.options());
  at::Tensor mapping = at::zeros({k_rois, out_channels, ph, pw}, input.options().dtype(at::kInt));
  if (out.numel() == 0) return {out, mapping};
  const bool empty_image = height == 0 || width == 0;  // reads as zeros
  at::dispatch_types<at::kFloating | at::kReducedFloat>(input.scalar_type(), "ps_roi_align_forward", [&]<typename T>() {
    const T* in = input.data_ptr<T>();
    const T* r = rois.data_ptr<T>();
    T* o = out.data_ptr<T>();
    int32_t* map = mapping.data_ptr<int32_t>();
    at::parallel_for(0, k_rois, 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const auto g = ps_grid(r, k, scale, ph, pw, sampling_ratio, n);
        // torchvision divides by the product of the sample counts as computed: an empty
        // grid gives 0/0 = NaN, a grid flipped by a negative scale 0 / count
        const double count = static_cast<double>(g.divisor);
        for (int64_t c = 0; c < out_channels; ++c)
          for (int64_t i = 0; i < ph; ++i)
            for (int64_t j = 0; j < pw; ++j) {
              const int64_t c_in = (c * ph + i) * pw + j;
              const T* plane = in + (g.batch * channels + c_in) * height * width;
              double sum = 0;
              for (int64_t iy = 0; iy < g.grid_h && !empty_image; ++iy)
                for (int64_t ix = 0; ix < g.grid_w; ++ix)
                  sum += sample(plane, width, roi_bilinear_taps(g.y(i, iy), g.x(j, ix), height, width));
              const int64_t at = ((k * out_channels + c) * ph + i) * pw + j;
              o[at] = static_cast<T>(count != 0 ? sum / count : std::numeric_limits<double>::quiet_NaN());
              map[at] = static_cast<int32_t>(c_in);
            }
      }
    });
  });
  return {out, mapping};
}

at::Tensor ps_roi_align_backward_cpu(const at::Tensor& grad_, const at::Tensor& rois_, const at::Tensor& mapping_,
                                     double scale, int64_t ph, int64_t pw, int64_t sampling_ratio, int64_t batch_size,
                                     int64_t channels, int64_t height, int64_t width) {
  check_position_sensitive_backward("ps_roi_align", grad_, rois_, mapping_, ph, pw, channels);
  const at::Tensor grad = grad_.contiguous(), rois = rois_.contiguous(), mapping = mapping_.contiguous();
  at::Tensor grad_input = at::zeros({batch_size, channels, height, width}, grad.options());
  if (grad.numel() == 0 || grad_input.numel() == 0) return grad_input;
  const int64_t k_rois = rois.size(0), out_channels = grad.size(1);
  at::dispatch_types<at::kFloating | at::kReducedFloat>(grad.scalar_type(), "ps_roi_align_backward", [&]<typename T>() {
    const T* g_out = grad.data_ptr<T>();
    const T* r = rois.data_ptr<T>();
    const int32_t* map = mapping.data_ptr<int32_t>();
    T* g_in = grad_input.data_ptr<T>();
    // serial: bins of different rois may map to one input plane
    for (int64_t k = 0; k < k_rois; ++k) {
      const auto g = ps_grid(r, k, scale, ph, pw, sampling_ratio, batch_size);
      const double count = static_cast<double>(g.divisor);
      if (g.grid_h * g.grid_w == 0) continue;  // nothing sampled, nothing to give back
      for (int64_t c = 0; c < out_channels; ++c)
        for (int64_t i = 0; i < ph; ++i)
          for (int64_t j = 0; j < pw; ++j) {
            const int64_t at = ((k * out_channels + c) * ph + i) * pw + j;
            TORCH_CHECK_INDEX(map[at] >= 0 && map[at] < channels, "ps_roi_align backward: channel_mapping entry ",
                              map[at], " is out of range for ", channels, " channels");
            T* plane = g_in + (g.batch * channels + map[at]) * height * width;
            const double share = static_cast<double>(g_out[at]) / count;
            for (int64_t iy = 0; iy < g.grid_h; ++iy)
              for (int64_t ix = 0; ix < g.grid_w; ++ix)
                scatter(plane, width, roi_bilinear_taps(g.y(i, iy), g.x(j, ix), height, width), share);
          }
    }
  });
  return grad_input;
}

std::tuple<at::Tensor, at::Tensor> ps_roi_align_meta(const at::Tensor& input, const at::Tensor& rois, double,
                                                     int64_t ph, int64_t pw, int64_t) {
  check_roi_inputs(input, rois, "ps_roi_align_forward_kernel");
  check_position_sensitive_channels("ps_roi_align", input.size(1), ph, pw);
  const std::vector<int64_t> shape{rois.size(0), input.size(1) / ph / pw, ph, pw};
  return {at::empty(shape, input.options()), at::empty(shape, input.options().dtype(at::kInt))};
}

at::Tensor ps_roi_align_backward_meta(const at::Tensor& grad, const at::Tensor&, const at::Tensor&, double, int64_t,
                                      int64_t, int64_t, int64_t batch_size, int64_t channels, int64_t height,
                                      int64_t width) {
  return at::empty({batch_size, channels, height, width}, grad.options());
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using BackwardSig = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, double, int64_t, int64_t,
                               int64_t, int64_t, int64_t, int64_t, int64_t);

struct PsRoiAlignFunction : torch::autograd::Function<PsRoiAlignFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& rois, double scale,
                               int64_t ph, int64_t pw, int64_t sampling_ratio) {
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["ph"] = ph;
    ctx->saved_data["pw"] = pw;
    ctx->saved_data["sampling_ratio"] = sampling_ratio;
    ctx->saved_data["input_shape"] = input.sizes().vec();
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [out, mapping] =
        vision_op("ps_roi_align")
            .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, double, int64_t, int64_t,
                                                      int64_t)>()
            .call(input, rois, scale, ph, pw, sampling_ratio);
    ctx->save_for_backward({rois, mapping});
    ctx->mark_non_differentiable({mapping});
    return {out, mapping};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto shape = ctx->saved_data["input_shape"].toIntVector();
    at::Tensor grad_input = vision_op("_ps_roi_align_backward")
                                .typed<BackwardSig>()
                                .call(grads[0], saved[0], saved[1], ctx->saved_data["scale"].toDouble(),
                                      ctx->saved_data["ph"].toInt(), ctx->saved_data["pw"].toInt(),
                                      ctx->saved_data["sampling_ratio"].toInt(), shape[0], shape[1], shape[2], shape[3]);
    return {grad_input, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

struct PsRoiAlignBackwardFunction : torch::autograd::Function<PsRoiAlignBackwardFunction> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& grad, const at::Tensor& rois, const at::Tensor& mapping,
                            double scale, int64_t ph, int64_t pw, int64_t sampling_ratio, int64_t batch_size,
                            int64_t channels, int64_t height, int64_t width) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return vision_op("_ps_roi_align_backward")
        .typed<BackwardSig>()
        .call(grad, rois, mapping, scale, ph, pw, sampling_ratio, batch_size, channels, height, width);
  }
  static variable_list backward(AutogradContext*, variable_list) {
    TORCH_CHECK(false, "double backwards on ps_roi_align not supported");
  }
};

std::tuple<at::Tensor, at::Tensor> ps_roi_align_autograd(const at::Tensor& input, const at::Tensor& rois, double scale,
                                                         int64_t ph, int64_t pw, int64_t sampling_ratio) {
  auto out = PsRoiAlignFunction::apply(input, rois, scale, ph, pw, sampling_ratio);
  return {out[0], out[1]};
}

at::Tensor ps_roi_align_backward_autograd(const at::Tensor& grad, const at::Tensor& rois, const at::Tensor& mapping,
                                          double scale, int64_t ph, int64_t pw, int64_t sampling_ratio,
                                          int64_t batch_size, int64_t channels, int64_t height, int64_t width) {
  return PsRoiAlignBackwardFunction::apply(grad, rois, mapping, scale, ph, pw, sampling_ratio, batch_size, channels,
                                           height, width);
}

}  // namespace
}  // namespace tessera_vision

TORCH_LIBRARY_IMPL(torchvision, CPU, m) {
  m.impl("ps_roi_align", TORCH_FN(tessera_vision::ps_roi_align_cpu));
  m.impl("_ps_roi_align_backward", TORCH_FN(tessera_vision::ps_roi_align_backward_cpu));
}
TORCH_LIBRARY_IMPL(torchvision, Meta, m) {
  m.impl("ps_roi_align", TORCH_FN(tessera_vision::ps_roi_align_meta));
  m.impl("_ps_roi_align_backward", TORCH_FN(tessera_vision::ps_roi_align_backward_meta));
}
TORCH_LIBRARY_IMPL(torchvision, Autograd, m) {
  m.impl("ps_roi_align", TORCH_FN(tessera_vision::ps_roi_align_autograd));
  m.impl("_ps_roi_align_backward", TORCH_FN(tessera_vision::ps_roi_align_backward_autograd));
}
