#include <autograd/functions/accumulate_grad.h>
#include <autograd/variable.h>

#include <aten/core/TensorOperators.h>
#include <aten/core/TensorUtils.h>
#include <c10/core/ThreadLocalState.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <vector>

namespace torch::autograd {

namespace {

// torch's gradient layout contract: a stored grad has its parameter's strides when the
// parameter is non-overlapping and dense (contiguous, channels-last, transposed, any
// permutation), else contiguous ones. A Linear weight's grad arrives as a transposed
// view; kept as it is, fused optimizer updates and the parameter-shaped arithmetic after
// it would walk it against the grain.
bool obeys_layout(const Tensor& grad, const Tensor& variable) {
  if (c10::isSparseLayout(grad.layout())) return true;  // no strides to obey
  if (c10::isSparseLayout(variable.layout())) return grad.is_contiguous();
  // (a contiguous parameter, the common case, asks exactly for a contiguous grad)
  if (variable.is_contiguous() || !at::is_non_overlapping_and_dense(variable)) return grad.is_contiguous();
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (grad.size(d) != 1 && grad.stride(d) != variable.stride(d)) return false;
  }
  return true;
}

// A copy of grad laid out as the contract asks (a sparse grad: a copy of it).
Tensor laid_out(const Tensor& grad, const Tensor& variable) {
  if (c10::isSparseLayout(grad.layout())) return grad.clone();
  if (variable.is_contiguous() || !at::is_non_overlapping_and_dense(variable)) return grad.clone(at::MemoryFormat::Contiguous);
  return at::empty_strided(variable.sizes(), variable.strides(), grad.options()).copy_(grad);
}

thread_local PendingLeafGrads* tl_pending = nullptr;

}  // namespace

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  // Leaves get no sequence number order of their own: they run as soon as they are ready.
  sequence_nr_ = UINT64_MAX;
  add_input_metadata(variable_);
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  std::unique_lock<std::mutex> lock(mutex());  // backward passes on several threads may share a leaf
  grads = impl::run_leaf_hooks(variable_, std::move(grads));
  if (grads.empty() || !grads[0].defined() || !variable_.requires_grad()) return {};
  if (consumer_ && consumer_(grads[0])) return {};
  Tensor new_grad = std::move(grads[0]);
  // (nested add takes packed operands only: a grad through a nested view is packed first)
  if (C10_UNLIKELY(new_grad.is_nested())) new_grad = new_grad.contiguous();
  if (c10::GradMode::is_enabled()) {
    // create_graph: the stored grad keeps its history, and is replaced rather than updated.
    Tensor& grad = impl::materialize_autograd_meta(variable_)->grad_;
    if (!grad.defined()) {
      grad = laid_out(new_grad, variable_);
    } else {
      grad = c10::isSparseLayout(grad.layout()) && new_grad.layout() == c10::kStrided ? new_grad + grad : grad + new_grad;
    }
    return {};
  }
  // The engine hands over a grad nobody else holds: keep it rather than copy it.
  bool owned = new_grad.use_count() == 1 && obeys_layout(new_grad, variable_) && !impl::is_view(new_grad);
  const bool first = !impl::materialize_autograd_meta(variable_)->grad_.defined();
  if (first && !owned) {
    new_grad = laid_out(impl::tensor_data(new_grad), variable_);
    owned = true;
  }
  if (tl_pending != nullptr) {
    lock.unlock();
    tl_pending->entries_.push_back({shared_from_this(), std::move(new_grad), owned});
    return {};
  }
  store(std::move(new_grad), owned);
  return {};
}

void AccumulateGrad::store(Tensor new_grad, bool owned) {
  Tensor& grad = impl::materialize_autograd_meta(variable_)->grad_;
  if (grad.defined()) {
    // A sparse grad meeting a dense one: the sum is dense (torch keeps it so, too).
    if (c10::isSparseLayout(grad.layout())) {
      grad = impl::tensor_data(new_grad.layout() == c10::kStrided ? new_grad + grad : grad + new_grad);
    } else {
      grad.add_(new_grad);
    }
  } else if (owned) {
    grad = impl::tensor_data(new_grad);
  } else {
    // Only when another thread cleared .grad while this pass ran.
    grad = laid_out(impl::tensor_data(new_grad), variable_);
  }
}

PendingLeafGrads::PendingLeafGrads() : previous_(tl_pending) { tl_pending = this; }

PendingLeafGrads::~PendingLeafGrads() { tl_pending = previous_; }

void PendingLeafGrads::commit() {
  tl_pending = previous_;
  for (Entry& e : entries_) {
    auto& acc = static_cast<AccumulateGrad&>(*e.node);
    std::lock_guard<std::mutex> lock(acc.mutex());
    acc.store(std::move(e.grad), e.owned);
  }
  entries_.clear();
}

}  // namespace torch::autograd
