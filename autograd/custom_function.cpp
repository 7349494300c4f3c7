#include <autograd/custom_function.h>
#include <autograd/variable.h>

#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <memory>

namespace torch::autograd {

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

void AutogradContext::mark_dirty(const variable_list& inputs) {
  dirty_inputs_.clear();
  for (const auto& t : inputs) dirty_inputs_.insert(t.unsafeGetTensorImpl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  non_differentiable_.clear();
  for (const auto& t : outputs) non_differentiable_.insert(t.unsafeGetTensorImpl());
}

const std::unordered_set<c10::TensorImpl*>& AutogradContext::get_and_bump_dirty() const {
  // forward wrote these under no_grad (no ADInplaceOrView bump): later readers of a version
  // saved before must see the change.
  for (c10::TensorImpl* t : dirty_inputs_) t->bump_version();
  return dirty_inputs_;
}

void AutogradContext::save_variables() {
  saved_variables_.clear();
  const std::shared_ptr<Node> fn = grad_fn_.lock();
  for (const auto& t : to_save_) {
    const bool is_output = t.defined() && fn && impl::get_autograd_meta(t) && impl::grad_fn(t) == fn;
    saved_variables_.emplace_back(t, is_output);
  }
  to_save_.clear();
}

variable_list AutogradContext::get_saved_variables() const {
  TORCH_CHECK(!has_freed_buffers_, ERR_BACKWARD_TWICE);
  const std::shared_ptr<Node> fn = grad_fn_.lock();
  variable_list out;
  out.reserve(saved_variables_.size());
  for (const auto& v : saved_variables_) out.push_back(v.unpack(fn));
  return out;
}

bool AutogradContext::needs_input_grad(size_t index) const {
  const std::shared_ptr<Node> fn = grad_fn_.lock();
  if (!fn || index >= edge_of_input_.size() || edge_of_input_[index] < 0) return false;
  return fn->should_compute_output(static_cast<size_t>(edge_of_input_[index]));
}

void AutogradContext::release_variables() {
  saved_variables_.clear();
  has_freed_buffers_ = true;
}

std::vector<int> detail::edge_indices(const std::vector<bool>& is_tensor_input) {
  std::vector<int> out;
  out.reserve(is_tensor_input.size());
  int next = 0;
  for (bool is_tensor : is_tensor_input) out.push_back(is_tensor ? next++ : -1);
  return out;
}

namespace {

// A new alias of `t` with its own (empty) autograd state: an input returned unchanged
// must not hand the caller the input itself, whose history is not this Function's.
Tensor alias_without_grad(const Tensor& t) {
  c10::AutoGradMode no_grad(false);
  return t.view_as(t);
}

bool contains(const std::unordered_set<c10::TensorImpl*>& set, const Tensor& t) {
  return set.count(t.unsafeGetTensorImpl()) > 0;
}

}  // namespace

std::vector<std::optional<Tensor>> wrap_outputs(const variable_list& inputs,
                                                const std::unordered_set<c10::TensorImpl*>& non_differentiable,
                                                const std::unordered_set<c10::TensorImpl*>& dirty,
                                                const std::vector<std::optional<Tensor>>& raw_outputs,
                                                const std::shared_ptr<Node>& node) {
  std::unordered_set<c10::TensorImpl*> input_impls;
  for (const auto& t : inputs) {
    if (t.defined()) input_impls.insert(t.unsafeGetTensorImpl());
  }
  size_t num_tensor_outputs = 0;
  for (const auto& o : raw_outputs) num_tensor_outputs += o && o->defined();

  std::vector<std::optional<Tensor>> outputs;
  outputs.reserve(raw_outputs.size());
  for (const auto& raw : raw_outputs) {
    if (!raw || !raw->defined()) {
      if (node) node->add_input_metadata_undefined();
      outputs.push_back(raw);
      continue;
    }
    Tensor var = *raw;
    const bool is_input = contains(input_impls, var);
    const bool is_modified = contains(dirty, var);
    const bool differentiable = node && !contains(non_differentiable, var) &&
                                (c10::isFloatingType(var.scalar_type()) || c10::isComplexType(var.scalar_type()));
    if (!differentiable) {
      // Its metadata still lets backward see zeros for it (materialize_grads), as in torch.
      if (node) node->add_input_metadata(var);
      if (!var.requires_grad()) {
        if (is_input && !is_modified) var = alias_without_grad(var);
      } else if (is_input) {
        var = impl::tensor_data(var);  // a detached alias: the caller's input keeps requires_grad
      } else if (!impl::is_view(var)) {
        impl::detach_in_place(var);
      }
    } else if (is_modified) {
      TORCH_CHECK(!(var.is_leaf() && var.requires_grad()),
                  "a leaf Variable that requires grad is being used in an in-place operation.");
      TORCH_CHECK(!(impl::is_view(var) && num_tensor_outputs > 1),
                  "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
                  "return more than one Tensor. This is not supported by the current autograd engine. You should "
                  "either make sure the input is not a view (using .clone() for example) or make your Function only "
                  "return one Tensor (potentially splitting it into two Functions: one doing the inplace that returns "
                  "a single Tensor and a second one that does the other operations). You can ask on the forum "
                  "https://discuss.pytorch.org/ if you need help to do this change.");
      impl::rebase_history(var, node);
    } else {
      if (is_input) var = alias_without_grad(var);
      impl::set_history(var, node);
    }
    outputs.emplace_back(std::move(var));
  }
  // An input written in place but not returned would keep a history that ignores the write.
  size_t dirty_returned = 0;
  for (const auto& raw : raw_outputs) dirty_returned += raw && raw->defined() && contains(dirty, *raw);
  TORCH_CHECK(dirty_returned >= dirty.size(),
              "Some elements marked as dirty during the forward method were not returned as output. The inputs that "
              "are modified inplace must all be outputs of the Function.");
  return outputs;
}

variable_list grads_for_tensor_inputs(const std::string& name, variable_list grads,
                                      const std::vector<bool>& is_tensor_input) {
  const size_t expected = is_tensor_input.size();
  // Returning too many results is fine as long as the extra ones are all undefined.
  if (grads.size() > expected) {
    bool extra_undefined = true;
    for (size_t i = expected; i < grads.size(); ++i) extra_undefined = extra_undefined && !grads[i].defined();
    if (extra_undefined) grads.resize(expected);
  }
  TORCH_CHECK(grads.size() == expected, "function ", name, " returned an incorrect number of gradients (expected ",
              expected, ", got ", grads.size(), ")");
  variable_list out;
  out.reserve(expected);
  for (size_t i = 0; i < expected; ++i) {
    if (is_tensor_input[i]) {
      out.push_back(std::move(grads[i]));
      continue;
    }
    TORCH_CHECK(!grads[i].defined(), "function ", name, " returned a gradient different than None at position ", i + 1,
                ", but the corresponding forward input was not a Variable");
  }
  return out;
}

variable_list materialize_grads(const Node& node, variable_list grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined() && i < node.num_inputs() && node.input_metadata(i).defined) {
      grads[i] = node.input_metadata(i).zeros_like();
    }
  }
  return grads;
}

}  // namespace torch::autograd
