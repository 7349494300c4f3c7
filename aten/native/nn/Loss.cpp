// Losses and distances as torch computes them, written over other operators (nll_loss's
// own kernels are in LossNLL.cpp): reduction is torch's enum (0 none, 1 mean, 2 sum).
#include <aten/core/Dispatch.h>
#include <aten/core/Reduction.h>
#include <aten/core/TensorOperators.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <vector>

namespace at::inline tessera::native {

namespace {

Tensor reduce_loss(const Tensor& loss, int64_t reduction) {
  if (reduction == Reduction::Mean) return loss.mean();
  if (reduction == Reduction::Sum) return loss.sum();
  TORCH_CHECK(reduction == Reduction::None, "reduction must be 0 (none), 1 (mean) or 2 (sum), got ", reduction);
  return loss;
}

bool defined(const std::optional<Tensor>& t) { return t && t->defined(); }

// A per-class weight viewed to broadcast along dim 1 of a rank-`ndim` input ([C] for 1-D).
Tensor class_weight_view(const Tensor& weight, int64_t ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(std::max<int64_t>(ndim, 1)), 1);
  shape[ndim >= 2 ? 1 : 0] = weight.numel();
  return weight.view(shape);
}

}  // namespace

// ---------------------------------------------------------------- nll and cross entropy

Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                int64_t ignore_index) {
  return std::get<0>(at::nll_loss_forward(self, target, weight, reduction, ignore_index));
}

Tensor nll_loss2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                  int64_t ignore_index) {
  return std::get<0>(at::nll_loss2d_forward(self, target, weight, reduction, ignore_index));
}

// Any rank: 1-D and 2-D inputs go to nll_loss, 4-D to nll_loss2d, the rest are viewed as
// [N, C, 1, rest] for nll_loss2d.
Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                   int64_t ignore_index) {
  TORCH_CHECK_VALUE(self.dim() >= 1, "Expected 1 or more dimensions (got ", self.dim(), ")");
  TORCH_CHECK_VALUE(self.dim() == 1 || target.dim() == 0 || self.size(0) == target.size(0),
                    "Expected input batch_size (", self.size(0), ") to match target batch_size (",
                    target.dim() > 0 ? target.size(0) : 0, ").");
  if (self.dim() <= 2) return at::nll_loss(self, target, weight, reduction, ignore_index);
  if (self.dim() == 4) return at::nll_loss2d(self, target, weight, reduction, ignore_index);
  const int64_t n = self.size(0), c = self.size(1);
  std::vector<int64_t> unreduced{n};
  for (int64_t d = 2; d < self.dim(); ++d) unreduced.push_back(self.size(d));
  TORCH_CHECK(target.dim() >= 1 && target.sizes().slice(1) == self.sizes().slice(2), "Expected target size ",
              IntArrayRef(unreduced), ", got ", target.sizes());
  const bool empty = self.numel() == 0;
  Tensor input = self.contiguous().view({n, c, empty ? 0 : 1, empty ? 0 : -1});
  Tensor tgt = target.contiguous().view({n, empty ? 0 : 1, empty ? 0 : -1});
  Tensor out = at::nll_loss2d(input, tgt, weight, reduction, ignore_index);
  return reduction == Reduction::None ? out.view(unreduced) : out;
}

