// native_group_norm and native_group_norm_backward over [N, C, HxW] split into `group`
// groups of C / group channels: one (sample, group) block per task, contiguous in memory.
// Two-pass statistics; the backward sums dy and dy * x per (sample, channel) in one pass,
// from which the group's projections and the weight/bias grads follow, then writes dx.
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

struct GroupNormShape {
  int64_t batch, channels, spatial, groups;
  int64_t per_group() const { return channels / groups; }
};

GroupNormShape check_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t N, int64_t C,
                                int64_t HxW, int64_t group) {
  TORCH_CHECK(group > 0 && C % group == 0, "Expected number of channels in input to be divisible by num_groups, but "
              "got input of shape ", input.sizes(), " and num_groups=", group);
  TORCH_CHECK(input.numel() == N * C * HxW, "Expected the input to have ", N * C * HxW, " elements (N=", N, ", C=", C,
              ", HxW=", HxW, "), but got input of shape ", input.sizes());
  TORCH_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C), "Expected weight to be a vector of "
              "size equal to the number of channels in input, but got weight of shape ", weight.sizes(),
              " and input of shape ", input.sizes());
  TORCH_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == C), "Expected bias to be a vector of size equal "
              "to the number of channels in input, but got bias of shape ", bias.sizes(), " and input of shape ",
              input.sizes());
  TORCH_CHECK(c10::isFloatingType(input.scalar_type()), "\"group_norm\" not implemented for '",
              toString(input.scalar_type()), "'");
  return {N, C, HxW, group};
}

