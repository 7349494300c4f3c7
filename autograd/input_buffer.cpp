#include <autograd/input_buffer.h>

#include <aten/core/TensorOperators.h>
#include <aten/ops/Functions.h>

namespace torch::autograd {

void InputBuffer::add(size_t pos, Tensor grad) {
  if (!grad.defined()) return;
  Tensor& slot = buffer_[pos];
  if (!slot.defined()) {
    slot = std::move(grad);
  } else {
    // Out of place: either grad may still be referenced elsewhere (a hook kept it, or it
    // is a saved grad of a create_graph pass).
    // (a sparse slot meeting a dense grad: dense + sparse is the form that exists, as in torch)
    if (C10_UNLIKELY(slot.is_nested())) {  // nested add takes packed operands only, as torch's
      slot = slot.contiguous();
      grad = grad.contiguous();
    }
    slot = c10::isSparseLayout(slot.layout()) && grad.layout() == c10::kStrided ? grad + slot : slot + grad;
  }
}

}  // namespace torch::autograd