Tensor cross_entropy_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                          int64_t reduction, int64_t ignore_index, double label_smoothing) {
  TORCH_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
              "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  if (self.sizes() == target.sizes()) {
    // class probabilities
    TORCH_CHECK(c10::isFloatingType(target.scalar_type()),
                "Expected floating point type for target with class probabilities, got ", target.scalar_type());
    TORCH_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
    const int64_t classes = self.size(class_dim);
    Tensor probs = label_smoothing > 0 ? target * (1 - label_smoothing) + label_smoothing / classes : target;
    Tensor weighted = at::log_softmax(self, class_dim) * probs;
    if (defined(weight)) weighted = weighted * class_weight_view(*weight, self.dim());
    Tensor loss = -weighted.sum(IntArrayRef{class_dim});
    if (reduction == Reduction::Mean) {
      // the mean over samples (every position but the class dim); NaN for no samples
      if (self.numel() == 0) return loss.sum() * NAN;
      return loss.sum() / static_cast<double>(self.numel() / classes);
    }
    return reduce_loss(loss, reduction);
  }
  Tensor log_probs = at::log_softmax(self, class_dim);
  Tensor nll = at::nll_loss_nd(log_probs, target, weight, reduction, ignore_index);
  if (label_smoothing == 0) return nll;
  // smoothing: a mix with the mean over classes of -log p (weighted), ignored samples out
  const int64_t classes = self.size(class_dim);
  Tensor ignored = target.eq(ignore_index);
  Tensor per_class = defined(weight) ? log_probs * class_weight_view(*weight, self.dim()) : log_probs;
  Tensor smooth = -per_class.sum(IntArrayRef{class_dim});
  smooth = smooth.masked_fill(ignored, 0.0);
  Tensor smooth_reduced;
  if (reduction == Reduction::Mean) {
    Tensor kept = ignored.logical_not();
    Tensor norm = defined(weight) ? weight->index_select(0, target.masked_select(kept).flatten()).sum()
                                  : kept.sum();
    smooth_reduced = smooth.sum() / norm;
  } else {
    smooth_reduced = reduce_loss(smooth, reduction);
  }
  return nll * (1 - label_smoothing) + smooth_reduced * (label_smoothing / classes);
}

// ---------------------------------------------------------------- regression losses

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return reduce_loss((self - target).square(), reduction);
}

Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return reduce_loss((self - target).abs(), reduction);
}

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return at::l1_loss(self, target, reduction);
  Tensor z = (self - target).abs();
  return reduce_loss(at::where(z.lt(beta), z.square() * (0.5 / beta), z - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  Tensor z = (self - target).abs();
  return reduce_loss(at::where(z.lt(delta), z.square() * 0.5, (z - 0.5 * delta) * delta), reduction);
}

Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  Tensor loss = log_target ? target.exp() * (target - self) : at::xlogy(target, target) - target * self;
  return reduce_loss(loss, reduction);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        int64_t reduction) {
  Tensor loss = log_input ? input.exp() - target * input : input - target * (input + eps).log();
  if (full) {
    // Stirling's approximation of log(target!), counted where target > 1
    Tensor stirling = target * target.log() - target + (target * (2 * M_PI)).log() * 0.5;
    loss = loss + stirling.masked_fill(target.le(1), 0);
  }
  return reduce_loss(loss, reduction);
}

// ---------------------------------------------------------------- binary classification

// -w (t log(x) + (1 - t) log(1 - x)) with each log clamped at -100 (so x = 0 or 1 gives a
// finite loss); its derivative (FunctionsManualNN.cpp) is torch's, not the clamps'.
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                            int64_t reduction) {
  if (!self.is_meta() && self.numel() > 0) {
    // (NaN is outside too)
    TORCH_CHECK(self.ge(0).logical_and(self.le(1)).all().item().toBool(),
                "all elements of input should be between 0 and 1");
  }
  Tensor loss = (target - 1) * (-self).log1p().clamp_min(-100) - target * self.log().clamp_min(-100);
  if (defined(weight)) loss = loss * *weight;
  return reduce_loss(loss, reduction);
}

// (1 - t) x - w_pos log(sigmoid(x)), w_pos = 1 + (pos_weight - 1) t: log_sigmoid keeps both
// ends finite.
// Inputs torch's formula does not differentiate (its derivatives.yaml lists no formula for
// them) are refused when they require grad, as torch's generated check does, rather than
// differentiated through the decomposition here.
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, int64_t reduction) {
  check_no_requires_grad(weight, "weight", "binary_cross_entropy_with_logits");
  check_no_requires_grad(pos_weight, "pos_weight", "binary_cross_entropy_with_logits");
  Tensor log_sig = at::log_sigmoid(self);
  Tensor loss = defined(pos_weight) ? (1 - target) * self - (1 + (*pos_weight - 1) * target) * log_sig
                                    : (1 - target) * self - log_sig;
  if (defined(weight)) loss = loss * *weight;
  return reduce_loss(loss, reduction);
}

