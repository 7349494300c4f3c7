// Backward formulas of the nn activations: the second derivatives that the fused backward
// ops (gelu_backward, ...) need for double backward, and prelu's two grads. Written with
// differentiable ops, so they differentiate again.
#include <autograd/FunctionsManual.h>

#include <aten/core/Reduction.h>
#include <aten/core/TensorOperators.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <cmath>
#include <string_view>
#include <vector>

namespace torch::autograd::generated::details {

Tensor elu_double_backward(const Tensor& grad, const Tensor& grad_output, const at::Scalar& alpha,
                           const at::Scalar& scale, const at::Scalar& input_scale, bool is_result,
                           const Tensor& self_or_result) {
  const double a = alpha.toDouble(), s = scale.toDouble(), is = input_scale.toDouble();
  // elu_backward below zero: grad_output * is * (result + a * s), or, from self,
  // grad_output * a * s * is * exp(self * is); above zero it is constant in its input.
  Tensor below = is_result ? grad * grad_output * is
                           : grad * grad_output * (a * s * is * is) * (self_or_result * is).exp();
  return at::where(self_or_result.lt(0), below, at::zeros_like(below));
}

Tensor gelu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                            std::string_view approximate) {
  if (approximate == "tanh") {
    // f' = 0.5 (1 + t) + 0.5 x sech^2(u) u', u = k (x + c x^3), t = tanh(u), so
    // f'' = sech^2(u) u' + 0.5 x sech^2(u) (u'' - 2 t u'^2).
    const double k = M_2_SQRTPI * M_SQRT1_2, c = 0.044715;  // sqrt(2/pi)
    Tensor x2 = self * self;
    Tensor t = ((self + self * x2 * c) * k).tanh();
    Tensor sech2 = 1 - t * t;
    Tensor du = (1 + x2 * (3 * c)) * k;
    Tensor second = sech2 * du + self * 0.5 * sech2 * (self * (6 * c * k) - 2 * t * du * du);
    return grad * grad_output * second;
  }
  // f' = cdf(x) + x pdf(x), so f'' = 2 pdf(x) - x^2 pdf(x).
  const double kInvSqrt2Pi = M_2_SQRTPI * M_SQRT1_2 * 0.5;
  Tensor pdf = (self * self * -0.5).exp() * kInvSqrt2Pi;
  return grad * grad_output * pdf * (2 - self * self);
}

Tensor silu_double_backward(const Tensor& grad, const Tensor& self) {
  Tensor s = self.sigmoid();
  return grad * s * (1 - s) * (2 + self * (1 - 2 * s));
}

Tensor mish_double_backward(const Tensor& grad, const Tensor& self) {
  Tensor s = self.sigmoid();
  Tensor t = at::softplus(self).tanh();
  Tensor sech2 = 1 - t * t;
  return grad * sech2 * s * (2 + self * (1 - s) - 2 * self * s * t);
}

Tensor softplus_double_backward(const Tensor& grad, const Tensor& self, const at::Scalar& beta,
                                const at::Scalar& threshold) {
  const double b = beta.toDouble();
  Tensor s = (self * b).sigmoid();
  Tensor d = grad * s * (1 - s) * b;
  return at::where((self * b).gt(threshold), at::zeros_like(d), d);
}

Tensor hardswish_double_backward(const Tensor& grad, const Tensor& self) {
  Tensor d = grad / 3;
  return at::where(self.gt(-3).logical_and(self.lt(3)), d, at::zeros_like(d));
}

Tensor log_sigmoid_double_backward(const Tensor& grad, const Tensor& self) {
  Tensor s = self.sigmoid();
  return -grad * s * (1 - s);
}

std::tuple<Tensor, Tensor> prelu_backward(const Tensor& grad, const Tensor& self, const Tensor& weight) {
  Tensor positive = self.gt(0);
  Tensor g_self = at::where(positive, grad, grad * weight);
  Tensor g_weight = at::where(positive, at::zeros_like(grad), grad * self);
  return {g_self, g_weight.sum_to_size(weight.sizes())};
}

// binary_cross_entropy: torch's derivative, w (x - t) / max(x (1 - x), 1e-12), finite at
// x = 0 and 1 where the clamped logs of the forward are flat.
Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                     const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor g = grad * (self - target) / ((1 - self) * self).clamp_min(1e-12);
  if (weight && weight->defined()) g = g * *weight;
  return reduction == at::Reduction::Mean ? g / static_cast<double>(self.numel()) : g;
}

Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction) {
  Tensor g = grad * ((-self).log1p() - self.log());
  if (weight && weight->defined()) g = g * *weight;
  return reduction == at::Reduction::Mean ? g / static_cast<double>(target.numel()) : g;
}

