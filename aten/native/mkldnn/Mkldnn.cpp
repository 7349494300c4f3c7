// The _mkldnn layout: to_mkldnn / to_dense and the mkldnn_* operators torch 1.13 exposes.
// An mkldnn tensor here is a contiguous buffer behind the MkldnnCPU key (no oneDNN blocked
// formats): the key keeps every dense kernel away from it, and the kernels below run the
// dense operators on a CPU view of the same buffer, then wrap the result again. So the
// numbers are those of the dense ops, and the layout's rules (what raises, what a result's
// layout is) are torch's.
#include <aten/core/TensorUtils.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/mkldnn/MkldnnUtils.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

namespace at::inline tessera::native {

namespace mkldnn {

namespace {
// A tensor with `keys` and `layout` over t's storage, offset and contiguous sizes.
Tensor rewrap(const Tensor& t, c10::DispatchKey key, c10::Layout layout) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(t.storage(), c10::DispatchKeySet(key), t.scalar_type(), layout);
  impl->set_storage_offset(t.storage_offset());
  impl->set_sizes_contiguous(t.sizes());
  return Tensor(std::move(impl));
}
}  // namespace

// Its geometry must still be the contiguous one it was made with (a view or set_ would
// break that).
Tensor dense_view(const Tensor& m) {
  const size_t needed = static_cast<size_t>(m.storage_offset() + m.numel()) * m.itemsize();
  TORCH_CHECK_NOT_IMPLEMENTED(m.is_contiguous() && m.storage().defined() && m.storage().nbytes() >= needed,
                              "views of mkldnn tensors are not supported: use to_dense() first");
  return rewrap(m, c10::DispatchKey::CPU, c10::kStrided);
}

Tensor wrap(const Tensor& dense) { return rewrap(dense.contiguous(), c10::DispatchKey::MkldnnCPU, c10::kMkldnn); }

bool supported_dtype(c10::ScalarType t) { return t == c10::kFloat || t == c10::kBFloat16; }

void check_is_mkldnn(const Tensor& t) { TORCH_CHECK(t.is_mkldnn(), "itensor_from_mkldnn expects MKL-DNN tensor input"); }

std::vector<int64_t> expand_param(IntArrayRef v, const char* name, int64_t spatial) {
  if (v.size() == 1) return std::vector<int64_t>(static_cast<size_t>(spatial), v[0]);
  TORCH_CHECK(static_cast<int64_t>(v.size()) == spatial, "expected ", name,
              " to be a single integer value or a list of ", spatial,
              " values to match the convolution dimensions, but got ", name, "=", v);
  return v.vec();
}

}  // namespace mkldnn

namespace {

using mkldnn::dense_view;
using mkldnn::expand_param;
using mkldnn::wrap;

Tensor mkldnn_max_pool(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                       IntArrayRef dilation, bool ceil_mode, int64_t spatial, const char* op) {
  for (int64_t d : dilation) TORCH_CHECK(d == 1, op, " does not support dilation case");
  TORCH_CHECK(self.dim() >= 2, op, ": expected an input with batch and channel dims, got ", self.dim(), " dims");
  const int64_t input_spatial = self.dim() - 2;
  const auto k = expand_param(kernel_size, "kernel_size", input_spatial);
  const auto s = expand_param(stride.empty() ? kernel_size : stride, "stride", input_spatial);
  const auto p = expand_param(padding, "padding", input_spatial);
  TORCH_CHECK(input_spatial == spatial, op, ": expected a ", spatial + 2, "-d input, got ", self.dim(), " dims");
  const Tensor x = dense_view(self);
  const std::vector<int64_t> ones(static_cast<size_t>(spatial), 1);
  // The dense pool is this kernel's implementation, not a call of the user's: autocast
  // (which lists max_pool3d as float32) must not cast it, as it cannot cast torch's oneDNN
  // pool.
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  return wrap(spatial == 2 ? at::max_pool2d(x, k, s, p, ones, ceil_mode)
                                  : at::max_pool3d(x, k, s, p, ones, ceil_mode));
}

}  // namespace

