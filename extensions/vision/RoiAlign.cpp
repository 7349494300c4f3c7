// torchvision::roi_align and its backward: each output bin is the mean of a regular grid
// of bilinear samples inside the bin (Mask R-CNN's RoIAlign), per roi and channel.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <autograd/custom_function.h>

#include "VisionOps.h"

#include <array>
#include <vector>

namespace tessera_vision {
namespace {

// The grid of roi k, with its coordinates read in the coordinate type.
template <typename T>
AlignGrid<coord_t<T>> roi_grid(const T* rois, int64_t k, double scale, int64_t ph, int64_t pw, int64_t sampling_ratio,
                               bool aligned, int64_t batch) {
  std::array<coord_t<T>, 5> r;
  for (int i = 0; i < 5; ++i) r[i] = static_cast<coord_t<T>>(rois[k * 5 + i]);
  return align_grid(r.data(), scale, ph, pw, sampling_ratio, aligned, batch);
}

// Every sample of every bin of one roi: its taps, bin-major, shared by all channels.
template <typename acc_t>
std::vector<BilinearTaps> grid_taps(const AlignGrid<acc_t>& g, int64_t ph, int64_t pw, int64_t height, int64_t width) {
  std::vector<BilinearTaps> taps;
  taps.reserve(static_cast<size_t>(ph * pw * g.grid_h * g.grid_w));
  for (int64_t i = 0; i < ph; ++i)
    for (int64_t j = 0; j < pw; ++j)
      for (int64_t iy = 0; iy < g.grid_h; ++iy)
        for (int64_t ix = 0; ix < g.grid_w; ++ix) taps.push_back(roi_bilinear_taps(g.y(i, iy), g.x(j, ix), height, width));
  return taps;
}

at::Tensor roi_align_cpu(const at::Tensor& input_, const at::Tensor& rois_, double scale, int64_t ph, int64_t pw,
                         int64_t sampling_ratio, bool aligned) {
  check_roi_inputs(input_, rois_, "roi_align_forward_kernel");
  const at::Tensor input = input_.contiguous(), rois = rois_.contiguous();
  const int64_t n = input.size(0), channels = input.size(1), height = input.size(2), width = input.size(3);
  const int64_t k_rois = rois.size(0);
  at::Tensor out = at::zeros({k_rois, channels, ph, pw}, input.options());
  if (out.numel() == 0 || height == 0 || width == 0) return out;  // an empty image reads as zeros
  at::dispatch_types<at::kFloating | at::kReducedFloat>(input.scalar_type(), "roi_align_forward_kernel", [&]<typename T>() {
    const T* in = input.data_ptr<T>();
    const T* r = rois.data_ptr<T>();
    T* o = out.data_ptr<T>();
    at::parallel_for(0, k_rois, 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const auto g = roi_grid(r, k, scale, ph, pw, sampling_ratio, aligned, n);
        const std::vector<BilinearTaps> taps = grid_taps(g, ph, pw, height, width);
        const int64_t per_bin = g.grid_h * g.grid_w;
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = in + (g.batch * channels + c) * height * width;
          T* dst = o + (k * channels + c) * ph * pw;
          for (int64_t bin = 0; bin < ph * pw; ++bin) {
            double sum = 0;
            for (int64_t s = 0; s < per_bin; ++s) sum += sample(plane, width, taps[bin * per_bin + s]);
            dst[bin] = static_cast<T>(sum / static_cast<double>(g.count()));
          }
        }
      }
    });
  });
  return out;
}

at::Tensor roi_align_backward_cpu(const at::Tensor& grad_, const at::Tensor& rois_, double scale, int64_t ph, int64_t pw,
                                  int64_t batch_size, int64_t channels, int64_t height, int64_t width,
                                  int64_t sampling_ratio, bool aligned) {
  TORCH_CHECK(grad_.scalar_type() == rois_.scalar_type(), "roi_align backward: grad and rois must have one dtype");
  TORCH_CHECK(rois_.dim() == 2 && rois_.size(1) == 5, "rois must have shape as Tensor[K, 5]");
  TORCH_CHECK(grad_.dim() == 4 && grad_.size(0) == rois_.size(0) && grad_.size(1) == channels && grad_.size(2) == ph &&
                  grad_.size(3) == pw,
              "roi_align backward: grad must be [K, channels, pooled_height, pooled_width]");
  const at::Tensor grad = grad_.contiguous(), rois = rois_.contiguous();
  at::Tensor grad_input = at::zeros({batch_size, channels, height, width}, grad.options());
  if (grad.numel() == 0 || grad_input.numel() == 0) return grad_input;
  const int64_t k_rois = rois.size(0);
  at::dispatch_types<at::kFloating | at::kReducedFloat>(grad.scalar_type(), "roi_align_backward_kernel", [&]<typename T>() {
    const T* g_out = grad.data_ptr<T>();
    const T* r = rois.data_ptr<T>();
    T* g_in = grad_input.data_ptr<T>();
    // roi by roi (each roi's taps made once), its channels in parallel: channels own
    // disjoint planes of grad_input, so no two threads add to one element
    for (int64_t k = 0; k < k_rois; ++k) {
      const auto g = roi_grid(r, k, scale, ph, pw, sampling_ratio, aligned, batch_size);
      const std::vector<BilinearTaps> taps = grid_taps(g, ph, pw, height, width);
      const int64_t per_bin = g.grid_h * g.grid_w;
      if (per_bin == 0) continue;
      at::parallel_for(0, channels, 16, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          T* plane = g_in + (g.batch * channels + c) * height * width;
          const T* src = g_out + (k * channels + c) * ph * pw;
          for (int64_t bin = 0; bin < ph * pw; ++bin) {
            const double share = static_cast<double>(src[bin]) / static_cast<double>(g.count());
            for (int64_t s = 0; s < per_bin; ++s) scatter(plane, width, taps[bin * per_bin + s], share);
          }
        }
      });
    }
  });
  return grad_input;
}

