// The batch-norm pieces that SyncBatchNorm assembles across ranks (torch's
// batch_norm_stats, _gather_stats(_with_counts), _elemt, _backward_reduce, _backward_elemt)
// and batch_norm_update_stats. Each rank computes per-channel statistics of its shard, the
// ranks exchange them, and these ops merge them and normalise with the merged ones. They
// are written over other operators (var_mean, addcmul, sums), so autograd differentiates
// them through those and Meta tensors take the same path. torch implements the first six
// on CUDA only; here they run wherever their operators do. Statistics of Half/BFloat16
// inputs are float, as torch's CUDA kernels keep them.
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <vector>

namespace at::inline tessera::native {

namespace {

// Every dim but the channel dim (1).
std::vector<int64_t> reduced_dims(const Tensor& input, const char* op) {
  TORCH_CHECK(input.dim() >= 2, op, ": expected an input with at least 2 dims (N, C, ...), but got input of size ",
              input.sizes());
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  return dims;
}

// A [C] tensor viewed as [1, C, 1, ...] against an input of rank `ndim`.
Tensor channel_view(const Tensor& t, int64_t ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim), 1);
  shape[1] = t.numel();
  return t.reshape(shape);
}

c10::ScalarType stats_dtype(c10::ScalarType t) {
  return t == c10::kHalf || t == c10::kBFloat16 ? c10::kFloat : t;
}

void check_channels(const Tensor& t, int64_t channels, const char* op, const char* name) {
  TORCH_CHECK(!t.defined() || t.numel() == channels, op, ": ", name, " should contain ", channels,
              " elements not ", t.numel());
}

// running = (1 - momentum) running + momentum batch, outside autograd.
void move_running(const std::optional<Tensor>& running, const Tensor& batch, double momentum) {
  if (!running || !running->defined()) return;
  c10::AutoGradMode no_grad(false);
  Tensor r = *running;
  r.mul_(1 - momentum).add_(batch.detach().to(r.scalar_type()), momentum);
}

Tensor value_or_undefined(const std::optional<Tensor>& t) { return t && t->defined() ? *t : Tensor(); }

}  // namespace

std::tuple<Tensor, Tensor> batch_norm_stats(const Tensor& input, double eps) {
  const auto dims = reduced_dims(input, "batch_norm_stats");
  auto [var, mean] = at::var_mean(input.to(stats_dtype(input.scalar_type())), dims, /*unbiased=*/false);
  return {mean, (var + eps).rsqrt()};
}

std::tuple<Tensor, Tensor> batch_norm_update_stats(const Tensor& input, const std::optional<Tensor>& running_mean,
                                                   const std::optional<Tensor>& running_var, double momentum) {
  const auto dims = reduced_dims(input, "batch_norm_update_stats");
  const int64_t channels = input.size(1);
  check_channels(value_or_undefined(running_mean), channels, "batch_norm_update_stats", "running_mean");
  check_channels(value_or_undefined(running_var), channels, "batch_norm_update_stats", "running_var");
  auto [var, mean] = at::var_mean(input, dims, /*unbiased=*/false);
  const int64_t n = channels == 0 ? 0 : input.numel() / channels;
  move_running(running_mean, mean, momentum);
  const double unbias = static_cast<double>(n) / static_cast<double>(std::max<int64_t>(n - 1, 1));
  move_running(running_var, var.detach() * unbias, momentum);
  return {mean, var};
}

Tensor batch_norm_elemt(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                        const Tensor& mean, const Tensor& invstd, double eps) {
  reduced_dims(input, "batch_norm_elemt");
  const int64_t channels = input.size(1), ndim = input.dim();
  check_channels(mean, channels, "batch_norm_elemt", "mean");
  check_channels(invstd, channels, "batch_norm_elemt", "invstd");
  check_channels(value_or_undefined(weight), channels, "batch_norm_elemt", "weight");
  check_channels(value_or_undefined(bias), channels, "batch_norm_elemt", "bias");
  // y = x * scale + shift with scale = invstd * w and shift = b - mean * scale: one pass.
  Tensor scale = weight && weight->defined() ? invstd * *weight : invstd;
  Tensor shift = bias && bias->defined() ? *bias - mean * scale : -(mean * scale);
  Tensor out = at::addcmul(channel_view(shift, ndim), input, channel_view(scale, ndim));
  return out.scalar_type() == input.scalar_type() ? out : out.to(input.scalar_type());
}

