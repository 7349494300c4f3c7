// Normalization operators. layer_norm has row kernels of its own (cpu/NormalizationKernel.cpp)
// for its forward and backward; batch_norm, group_norm and instance_norm are written over
// other operators (var_mean, ...), so autograd differentiates them through those.
#include <aten/core/TensorOperators.h>
#include <aten/native/DispatchStubs.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/Normalization.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <sstream>
#include <vector>

namespace at::inline tessera::native {

DEFINE_DISPATCH(layer_norm_stub);
DEFINE_DISPATCH(layer_norm_backward_stub);

namespace {

std::string shape_string(IntArrayRef sizes) {
  std::ostringstream os;
  os << sizes;
  return os.str();
}

// mean and rstd keep the outer dims with a 1 for each normalized one (torch's shape).
std::vector<int64_t> stats_shape(const Tensor& input, int64_t k) {
  std::vector<int64_t> shape = input.sizes().vec();
  for (int64_t i = input.dim() - k; i < input.dim(); ++i) shape[i] = 1;
  return shape;
}

Tensor contiguous_or_empty(const std::optional<Tensor>& t) {
  return t && t->defined() ? t->contiguous() : Tensor();
}

}  // namespace

std::pair<int64_t, int64_t> layer_norm_rows(const Tensor& input, IntArrayRef normalized_shape,
                                            const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                                            c10::ScalarType param_type) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(k >= 1, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
              "element, but got normalized_shape = ", normalized_shape);
  TORCH_CHECK(!weight || !weight->defined() || weight->sizes() == normalized_shape, "Expected weight to be of same "
              "shape as normalized_shape, but got weight of shape ", weight ? weight->sizes() : IntArrayRef(),
              " and normalized_shape = ", normalized_shape);
  TORCH_CHECK(!bias || !bias->defined() || bias->sizes() == normalized_shape, "Expected bias to be of same shape as "
              "normalized_shape, but got bias of shape ", bias ? bias->sizes() : IntArrayRef(),
              " and normalized_shape = ", normalized_shape);
  for (const std::optional<Tensor>* t : {&weight, &bias}) {
    TORCH_CHECK(!*t || !(*t)->defined() || (*t)->scalar_type() == param_type, "expected scalar type ", param_type,
                " but found ", (*t)->scalar_type());
  }
  const int64_t ndim = input.dim();
  bool matches = ndim >= k;
  for (int64_t i = 0; matches && i < k; ++i) matches = input.size(ndim - k + i) == normalized_shape[i];
  if (!matches) {
    std::ostringstream msg;
    msg << "Given normalized_shape=" << shape_string(normalized_shape) << ", expected input with shape [*";
    for (int64_t s : normalized_shape) msg << ", " << s;
    msg << "], but got input of size" << shape_string(input.sizes());
    TORCH_CHECK(false, msg.str());
  }
  int64_t n = 1;
  for (int64_t s : normalized_shape) n *= s;
  return {n == 0 ? 0 : input.numel() / n, n};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps) {
  const auto [M, N] = layer_norm_rows(input, normalized_shape, weight, bias, input.scalar_type());
  const c10::ScalarType dtype = input.scalar_type();
  Tensor out = make_empty(input.sizes(), dtype, input.device());
  const std::vector<int64_t> stats = stats_shape(input, static_cast<int64_t>(normalized_shape.size()));
  Tensor mean = make_empty(stats, dtype, input.device()), rstd = make_empty(stats, dtype, input.device());
  if (input.is_meta() || input.numel() == 0) return {out, mean, rstd};
  layer_norm_stub(c10::DeviceType::CPU, input.contiguous(), contiguous_or_empty(weight), contiguous_or_empty(bias), M,
                  N, eps, out, mean, rstd);
  return {out, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              const std::optional<Tensor>& bias,
                                                              std::array<bool, 3> output_mask) {
  const auto [M, N] = layer_norm_rows(input, normalized_shape, weight, bias, input.scalar_type());
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "native_layer_norm_backward: grad_out of size ", grad_out.sizes(),
              " for an input of size ", input.sizes());
  TORCH_CHECK(mean.numel() == M && rstd.numel() == M, "native_layer_norm_backward: expected mean and rstd of ", M,
              " elements, got ", mean.numel(), " and ", rstd.numel());
  const auto options = TensorOptions().dtype(input.scalar_type()).device(input.device());
  const bool has_weight = weight && weight->defined(), has_bias = bias && bias->defined();
  Tensor dx = output_mask[0] ? make_empty(input.sizes(), input.scalar_type(), input.device()) : Tensor();
  Tensor dw = output_mask[1] && has_weight ? at::zeros(normalized_shape, options) : Tensor();
  Tensor db = output_mask[2] && has_bias ? at::zeros(normalized_shape, options) : Tensor();
  if (input.is_meta() || input.numel() == 0) {
    if (dx.defined() && !input.is_meta()) dx.zero_();
    return {dx, dw, db};
  }
  layer_norm_backward_stub(c10::DeviceType::CPU, grad_out.to(input.scalar_type()).contiguous(), input.contiguous(),
                           mean.contiguous(), rstd.contiguous(), contiguous_or_empty(weight), M, N, dx, dw, db);
  return {dx, dw, db};
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool cudnn_enable) {
  return std::get<0>(at::native_layer_norm(input, normalized_shape, weight, bias, eps));
}