// f(block) for each (sample, group) block, spread over threads.
template <typename F>
void for_each_block(const GroupNormShape& s, F f) {
  at::parallel_for(0, s.batch * s.groups, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) f(b);
  });
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const std::optional<Tensor>& weight_opt,
                                                     const std::optional<Tensor>& bias_opt, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps) {
  const Tensor weight = defined_or_empty(weight_opt), bias = defined_or_empty(bias_opt);
  const GroupNormShape s = check_group_norm(input, weight, bias, N, C, HxW, group);
  const c10::ScalarType st = input.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  Tensor out = make_empty(input.sizes(), input.scalar_type(), input.device());
  Tensor mean = make_empty({N, group}, st, input.device()), rstd = make_empty({N, group}, st, input.device());
  if (input.is_meta()) return {like_input_layout(out, input), mean, rstd};
  const Tensor x = input.contiguous();
  const int64_t cg = s.per_group(), block = cg * HxW;
  dispatch_types<kFloating | kReducedFloat>(input.scalar_type(), "group_norm", [&]<typename T>() {
    using O = opmath_t<T>;
    const std::vector<O> w = channel_values<O>(weight, C, 1), b = channel_values<O>(bias, C, 0);
    const T* xp = x.data_ptr<T>();
    T* op = out.data_ptr<T>();
    O* mp = mean.data_ptr<O>();
    O* rp = rstd.data_ptr<O>();
    for_each_block(s, [&](int64_t k) {
      const T* in = xp + k * block;
      O sum = 0;
      for (int64_t i = 0; i < block; ++i) sum += static_cast<O>(in[i]);
      const O m = block > 0 ? sum / static_cast<O>(block) : O(0);
      O sq = 0;
      for (int64_t i = 0; i < block; ++i) {
        const O d = static_cast<O>(in[i]) - m;
        sq += d * d;
      }
      const O r = 1 / std::sqrt((block > 0 ? sq / static_cast<O>(block) : O(0)) + static_cast<O>(eps));
      mp[k] = m, rp[k] = r;
      const int64_t c0 = (k % group) * cg;
      for (int64_t j = 0; j < cg; ++j) {
        const O scale = r * w[c0 + j], shift = b[c0 + j] - m * scale;
        const int64_t at = j * HxW;
        for (int64_t i = 0; i < HxW; ++i) op[k * block + at + i] = static_cast<T>(static_cast<O>(in[at + i]) * scale + shift);
      }
    });
  });
  return {like_input_layout(out, input), mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight_opt, int64_t N,
                                                              int64_t C, int64_t HxW, int64_t group,
                                                              std::array<bool, 3> output_mask) {
  const Tensor weight = defined_or_empty(weight_opt);
  const GroupNormShape s = check_group_norm(input, weight, Tensor(), N, C, HxW, group);
  TORCH_CHECK(grad_out.sizes() == input.sizes(), "group_norm_backward: expected grad_out of size ", input.sizes(),
              ", but got ", grad_out.sizes());
  TORCH_CHECK(mean.numel() == N * group && rstd.numel() == N * group, "group_norm_backward: expected mean and rstd "
              "of ", N * group, " elements, but got ", mean.numel(), " and ", rstd.numel());
  const c10::ScalarType param_type = weight.defined() ? weight.scalar_type() : input.scalar_type();
  Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) grad_input = make_empty(input.sizes(), input.scalar_type(), input.device());
  if (output_mask[1]) grad_weight = make_empty({C}, param_type, input.device());
  if (output_mask[2]) grad_bias = make_empty({C}, param_type, input.device());
  if (input.is_meta()) {
    return {grad_input.defined() ? like_input_layout(grad_input, input) : grad_input, grad_weight, grad_bias};
  }
  const Tensor x = input.contiguous(), dy = grad_out.to(input.scalar_type()).contiguous();
  const int64_t cg = s.per_group(), block = cg * HxW;
  dispatch_types<kFloating | kReducedFloat>(input.scalar_type(), "group_norm_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    const std::vector<O> w = channel_values<O>(weight, C, 1);
    const Tensor mean_o = mean.to(scalar_type_of<O>).contiguous(), rstd_o = rstd.to(scalar_type_of<O>).contiguous();
    const O* mp = mean_o.data_ptr<O>();
    const O* rp = rstd_o.data_ptr<O>();
    const T* xp = x.data_ptr<T>();
    const T* gp = dy.data_ptr<T>();
    T* dx = grad_input.defined() ? grad_input.data_ptr<T>() : nullptr;
    // per (sample, channel): sum dy and sum dy x
    std::vector<O> sum_dy(N * C), sum_dy_x(N * C);
    for_each_block(s, [&](int64_t k) {
      const int64_t n = k / group, c0 = (k % group) * cg;
      O group_g = 0, group_gx = 0;  // sums of g = w dy and of g x over the block
      for (int64_t j = 0; j < cg; ++j) {
        const int64_t at = k * block + j * HxW;
        O a = 0, b = 0;
        for (int64_t i = 0; i < HxW; ++i) {
          const O g = static_cast<O>(gp[at + i]);
          a += g;
          b += g * static_cast<O>(xp[at + i]);
        }
        sum_dy[n * C + c0 + j] = a, sum_dy_x[n * C + c0 + j] = b;
        group_g += w[c0 + j] * a, group_gx += w[c0 + j] * b;
      }
      if (!dx) return;
      // dx = rstd (g - mean(g) - xhat mean(g xhat)), xhat = (x - m) rstd
      const O m = mp[k], r = rp[k], inv = block > 0 ? O(1) / static_cast<O>(block) : O(0);
      const O mean_g = group_g * inv, mean_gxhat = (group_gx - m * group_g) * r * inv;
      for (int64_t j = 0; j < cg; ++j) {
        const int64_t at = k * block + j * HxW;
        const O wc = w[c0 + j];
        for (int64_t i = 0; i < HxW; ++i) {
          const O xhat = (static_cast<O>(xp[at + i]) - m) * r;
          dx[at + i] = static_cast<T>(r * (wc * static_cast<O>(gp[at + i]) - mean_g - xhat * mean_gxhat));
        }
      }
    });
    // dw[c] = sum_n (sum dy x - m sum dy) rstd, db[c] = sum_n sum dy
    auto store = [&](const Tensor& out, bool is_weight) {
      if (!out.defined()) return;
      Tensor t = at::zeros({C}, TensorOptions().dtype(scalar_type_of<O>));
      O* tp = t.data_ptr<O>();
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C; ++c) {
          const int64_t k = n * group + c / cg;
          tp[c] += is_weight ? (sum_dy_x[n * C + c] - mp[k] * sum_dy[n * C + c]) * rp[k] : sum_dy[n * C + c];
        }
      }
      out.copy_(t);
    };
    store(grad_weight, true);
    store(grad_bias, false);
  });
  return {grad_input.defined() ? like_input_layout(grad_input, input) : grad_input, grad_weight, grad_bias};
}

}  // namespace at::inline tessera::native
