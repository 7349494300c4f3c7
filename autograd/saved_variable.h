// SavedVariable: a tensor a backward formula needs, kept with the version it had when
// saved. Unpacking after an in-place write to it (or any alias) fails with torch's
// message, as does unpacking after the graph was freed by a backward without
// retain_graph. An op's own output is kept without its autograd state (which would point
// back at the Node holding it) and gets its history back when unpacked. Under
// saved-tensor hooks only the hooks' packed value is kept (saved_variable_hooks.h).
#pragma once

#include <autograd/function.h>

#include <memory>

namespace torch::autograd {

struct SavedVariableHooks;

class TORCH_API SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);

  // The saved tensor; `saved_for` is the Node holding it (the grad_fn an output gets back).
  Tensor unpack(const std::shared_ptr<Node>& saved_for = nullptr) const;
  void reset_data();
  bool defined() const { return was_defined_; }
  // A number the op was called with, kept as a wrapped-number tensor (Python sees the number).
  bool is_wrapped_number() const { return wrapped_number_; }
  // SavedTensor.register_hooks: packs the saved tensor now and keeps only the packed value
  // (torch's errors for a second pair, a released tensor and an undefined one).
  void register_hooks(std::unique_ptr<SavedVariableHooks> hooks);

 private:
  Tensor unpack_hooked(const std::shared_ptr<Node>& saved_for) const;
  void pack_with(std::unique_ptr<SavedVariableHooks> hooks, const Tensor& t);

  Tensor data_;
  // With hooks: the hooks (holding the packed value) and what the unpacked tensor needs to
  // rejoin the graph: an input's grad_fn, or a saved leaf's gradient accumulator.
  std::shared_ptr<SavedVariableHooks> hooks_;
  std::shared_ptr<Node> hooked_grad_fn_;
  std::weak_ptr<Node> hooked_grad_accumulator_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool was_defined_ = false;
  bool is_output_ = false;
  bool wrapped_number_ = false;
  bool is_leaf_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
};

// torch's error for using saved tensors (or a Node's state) after a backward without
// retain_graph freed them.
TORCH_API extern const char* const ERR_BACKWARD_TWICE;

// The ", which is output 0 of MulBackward0" part of the version error, and the
// "[tessera.FloatTensor [3]]" description of a tensor.
TORCH_API std::string describe_tensor_type(const Tensor& t);

}  // namespace torch::autograd
