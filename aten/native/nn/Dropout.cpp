// Dropout: native_dropout (element mask and scaled output, the op autograd records), and
// the composites torch builds over bernoulli_: dropout, feature (channel) dropout and the
// alpha dropouts that keep SELU's mean and variance. Masks come from the default
// Generator (tessera.manual_seed makes them reproducible).
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <vector>

namespace at::inline tessera::native {

namespace {

// Keep-probability noise: per element, or per (sample, channel) for feature dropout.
Tensor make_noise(const Tensor& input, bool feature) {
  if (!feature) return at::empty_like(input);
  TORCH_CHECK(input.dim() >= 2, "Feature dropout requires at least 2 dimensions in the input");
  std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
  shape[0] = input.size(0);
  shape[1] = input.size(1);
  return at::empty(shape, input.options());
}

template <bool Inplace>
Tensor apply_dropout(Tensor& input, double p, bool train, bool feature, bool alpha) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) {
    Tensor zeros = at::zeros({}, input.options());
    if constexpr (Inplace) return input.mul_(zeros);
    return input.mul(zeros);
  }
  Tensor noise = make_noise(input, feature);
  noise.bernoulli_(1 - p);
  Tensor shift;
  if (alpha) {
    // dropped values go to SELU's negative saturation, then an affine map restores the
    // mean and variance (Klambauer et al., 2017)
    constexpr double kAlpha = 1.7580993408473766;
    const double a = 1. / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
    shift = (noise - 1) * (kAlpha * a) + kAlpha * a * p;
    noise = noise * a;
  } else {
    noise = noise / (1 - p);
  }
  if constexpr (Inplace) {
    input.mul_(noise);
    return alpha ? input.add_(shift) : input;
  }
  Tensor out = input * noise;
  return alpha ? out + shift : out;
}

}  // namespace

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (input.numel() == 0 || (train.has_value() && !*train) || p == 0) {
    return {input.clone(), at::ones(input.sizes(), input.options().dtype(c10::kBool))};
  }
  Tensor mask = at::empty(input.sizes(), input.options().dtype(c10::kBool));
  if (p == 1) {
    mask.fill_(false);
    return {input * at::zeros({}, input.options()), mask};  // NaN and inf stay NaN, as input * 0
  }
  mask.bernoulli_(1 - p);
  return {input * mask * (1. / (1 - p)), mask};
}

Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale) {
  return grad_output * mask * scale;
}

Tensor dropout(const Tensor& input, double p, bool train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  // (a nested input always gets native_dropout's copy, as torch's)
  if (!input.is_nested() && (!train || p == 0 || input.numel() == 0)) return input;
  return std::get<0>(at::native_dropout(input, p, train));
}

Tensor& dropout_(Tensor& self, double p, bool train) {
  apply_dropout<true>(self, p, train, false, false);
  return self;
}

Tensor feature_dropout(const Tensor& input, double p, bool train) {
  Tensor in = input;
  return apply_dropout<false>(in, p, train, true, false);
}
Tensor& feature_dropout_(Tensor& self, double p, bool train) {
  apply_dropout<true>(self, p, train, true, false);
  return self;
}

Tensor alpha_dropout(const Tensor& input, double p, bool train) {
  Tensor in = input;
  return apply_dropout<false>(in, p, train, false, true);
}
Tensor& alpha_dropout_(Tensor& self, double p, bool train) {
  apply_dropout<true>(self, p, train, false, true);
  return self;
}

Tensor feature_alpha_dropout(const Tensor& input, double p, bool train) {
  Tensor in = input;
  return apply_dropout<false>(in, p, train, true, true);
}
Tensor& feature_alpha_dropout_(Tensor& self, double p, bool train) {
  apply_dropout<true>(self, p, train, true, true);
  return self;
}

}  // namespace at::inline tessera::native
