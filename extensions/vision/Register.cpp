// The torchvision:: operator namespace as torchvision 0.14 declares it (same schemas), and
// what its kernels share. torchvision's Python code calls these through torch.ops; tessera
// loads this library in place of torchvision's own extension (tessera.ops.load_library).
#include "VisionOps.h"

#include <mutex>
#include <string>
#include <unordered_map>

namespace tessera_vision {

void check_roi_inputs(const at::Tensor& input, const at::Tensor& rois, const char* op) {
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5, "rois must have shape as Tensor[K, 5]");
  TORCH_CHECK(input.scalar_type() == rois.scalar_type(), "Expected tensor for argument #1 'input' to have the same type ",
              "as tensor for argument #2 'rois'; but type ", input.scalar_type(), " does not equal ", rois.scalar_type(),
              " (while checking arguments for ", op, ")");
  if (input.dim() < 4) (void)input.size(3);  // torch's IndexError for the missing dimension
  TORCH_CHECK(input.dim() == 4, op, ": input must be a 4-D tensor [N, C, H, W], got ", input.dim(), "-D");
}

void check_position_sensitive_channels(const char* op, int64_t channels, int64_t ph, int64_t pw) {
  TORCH_CHECK(ph > 0 && pw > 0, op, ": pooled sizes must be positive, got (", ph, ", ", pw, ")");
  TORCH_CHECK(channels % ph == 0 && (channels / ph) % pw == 0,  // divided in turn: ph * pw may overflow
              "input channels must be a multiple of pooling height * pooling width");
}

void check_position_sensitive_backward(const char* op, const at::Tensor& grad, const at::Tensor& rois,
                                       const at::Tensor& mapping, int64_t ph, int64_t pw, int64_t channels) {
  TORCH_CHECK(grad.scalar_type() == rois.scalar_type(), op, " backward: grad and rois must have one dtype");
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5, "rois must have shape as Tensor[K, 5]");
  check_position_sensitive_channels(op, channels, ph, pw);
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == rois.size(0) && grad.size(1) == channels / ph / pw &&
                  grad.size(2) == ph && grad.size(3) == pw,
              op, " backward: grad must be [K, channels / (pooled_height * pooled_width), pooled_height, pooled_width]");
  TORCH_CHECK(mapping.scalar_type() == at::kInt && mapping.sizes() == grad.sizes(), op,
              " backward: channel_mapping must be an int32 tensor shaped like grad");
}

c10::OperatorHandle vision_op(const char* name) {
  // Looked up once per name: autograd's forward and backward ask on every call. The names
  // are string literals, so their addresses key the cache.
  static std::mutex mu;
  static std::unordered_map<const char*, c10::OperatorHandle> cache;
  std::lock_guard<std::mutex> g(mu);
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(name, c10::Dispatcher::singleton().findSchemaOrThrow(
                                 (std::string("torchvision::") + name).c_str(), "")).first;
  }
  return it->second;
}

}  // namespace tessera_vision

namespace {
// torchvision reports the CUDA version its kernels were built with; these are CPU kernels.
int64_t cuda_version() { return -1; }
}  // namespace

TORCH_LIBRARY(torchvision, m) {
  m.def("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor");
  m.def("roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width, "
        "int sampling_ratio, bool aligned) -> Tensor");
  m.def("_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, int pooled_height, int pooled_width, "
        "int batch_size, int channels, int height, int width, int sampling_ratio, bool aligned) -> Tensor");
  m.def("ps_roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width, "
        "int sampling_ratio) -> (Tensor, Tensor)");
  m.def("_ps_roi_align_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
        "int pooled_height, int pooled_width, int sampling_ratio, int batch_size, int channels, int height, "
        "int width) -> Tensor");
  m.def("roi_pool(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width) "
        "-> (Tensor, Tensor)");
  m.def("_roi_pool_backward(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, int pooled_height, "
        "int pooled_width, int batch_size, int channels, int height, int width) -> Tensor");
  m.def("ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width) "
        "-> (Tensor, Tensor)");
  m.def("_ps_roi_pool_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
        "int pooled_height, int pooled_width, int batch_size, int channels, int height, int width) -> Tensor");
  m.def("deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, int stride_h, "
        "int stride_w, int pad_h, int pad_w, int dilation_h, int dilation_w, int groups, int offset_groups, "
        "bool use_mask) -> Tensor");
  m.def("_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, Tensor mask, "
        "Tensor bias, int stride_h, int stride_w, int pad_h, int pad_w, int dilation_h, int dilation_w, "
        "int groups, int offset_groups, bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)");
  m.def("_cuda_version() -> int", TORCH_FN(cuda_version));
}