// ---------------------------------------------------------------- margin and embedding losses

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           int64_t reduction) {
  return reduce_loss((-target * (input1 - input2) + margin).clamp_min(0), reduction);
}

// input where target is 1, max(0, margin - input) where it is -1, and both terms for any
// other target value (as torch's kernel adds them).
Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin, int64_t reduction) {
  // where(target, ...) first: a size mismatch names target as tensor a, as torch's does
  const Tensor zeros = at::zeros_like(self);
  Tensor below_margin = at::where(target.ne(1), (margin - self).clamp_min(0), zeros);
  return reduce_loss(below_margin + at::where(target.ne(-1), self, zeros), reduction);
}

// log(1 + exp(-target * input)), with torch's unguarded exp (it overflows where torch's does).
Tensor soft_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_no_requires_grad(target, "target", "soft_margin_loss");
  return reduce_loss((-self * target).exp().log1p(), reduction);
}

namespace {

// (frames, classes) of a multi-class margin loss input: a (C) vector, an (N, C) matrix or
// a scalar (one frame of one class).
std::pair<int64_t, int64_t> margin_frames(const Tensor& self) {
  const int64_t ndim = self.dim();
  TORCH_CHECK((ndim == 2 && self.size(1) != 0) || (ndim == 1 && self.size(0) != 0) || ndim == 0,
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", self.sizes());
  if (ndim <= 1) return {1, ndim == 0 ? 1 : self.size(0)};
  return {self.size(0), self.size(1)};
}

void check_class_target(const Tensor& target) {
  TORCH_CHECK(target.scalar_type() == c10::kLong, "expected scalar type Long but found ", target.scalar_type());
}

// Whether any label is outside [low, high): a data-dependent check, skipped on Meta.
bool labels_out_of_range(const Tensor& labels, int64_t low, int64_t high) {
  if (labels.is_meta() || labels.numel() == 0) return false;
  return (labels.lt(low).logical_or(labels.ge(high))).any().item().toBool();
}

}  // namespace

// Per frame: the sum over classes i != y of max(0, margin - x[y] + x[i])^p (times
// weight[y]), divided by the number of classes.
Tensor multi_margin_loss(const Tensor& self, const Tensor& target, const Scalar& p, const Scalar& margin,
                         const std::optional<Tensor>& weight, int64_t reduction) {
  const auto [frames, classes] = margin_frames(self);
  const bool weighted = weight.has_value() && weight->defined();
  TORCH_CHECK(p.equal(1) || p.equal(2), "only p == 1 and p == 2 supported");
  TORCH_CHECK(target.dim() <= 1 && target.numel() == frames, "inconsistent target size, got: ", target.sizes());
  // torch 1.13 reads past a short weight; current torch rejects it with this message.
  TORCH_CHECK(!weighted || (weight->dim() == 1 && weight->numel() == classes), "inconsistent weight size, expected ",
              classes, " but got ", weighted ? weight->sizes() : IntArrayRef());
  check_class_target(target);
  if (!c10::isFloatingType(self.scalar_type())) dtype_not_implemented("multi_margin_loss_cpu_kernel", self.scalar_type());
  TORCH_CHECK(!weighted || weight->scalar_type() == self.scalar_type(), "expected scalar type ", self.scalar_type(),
              " but found ", weight->scalar_type());
  const Tensor labels = target.reshape({frames, 1});
  TORCH_CHECK(!labels_out_of_range(labels, 0, classes), "target out of range");
  const Tensor scores = self.reshape({frames, classes});
  // relu, not clamp_min: torch's kernel gives no gradient where the hinge is exactly 0
  Tensor hinge = (margin.toDouble() - scores.gather(1, labels) + scores).relu();
  if (p.equal(2)) hinge = hinge * hinge;
  if (weighted) hinge = hinge * weight->index_select(0, labels.reshape({-1})).unsqueeze(1);
  const Tensor own_class = at::arange(classes, labels.options()).unsqueeze(0).eq(labels);
  Tensor loss = hinge.masked_fill(own_class, 0).sum(std::vector<int64_t>{1}) / static_cast<double>(classes);
  if (reduction == Reduction::None) return loss.reshape(target.sizes());
  return reduce_loss(loss, reduction);
}

// Per frame, the target row lists class indices up to its first -1; every listed class j
// is compared with every unlisted class i: the sum of max(0, 1 - (x[j] - x[i])) over the
// pairs, divided by the number of classes. A class listed twice counts twice, as in
// torch's kernel. (The pair tensor is frames x C x C.)
Tensor multilabel_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  const auto [frames, classes] = margin_frames(self);
  const bool consistent = self.dim() <= 1 ? target.dim() <= 1 && target.numel() == classes
                                          : target.dim() == 2 && target.size(0) == frames && target.size(1) == classes;
  TORCH_CHECK(consistent, "inconsistent size ", target.sizes(), " for argument #2 'target'");
  check_class_target(target);
  const Tensor labels = target.reshape({frames, classes});
  TORCH_CHECK(!labels_out_of_range(labels, -1, classes), "argument #2 'target' is out of range");
  if (!c10::isFloatingType(self.scalar_type())) {
    dtype_not_implemented("multilabel_margin_loss_forward_out_frame", self.scalar_type());
  }
  const Tensor scores = self.reshape({frames, classes});
  const Tensor listed = labels.lt(0).cumsum(1).eq(0).to(self.scalar_type());  // before the first -1
  const Tensor counts = at::zeros({frames, classes}, self.options()).scatter_add(1, labels.clamp_min(0), listed);
  const Tensor unlisted = counts.eq(0).to(self.scalar_type());
  // pair[n, j, i] = 1 - x[n, j] + x[n, i]; relu as torch counts only positive hinges
  const Tensor pair = ((1 - scores).unsqueeze(2) + scores.unsqueeze(1)).relu();
  Tensor loss = (pair * counts.unsqueeze(2) * unlisted.unsqueeze(1)).sum(std::vector<int64_t>{1, 2}) /
                static_cast<double>(classes);
  if (reduction == Reduction::None) return target.dim() == 2 ? loss : loss.reshape({});
  return reduce_loss(loss, reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             int64_t reduction) {
  const int64_t tdim = target.dim();
  TORCH_CHECK(tdim == 1 || tdim == 0, "0D or 1D target tensor expected, multi-target not supported");
  if (tdim == 1) {
    TORCH_CHECK(input1.dim() == 2 && input2.dim() == 2, "1D target tensor expects 2D input tensors, but found "
                "inputs with sizes ", input1.sizes(), " and ", input2.sizes(), ".");
  } else {
    TORCH_CHECK(input1.dim() == 1 && input2.dim() == 1, "0D target tensor expects 1D input tensors, but found "
                "inputs with sizes ", input1.sizes(), " and ", input2.sizes(), ".");
  }
  constexpr double kEps = 1e-12;
  const std::vector<int64_t> over{tdim};
  Tensor dot = (input1 * input2).sum(over);
  Tensor norms = (((input1 * input1).sum(over) + kEps) * ((input2 * input2).sum(over) + kEps)).sqrt();
  Tensor cos = dot / norms;
  Tensor zeros = at::zeros_like(cos);
  Tensor loss = at::where(target.eq(1), 1 - cos, zeros) + at::where(target.eq(-1), (cos - margin).clamp_min(0), zeros);
  return reduce_loss(loss, reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, int64_t reduction) {
  const int64_t a = anchor.dim(), pd = positive.dim(), n = negative.dim();
  TORCH_CHECK(a == pd && a == n, "All inputs should have same dimension but got ", a, "D, ", pd, "D and ", n,
              "D inputs.");
  Tensor to_positive = at::pairwise_distance(anchor, positive, p, eps);
  Tensor to_negative = at::pairwise_distance(anchor, negative, p, eps);
  if (swap) to_negative = at::minimum(to_negative, at::pairwise_distance(positive, negative, p, eps));
  return reduce_loss((to_positive - to_negative + margin).clamp_min(0), reduction);
}

// ---------------------------------------------------------------- similarities and distances

// Each input divided by its norm (clamped at eps) before the dot product, as current
// PyTorch does (1.13 divided the dot by the clamped product of the norms).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  const c10::ScalarType common = c10::promoteTypes(x1.scalar_type(), x2.scalar_type());
  TORCH_CHECK(c10::isFloatingType(common), "expected common dtype to be floating point, yet common dtype is ", common);
  const std::vector<int64_t> shape = infer_size(x1.sizes(), x2.sizes());
  const Tensor a = x1.to(common).expand(shape), b = x2.to(common).expand(shape);
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(shape.size()));
  const std::vector<int64_t> over{d};
  const Tensor na = at::linalg_vector_norm(a, 2, over, true, std::nullopt).clamp_min(eps);
  const Tensor nb = at::linalg_vector_norm(b, 2, over, true, std::nullopt).clamp_min(eps);
  return ((a / na) * (b / nb)).sum(IntArrayRef{d});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const int64_t last = std::max(x1.dim(), x2.dim()) - 1;
  return at::norm(x1 - x2 + eps, p, IntArrayRef{last}, keepdim);
}

