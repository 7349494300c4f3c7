#include <autograd/function.h>
#include <autograd/variable.h>

#include <aten/core/NamedTensorUtils.h>
#include <aten/core/NestedTensorImpl.h>
#include <aten/ops/Functions.h>

#include <atomic>

namespace torch::autograd {

namespace {
// One counter for all threads: a later op on any thread gets a larger number, and backward
// runs larger numbers first, so hooks and errors follow reverse forward order.
std::atomic<uint64_t> g_sequence_nr{0};
}  // namespace

uint64_t next_sequence_nr() { return g_sequence_nr.fetch_add(1, std::memory_order_relaxed); }

namespace {
std::vector<std::vector<int64_t>> component_sizes(const Tensor& t) {
  const at::NestedTensorImpl* nt = at::get_nested_impl(t);
  return nt ? nt->component_sizes() : std::vector<std::vector<int64_t>>{};
}

std::string sizes_string(const std::vector<std::vector<int64_t>>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + c10::str(c10::IntArrayRef(sizes[i]));
  return s + "]";
}
}  // namespace

void InputMetadata::record_nested_sizes(const Tensor& t) { nested_sizes = component_sizes(t); }

std::optional<std::vector<std::vector<int64_t>>> nested_sizes_or_none(const Tensor& t) {
  if (C10_LIKELY(!t.is_nested())) return std::nullopt;
  return component_sizes(t);
}

Tensor InputMetadata::zeros_like() const {
  TORCH_CHECK_NOT_IMPLEMENTED(!is_nested, "Zeros is not currently supported for nested tensors.");
  Tensor zeros = at::zeros(shape, at::TensorOptions().dtype(dtype).device(device));
  return layout == c10::kMkldnn ? zeros.to_mkldnn() : zeros;
}

void InputMetadata::check_kind(const Tensor& grad, const std::string& what) const {
  TORCH_CHECK(grad.is_nested() == is_nested, "Both grad and InputMetadata need to be either nested or non nested tensors.");
  // As torch: a sparse COO grad may reach any input, and a dense grad a sparse input.
  const bool layout_ok = grad.layout() == layout || grad.layout() == c10::kSparse ||
                         (grad.layout() == c10::kStrided && c10::isSparseLayout(layout));
  TORCH_CHECK(layout_ok, what, " - expected layout ", layout, " but got ", grad.layout());
  if (is_nested) {
    const auto got = component_sizes(grad);
    TORCH_CHECK(got == nested_sizes, what, " - got a nested tensor of shapes ", sizes_string(got),
                " but expected shapes ", sizes_string(nested_sizes));
  }
}

void check_hook_result(const Tensor& original, const Tensor& result) {
  auto kind = [](const Tensor& t) {
    return c10::str(t.is_nested() ? "nested " : "", t.layout(), " ", t.scalar_type());
  };
  TORCH_CHECK(result.scalar_type() == original.scalar_type() && result.layout() == original.layout() &&
                  result.is_nested() == original.is_nested(),
              "hook 'hook' has changed the type of value (was ", kind(original), " got ", kind(result), ")");
  TORCH_CHECK(result.device() == original.device(), "hook 'hook' has changed the type of value (was on ",
              original.device(), " got on ", result.device(), ")");
  TORCH_CHECK(result.sizes().equals(original.sizes()) && component_sizes(result) == component_sizes(original),
              "hook 'hook' has changed the size of value");
}

Node::Node(edge_list next_edges) : sequence_nr_(next_sequence_nr()), next_edges_(std::move(next_edges)) {}

Node::~Node() = default;

uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata_.emplace_back(t);
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

unsigned Node::add_tensor_pre_hook(uint32_t input_nr, std::function<Tensor(const Tensor&)> hook) {
  unsigned handle = impl::next_hook_handle();
  tensor_pre_hooks_.push_back({handle, input_nr, std::move(hook)});
  return handle;
}

void Node::remove_tensor_pre_hook(unsigned handle) {
  std::erase_if(tensor_pre_hooks_, [&](const TensorPreHook& h) { return h.handle == handle; });
}

void Node::set_retains_grad_hook(uint32_t input_nr, std::function<void(const Tensor&)> hook) {
  std::erase_if(retains_grad_hooks_, [&](const auto& h) { return h.first == input_nr; });
  retains_grad_hooks_.emplace_back(input_nr, std::move(hook));
}

void Node::run_tensor_pre_hooks(variable_list& grads) {
  for (const TensorPreHook& h : tensor_pre_hooks_) {
    if (h.input_nr >= grads.size() || !grads[h.input_nr].defined()) continue;
    Tensor replaced = h.fn(grads[h.input_nr]);
    if (replaced.defined()) {
      check_hook_result(grads[h.input_nr], replaced);
      grads[h.input_nr] = std::move(replaced);
    }
  }
  // retain_grad runs after the user's hooks, so .grad sees what they made of the grad.
  for (const auto& [nr, fn] : retains_grad_hooks_) {
    if (nr < grads.size() && grads[nr].defined()) fn(grads[nr]);
  }
  // (a root's named `gradient=` ends here: the formula and the grads it makes are unnamed)
  for (Tensor& g : grads) {
    if (C10_UNLIKELY(g.defined() && g.has_names())) g = at::rename(g, std::nullopt);
  }
}

variable_list Node::operator()(variable_list&& grads) {
  run_tensor_pre_hooks(grads);
  for (const FunctionPreHook& hook : pre_hooks_) {
    variable_list replaced = hook(grads);
    if (!replaced.empty()) grads = std::move(replaced);
  }
  if (post_hooks_.empty()) return apply(std::move(grads));
  // Post-hooks see the incoming grads too, so keep them (apply consumes its argument).
  variable_list incoming = grads;
  variable_list results = apply(std::move(grads));
  for (const FunctionPostHook& hook : post_hooks_) {
    variable_list replaced = hook(results, incoming);
    if (!replaced.empty()) results = std::move(replaced);
  }
  return results;
}

void deleteNode(Node* node) {
  // Edges whose Node this one holds the last reference to are taken out before it dies
  // and destroyed in a loop, so a long chain unwinds iteratively.
  std::vector<std::shared_ptr<Node>> pending;
  auto take_edges = [&pending](Node* n) {
    // Saved tensors often hold the previous Node too (a saved input's grad_fn): drop them
    // first so the edge below is the last reference.
    n->release_variables();
    for (Edge& e : n->mutable_next_edges()) {
      if (e.function && e.function.use_count() == 1) pending.push_back(std::move(e.function));
    }
  };
  take_edges(node);
  delete node;
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    if (n.use_count() == 1) take_edges(n.get());
    n.reset();
  }
}

void append_edges(edge_list& edges, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) edges.push_back(t && t->defined() ? impl::gradient_edge(*t) : Edge());
}

void append_edges(edge_list& edges, at::ArrayRef<Tensor> tensors) {
  for (const Tensor& t : tensors) edges.push_back(t.defined() ? impl::gradient_edge(t) : Edge());
}

}  // namespace torch::autograd