// The adjoint of scattering by a max pooling's indices (flat over the last `spatial` dims):
// per plane, grad[indices]. Also max unpooling's derivative, which scatters by them.
Tensor gather_at_pooling_indices(const Tensor& grad, const Tensor& indices, int64_t spatial) {
  const int64_t lead = indices.dim() - spatial;
  Tensor flat_grad = grad.flatten(lead), flat_indices = indices.flatten(lead);
  return flat_grad.gather(lead, flat_indices).view(indices.sizes());
}

Tensor scatter_at_pooling_indices(const Tensor& grad, const Tensor& self, const Tensor& indices, int64_t spatial) {
  const int64_t lead = indices.dim() - spatial;
  std::vector<int64_t> flat_shape(self.sizes().begin(), self.sizes().begin() + lead);
  flat_shape.push_back(-1);
  return at::zeros_like(self).reshape(flat_shape).scatter_add(lead, indices.flatten(lead), grad.flatten(lead))
      .view(self.sizes());
}

namespace {

// The derivative of a normalization's backward, for layer norm and training batch norm
// alike. Per group of n elements (the `reduce` dims), with xhat = (x - mean) rstd,
// g = dy w and P(v) = v - mean(v) - xhat mean(v xhat) (symmetric), the backward is
// dx = rstd P(g), dw = sum dy xhat, db = sum dy (over `weight_sum` dims). Given the grads
// A, Bw, Bb of dx, dw, db (Bw, Bb, mean, rstd and w broadcastable against x):
//   d/d dy = w rstd P(A) + Bw xhat + Bb,   d/dw = sum dy rstd P(A),
//   d/dx   = rstd P(c) - rstd^2 / n xhat sum(A dx) / rstd,
//            c = -rstd mean(g xhat) A - rstd sum(A xhat) / n g + Bw dy
// (xhat moves with x through mean and rstd: d xhat_l / d x_k = rstd P_lk, and
// d rstd / d x_k = -rstd^2 xhat_k / n). Returns undefined grads where nothing flows.
std::tuple<Tensor, Tensor, Tensor> normalization_double_backward(
    const Tensor& grad_dx, const Tensor& grad_dw, const Tensor& grad_db, const Tensor& dy, const Tensor& input,
    const std::vector<int64_t>& reduce, int64_t n, const Tensor& mean, const Tensor& rstd, const Tensor& weight,
    const std::vector<int64_t>& weight_sum, std::array<bool, 3> mask) {
  const double inv_n = 1.0 / static_cast<double>(n);
  auto group_mean = [&](const Tensor& v) { return v.sum(reduce, true) * inv_n; };
  const Tensor xhat = (input - mean) * rstd;
  auto project = [&](const Tensor& v) { return v - group_mean(v) - xhat * group_mean(v * xhat); };
  const Tensor g = weight.defined() ? dy * weight : dy;
  Tensor d_dy, d_x, d_w, c, rstd_term;
  if (grad_dx.defined()) {
    const Tensor pa = rstd * project(grad_dx);
    d_dy = weight.defined() ? pa * weight : pa;
    if (weight.defined() && mask[2]) d_w = weight_sum.empty() ? dy * pa : (dy * pa).sum(weight_sum);
    const Tensor dx = rstd * project(g);
    c = -rstd * group_mean(g * xhat) * grad_dx - rstd * (grad_dx * xhat).sum(reduce, true) * inv_n * g;
    rstd_term = (grad_dx * dx).sum(reduce, true) * rstd * inv_n;  // rstd^2 / n * sum(A dx) / rstd
  }
  if (grad_dw.defined()) {
    d_dy = d_dy.defined() ? d_dy + grad_dw * xhat : grad_dw * xhat;
    c = c.defined() ? c + grad_dw * dy : grad_dw * dy;
  }
  if (grad_db.defined()) d_dy = d_dy.defined() ? d_dy + grad_db : grad_db.expand(input.sizes());
  if (mask[1] && c.defined()) {
    d_x = rstd * project(c);
    if (rstd_term.defined()) d_x = d_x - rstd_term * xhat;
  }
  return {d_dy, d_x, d_w};
}

// Fills the asked-for grads nothing flowed into with zeros shaped like their inputs.
std::tuple<Tensor, Tensor, Tensor> zeros_where_missing(std::tuple<Tensor, Tensor, Tensor> grads,
                                                       std::array<bool, 3> mask, const Tensor& dy,
                                                       const Tensor& input, const std::optional<Tensor>& weight) {
  auto& [d_dy, d_x, d_w] = grads;
  if (mask[0] && !d_dy.defined()) d_dy = at::zeros_like(dy);
  if (mask[1] && !d_x.defined()) d_x = at::zeros_like(input);
  if (mask[2] && weight && weight->defined() && !d_w.defined()) d_w = at::zeros_like(*weight);
  return {mask[0] ? d_dy : Tensor(), mask[1] ? d_x : Tensor(), mask[2] ? d_w : Tensor()};
}

Tensor defined_or_empty(const std::optional<Tensor>& t) { return t && t->defined() ? *t : Tensor(); }

}  // namespace

