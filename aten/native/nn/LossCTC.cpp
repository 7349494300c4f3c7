// Connectionist Temporal Classification loss (Graves et al., 2006). _ctc_loss runs the
// forward (alpha) recursion over each target's extended labels (blank, l1, blank, l2, ...,
// blank) in log space and returns each sequence's negative log-likelihood with the alphas;
// _ctc_loss_backward runs the backward (beta) recursion and forms torch's gradient, which
// is with respect to the logits a log_softmax turned into log_probs (see below).
// ctc_loss adds zero_infinity and the reduction. Checks and messages are torch's.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/core/Reduction.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace at::inline tessera::native {

namespace {

constexpr const char* kWhere = " (while checking arguments for ctc_loss_cpu)";

// What the checks establish about one call: sizes, and where each target's labels are in
// the (contiguous, int64) targets.
struct CtcProblem {
  int64_t steps = 0, batch = 0, classes = 0, max_target = 0;
  std::vector<int64_t> target_start;
  int64_t target_stride = 1;
  Tensor targets;  // int64, contiguous
};

CtcProblem check_ctc(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                     IntArrayRef target_lengths, int64_t blank) {
  TORCH_CHECK(targets.scalar_type() == c10::kLong || targets.scalar_type() == c10::kInt,
              "Expected tensor for argument #2 'targets' to have scalar type Long; but got ",
              c10::toString(targets.scalar_type()), " instead", kWhere);
  TORCH_CHECK(log_probs.dim() == 3, "Expected 3-dimensional tensor, but got ", log_probs.dim(),
              "-dimensional tensor for argument #1 'log_probs'", kWhere);
  TORCH_CHECK(targets.dim() == 1 || targets.dim() == 2, "Expected 1 to 2 dimensions, but got ", targets.dim(),
              "-dimensional tensor for argument #2 'targets'", kWhere);
  CtcProblem p;
  p.steps = log_probs.size(0);
  p.batch = log_probs.size(1);
  p.classes = log_probs.size(2);
  TORCH_CHECK(0 <= blank && blank < p.classes, "blank must be in label range");
  TORCH_CHECK(static_cast<int64_t>(input_lengths.size()) == p.batch, "input_lengths must be of size batch_size");
  TORCH_CHECK(static_cast<int64_t>(target_lengths.size()) == p.batch, "target_lengths must be of size batch_size");
  int64_t total = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t length = target_lengths[static_cast<size_t>(b)];
    TORCH_CHECK(length >= 0, "Expected target_lengths to have value at least 0, but got value ", length, kWhere);
    p.target_start.push_back(targets.dim() == 1 ? total : b * targets.size(1));  // in the contiguous copy
    total += length;
    p.max_target = std::max(p.max_target, length);
  }
  if (targets.dim() == 1) {
    TORCH_CHECK(targets.size(0) == total, "Expected tensor to have size ", total, " at dimension 0, but got size ",
                targets.size(0), " for argument #2 'targets'", kWhere);
  } else {
    TORCH_CHECK(targets.size(0) == p.batch, "Expected tensor to have size ", p.batch, " at dimension 0, but got size ",
                targets.size(0), " for argument #2 'targets'", kWhere);
    TORCH_CHECK(targets.size(1) >= p.max_target, "Expected tensor to have size at least ", p.max_target,
                " at dimension 1, but got size ", targets.size(1), " for argument #2 'targets'", kWhere);
  }
  for (int64_t length : input_lengths) {
    TORCH_CHECK(length >= 0, "Expected input_lengths to have value at least 0, but got value ", length, kWhere);
    TORCH_CHECK(length <= p.steps, "Expected input_lengths to have value at most ", p.steps, ", but got value ",
                length, kWhere);
  }
  if (!log_probs.is_meta()) {
    p.targets = targets.to(c10::kLong).contiguous();
    // torch reads out of bounds for such labels; tessera refuses them
    const int64_t* labels = p.targets.data_ptr<int64_t>();
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t i = 0; i < target_lengths[static_cast<size_t>(b)]; ++i) {
        const int64_t label = labels[p.target_start[static_cast<size_t>(b)] + i];
        TORCH_CHECK(label >= 0 && label < p.classes, "ctc_loss: target labels must lie in [0, ", p.classes,
                    ") (the classes of log_probs), but got ", label);
      }
    }
  }
  return p;
}

template <typename T>
T log_add(T a, T b) {
  const T m = std::max(a, b);
  if (m == -std::numeric_limits<T>::infinity()) return m;
  return std::log(std::exp(a - m) + std::exp(b - m)) + m;
}