std::tuple<Tensor, Tensor> batch_norm_gather_stats_with_counts(const Tensor& input, const Tensor& mean,
                                                               const Tensor& invstd,
                                                               const std::optional<Tensor>& running_mean,
                                                               const std::optional<Tensor>& running_var,
                                                               double momentum, double eps, const Tensor& counts) {
  TORCH_CHECK(mean.dim() == 2 && invstd.sizes() == mean.sizes(), "batch_norm_gather_stats_with_counts: expected "
              "mean and invstd of one size [world_size, C], but got ", mean.sizes(), " and ", invstd.sizes());
  TORCH_CHECK(counts.numel() == mean.size(0), "batch_norm_gather_stats_with_counts: expected ", mean.size(0),
              " counts, one per row of mean, but got ", counts.numel());
  // Chan's merge: n = sum n_i, mean = sum n_i mean_i / n, and the sum of squared deviations
  // sum n_i (var_i + (mean_i - mean)^2), with var_i recovered from invstd_i.
  const Tensor n_i = counts.to(mean.scalar_type()).reshape({-1, 1});
  const Tensor n = n_i.sum(IntArrayRef{0});
  Tensor merged_mean = (n_i * mean).sum(IntArrayRef{0}) / n;
  const Tensor var_i = invstd.pow(-2) - eps;
  Tensor m2 = (n_i * (var_i + (mean - merged_mean).pow(2))).sum(IntArrayRef{0});
  Tensor merged_invstd = (m2 / n + eps).rsqrt();
  move_running(running_mean, merged_mean, momentum);
  move_running(running_var, m2.detach() / (n.detach() - 1), momentum);  // the unbiased variance
  return {merged_mean, merged_invstd};
}

std::tuple<Tensor, Tensor> batch_norm_gather_stats(const Tensor& input, const Tensor& mean, const Tensor& invstd,
                                                   const std::optional<Tensor>& running_mean,
                                                   const std::optional<Tensor>& running_var, double momentum,
                                                   double eps, int64_t count) {
  TORCH_CHECK(mean.dim() == 2, "batch_norm_gather_stats: expected mean of size [world_size, C], but got ",
              mean.sizes());
  const Tensor counts = at::full({mean.size(0)}, static_cast<double>(count), mean.options());
  return at::batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps,
                                                 counts);
}

std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm_backward_reduce(const Tensor& grad_out, const Tensor& input,
                                                                      const Tensor& mean, const Tensor& invstd,
                                                                      const std::optional<Tensor>& weight,
                                                                      bool input_g, bool weight_g, bool bias_g) {
  const auto dims = reduced_dims(input, "batch_norm_backward_reduce");
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "batch_norm_backward_reduce: grad_out of size ", grad_out.sizes(),
              " does not match input of size ", input.sizes());
  const int64_t channels = input.size(1);
  check_channels(mean, channels, "batch_norm_backward_reduce", "mean");
  check_channels(invstd, channels, "batch_norm_backward_reduce", "invstd");
  TORCH_CHECK(!weight_g || (weight && weight->defined()), "batch_norm_backward_reduce: weight_g needs a weight");
  Tensor sum_dy, sum_dy_xmu, grad_weight, grad_bias;
  if (input_g || weight_g || bias_g) {
    const auto acc = mean.scalar_type();
    const Tensor dy = grad_out.to(acc);
    sum_dy = dy.sum(dims);
    sum_dy_xmu = (dy * (input.to(acc) - channel_view(mean, input.dim()))).sum(dims);
  }
  if (weight_g) grad_weight = (sum_dy_xmu * invstd).to(weight->scalar_type());
  if (bias_g) grad_bias = weight && weight->defined() ? sum_dy.to(weight->scalar_type()) : sum_dy;
  if (!input_g) {
    sum_dy = Tensor();
    sum_dy_xmu = Tensor();
  }
  return {sum_dy, sum_dy_xmu, grad_weight, grad_bias};
}

Tensor batch_norm_backward_elemt(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                 const Tensor& invstd, const std::optional<Tensor>& weight, const Tensor& sum_dy,
                                 const Tensor& sum_dy_xmu, const Tensor& count) {
  reduced_dims(input, "batch_norm_backward_elemt");
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "batch_norm_backward_elemt: grad_out of size ", grad_out.sizes(),
              " does not match input of size ", input.sizes());
  const int64_t channels = input.size(1), ndim = input.dim();
  for (const auto& [t, name] : {std::pair{&mean, "mean"}, {&invstd, "invstd"}, {&sum_dy, "sum_dy"},
                                {&sum_dy_xmu, "sum_dy_xmu"}}) {
    check_channels(*t, channels, "batch_norm_backward_elemt", name);
  }
  // The means over every rank's samples (count holds each rank's number):
  // dx = (dy - mean_dy - (x - mean) invstd^2 mean_dy_xmu) invstd w, as dy a + x b + c.
  const Tensor total = count.to(mean.scalar_type()).sum();
  const Tensor mean_dy = sum_dy / total, mean_dy_xmu = sum_dy_xmu / total;
  const Tensor scale = weight && weight->defined() ? invstd * *weight : invstd;
  const Tensor factor = invstd * invstd * mean_dy_xmu;
  const Tensor a = scale, b = -(factor * scale), c = (mean * factor - mean_dy) * scale;
  Tensor out = at::addcmul(at::addcmul(channel_view(c, ndim), input, channel_view(b, ndim)), grad_out,
                           channel_view(a, ndim));
  return out.scalar_type() == input.scalar_type() ? out : out.to(input.scalar_type());
}

}  // namespace at::inline tessera::native
