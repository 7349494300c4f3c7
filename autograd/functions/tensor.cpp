#include <autograd/functions/tensor.h>
#include <autograd/saved_variable.h>

#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

namespace torch::autograd {

TensorGeometry::TensorGeometry(const Tensor& t)
    : sizes(t.sizes().begin(), t.sizes().end()),
      strides(t.strides().begin(), t.strides().end()),
      storage_offset(t.storage_offset()),
      dtype(t.scalar_type()),
      device(t.device()),
      is_conj(t.is_conj()),
      is_neg(t.is_neg()) {}

Tensor TensorGeometry::empty_like() const {
  return at::empty_strided(sizes, strides, at::TensorOptions().dtype(dtype).device(device));
}

namespace {
bool overlaps_itself(const TensorGeometry& g) {
  for (size_t i = 0; i < g.sizes.size(); ++i) {
    if (g.sizes[i] > 1 && g.strides[i] == 0) return true;
  }
  return false;
}

// The view's geometry over base_like (a tensor laid out as the base). A real view of a
// complex base (view_as_real, real, imag and views of those) counts its strides and
// offset in reals: it is placed over base_like's real view, offsets in reals too.
Tensor strided_view_of(const Tensor& base_like, const TensorGeometry& base, const TensorGeometry& view) {
  if (view.dtype == base.dtype) {
    return base_like.as_strided(view.sizes, view.strides,
                                base_like.storage_offset() + view.storage_offset - base.storage_offset);
  }
  TORCH_CHECK_NOT_IMPLEMENTED(c10::isComplexType(base.dtype) && c10::toRealValueType(base.dtype) == view.dtype,
                              "the gradient through an in-place write to a ", view.dtype, " view of a ", base.dtype,
                              " tensor is not supported (only real views of complex tensors are)");
  Tensor reals = at::view_as_real(base_like);
  return reals.as_strided(view.sizes, view.strides,
                          reals.storage_offset() + view.storage_offset - 2 * base.storage_offset);
}

// base_like holds logical values laid out as base; the result reads them as the view does.
Tensor view_of(const Tensor& base_like, const TensorGeometry& base, const TensorGeometry& view) {
  Tensor v = strided_view_of(base_like, base, view);
  if (view.is_conj != base.is_conj) v = at::_conj(v);
  if (view.is_neg != base.is_neg) v = at::_neg_view(v);
  return v;
}
}  // namespace

Tensor view_grad_to_base(const Tensor& grad, const TensorGeometry& base, const TensorGeometry& view) {
  TORCH_CHECK_NOT_IMPLEMENTED(!overlaps_itself(view),
                              "the gradient through an in-place write to a view whose elements overlap (an expanded "
                              "tensor) is not supported");
  Tensor result = base.empty_like();
  result.zero_();
  view_of(result, base, view).copy_(grad);
  return result;
}

variable_list AsStridedBackward0::apply(variable_list&& grads) {
  if (!grads[0].defined() || !should_compute_output(0)) return {Tensor()};
  return {view_grad_to_base(grads[0], base_, view_)};
}

CopySlices::CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn)
    : base_(base), view_(view), fn_(std::move(fn)) {
  // Input 0 of the in-place op was the view; its grad now goes to the base's old history.
  // The op's other inputs keep their edges.
  const edge_list& fn_edges = fn_->next_edges();
  next_edges_.reserve(fn_edges.size());
  next_edges_.push_back(Edge());  // set by the caller to the base's gradient edge
  for (size_t i = 1; i < fn_edges.size(); ++i) next_edges_.push_back(fn_edges[i]);
}

variable_list CopySlices::apply(variable_list&& grads) {
  const Tensor& grad = grads[0];
  TORCH_CHECK(fn_ != nullptr, ERR_BACKWARD_TWICE);
  if (!grad.defined()) return variable_list(num_outputs());
  Tensor result = base_.empty_like();
  result.copy_(grad);
  Tensor grad_slice = view_of(result, base_, view_);
  variable_list res = (*fn_)({grad_slice.clone()});
  variable_list outputs(num_outputs());
  for (size_t i = 0; i < res.size() && i < outputs.size(); ++i) {
    if (i == 0) {
      if (res[0].defined()) {
        grad_slice.copy_(res[0]);
      } else {
        grad_slice.zero_();
      }
      outputs[0] = result;
    } else {
      outputs[i] = std::move(res[i]);
    }
  }
  return outputs;
}

// Drops the in-place op's Node rather than emptying it: with create_graph, the graph built
// by the first backward can reach that Node directly (through the op's saved output), and a
// later backward over that graph still needs its saved tensors. Unshared, it goes now.
void CopySlices::release_variables() { fn_.reset(); }

}  // namespace torch::autograd
