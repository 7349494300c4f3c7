// native_batch_norm and native_batch_norm_backward: per-channel kernels over [N, C, S]
// (S = the spatial size), one channel per task ([N, C] inputs: a block of channels per
// task, walking the rows). Training takes two-pass statistics per
// row of S (mean, then squared deviations, the row still in cache), merged across the
// batch by Chan's update, and moves the running statistics; the
// backward gathers sum(dy) and sum(dy * xhat) per channel in one pass, then writes dx in
// a second. Evaluation uses the running statistics. CPU and Meta share the checks.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/ChannelsLast.h>
#include <aten/native/nn/Normalization.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <vector>

namespace at::inline tessera::native {

namespace {

struct BatchNormShape {
  int64_t batch, channels, spatial;
};

BatchNormShape batch_norm_shape(const Tensor& input) {
  TORCH_CHECK(input.dim() >= 2, "batch_norm: expected an input with at least 2 dims (N, C, ...), but got input of "
              "size ", input.sizes());
  BatchNormShape s{input.size(0), input.size(1), 1};
  for (int64_t d = 2; d < input.dim(); ++d) s.spatial *= input.size(d);
  return s;
}

void check_channels(const Tensor& t, int64_t channels, const char* name) {
  TORCH_CHECK(!t.defined() || t.numel() == channels, name, " should contain ", channels, " elements not ", t.numel());
}

constexpr int64_t kChannelGrain = 16;  // channels per task for [N, C] inputs

c10::ScalarType stats_type(c10::ScalarType t) { return t == c10::kDouble ? c10::kDouble : c10::kFloat; }

// f(c, x + offset of (n, c)) for each sample n of channel c, channels spread over threads.
template <typename F>
void for_each_channel(const BatchNormShape& s, F f) {
  at::parallel_for(0, s.channels, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) f(c);
  });
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const std::optional<Tensor>& weight_opt,
                                                      const std::optional<Tensor>& bias_opt,
                                                      const std::optional<Tensor>& running_mean_opt,
                                                      const std::optional<Tensor>& running_var_opt, bool training,
                                                      double momentum, double eps) {
  const BatchNormShape s = batch_norm_shape(input);
  const Tensor weight = defined_or_empty(weight_opt), bias = defined_or_empty(bias_opt);
  const Tensor running_mean = defined_or_empty(running_mean_opt), running_var = defined_or_empty(running_var_opt);
  check_channels(weight, s.channels, "weight");
  check_channels(bias, s.channels, "bias");
  check_channels(running_mean, s.channels, "running_mean");
  check_channels(running_var, s.channels, "running_var");
  TORCH_CHECK(training || (running_mean.defined() && running_var.defined()),
              "running_mean and running_var must be defined in evaluation mode");
  TORCH_CHECK(c10::isFloatingType(input.scalar_type()), "\"batch_norm\" not implemented for '",
              toString(input.scalar_type()), "'");
  const c10::ScalarType st = stats_type(input.scalar_type());
  Tensor out = make_empty(input.sizes(), input.scalar_type(), input.device());
  Tensor save_mean = make_empty({training ? s.channels : 0}, st, input.device());
  Tensor save_invstd = make_empty({training ? s.channels : 0}, st, input.device());
  if (input.is_meta()) return {like_input_layout(out, input), save_mean, save_invstd};
  const Tensor x = input.contiguous();
  const int64_t count = s.batch * s.spatial;
  dispatch_types<kFloating | kReducedFloat>(input.scalar_type(), "batch_norm", [&]<typename T>() {
    using O = opmath_t<T>;
    const std::vector<O> w = channel_values<O>(weight, s.channels, 1), b = channel_values<O>(bias, s.channels, 0);
    std::vector<O> mean(s.channels), invstd(s.channels), var(s.channels);
    if (!training) {
      const std::vector<O> rm = channel_values<O>(running_mean, s.channels, 0);
      const std::vector<O> rv = channel_values<O>(running_var, s.channels, 1);
      for (int64_t c = 0; c < s.channels; ++c) mean[c] = rm[c], invstd[c] = 1 / std::sqrt(rv[c] + static_cast<O>(eps));
    }
    const T* xp = x.data_ptr<T>();
    T* op = out.data_ptr<T>();
    if (s.spatial == 1) {  // [N, C]: a block of channels per task, walking the rows
      at::parallel_for(0, s.channels, kChannelGrain, [&](int64_t c0, int64_t c1) {
        if (training) {
          std::vector<O> sum(c1 - c0), sq(c1 - c0);
          for (int64_t n = 0; n < s.batch; ++n)
            for (int64_t c = c0; c < c1; ++c) sum[c - c0] += static_cast<O>(xp[n * s.channels + c]);
          for (int64_t c = c0; c < c1; ++c) mean[c] = count > 0 ? sum[c - c0] / static_cast<O>(count) : O(0);
          for (int64_t n = 0; n < s.batch; ++n) {
            for (int64_t c = c0; c < c1; ++c) {
              const O d = static_cast<O>(xp[n * s.channels + c]) - mean[c];
              sq[c - c0] += d * d;
            }
          }
          for (int64_t c = c0; c < c1; ++c) {
            var[c] = count > 0 ? sq[c - c0] / static_cast<O>(count) : O(0);
            invstd[c] = 1 / std::sqrt(var[c] + static_cast<O>(eps));
          }
        }
        for (int64_t n = 0; n < s.batch; ++n) {
          for (int64_t c = c0; c < c1; ++c) {
            const O scale = invstd[c] * w[c];
            op[n * s.channels + c] = static_cast<T>((static_cast<O>(xp[n * s.channels + c]) - mean[c]) * scale + b[c]);
          }
        }
      });
    } else for_each_channel(s, [&](int64_t c) {
      if (training) {
        // two passes over each row while it is in cache, rows merged by Chan's update
        O m = 0, m2 = 0;
        int64_t seen = 0;
        for (int64_t n = 0; n < s.batch && s.spatial > 0; ++n) {
          const T* row = xp + (n * s.channels + c) * s.spatial;
          O sum = 0, sq = 0;
          for (int64_t i = 0; i < s.spatial; ++i) sum += static_cast<O>(row[i]);
          const O row_mean = sum / static_cast<O>(s.spatial);
          for (int64_t i = 0; i < s.spatial; ++i) {
            const O d = static_cast<O>(row[i]) - row_mean;
            sq += d * d;
          }
          const O delta = row_mean - m, total = static_cast<O>(seen + s.spatial);
          m += delta * (static_cast<O>(s.spatial) / total);
          m2 += sq + delta * delta * (static_cast<O>(seen) * static_cast<O>(s.spatial) / total);
          seen += s.spatial;
        }
        mean[c] = m;
        var[c] = count > 0 ? m2 / static_cast<O>(count) : O(0);
        invstd[c] = 1 / std::sqrt(var[c] + static_cast<O>(eps));
      }
      const O scale = invstd[c] * w[c], shift = b[c] - mean[c] * scale;
      for (int64_t n = 0; n < s.batch; ++n) {
        const int64_t at = (n * s.channels + c) * s.spatial;
        for (int64_t i = 0; i < s.spatial; ++i) op[at + i] = static_cast<T>(static_cast<O>(xp[at + i]) * scale + shift);
      }
    });
    if (!training) return;
    Tensor mean_t = at::empty({s.channels}, TensorOptions().dtype(scalar_type_of<O>));
    Tensor var_t = at::empty({s.channels}, TensorOptions().dtype(scalar_type_of<O>));
    for (int64_t c = 0; c < s.channels; ++c) {
      mean_t.data_ptr<O>()[c] = mean[c];
      var_t.data_ptr<O>()[c] = count > 1 ? var[c] * static_cast<O>(count) / static_cast<O>(count - 1) : var[c];
      save_mean.data_ptr<O>()[c] = mean[c];
      save_invstd.data_ptr<O>()[c] = invstd[c];
    }
    if (count == 0) return;  // an empty batch leaves the running statistics alone
    // the running statistics move toward the batch's (its unbiased variance)
    Tensor rm = running_mean, rv = running_var;
    if (rm.defined()) rm.mul_(1 - momentum).add_(mean_t.to(rm.scalar_type()), momentum);
    if (rv.defined()) rv.mul_(1 - momentum).add_(var_t.to(rv.scalar_type()), momentum);
  });
  return {like_input_layout(out, input), save_mean, save_invstd};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight_opt,
    const std::optional<Tensor>& running_mean_opt, const std::optional<Tensor>& running_var_opt,
    const std::optional<Tensor>& save_mean_opt, const std::optional<Tensor>& save_invstd_opt, bool train, double eps,
    std::array<bool, 3> output_mask) {
  const BatchNormShape s = batch_norm_shape(input);
  const Tensor weight = defined_or_empty(weight_opt);
  const Tensor mean_src = defined_or_empty(train ? save_mean_opt : running_mean_opt);
  const Tensor var_src = defined_or_empty(train ? save_invstd_opt : running_var_opt);
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "batch_norm_backward: expected grad_out of size ", input.sizes(),
              ", but got ", grad_out.sizes());
  TORCH_CHECK(mean_src.defined() && var_src.defined(), "batch_norm_backward: ",
              train ? "save_mean and save_invstd" : "running_mean and running_var", " must be defined");
  check_channels(weight, s.channels, "weight");
  check_channels(mean_src, s.channels, train ? "save_mean" : "running_mean");
  check_channels(var_src, s.channels, train ? "save_invstd" : "running_var");
  const c10::ScalarType param_type = weight.defined() ? weight.scalar_type() : input.scalar_type();
  Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) grad_input = make_empty(input.sizes(), input.scalar_type(), input.device());
  if (output_mask[1]) grad_weight = make_empty({s.channels}, param_type, input.device());
  if (output_mask[2]) grad_bias = make_empty({s.channels}, param_type, input.device());
  if (input.is_meta()) return {grad_input.defined() ? like_input_layout(grad_input, input) : grad_input, grad_weight,
                               grad_bias};
  const Tensor x = input.contiguous(), dy = grad_out.to(input.scalar_type()).contiguous();
  const int64_t count = s.batch * s.spatial;
  dispatch_types<kFloating | kReducedFloat>(input.scalar_type(), "batch_norm_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    const std::vector<O> w = channel_values<O>(weight, s.channels, 1), mean = channel_values<O>(mean_src, s.channels, 0);
    std::vector<O> invstd = channel_values<O>(var_src, s.channels, 1);
    if (!train) for (O& v : invstd) v = 1 / std::sqrt(v + static_cast<O>(eps));  // running_var given
    std::vector<O> sum_dy(s.channels), sum_dy_xhat(s.channels);
    const T* xp = x.data_ptr<T>();
    const T* gp = dy.data_ptr<T>();
    T* dx = grad_input.defined() ? grad_input.data_ptr<T>() : nullptr;
    const bool need_sums = output_mask[1] || output_mask[2] || (train && dx);
    if (s.spatial == 1) {  // [N, C]: a block of channels per task, walking the rows
      at::parallel_for(0, s.channels, kChannelGrain, [&](int64_t c0, int64_t c1) {
        if (need_sums) {
          for (int64_t n = 0; n < s.batch; ++n) {
            for (int64_t c = c0; c < c1; ++c) {
              const O g = static_cast<O>(gp[n * s.channels + c]);
              sum_dy[c] += g;
              sum_dy_xhat[c] += g * (static_cast<O>(xp[n * s.channels + c]) - mean[c]);
            }
          }
          for (int64_t c = c0; c < c1; ++c) sum_dy_xhat[c] *= invstd[c];
        }
        if (!dx) return;
        for (int64_t n = 0; n < s.batch; ++n) {
          for (int64_t c = c0; c < c1; ++c) {
            const O mean_dy = train && count > 0 ? sum_dy[c] / static_cast<O>(count) : O(0);
            const O proj = train && count > 0 ? sum_dy_xhat[c] * invstd[c] / static_cast<O>(count) : O(0);
            const O centred = static_cast<O>(xp[n * s.channels + c]) - mean[c];
            dx[n * s.channels + c] =
                static_cast<T>(w[c] * invstd[c] * (static_cast<O>(gp[n * s.channels + c]) - mean_dy - centred * proj));
          }
        }
      });
    } else for_each_channel(s, [&](int64_t c) {
      if (need_sums) {
        O a = 0, b = 0;
        for (int64_t n = 0; n < s.batch; ++n) {
          const int64_t at = (n * s.channels + c) * s.spatial;
          for (int64_t i = 0; i < s.spatial; ++i) {
            const O g = static_cast<O>(gp[at + i]);
            a += g;
            b += g * (static_cast<O>(xp[at + i]) - mean[c]);
          }
        }
        sum_dy[c] = a, sum_dy_xhat[c] = b * invstd[c];
      }
      if (!dx) return;
      const O scale = w[c] * invstd[c];
      // train: dx = w invstd (dy - mean(dy) - xhat mean(dy xhat)); eval: w invstd dy
      const O mean_dy = train && count > 0 ? sum_dy[c] / static_cast<O>(count) : O(0);
      const O proj = train && count > 0 ? sum_dy_xhat[c] * invstd[c] / static_cast<O>(count) : O(0);
      for (int64_t n = 0; n < s.batch; ++n) {
        const int64_t at = (n * s.channels + c) * s.spatial;
        for (int64_t i = 0; i < s.spatial; ++i) {
          const O centred = static_cast<O>(xp[at + i]) - mean[c];
          dx[at + i] = static_cast<T>(scale * (static_cast<O>(gp[at + i]) - mean_dy - centred * proj));
        }
      }
    });
    auto store = [&](const Tensor& out, const std::vector<O>& v) {
      if (!out.defined()) return;
      Tensor t = at::empty({s.channels}, TensorOptions().dtype(scalar_type_of<O>));
      std::copy(v.begin(), v.end(), t.data_ptr<O>());
      out.copy_(t);
    };
    store(grad_weight, sum_dy_xhat);
    store(grad_bias, sum_dy);
  });
  return {grad_input.defined() ? like_input_layout(grad_input, input) : grad_input, grad_weight, grad_bias};
}

}  // namespace at::inline tessera::native