Tensor dense_to_mkldnn(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  TORCH_CHECK(self.layout() == c10::kStrided, "dense_to_mkldnn expects strided tensor input");
  TORCH_CHECK(mkldnn::supported_dtype(self.scalar_type()), "dense_to_mkldnn expects float or bfloat16 tensor input");
  TORCH_CHECK(self.dim() <= 5, "Can't convert cpu tensor with the number of dimensions > 5");
  const c10::ScalarType target = dtype.value_or(self.scalar_type());
  TORCH_CHECK(mkldnn::supported_dtype(target), "cpu tensor only can be converted to be a float or bfloat16 mkldnn tensor");
  // A fresh contiguous copy: the mkldnn tensor never shares the dense tensor's memory.
  Tensor buffer = make_empty(self.sizes(), target, self.device());
  buffer.copy_(self);
  return wrap(buffer);
}

Tensor mkldnn_to_dense(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType target = dtype.value_or(self.scalar_type());
  TORCH_CHECK(mkldnn::supported_dtype(target), "mkldnn tensor only can be converted to be a float or bfloat16 cpu tensor");
  Tensor out = make_empty(self.sizes(), target, self.device());
  out.copy_(dense_view(self));
  return out;
}

Tensor to_dense(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  if (self.layout() == c10::kStrided) return dtype ? self.to(*dtype) : self;
  return self._to_dense(dtype);
}

Tensor to_dense_backward(const Tensor& grad, const Tensor& input) {
  if (input.layout() == c10::kMkldnn) return grad.to_mkldnn(input.scalar_type());
  // A sparse input's grad: grad's values at the input's (coalesced) pattern, in its layout.
  if (c10::isSparseLayout(input.layout())) return grad.sparse_mask(input);
  return grad;
}

Tensor to_mkldnn_backward(const Tensor& grad, const Tensor& input) {
  TORCH_CHECK(grad.layout() == c10::kMkldnn, "to_mkldnn_backward: expects an mkldnn gradient");
  return grad.to_dense(input.scalar_type());
}

Tensor mkldnn_convolution(const Tensor& self, const Tensor& weight, const std::optional<Tensor>& bias,
                          IntArrayRef padding, IntArrayRef stride, IntArrayRef dilation, int64_t groups) {
  auto dense = [](const Tensor& t) { return t.layout() == c10::kMkldnn ? dense_view(t) : t; };
  for (const Tensor* t : {&self, &weight}) {
    TORCH_CHECK(mkldnn::supported_dtype(t->scalar_type()), "itensor_view_from_dense expects float/bfloat16 tensor input");
  }
  const int64_t spatial = std::max<int64_t>(weight.dim() - 2, 0);
  // torch divides by zero here (SIGFPE) when the lists are too short; say what is wrong instead.
  for (auto [name, list] : {std::pair{"padding", padding}, std::pair{"stride", stride}, std::pair{"dilation", dilation}}) {
    TORCH_CHECK(static_cast<int64_t>(list.size()) == spatial || list.size() == 1, "mkldnn_convolution: expected ",
                name, " to have ", spatial, " values (one per spatial dim), got ", name, "=", list);
  }
  std::optional<Tensor> b;
  if (bias && bias->defined()) b = dense(*bias);
  const std::vector<int64_t> zeros(static_cast<size_t>(spatial), 0);
  Tensor out = at::convolution(dense(self), dense(weight), b, stride, padding, dilation, false, zeros, groups);
  if (self.layout() == c10::kMkldnn) return wrap(out);
  // torch's oneDNN path gives contiguous results for 5-d inputs, whatever their layout.
  return self.dim() == 5 ? out.contiguous() : out;
}

Tensor mkldnn_max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef dilation, bool ceil_mode) {
  return mkldnn_max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, 2, "mkldnn_max_pool2d");
}

Tensor mkldnn_max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef dilation, bool ceil_mode) {
  return mkldnn_max_pool(self, kernel_size, stride, padding, dilation, ceil_mode, 3, "mkldnn_max_pool3d");
}