at::Tensor roi_align_meta(const at::Tensor& input, const at::Tensor& rois, double, int64_t ph, int64_t pw, int64_t,
                          bool) {
  check_roi_inputs(input, rois, "roi_align_forward_kernel");
  return at::empty({rois.size(0), input.size(1), ph, pw}, input.options());
}

at::Tensor roi_align_backward_meta(const at::Tensor& grad, const at::Tensor& rois, double, int64_t, int64_t,
                                   int64_t batch_size, int64_t channels, int64_t height, int64_t width, int64_t, bool) {
  TORCH_CHECK(grad.scalar_type() == rois.scalar_type(), "roi_align backward: grad and rois must have one dtype");
  return at::empty({batch_size, channels, height, width}, grad.options());
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct RoiAlignFunction : torch::autograd::Function<RoiAlignFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& rois, double scale,
                            int64_t ph, int64_t pw, int64_t sampling_ratio, bool aligned) {
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["ph"] = ph;
    ctx->saved_data["pw"] = pw;
    ctx->saved_data["sampling_ratio"] = sampling_ratio;
    ctx->saved_data["aligned"] = aligned;
    ctx->saved_data["input_shape"] = input.sizes().vec();
    ctx->save_for_backward({rois});
    at::AutoDispatchBelowADInplaceOrView guard;
    return vision_op("roi_align")
        .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t, int64_t, int64_t, bool)>()
        .call(input, rois, scale, ph, pw, sampling_ratio, aligned);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor rois = ctx->get_saved_variables()[0];
    const auto shape = ctx->saved_data["input_shape"].toIntVector();
    at::Tensor grad_input =
        vision_op("_roi_align_backward")
            .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t, int64_t, int64_t, int64_t, int64_t,
                              int64_t, int64_t, bool)>()
            .call(grads[0], rois, ctx->saved_data["scale"].toDouble(), ctx->saved_data["ph"].toInt(),
                  ctx->saved_data["pw"].toInt(), shape[0], shape[1], shape[2], shape[3],
                  ctx->saved_data["sampling_ratio"].toInt(), ctx->saved_data["aligned"].toBool());
    return {grad_input, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// The backward is linear in grad; its own derivative is not provided (as torchvision).
struct RoiAlignBackwardFunction : torch::autograd::Function<RoiAlignBackwardFunction> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& grad, const at::Tensor& rois, double scale, int64_t ph,
                            int64_t pw, int64_t batch_size, int64_t channels, int64_t height, int64_t width,
                            int64_t sampling_ratio, bool aligned) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return vision_op("_roi_align_backward")
        .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t, int64_t, int64_t, int64_t, int64_t,
                          int64_t, int64_t, bool)>()
        .call(grad, rois, scale, ph, pw, batch_size, channels, height, width, sampling_ratio, aligned);
  }
  static variable_list backward(AutogradContext*, variable_list) {
    TORCH_CHECK(false, "double backwards on roi_align not supported");
  }
};

at::Tensor roi_align_autograd(const at::Tensor& input, const at::Tensor& rois, double scale, int64_t ph, int64_t pw,
                              int64_t sampling_ratio, bool aligned) {
  return RoiAlignFunction::apply(input, rois, scale, ph, pw, sampling_ratio, aligned);
}

at::Tensor roi_align_backward_autograd(const at::Tensor& grad, const at::Tensor& rois, double scale, int64_t ph,
                                       int64_t pw, int64_t batch_size, int64_t channels, int64_t height, int64_t width,
                                       int64_t sampling_ratio, bool aligned) {
  return RoiAlignBackwardFunction::apply(grad, rois, scale, ph, pw, batch_size, channels, height, width, sampling_ratio,
                                         aligned);
}

}  // namespace
}  // namespace tessera_vision

TORCH_LIBRARY_IMPL(torchvision, CPU, m) {
  m.impl("roi_align", TORCH_FN(tessera_vision::roi_align_cpu));
  m.impl("_roi_align_backward", TORCH_FN(tessera_vision::roi_align_backward_cpu));
}
TORCH_LIBRARY_IMPL(torchvision, Meta, m) {
  m.impl("roi_align", TORCH_FN(tessera_vision::roi_align_meta));
  m.impl("_roi_align_backward", TORCH_FN(tessera_vision::roi_align_backward_meta));
}
TORCH_LIBRARY_IMPL(torchvision, Autograd, m) {
  m.impl("roi_align", TORCH_FN(tessera_vision::roi_align_autograd));
  m.impl("_roi_align_backward", TORCH_FN(tessera_vision::roi_align_backward_autograd));
}