template <typename T>
T log_add(T a, T b, T c) {
  const T m = std::max({a, b, c});
  if (m == -std::numeric_limits<T>::infinity()) return m;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

// One sequence's view of the problem: its log-probabilities lp(t, c) (contiguous (T, N, C)
// storage) and its extended labels.
template <typename T>
struct Sequence {
  const T* log_probs;
  int64_t batch, classes, b;
  const int64_t* labels;  // the target's own labels
  int64_t length, blank;

  T lp(int64_t t, int64_t c) const { return log_probs[(t * batch + b) * classes + c]; }
  int64_t label(int64_t s) const { return s % 2 == 0 ? blank : labels[s / 2]; }
  // s may be reached from s - 2 when it is a label unlike the one two back
  bool skips(int64_t s) const { return s >= 2 && s % 2 == 1 && label(s) != label(s - 2); }
  int64_t width() const { return 2 * length + 1; }
};

template <typename T>
Sequence<T> sequence(const CtcProblem& p, const T* lp, int64_t b, IntArrayRef target_lengths, int64_t blank) {
  return {lp, p.batch, p.classes, b, p.targets.data_ptr<int64_t>() + p.target_start[static_cast<size_t>(b)],
          target_lengths[static_cast<size_t>(b)], blank};
}

// Fills alpha (steps x alpha_width, pre-filled with -inf) and returns the negative
// log-likelihood.
template <typename T>
T forward_sequence(const Sequence<T>& q, int64_t steps, T* alpha, int64_t alpha_width) {
  constexpr T inf = std::numeric_limits<T>::infinity();
  if (steps == 0) return q.length == 0 ? T(0) : inf;
  alpha[0] = q.lp(0, q.blank);
  if (q.length > 0) alpha[1] = q.lp(0, q.label(1));
  for (int64_t t = 1; t < steps; ++t) {
    const T* prev = alpha + (t - 1) * alpha_width;
    T* cur = alpha + t * alpha_width;
    for (int64_t s = 0; s < q.width(); ++s) {
      const T stay = prev[s], step = s > 0 ? prev[s - 1] : -inf, skip = q.skips(s) ? prev[s - 2] : -inf;
      cur[s] = log_add(stay, step, skip) + q.lp(t, q.label(s));
    }
  }
  const T* last = alpha + (steps - 1) * alpha_width;
  return -log_add(last[2 * q.length], q.length > 0 ? last[2 * q.length - 1] : -inf);
}

// The gradient rows t < steps of one sequence into grad (contiguous (T, N, C)): torch's
// exp(lp) - exp(log(alpha beta) + nll - lp), times the incoming gradient. That is the
// derivative with respect to the logits of a log_softmax whose output is log_probs (the
// documented use), not with respect to log_probs themselves.
template <typename T>
void backward_sequence(const Sequence<T>& q, int64_t steps, const T* alpha, int64_t alpha_width, T nll, T grad_out,
                       T* grad) {
  constexpr T inf = std::numeric_limits<T>::infinity();
  if (steps == 0) return;
  const int64_t width = q.width();
  auto g = [&](int64_t t, int64_t c) -> T& { return grad[(t * q.batch + q.b) * q.classes + c]; };
  for (int64_t t = 0; t < steps; ++t) {
    for (int64_t c = 0; c < q.classes; ++c) g(t, c) = -inf;  // log of the summed alpha*beta per class
  }
  std::vector<T> beta(static_cast<size_t>(2 * width), -inf);  // two rows: t + 1 and t
  T* next = beta.data();
  T* cur = beta.data() + width;
  const int64_t last = steps - 1;
  next[width - 1] = q.lp(last, q.blank);
  if (q.length > 0) next[width - 2] = q.lp(last, q.label(width - 2));
  for (int64_t s = 0; s < width; ++s) {
    T& acc = g(last, q.label(s));
    acc = log_add(acc, alpha[last * alpha_width + s] + next[s]);
  }
  for (int64_t t = last - 1; t >= 0; --t) {
    for (int64_t s = 0; s < width; ++s) {
      const T stay = next[s], step = s + 1 < width ? next[s + 1] : -inf,
              skip = s + 2 < width && q.skips(s + 2) ? next[s + 2] : -inf;
      cur[s] = log_add(stay, step, skip) + q.lp(t, q.label(s));
      T& acc = g(t, q.label(s));
      acc = log_add(acc, alpha[t * alpha_width + s] + cur[s]);
    }
    std::swap(next, cur);
  }
  for (int64_t t = 0; t < steps; ++t) {
    for (int64_t c = 0; c < q.classes; ++c) {
      const T lp = q.lp(t, c);
      T& v = g(t, c);
      v = (std::exp(lp) - std::exp(v + nll - lp)) * grad_out;
    }
  }
}

}  // namespace