// The pools' gradients: the dense backward kernels on views of the buffers (the max pools
// recompute their argmax indices). A default stride is the kernel size, in the backward as
// in the forward (torch 1.13 refuses the empty stride there).
Tensor mkldnn_max_pool_backward(const Tensor& grad_output, const Tensor& input, IntArrayRef kernel_size,
                                IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                int64_t spatial) {
  mkldnn::check_is_mkldnn(grad_output);
  mkldnn::check_is_mkldnn(input);
  const auto k = expand_param(kernel_size, "kernel_size", spatial);
  const auto s = expand_param(stride.empty() ? kernel_size : stride, "stride", spatial);
  const auto p = expand_param(padding, "padding", spatial);
  const auto d = expand_param(dilation, "dilation", spatial);
  const Tensor x = dense_view(input), g = dense_view(grad_output);
  if (spatial == 2) {
    const Tensor indices = std::get<1>(at::max_pool2d_with_indices(x, k, s, p, d, ceil_mode));
    return wrap(at::max_pool2d_with_indices_backward(g, x, k, s, p, d, ceil_mode, indices));
  }
  const Tensor indices = std::get<1>(at::max_pool3d_with_indices(x, k, s, p, d, ceil_mode));
  return wrap(at::max_pool3d_with_indices_backward(g, x, k, s, p, d, ceil_mode, indices));
}

Tensor mkldnn_max_pool2d_backward(const Tensor& grad_output, const Tensor& /*output*/, const Tensor& input,
                                  IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                  IntArrayRef dilation, bool ceil_mode) {
  return mkldnn_max_pool_backward(grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, 2);
}

Tensor mkldnn_max_pool3d_backward(const Tensor& grad_output, const Tensor& /*output*/, const Tensor& input,
                                  IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                  IntArrayRef dilation, bool ceil_mode) {
  return mkldnn_max_pool_backward(grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, 3);
}

Tensor mkldnn_adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  mkldnn::check_is_mkldnn(grad_output);
  mkldnn::check_is_mkldnn(self);
  return wrap(at::_adaptive_avg_pool2d_backward(dense_view(grad_output), dense_view(self)));
}

Tensor mkldnn_adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  TORCH_CHECK(self.dim() == 4, "mkldnn_adaptive_avg_pool2d: Expect 2D input");
  const auto out = expand_param(output_size, "output_size", 2);
  for (int64_t i = 0; i < 2; ++i) {
    const int64_t in = self.size(2 + i), o = out[static_cast<size_t>(i)];
    TORCH_CHECK(o > 0 && in % o == 0, "input size is not divisible by the output size is not supported yet");
  }
  return wrap(at::adaptive_avg_pool2d(dense_view(self), out));
}

std::tuple<Tensor, Tensor> mkldnn_linear_backward_weights(const Tensor& grad_output, const Tensor& input,
                                                          const Tensor& weight, bool bias_defined) {
  TORCH_CHECK(grad_output.layout() == c10::kMkldnn && input.layout() == c10::kMkldnn,
              "mkldnn_linear_backward: grad_output and input needs to be mkldnn layout");
  const Tensor go = dense_view(grad_output), in = dense_view(input);
  TORCH_CHECK(go.dim() >= 1 && in.dim() >= 1 && weight.dim() == 2,
              "mkldnn_linear_backward_weights: expected a 2-d weight and inputs with a feature dim");
  const Tensor go2d = go.reshape({-1, go.size(-1)}), in2d = in.reshape({-1, in.size(-1)});
  TORCH_CHECK(go2d.size(0) == in2d.size(0) && go2d.size(1) == weight.size(0) && in2d.size(1) == weight.size(1),
              "mkldnn_linear_backward_weights: grad_output ", go.sizes(), ", input ", in.sizes(), " and weight ",
              weight.sizes(), " do not fit a linear layer");
  Tensor gw = at::mm(go2d.t(), in2d).to(weight.scalar_type());
  // Without a bias torch returns an unspecified tensor here; a 0-d zero is ours.
  Tensor gb = bias_defined ? go2d.sum(0).to(weight.scalar_type()) : at::zeros({}, weight.options());
  return {gw, gb};
}

}  // namespace at::inline tessera::native
