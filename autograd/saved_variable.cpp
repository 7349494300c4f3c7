#include <autograd/saved_variable.h>
#include <autograd/saved_variable_hooks.h>
#include <autograd/variable.h>

#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

namespace torch::autograd {

const char* const ERR_BACKWARD_TWICE =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
    "saved tensors after calling backward.";

namespace {
const char* legacy_type_name(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float: return "FloatTensor";
    case c10::ScalarType::Double: return "DoubleTensor";
    case c10::ScalarType::Half: return "HalfTensor";
    case c10::ScalarType::BFloat16: return "BFloat16Tensor";
    case c10::ScalarType::ComplexFloat: return "ComplexFloatTensor";
    case c10::ScalarType::ComplexDouble: return "ComplexDoubleTensor";
    case c10::ScalarType::Long: return "LongTensor";
    case c10::ScalarType::Int: return "IntTensor";
    case c10::ScalarType::Bool: return "BoolTensor";
    default: return "Tensor";
  }
}
}  // namespace

std::string describe_tensor_type(const Tensor& t) {
  std::string s = "[tessera.";
  if (t.is_cuda()) s += "cuda.";
  s += legacy_type_name(t.scalar_type());
  s += " [";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]]";
}

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  was_defined_ = true;
  is_output_ = is_output;
  wrapped_number_ = t.unsafeGetTensorImpl()->is_wrapped_number();
  saved_version_ = static_cast<uint32_t>(t._version());
  requires_grad_ = t.requires_grad();
  AutogradMeta* meta = impl::get_autograd_meta(t);
  is_leaf_ = !meta || !meta->grad_fn_;
  output_nr_ = meta ? meta->output_nr_ : 0;
  if (std::unique_ptr<SavedVariableHooks> hooks = saved_tensor_hooks::make_for_saved_tensor()) {
    // The hook sees the tensor as the forward made it (torch passes outputs with their
    // grad_fn); only its packed value is kept.
    pack_with(std::move(hooks), t);
    return;
  }
  // An output's grad_fn is the Node saving it: keeping the tensor itself would make a cycle.
  data_ = is_output_ && !is_leaf_ ? impl::tensor_data(t) : t;
}

void SavedVariable::register_hooks(std::unique_ptr<SavedVariableHooks> hooks) {
  TORCH_CHECK(!hooks_,
              "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair of "
              "hooks is allowed at a time.");
  TORCH_CHECK(!released_,
              "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
              "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
              "to backward through the graph a second time or if you need to access saved variables after calling "
              "backward.");
  TORCH_CHECK(was_defined_, "Calling register_hooks on a saved tensor with value None is forbidden");
  pack_with(std::move(hooks), data_);
  data_.reset();
}

// Keeps only hooks->pack(t), and what the hooked unpack needs to put the tensor back into
// the graph: an input's grad_fn or a leaf's accumulator (an output gets its Node back from
// the caller of unpack).
void SavedVariable::pack_with(std::unique_ptr<SavedVariableHooks> hooks, const Tensor& t) {
  if (!is_output_ || is_leaf_) {
    if (!is_leaf_) {
      hooked_grad_fn_ = impl::grad_fn(t);
    } else if (requires_grad_) {
      hooked_grad_accumulator_ = impl::grad_accumulator(t);
    }
  }
  {
    // As torch: the hook's own ops record no graph (an op on a saved output would
    // otherwise tie the packed value back to the Node holding it) and save nothing.
    at::NoGradGuard no_grad;
    hooks->call_pack_hook(t);
  }
  hooks_ = std::move(hooks);
}

void SavedVariable::reset_data() {
  data_.reset();
  hooks_.reset();
  hooked_grad_fn_.reset();
  released_ = true;
}

// Versions cannot be tracked through user hooks (torch does not check them either); the
// unpacked tensor gets the saved tensor's place in the graph back.
Tensor SavedVariable::unpack_hooked(const std::shared_ptr<Node>& saved_for) const {
  Tensor var = impl::tensor_data(hooks_->call_unpack_hook());
  if (is_output_ && !is_leaf_) {
    if (requires_grad_ && saved_for) impl::set_gradient_edge(var, Edge(saved_for, output_nr_));
  } else if (hooked_grad_fn_) {
    impl::set_gradient_edge(var, Edge(hooked_grad_fn_, output_nr_));
  } else if (is_leaf_ && requires_grad_) {
    std::shared_ptr<Node> accumulator = hooked_grad_accumulator_.lock();
    TORCH_CHECK(accumulator, "No grad accumulator for a saved leaf");
    AutogradMeta* meta = impl::materialize_autograd_meta(var);
    meta->requires_grad_ = true;
    meta->grad_accumulator_ = accumulator;
  }
  return var;
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& saved_for) const {
  if (!was_defined_) return Tensor();
  TORCH_CHECK(!released_, ERR_BACKWARD_TWICE);
  if (hooks_) return unpack_hooked(saved_for);
  uint32_t current = static_cast<uint32_t>(data_._version());
  if (current != saved_version_) {
    std::string which;
    if (is_output_ && !is_leaf_ && saved_for) {
      which = ", which is output " + std::to_string(output_nr_) + " of " + saved_for->name() + ",";
    } else if (const std::shared_ptr<Node>& fn = impl::grad_fn(data_)) {
      which = ", which is output " + std::to_string(data_.output_nr()) + " of " + fn->name() + ",";
    }
    TORCH_CHECK(false, "one of the variables needed for gradient computation has been modified by an inplace "
                       "operation: ", describe_tensor_type(data_), which, " is at version ", current,
                "; expected version ", saved_version_,
                " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                "with tessera.autograd.set_detect_anomaly(True).");
  }
  if (!is_output_ || is_leaf_) return data_;
  // The output again, with its history: a new alias so the Node's own copy stays bare.
  Tensor var = impl::tensor_data(data_);
  if (requires_grad_ && saved_for) impl::set_gradient_edge(var, Edge(saved_for, output_nr_));
  return var;
}

}  // namespace torch::autograd
