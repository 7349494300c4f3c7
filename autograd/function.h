// Node: one step of the backward graph. A forward op that needs grad records a Node
// holding what its derivative formula needs; apply() maps the grads of the op's outputs
// to the grads of its inputs, which travel along next_edges() to the Nodes that made
// those inputs (or to AccumulateGrad for leaves).
#pragma once

#include <aten/core/Tensor.h>
#include <autograd/edge.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace torch::autograd {

using at::Tensor;
using variable_list = std::vector<at::Tensor>;
using tensor_list = std::vector<at::Tensor>;

// What a Node remembers about each forward output (its backward input), so the engine can
// check and fit the grads it receives: sum a broadcast grad down to this shape, cast it
// to this dtype, or make zeros when a grad is missing.
struct InputMetadata {
  InputMetadata() = default;
  explicit InputMetadata(const Tensor& t)
      : shape(t.sizes().begin(), t.sizes().end()),
        dtype(t.scalar_type()),
        device(t.device()),
        layout(t.layout()),
        is_nested(t.is_nested()),
        defined(true) {
    if (C10_UNLIKELY(is_nested)) record_nested_sizes(t);
  }
  Tensor zeros_like() const;
  // Whether `grad` is a plain tensor of this metadata's layout: the common case, decided
  // without building a message (the engine asks for every edge of every Node).
  bool plain_kind_matches(const Tensor& grad) const {
    return !is_nested && !grad.is_nested() && grad.layout() == layout;
  }
  // Raises unless `grad` fits this metadata in kind (nested or not, layout) and, for a
  // nested tensor, in its components' shapes; `what` begins the message.
  void check_kind(const Tensor& grad, const std::string& what) const;
  void record_nested_sizes(const Tensor& t);

  std::vector<int64_t> shape;
  c10::ScalarType dtype = c10::ScalarType::Float;
  c10::Device device{c10::DeviceType::CPU};
  c10::Layout layout = c10::kStrided;
  bool is_nested = false;  // a nested tensor's shape above is its buffer's, not its components'
  std::vector<std::vector<int64_t>> nested_sizes;  // a nested tensor's component shapes
  bool defined = false;  // false for an output that takes no grad (an integer output)
};

// Raises unless a hook's result has the type (dtype, layout, nestedness), device and shape
// of the grad it replaced, as torch checks ("hook 'hook' has changed the ... of value").
void check_hook_result(const Tensor& original, const Tensor& result);

// A hook on a Node's incoming grads (before apply) or on its results (after).
using FunctionPreHook = std::function<variable_list(const variable_list& grads)>;
using FunctionPostHook = std::function<variable_list(const variable_list& grad_inputs, const variable_list& grad_outputs)>;

// Monotonic per-thread counter: later forward ops run first in backward.
uint64_t next_sequence_nr();