// p = 2 on more than 25 rows per side (or compute_mode 1) takes the matrix-product form
// |a|^2 + |b|^2 - 2 a.b (clamped before the root); otherwise the norm of the differences.
// The p-norm distances between rows i < j of a 2-D input, pairs in row-major order; the
// grads come from the norm's (zero where two rows coincide, as torch's _pdist_backward).
Tensor pdist(const Tensor& self, double p) {
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()), "pdist only supports floating-point dtypes");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values");
  const Tensor pairs = at::triu_indices(self.size(0), self.size(0), 1, c10::kLong, std::nullopt, self.device(),
                                        std::nullopt);
  const Tensor diff = self.index_select(0, pairs.select(0, 0)) - self.index_select(0, pairs.select(0, 1));
  return at::linalg_vector_norm(diff, p, IntArrayRef{1}, false, std::nullopt);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  TORCH_CHECK(c10::isFloatingType(x1.scalar_type()), "cdist only supports floating-point dtypes, X1 got: ",
              x1.scalar_type());
  TORCH_CHECK(c10::isFloatingType(x2.scalar_type()), "cdist only supports floating-point dtypes, X2 got: ",
              x2.scalar_type());
  TORCH_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  TORCH_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  TORCH_CHECK(x1.size(-1) == x2.size(-1), "X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
              " X2: ", x2.size(-1));
  TORCH_CHECK(p >= 0, "cdist only supports non-negative p values");
  const int64_t mode = compute_mode.value_or(0);
  TORCH_CHECK(mode >= 0 && mode <= 2, "possible modes: None, 0, 1, 2, but was: ", mode);
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2);
  const bool use_mm = p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
  if (use_mm) {
    Tensor a2 = x1.square().sum(IntArrayRef{-1}, true);
    Tensor b2 = x2.square().sum(IntArrayRef{-1}, true);
    Tensor d2 = a2 + b2.transpose(-2, -1) - 2 * at::matmul(x1, x2.transpose(-2, -1));
    return d2.clamp_min(1e-30).sqrt();
  }
  return at::linalg_vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, std::vector<int64_t>{-1}, false,
                                std::nullopt);
}

}  // namespace at::inline tessera::native