// The derivative of native_layer_norm_backward: groups are the rows of the normalized
// dims; the weight (over those dims) sums over the outer ones.
std::tuple<Tensor, Tensor, Tensor> layer_norm_double_backward(const Tensor& grad_dx, const Tensor& grad_dw,
                                                              const Tensor& grad_db, const Tensor& dy,
                                                              const Tensor& input, IntArrayRef normalized_shape,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight,
                                                              std::array<bool, 3> grad_input_mask) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size()), ndim = input.dim();
  std::vector<int64_t> rows, outer;
  for (int64_t d = 0; d < ndim; ++d) (d >= ndim - k ? rows : outer).push_back(d);
  int64_t n = 1;
  for (int64_t s : normalized_shape) n *= s;
  auto grads = normalization_double_backward(grad_dx, grad_dw, grad_db, dy, input, rows, n, mean, rstd,
                                             defined_or_empty(weight), outer, grad_input_mask);
  return zeros_where_missing(grads, grad_input_mask, dy, input, weight);
}

// The derivative of native_group_norm_backward: groups of an [N, G, C / G, HxW] view, the
// weight per channel summed over samples and positions.
std::tuple<Tensor, Tensor, Tensor> group_norm_double_backward(const Tensor& grad_dx, const Tensor& grad_dw,
                                                              const Tensor& grad_db, const Tensor& dy,
                                                              const Tensor& input, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              int64_t N, int64_t C, int64_t HxW, int64_t group,
                                                              std::array<bool, 3> grad_input_mask) {
  const std::vector<int64_t> view{N, group, group == 0 ? 0 : C / group, HxW}, param{1, group, view[2], 1};
  const std::vector<int64_t> stats{N, group, 1, 1};
  const c10::ScalarType t = input.scalar_type();
  auto as_param = [&](const Tensor& v) { return v.defined() ? v.to(t).reshape(param) : v; };
  const Tensor a = grad_dx.defined() ? grad_dx.reshape(view) : grad_dx;
  auto [d_dy, d_x, d_w] = normalization_double_backward(
      a, as_param(grad_dw), as_param(grad_db), dy.reshape(view), input.reshape(view), {2, 3}, view[2] * HxW,
      mean.to(t).reshape(stats), rstd.to(t).reshape(stats), as_param(defined_or_empty(weight)), {0, 3},
      grad_input_mask);
  if (d_dy.defined()) d_dy = d_dy.reshape(input.sizes());
  if (d_x.defined()) d_x = d_x.reshape(input.sizes());
  if (d_w.defined()) d_w = d_w.reshape({C});
  return zeros_where_missing({d_dy, d_x, d_w}, grad_input_mask, dy, input, weight);
}