// ---------------------------------------------------------------- batch, group, instance norm

namespace {

// weight / bias viewed as [1, C, 1, ...] for an input of rank `ndim`.
Tensor per_channel(const Tensor& t, int64_t ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim), 1);
  shape[1] = t.numel();
  return t.reshape(shape);
}

// Half/BFloat16 inputs keep their dtype with float parameters, as torch's kernels do.
Tensor affine(Tensor y, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, int64_t ndim) {
  if (weight && weight->defined()) y = y * per_channel(*weight, ndim).to(y.scalar_type());
  if (bias && bias->defined()) y = y + per_channel(*bias, ndim).to(y.scalar_type());
  return y;
}

// running = (1 - momentum) running + momentum batch, for each statistic given, untracked.
void update_running(const std::optional<Tensor>& running, const Tensor& batch, double momentum) {
  if (!running || !running->defined()) return;
  c10::AutoGradMode no_grad(false);
  Tensor r = *running;
  r.mul_(1 - momentum).add_(batch.to(r.scalar_type()), momentum);
}

}  // namespace

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled) {
  const int64_t channels = input.size(1);  // a 1-D input raises torch's IndexError here
  auto check_size = [&](const std::optional<Tensor>& t, const char* name) {
    TORCH_CHECK(!t || !t->defined() || t->numel() == channels, name, " should contain ", channels, " elements not ",
                t ? t->numel() : 0);
  };
  check_size(weight, "weight");
  check_size(bias, "bias");
  check_size(running_mean, "running_mean");
  check_size(running_var, "running_var");
  if (!training) {  // (one value per channel in training is F.batch_norm's ValueError, as in torch)
    TORCH_CHECK(running_mean && running_mean->defined(), "running_mean must be defined in evaluation mode");
    TORCH_CHECK(running_var && running_var->defined(), "running_var must be defined in evaluation mode");
  }
  return std::get<0>(at::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                     const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                     bool use_input_stats, double momentum, double eps, bool cudnn_enabled) {
  const int64_t n = input.size(0), c = input.size(1), ndim = input.dim();
  if (!use_input_stats) {
    return at::batch_norm(input, weight, bias, running_mean, running_var, false, momentum, eps, cudnn_enabled);
  }
  std::vector<int64_t> dims;
  for (int64_t d = 2; d < ndim; ++d) dims.push_back(d);
  auto [var, mean] = at::var_mean(input, dims, /*unbiased=*/false, /*keepdim=*/true);
  {
    // each running statistic moves toward the batch mean of the instances' ones
    c10::AutoGradMode no_grad(false);
    const int64_t count = c == 0 || n == 0 ? 0 : input.numel() / (n * c);
    const double unbias = static_cast<double>(count) / std::max<int64_t>(count - 1, 1);
    update_running(running_mean, mean.reshape({n, c}).mean(IntArrayRef{0}), momentum);
    update_running(running_var, (var.reshape({n, c}) * unbias).mean(IntArrayRef{0}), momentum);
  }
  // torch normalises a contiguous (1, N*C, ...) view: its result is contiguous whatever
  // the input's layout.
  return affine((input - mean) * (var + eps).rsqrt(), weight, bias, ndim).contiguous();
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool cudnn_enabled) {
  TORCH_CHECK(input.dim() >= 2, "Expected at least 2 dimensions for input tensor but received ", input.dim());
  const int64_t n = input.size(0), c = input.size(1);
  TORCH_CHECK(num_groups > 0 && c % num_groups == 0, "Expected number of channels in input to be divisible by "
              "num_groups, but got input of shape ", input.sizes(), " and num_groups=", num_groups);
  TORCH_CHECK(!weight || !weight->defined() || (weight->dim() == 1 && weight->numel() == c), "Expected weight to be "
              "a vector of size equal to the number of channels in input, but got weight of shape ",
              weight ? weight->sizes() : IntArrayRef(), " and input of shape ", input.sizes());
  TORCH_CHECK(!bias || !bias->defined() || (bias->dim() == 1 && bias->numel() == c), "Expected bias to be a vector "
              "of size equal to the number of channels in input, but got bias of shape ",
              bias ? bias->sizes() : IntArrayRef(), " and input of shape ", input.sizes());
  int64_t spatial = 1;
  for (int64_t d = 2; d < input.dim(); ++d) spatial *= input.size(d);
  return std::get<0>(at::native_group_norm(input, weight, bias, n, c, spatial, num_groups, eps));
}

}  // namespace at::inline tessera::native
