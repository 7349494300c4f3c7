// nll_loss's kernels: the forward (per-sample losses or their weighted sum / mean, and the
// total weight a mean divides by) and the backward, for (C) / (N, C) inputs
// (nll_loss_forward) and (N, C, H, W) ones (nll_loss2d_forward); nll_loss_nd and
// cross_entropy_loss (Loss.cpp) bring every other rank to one of these. CPU and Meta.
#include <aten/core/Dispatch.h>
#include <aten/core/Reduction.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>

#include <vector>

namespace at::inline tessera::native {

namespace {

void check_weight(const Tensor& self, const std::optional<Tensor>& weight, int64_t classes) {
  if (!weight || !weight->defined()) return;
  TORCH_CHECK(weight->scalar_type() == self.scalar_type(), "expected scalar type ", self.scalar_type(),
              " but found ", weight->scalar_type());
  TORCH_CHECK(weight->dim() == 1 && weight->numel() == classes, "weight tensor should be defined either for all ",
              classes, " classes or no classes but got weight tensor of shape: ", weight->sizes());
}

void check_target_dtype(const Tensor& target) {
  TORCH_CHECK(target.scalar_type() == c10::kLong, "expected scalar type Long but found ", target.scalar_type());
}

// The operands seen as input [N, C, S] and target [N, S] (S = 1 without spatial dims).
struct NllGeometry {
  int64_t batch, classes, spatial;
  std::vector<int64_t> unreduced;  // the shape of reduction='none' results
};

NllGeometry geometry_1d_2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight) {
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch = self.dim() == 1 && target.dim() == 0;
  TORCH_CHECK(no_batch || self.size(0) == target.size(0), "size mismatch (got input: ", self.sizes(),
              ", target: ", target.sizes(), ")");
  check_target_dtype(target);
  const int64_t classes = self.size(-1);
  check_weight(self, weight, classes);
  if (self.dim() == 1) return {1, classes, 1, {}};
  return {self.size(0), classes, 1, {self.size(0)}};
}

NllGeometry geometry_2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight) {
  TORCH_CHECK(target.dim() == 3, "only batches of spatial targets supported (3D tensors) but got targets of "
              "dimension: ", target.dim());
  TORCH_CHECK(self.dim() == 4, "only batches of spatial inputs supported (4D tensors), but got input of "
              "dimension: ", self.dim());
  TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2),
              "size mismatch (got input: ", self.sizes(), " , target: ", target.sizes());
  check_target_dtype(target);
  check_weight(self, weight, self.size(1));
  return {self.size(0), self.size(1), self.size(2) * self.size(3), {self.size(0), self.size(2), self.size(3)}};
}

// The weight of class t (1 without weights), after checking t.
template <typename O, typename T>
O class_weight(int64_t t, int64_t classes, const T* w) {
  TORCH_CHECK_INDEX(t >= 0 && t < classes, "Target ", t, " is out of bounds.");
  return w ? static_cast<O>(w[t]) : O(1);
}

std::tuple<Tensor, Tensor> nll_forward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                       int64_t reduction, int64_t ignore_index, const NllGeometry& g) {
  const auto options = TensorOptions().dtype(self.scalar_type()).device(self.device());
  Tensor total_weight = at::empty({}, options);
  Tensor output = reduction == Reduction::None ? at::empty(g.unreduced, options) : at::empty({}, options);
  if (self.is_meta()) return {output, total_weight};
  const Tensor x = self.contiguous(), t = target.contiguous();
  const Tensor w = weight && weight->defined() ? weight->contiguous() : Tensor();
  dispatch_types<kFloating | kReducedFloat>(self.scalar_type(), "nll_loss_forward", [&]<typename T>() {
    using O = double;  // sums in double: a mean over many samples keeps float's precision
    const T* xp = x.data_ptr<T>();
    const int64_t* tp = t.data_ptr<int64_t>();
    const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
    T* out = output.data_ptr<T>();
    O sum = 0, weights = 0;
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t s = 0; s < g.spatial; ++s) {
        const int64_t i = n * g.spatial + s, cls = tp[i];
        O loss = 0;
        if (cls != ignore_index) {
          const O wt = class_weight<O>(cls, g.classes, wp);
          loss = -wt * static_cast<O>(xp[(n * g.classes + cls) * g.spatial + s]);
          weights += wt;
        }
        if (reduction == Reduction::None) out[i] = static_cast<T>(loss);
        sum += loss;
      }
    }
    total_weight.data_ptr<T>()[0] = static_cast<T>(weights);
    if (reduction != Reduction::None) {
      // 0 / 0 = NaN when every sample is ignored, as in torch
      out[0] = static_cast<T>(reduction == Reduction::Mean ? sum / weights : sum);
    }
  });
  return {output, total_weight};
}

Tensor nll_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                    const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                    const Tensor& total_weight, const NllGeometry& g) {
  if (reduction == Reduction::None) {
    TORCH_CHECK(grad_output.sizes() == IntArrayRef(g.unreduced), "Expected a tensor of size ",
                IntArrayRef(g.unreduced), " but got ", grad_output.sizes());
  } else {
    TORCH_CHECK(grad_output.numel() == 1, "Expected a single element grad_output tensor, but got: ",
                grad_output.sizes());
  }
  TORCH_CHECK(total_weight.numel() == 1, "expected total_weight to be a single element tensor, got: ",
              total_weight.sizes(), " (", total_weight.numel(), " elements)");
  Tensor grad_input = at::zeros(self.sizes(), TensorOptions().dtype(self.scalar_type()).device(self.device()));
  if (self.is_meta() || self.numel() == 0) return grad_input;
  const Tensor go = grad_output.to(self.scalar_type()).contiguous(), t = target.contiguous();
  const Tensor w = weight && weight->defined() ? weight->contiguous() : Tensor();
  dispatch_types<kFloating | kReducedFloat>(self.scalar_type(), "nll_loss_backward", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* gp = go.data_ptr<T>();
    const int64_t* tp = t.data_ptr<int64_t>();
    const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
    T* gi = grad_input.data_ptr<T>();
    O scale = reduction == Reduction::None ? O(0) : static_cast<O>(gp[0]);
    if (reduction == Reduction::Mean) scale /= static_cast<O>(total_weight.item().toDouble());
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t s = 0; s < g.spatial; ++s) {
        const int64_t i = n * g.spatial + s, cls = tp[i];
        if (cls == ignore_index) continue;
        const O wt = class_weight<O>(cls, g.classes, wp);
        const O go_i = reduction == Reduction::None ? static_cast<O>(gp[i]) : scale;
        gi[(n * g.classes + cls) * g.spatial + s] = static_cast<T>(-wt * go_i);
      }
    }
  });
  return grad_input;
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index) {
  return nll_forward(self, target, weight, reduction, ignore_index, geometry_1d_2d(self, target, weight));
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                         const Tensor& total_weight) {
  return nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight,
                      geometry_1d_2d(self, target, weight));
}

std::tuple<Tensor, Tensor> nll_loss2d_forward(const Tensor& self, const Tensor& target,
                                              const std::optional<Tensor>& weight, int64_t reduction,
                                              int64_t ignore_index) {
  return nll_forward(self, target, weight, reduction, ignore_index, geometry_2d(self, target, weight));
}

Tensor nll_loss2d_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                           const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                           const Tensor& total_weight) {
  return nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight,
                      geometry_2d(self, target, weight));
}

}  // namespace at::inline tessera::native