// The derivative of native_batch_norm_backward. Training: groups are the channels of an
// [N, C, S] view. Evaluation (running statistics, constants): with s = rsqrt(var + eps),
// dx = dy w s, so d/d dy = A w s + Bw xhat + Bb, d/dx = Bw dy s, d/dw = sum A dy s.
std::tuple<Tensor, Tensor, Tensor> batch_norm_double_backward(
    const Tensor& grad_dx, const Tensor& grad_dw, const Tensor& grad_db, const Tensor& dy, const Tensor& input,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& running_mean,
    const std::optional<Tensor>& running_var, const std::optional<Tensor>& save_mean,
    const std::optional<Tensor>& save_invstd, bool train, double eps, std::array<bool, 3> grad_input_mask) {
  const int64_t batch = input.size(0), channels = input.size(1);
  const int64_t spatial = batch * channels == 0 ? 0 : input.numel() / (batch * channels);
  const std::vector<int64_t> view{batch, channels, spatial}, param{1, channels, 1}, reduce{0, 2};
  const c10::ScalarType t = input.scalar_type();
  auto as_param = [&](const Tensor& v) { return v.defined() ? v.to(t).reshape(param) : v; };
  const Tensor x = input.reshape(view), g = dy.reshape(view), w = as_param(defined_or_empty(weight));
  const Tensor a = grad_dx.defined() ? grad_dx.reshape(view) : grad_dx;
  const Tensor bw = as_param(grad_dw), bb = as_param(grad_db);
  Tensor d_dy, d_x, d_w;
  if (train) {
    std::tie(d_dy, d_x, d_w) = normalization_double_backward(a, bw, bb, g, x, reduce, batch * spatial,
                                                             as_param(defined_or_empty(save_mean)),
                                                             as_param(defined_or_empty(save_invstd)), w, reduce,
                                                             grad_input_mask);
  } else {
    const Tensor s = (as_param(defined_or_empty(running_var)) + eps).rsqrt();
    const Tensor xhat = (x - as_param(defined_or_empty(running_mean))) * s;
    auto add = [](const Tensor& acc, const Tensor& term) { return acc.defined() ? acc + term : term; };
    if (a.defined()) {
      d_dy = w.defined() ? a * w * s : a * s;
      if (w.defined() && grad_input_mask[2]) d_w = (a * g * s).sum(reduce);
    }
    if (bw.defined()) {
      d_dy = add(d_dy, bw * xhat);
      if (grad_input_mask[1]) d_x = bw * g * s;
    }
    if (bb.defined()) d_dy = add(d_dy, bb.expand(view));
  }
  if (d_dy.defined()) d_dy = d_dy.reshape(input.sizes());
  if (d_x.defined()) d_x = d_x.reshape(input.sizes());
  if (d_w.defined()) d_w = d_w.reshape({channels});
  return zeros_where_missing({d_dy, d_x, d_w}, grad_input_mask, dy, input, weight);
}


}  // namespace torch::autograd::generated::details

namespace torch::autograd::generated::details {

// With y = conv(x, w) + b and g = d<gO, y>: the grads of <ggI, gx> + <ggW, gw> + <ggb, gb>
// are, for gO, conv(ggI, w) + conv(x, ggW) + ggb; for x, the input grad of conv(., ggW)
// at gO; for w, the weight grad of conv(ggI, .) at gO.
std::tuple<Tensor, Tensor, Tensor> convolution_double_backward(
    const Tensor& ggI, const Tensor& ggW, const Tensor& ggb, const Tensor& gO, const Tensor& input,
    const Tensor& weight, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
    IntArrayRef output_padding, int64_t groups, std::array<bool, 3> grad_input_mask) {
  Tensor ggO, gI, gW;
  if (grad_input_mask[0]) {
    if (ggI.defined()) {
      ggO = at::convolution(ggI, weight, std::nullopt, stride, padding, dilation, transposed, output_padding, groups);
    }
    if (ggW.defined()) {
      Tensor term = at::convolution(input, ggW, std::nullopt, stride, padding, dilation, transposed, output_padding,
                                    groups);
      ggO = ggO.defined() ? ggO + term : term;
    }
    if (ggb.defined()) {
      std::vector<int64_t> shape(gO.dim(), 1);
      shape[1] = ggb.numel();
      Tensor term = ggb.reshape(shape).expand(gO.sizes());
      ggO = ggO.defined() ? ggO + term : term;
    }
  }
  if (grad_input_mask[1] && ggW.defined()) {
    gI = std::get<0>(at::convolution_backward(gO, input, ggW, std::nullopt, stride, padding, dilation, transposed,
                                              output_padding, groups, {true, false, false}));
  }
  if (grad_input_mask[2] && ggI.defined()) {
    gW = std::get<1>(at::convolution_backward(gO, ggI, weight, std::nullopt, stride, padding, dilation, transposed,
                                              output_padding, groups, {false, true, false}));
  }
  return {ggO, gI, gW};
}

}  // namespace torch::autograd::generated::details
