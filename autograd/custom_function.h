// Custom autograd Functions: torch::autograd::Function<T>, whose T supplies static
// forward(AutogradContext*, args...) and backward(AutogradContext*, variable_list), and
// the context they share. Python's tessera.autograd.Function reuses AutogradContext and
// wrap_outputs, so both kinds of Function follow the same rules (torch's).
#pragma once

#include <aten/core/IValue.h>
#include <autograd/function.h>
#include <autograd/saved_variable.h>

#include <c10/core/ThreadLocalState.h>
#include <c10/util/Demangle.h>

#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace torch::autograd {

// What forward() leaves for backward(): saved tensors (kept as SavedVariables, so an
// in-place write after saving is caught), other data, and which tensors were written in
// place or give no grad.
struct TORCH_API AutogradContext {
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // Anything else backward needs (scalars, shapes), by name.
  std::unordered_map<std::string, c10::IValue> saved_data;

  // Tensors (inputs or outputs of forward) to get back in backward; call once, in forward.
  void save_for_backward(variable_list to_save);
  // Inputs that forward modified in place.
  void mark_dirty(const variable_list& inputs);
  // Outputs that get no grad (integer indices, masks).
  void mark_non_differentiable(const variable_list& outputs);
  // Whether undefined incoming grads reach backward as zeros (true, the default) or undefined.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  bool materialize_grads() const { return materialize_grads_; }

  // The saved tensors, checked against in-place writes since they were saved.
  variable_list get_saved_variables() const;
  // Whether the grad of forward input `index` (counting every argument) is wanted.
  bool needs_input_grad(size_t index) const;

  // --- used by Function<T>::apply and the Python binding ---
  const std::unordered_set<c10::TensorImpl*>& get_and_bump_dirty() const;
  const std::unordered_set<c10::TensorImpl*>& get_non_differentiable() const { return non_differentiable_; }
  // Turns the tensors given to save_for_backward into SavedVariables (after forward, once
  // the outputs have their history, so a saved output is recognised as one).
  void save_variables();
  void set_grad_fn(const std::shared_ptr<Node>& node) { grad_fn_ = node; }
  // Forward input i (any argument) -> index of its edge, or -1 for a non-tensor argument.
  void set_input_edges(std::vector<int> edge_of_input) { edge_of_input_ = std::move(edge_of_input); }
  void release_variables();

 private:
  variable_list to_save_;
  std::vector<SavedVariable> saved_variables_;
  std::unordered_set<c10::TensorImpl*> dirty_inputs_;
  std::unordered_set<c10::TensorImpl*> non_differentiable_;
  std::weak_ptr<Node> grad_fn_;
  std::vector<int> edge_of_input_;
  bool materialize_grads_ = true;
  bool has_freed_buffers_ = false;
};

// Gives forward's raw outputs their autograd state, by torch's rules: a differentiable
// output gets `node` (null when nothing needs a grad) as grad_fn; an input returned
// unchanged comes back as a new alias (so the input keeps its own history); an input marked
// dirty gets its history rebased onto `node`; non-differentiable outputs get none. Records
// each output's metadata on `node`.
TORCH_API std::vector<std::optional<at::Tensor>> wrap_outputs(const variable_list& inputs,
                                                              const std::unordered_set<c10::TensorImpl*>& non_differentiable,
                                                              const std::unordered_set<c10::TensorImpl*>& dirty,
                                                              const std::vector<std::optional<at::Tensor>>& raw_outputs,
                                                              const std::shared_ptr<Node>& node);

// Checks backward's results against forward's arguments (torch's messages) and keeps the
// grads of tensor arguments: one per forward argument, extra undefined ones allowed.
TORCH_API variable_list grads_for_tensor_inputs(const std::string& name, variable_list grads,
                                                const std::vector<bool>& is_tensor_input);

// Undefined incoming grads as zeros shaped like the forward outputs (materialize_grads).
TORCH_API variable_list materialize_grads(const Node& node, variable_list grads);

template <class T>
struct CppNode : public Node {
  variable_list apply(variable_list&& grads) override {
    variable_list inputs = ctx_.materialize_grads() ? materialize_grads(*this, std::move(grads)) : std::move(grads);
    std::lock_guard<std::mutex> lock(mutex());
    return grads_for_tensor_inputs(name(), T::backward(&ctx_, std::move(inputs)), is_tensor_input_);
  }
  std::string name() const override { return c10::demangle(typeid(T).name()); }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex());  // not while another thread's apply reads them
    ctx_.release_variables();
  }

  AutogradContext ctx_;
  std::vector<bool> is_tensor_input_;
};