std::tuple<Tensor, Tensor> _ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                                     IntArrayRef target_lengths, int64_t blank, bool zero_infinity) {
  (void)zero_infinity;  // the forward reports inf; ctc_loss and the backward apply it
  const CtcProblem p = check_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  const int64_t width = 2 * p.max_target + 1;
  Tensor nll = at::empty({p.batch}, log_probs.options());
  Tensor alpha = at::empty({p.batch, p.steps, width}, log_probs.options());
  dispatch_types<kFloating>(log_probs.scalar_type(), "ctc_loss_cpu", [&]<typename T>() {
    if (log_probs.is_meta()) return;
    alpha.fill_(-std::numeric_limits<double>::infinity());
    const Tensor lp = log_probs.contiguous();
    const T* lp_data = lp.data_ptr<T>();
    T* alpha_data = alpha.data_ptr<T>();
    T* nll_data = nll.data_ptr<T>();
    at::parallel_for(0, p.batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const Sequence<T> q = sequence(p, lp_data, b, target_lengths, blank);
        nll_data[b] = forward_sequence(q, input_lengths[static_cast<size_t>(b)], alpha_data + b * p.steps * width,
                                       width);
      }
    });
  });
  return {nll, alpha};
}

Tensor _ctc_loss_backward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                          IntArrayRef target_lengths, const Tensor& neg_log_likelihood, const Tensor& log_alpha,
                          int64_t blank, bool zero_infinity) {
  const CtcProblem p = check_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  const int64_t width = 2 * p.max_target + 1;
  TORCH_CHECK(log_alpha.dim() == 3 && log_alpha.size(0) == p.batch && log_alpha.size(1) == p.steps &&
                  log_alpha.size(2) == width && neg_log_likelihood.numel() == p.batch && grad.numel() == p.batch,
              "_ctc_loss_backward: grad, neg_log_likelihood and log_alpha must be _ctc_loss's for these inputs");
  Tensor result = at::zeros(log_probs.sizes(), log_probs.options());
  dispatch_types<kFloating>(log_probs.scalar_type(), "ctc_loss_backward_cpu", [&]<typename T>() {
    if (log_probs.is_meta()) return;
    const Tensor lp = log_probs.contiguous(), la = log_alpha.to(log_probs.scalar_type()).contiguous();
    const Tensor nll = neg_log_likelihood.to(log_probs.scalar_type()).contiguous();
    const Tensor gr = grad.to(log_probs.scalar_type()).contiguous();
    const T* lp_data = lp.data_ptr<T>();
    const T* la_data = la.data_ptr<T>();
    T* out = result.data_ptr<T>();
    at::parallel_for(0, p.batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const T loss = nll.data_ptr<T>()[b];
        // zero_infinity: an impossible target contributes no gradient (rows stay zero)
        if (zero_infinity && loss == std::numeric_limits<T>::infinity()) continue;
        backward_sequence(sequence(p, lp_data, b, target_lengths, blank), input_lengths[static_cast<size_t>(b)],
                          la_data + b * p.steps * width, width, loss, gr.data_ptr<T>()[b], out);
      }
    });
  });
  return result;
}

Tensor ctc_loss_IntList(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                        IntArrayRef target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  const bool batched = log_probs.dim() == 3;
  const Tensor lp = batched ? log_probs : log_probs.unsqueeze(1);
  Tensor loss = std::get<0>(at::_ctc_loss(lp, targets.to(c10::kLong), input_lengths, target_lengths, blank,
                                          zero_infinity));
  if (zero_infinity) loss = loss.masked_fill(loss.eq(std::numeric_limits<double>::infinity()), 0);
  if (reduction == at::Reduction::Mean) {
    const int64_t n = static_cast<int64_t>(target_lengths.size());
    Tensor host = at::empty({n}, TensorOptions().dtype(c10::kLong));
    std::copy(target_lengths.begin(), target_lengths.end(), host.data_ptr<int64_t>());
    Tensor lengths = at::empty({n}, loss.options());
    lengths.copy_(host);
    return (loss / lengths.clamp_min(1)).mean();
  }
  if (reduction == at::Reduction::Sum) return loss.sum();
  return batched ? loss : loss.squeeze(0);
}

Tensor ctc_loss_Tensor(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                       const Tensor& target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  TORCH_CHECK(c10::isIntegralType(input_lengths.scalar_type(), false), "input_lengths must be integral");
  TORCH_CHECK(c10::isIntegralType(target_lengths.scalar_type(), false), "target_lengths must be integral");
  return at::ctc_loss(log_probs, targets, host_int64_values(input_lengths), host_int64_values(target_lengths), blank,
                      reduction, zero_infinity);
}

}  // namespace at::inline tessera::native
