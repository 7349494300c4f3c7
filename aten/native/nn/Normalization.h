// Dispatch stubs of the normalization row kernels (cpu/NormalizationKernel.cpp): layer
// norm over rows of a contiguous [M, N] view, forward and backward; and the helpers the
// batch and group norm kernels (BatchNorm.cpp, GroupNorm.cpp) share.
#pragma once

#include <aten/core/Tensor.h>
#include <aten/native/DispatchStub.h>

#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace at::inline tessera::native {

// out, mean, rstd ([M]) from x ([M, N] contiguous) and optional weight, bias ([N]).
using layer_norm_fn = void (*)(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t M, int64_t N,
                               double eps, Tensor& out, Tensor& mean, Tensor& rstd);
// dx ([M, N]), dw, db ([N]); each undefined one is skipped.
using layer_norm_backward_fn = void (*)(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                        const Tensor& weight, int64_t M, int64_t N, Tensor& dx, Tensor& dw,
                                        Tensor& db);
DECLARE_DISPATCH(layer_norm_fn, layer_norm_stub);
DECLARE_DISPATCH(layer_norm_backward_fn, layer_norm_backward_stub);

// Rows M and row length N of a layer norm over `normalized_shape`, after torch's checks of
// the arguments (weight and bias, when given, of that shape and of param_type).
std::pair<int64_t, int64_t> layer_norm_rows(const Tensor& input, IntArrayRef normalized_shape,
                                            const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                                            c10::ScalarType param_type);

// The dtype of an opmath type (float or double).
template <typename O>
constexpr c10::ScalarType scalar_type_of = std::is_same_v<O, double> ? c10::kDouble : c10::kFloat;

inline Tensor defined_or_empty(const std::optional<Tensor>& t) { return t && t->defined() ? *t : Tensor(); }

// A per-channel parameter as opmath values (`absent` for each channel where undefined).
template <typename O>
std::vector<O> channel_values(const Tensor& t, int64_t channels, O absent) {
  if (!t.defined()) return std::vector<O>(channels, absent);
  const Tensor c = t.to(scalar_type_of<O>).contiguous();
  return std::vector<O>(c.data_ptr<O>(), c.data_ptr<O>() + channels);
}

}  // namespace at::inline tessera::native