namespace detail {
// Forward's arguments as backward sees them: a Tensor is one grad slot, a defined optional
// Tensor too, a list of tensors one slot per element; anything else a slot whose grad
// must be undefined.
inline void collect_tensor_args(std::vector<bool>&, variable_list&) {}
template <typename A, typename... Rest>
void collect_tensor_args(std::vector<bool>& is_tensor, variable_list& tensors, const A& arg, const Rest&... rest) {
  using D = std::decay_t<A>;
  if constexpr (std::is_same_v<D, at::Tensor>) {
    is_tensor.push_back(true);
    tensors.push_back(arg);
  } else if constexpr (std::is_same_v<D, std::optional<at::Tensor>>) {
    const bool present = arg.has_value() && arg->defined();
    is_tensor.push_back(present);
    if (present) tensors.push_back(*arg);
  } else if constexpr (std::is_same_v<D, variable_list> || std::is_same_v<D, at::ArrayRef<at::Tensor>>) {
    for (const at::Tensor& t : arg) {
      is_tensor.push_back(true);
      tensors.push_back(t);
    }
  } else {
    is_tensor.push_back(false);
  }
  collect_tensor_args(is_tensor, tensors, rest...);
}
TORCH_API std::vector<int> edge_indices(const std::vector<bool>& is_tensor_input);
}  // namespace detail

// A differentiable operation written by the user:
//   struct Scale : torch::autograd::Function<Scale> {
//     static Tensor forward(AutogradContext* ctx, Tensor x, double f) { ctx->saved_data["f"] = f; return x * f; }
//     static variable_list backward(AutogradContext* ctx, variable_list g) {
//       return {g[0] * ctx->saved_data["f"].toDouble(), Tensor()};
//     }
//   };
//   Tensor y = Scale::apply(x, 2.0);
// forward runs without grad mode; it returns a Tensor or a variable_list, and apply
// returns the same. backward returns one grad per forward argument (undefined for
// non-tensor arguments and inputs that need none; one per element of a tensor list).
template <class T>
struct Function {
  template <typename... Args>
  static auto apply(Args&&... args) {
    std::shared_ptr<CppNode<T>> node(new CppNode<T>(), deleteNode);
    variable_list inputs;
    detail::collect_tensor_args(node->is_tensor_input_, inputs, args...);
    node->ctx_.set_input_edges(detail::edge_indices(node->is_tensor_input_));
    bool executable = c10::GradMode::is_enabled();
    if (executable) {
      executable = false;
      for (const auto& t : inputs) executable = executable || (t.defined() && t.requires_grad());
    }
    if (executable) {
      edge_list edges;
      append_edges(edges, inputs);
      node->set_next_edges(std::move(edges));
    }
    node->ctx_.set_grad_fn(node);
    using Result = decltype(T::forward(&node->ctx_, std::forward<Args>(args)...));
    static_assert(std::is_same_v<Result, at::Tensor> || std::is_same_v<Result, variable_list>,
                  "Function<T>::forward must return a Tensor or a variable_list");
    Result raw;
    {
      c10::AutoGradMode no_grad(false);
      raw = T::forward(&node->ctx_, std::forward<Args>(args)...);
    }
    std::vector<std::optional<at::Tensor>> outs;
    if constexpr (std::is_same_v<Result, at::Tensor>) {
      outs.emplace_back(raw);
    } else {
      for (auto& t : raw) outs.emplace_back(t);
    }
    auto wrapped = wrap_outputs(inputs, node->ctx_.get_non_differentiable(), node->ctx_.get_and_bump_dirty(), outs,
                                executable ? std::shared_ptr<Node>(node) : nullptr);
    if (executable) node->ctx_.save_variables();
    if constexpr (std::is_same_v<Result, at::Tensor>) {
      return wrapped[0].value_or(at::Tensor());
    } else {
      variable_list result;
      result.reserve(wrapped.size());
      for (auto& t : wrapped) result.push_back(t.value_or(at::Tensor()));
      return result;
    }
  }
};

}  // namespace torch::autograd