class TORCH_API Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(edge_list next_edges = {});
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Runs the pre-hooks, apply() and the post-hooks.
  variable_list operator()(variable_list&& grads);
  virtual variable_list apply(variable_list&& grads) = 0;
  // torch's names: "MulBackward0", "AccumulateGrad", ...
  virtual std::string name() const = 0;

  // --- the graph ---
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  const edge_list& next_edges() const { return next_edges_; }
  edge_list& mutable_next_edges() { return next_edges_; }
  void set_next_edges(edge_list edges) { next_edges_ = std::move(edges); }
  void add_next_edge(Edge e) { next_edges_.push_back(std::move(e)); }
  size_t num_outputs() const { return next_edges_.size(); }
  // Whether the grad of forward input i is wanted (its edge leads somewhere).
  bool should_compute_output(size_t i) const { return i < next_edges_.size() && next_edges_[i].is_valid(); }
  bool any_output_wanted(size_t begin, size_t n) const {
    for (size_t i = begin; i < begin + n; ++i) {
      if (should_compute_output(i)) return true;
    }
    return false;
  }

  // --- backward inputs (forward outputs) ---
  uint32_t add_input_metadata(const Tensor& t);
  void add_input_metadata_undefined() { input_metadata_.emplace_back(); }
  const InputMetadata& input_metadata(size_t i) const { return input_metadata_[i]; }
  size_t num_inputs() const { return input_metadata_.size(); }

  uint64_t sequence_nr() const { return sequence_nr_; }
  void set_sequence_nr(uint64_t nr) { sequence_nr_ = nr; }

  // --- hooks ---
  void add_pre_hook(FunctionPreHook hook) { pre_hooks_.push_back(std::move(hook)); }
  void add_post_hook(FunctionPostHook hook) { post_hooks_.push_back(std::move(hook)); }
  // Hooks on one backward input (tensor.register_hook on a non-leaf lands here); they run
  // before the Node's own pre-hooks and may replace the grad.
  unsigned add_tensor_pre_hook(uint32_t input_nr, std::function<Tensor(const Tensor&)> hook);
  void remove_tensor_pre_hook(unsigned handle);
  bool has_tensor_pre_hooks() const { return !tensor_pre_hooks_.empty(); }
  // Runs the tensor pre-hooks of every input on `grads` (used also for captured grads).
  void run_tensor_pre_hooks(variable_list& grads);
  // retain_grad() on a non-leaf output: grads[input_nr] is stored into that tensor's .grad.
  void set_retains_grad_hook(uint32_t input_nr, std::function<void(const Tensor&)> hook);

  // Frees saved tensors (the engine calls it after a backward without retain_graph).
  virtual void release_variables() {}

  // Anomaly mode: the forward call that created this Node.
  void set_anomaly_trace(std::string trace) { anomaly_trace_ = std::move(trace); }
  const std::string& anomaly_trace() const { return anomaly_trace_; }

  std::mutex& mutex() { return mutex_; }

 protected:
  uint64_t sequence_nr_;
  edge_list next_edges_;
  std::vector<InputMetadata> input_metadata_;

 private:
  struct TensorPreHook {
    unsigned handle;
    uint32_t input_nr;
    std::function<Tensor(const Tensor&)> fn;
  };
  std::vector<FunctionPreHook> pre_hooks_;
  std::vector<FunctionPostHook> post_hooks_;
  std::vector<TensorPreHook> tensor_pre_hooks_;
  std::vector<std::pair<uint32_t, std::function<void(const Tensor&)>>> retains_grad_hooks_;
  std::string anomaly_trace_;
  std::mutex mutex_;
};

// Destroys a Node without recursion: a graph of a 100,000-op chain would otherwise
// overflow the stack, each Node's destructor releasing the next. Every graph Node is
// owned through a shared_ptr made with this deleter (see make_node).
TORCH_API void deleteNode(Node* node);

template <typename T, typename... Args>
std::shared_ptr<T> make_node(Args&&... args) {
  return std::shared_ptr<T>(new T(std::forward<Args>(args)...), deleteNode);
}

// Edges to where grads of these tensors go (their grad_fn, or AccumulateGrad for leaves
// that require grad; an invalid Edge for undefined or null tensors and those needing no grad).
TORCH_API void append_edges(edge_list& edges, std::initializer_list<const Tensor*> tensors);
TORCH_API void append_edges(edge_list& edges, at::ArrayRef<Tensor> tensors);
// A nested tensor's component shapes, nullopt for any other tensor: what a view's
// backward needs of a nested input (derivatives.yaml's `self.nested_sizes()`).
TORCH_API std::optional<std::vector<std::vector<int64_t>>> nested_sizes_or_none(const Tensor& t);

inline edge_list collect_next_edges(std::initializer_list<const Tensor*> tensors) {
  edge_list edges;
  edges.reserve(tensors.size());
  append_edges(edges, tensors);
  return edges;
}

}  // namespace torch::autograd
