#include <autograd/engine.h>

#include <autograd/functions/accumulate_grad.h>
#include <autograd/functions/basic_ops.h>
#include <autograd/input_buffer.h>
#include <autograd/variable.h>

#include <aten/core/NamedTensorUtils.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace torch::autograd {

// ---------------------------------------------------------------- anomaly mode

namespace {
std::atomic<bool> g_anomaly_enabled{false};
std::mutex g_trace_mutex;
std::function<std::string()> g_trace_provider;
}  // namespace

bool AnomalyMode::is_enabled() { return g_anomaly_enabled.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled) { g_anomaly_enabled.store(enabled, std::memory_order_relaxed); }
void AnomalyMode::set_trace_provider(std::function<std::string()> provider) {
  std::lock_guard<std::mutex> lock(g_trace_mutex);
  g_trace_provider = std::move(provider);
}
std::string AnomalyMode::current_trace() {
  std::function<std::string()> provider;
  {
    std::lock_guard<std::mutex> lock(g_trace_mutex);
    provider = g_trace_provider;
  }
  return provider ? provider() : std::string();
}

// ---------------------------------------------------------------- one backward pass

namespace {

struct NodeTask {
  std::shared_ptr<Node> fn;
  variable_list grads;
};

struct LaterFirst {
  bool operator()(const NodeTask& a, const NodeTask& b) const { return a.fn->sequence_nr() < b.fn->sequence_nr(); }
};

struct ExecInfo {
  bool needed = false;
  std::vector<std::pair<uint32_t, size_t>> captures;  // (input_nr, index into the results)
};

struct GraphTask {
  bool keep_graph = false;
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, InputBuffer> not_ready;
  std::unordered_map<Node*, ExecInfo> exec_info;  // empty: run every Node
  variable_list captured;
  std::priority_queue<NodeTask, std::vector<NodeTask>, LaterFirst> ready;
};

void compute_dependencies(Node* root, GraphTask& task) {
  std::unordered_set<Node*> seen{root};
  std::vector<Node*> stack{root};
  while (!stack.empty()) {
    Node* fn = stack.back();
    stack.pop_back();
    for (const Edge& e : fn->next_edges()) {
      Node* next = e.function.get();
      if (!next) continue;
      ++task.dependencies[next];
      if (seen.insert(next).second) stack.push_back(next);
    }
  }
}

// Marks the Nodes that lead to one of `outputs` (and, when accumulating, the outputs'
// own Nodes) as needed; records which inputs of which Nodes are captured.
void init_exec_info(Node* root, const edge_list& outputs, bool accumulate_grad, GraphTask& task) {
  std::unordered_set<Node*> targets;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Node* fn = outputs[i].function.get();
    if (!fn) continue;
    ExecInfo& info = task.exec_info[fn];
    if (accumulate_grad) info.needed = true;
    info.captures.emplace_back(outputs[i].input_nr, i);
    targets.insert(fn);
  }
  // Post-order over the DAG: a Node is needed when one of its edges reaches a target.
  std::unordered_map<Node*, bool> leads;
  struct Frame {
    Node* fn;
    size_t next;
  };
  std::vector<Frame> stack{{root, 0}};
  leads[root] = false;
  while (!stack.empty()) {
    Frame& f = stack.back();
    const edge_list& edges = f.fn->next_edges();
    if (f.next < edges.size()) {
      Node* child = edges[f.next++].function.get();
      if (child && !leads.count(child)) {
        leads[child] = false;
        stack.push_back({child, 0});
      }
      continue;
    }
    bool needed = false;
    for (const Edge& e : edges) {
      Node* child = e.function.get();
      if (child && (targets.count(child) || leads[child])) needed = true;
    }
    leads[f.fn] = needed;
    if (needed) task.exec_info[f.fn].needed = true;
    stack.pop_back();
  }
}

std::string shape_string(c10::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

bool expandable_to(c10::IntArrayRef shape, c10::IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[shape.size() - 1 - i], d = desired[desired.size() - 1 - i];
    if (s != d && s != 1) return false;
  }
  return true;
}

// Fits each grad to what the Node it goes to expects: sums a broadcast grad down to the
// input's shape and casts it to the input's dtype.
void validate_outputs(const Node& fn, variable_list& grads) {
  const edge_list& edges = fn.next_edges();
  TORCH_CHECK(grads.size() == edges.size(), "Function ", fn.name(), " returned an incorrect number of gradients (expected ",
              edges.size(), ", got ", grads.size(), ")");
  for (size_t i = 0; i < grads.size(); ++i) {
    const Edge& e = edges[i];
    Tensor& grad = grads[i];
    if (!e.is_valid() || !grad.defined()) continue;
    // Grads are never named, except that a named `gradient=` reaches the root's own Node as
    // it is, where its hooks and retained grad see the names (Node::operator() drops them
    // before the formula), as in torch; a leaf root's grad is unnamed.
    if (C10_UNLIKELY(grad.has_names()) &&
        (dynamic_cast<const GraphRoot*>(&fn) == nullptr || dynamic_cast<const AccumulateGrad*>(e.function.get()))) {
      grad = at::rename(grad, std::nullopt);
    }
    const InputMetadata& meta = e.function->input_metadata(e.input_nr);
    if (!meta.plain_kind_matches(grad)) {
      meta.check_kind(grad, c10::str("Function ", fn.name(), " returned an invalid gradient at index ", i));
    }
    // A real input's grad is the real part of a complex one (d/dx of a real loss); taken
    // before any broadcast is summed away, as torch does (complex32 has no sum).
    if (c10::isComplexType(grad.scalar_type()) && !c10::isComplexType(meta.dtype)) grad = at::real(grad);
    if (!grad.sizes().equals(meta.shape)) {
      TORCH_CHECK(expandable_to(meta.shape, grad.sizes()), "Function ", fn.name(), " returned an invalid gradient at index ",
                  i, " - got ", shape_string(grad.sizes()), " but expected shape compatible with ",
                  shape_string(meta.shape));
      grad = grad.sum_to_size(meta.shape);
    }
    if (grad.scalar_type() != meta.dtype) grad = grad.to(meta.dtype);
    TORCH_CHECK(grad.device() == meta.device, "Function ", fn.name(), " returned a gradient on ", grad.device(),
                " for an input on ", meta.device);
  }
}

void check_for_nan(const Node& fn, const variable_list& grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    if (!g.defined() || !(c10::isFloatingType(g.scalar_type()) || c10::isComplexType(g.scalar_type()))) continue;
    TORCH_CHECK(!at::isnan(g).any().item().toBool(), "Function '", fn.name(), "' returned nan values in its ", i,
                "th output.");
  }
}

variable_list call_function(Node& fn, variable_list&& grads, GraphTask& task) {
  variable_list outputs;
  if (!AnomalyMode::is_enabled()) {
    outputs = fn(std::move(grads));
    validate_outputs(fn, outputs);
  } else {
    try {
      outputs = fn(std::move(grads));
      validate_outputs(fn, outputs);
      check_for_nan(fn, outputs);
    } catch (c10::Error& e) {
      e.add_context("Error detected in " + fn.name() + ". Traceback of forward call that caused the error:\n" +
                    (fn.anomaly_trace().empty() ? std::string("  (no trace recorded)") : fn.anomaly_trace()));
      throw;
    }
  }
  if (!task.keep_graph) fn.release_variables();
  return outputs;
}

void evaluate(NodeTask&& t, GraphTask& task) {
  Node* fn = t.fn.get();
  if (!task.exec_info.empty()) {
    auto it = task.exec_info.find(fn);
    if (it == task.exec_info.end()) return;
    if (!it->second.captures.empty()) {
      variable_list hooked = t.grads;
      fn->run_tensor_pre_hooks(hooked);
      for (auto [input_nr, index] : it->second.captures) task.captured[index] = hooked[input_nr];
    }
    if (!it->second.needed) return;
  }
  variable_list outputs = call_function(*fn, std::move(t.grads), task);
  const edge_list& edges = fn->next_edges();
  for (size_t i = 0; i < edges.size(); ++i) {
    const Edge& e = edges[i];
    if (!e.is_valid()) continue;
    Node* next = e.function.get();
    auto buf = task.not_ready.find(next);
    if (buf == task.not_ready.end()) buf = task.not_ready.emplace(next, InputBuffer(next->num_inputs())).first;
    buf->second.add(e.input_nr, std::move(outputs[i]));
    if (--task.dependencies[next] == 0) {
      task.ready.push(NodeTask{e.function, buf->second.take()});
      task.not_ready.erase(buf);
    }
  }
}

}  // namespace

namespace {
// The final callbacks of the backward pass running on this thread (null outside one).
thread_local std::vector<std::function<void()>>* t_final_callbacks = nullptr;
}  // namespace

void Engine::queue_callback(std::function<void()> callback) {
  TORCH_CHECK(t_final_callbacks != nullptr, "Final callbacks can only be installed during backward pass.");
  t_final_callbacks->push_back(std::move(callback));
}

bool Engine::in_backward() { return t_final_callbacks != nullptr; }

Engine& Engine::get_default_engine() {
  static Engine engine;
  return engine;
}

variable_list Engine::execute(const edge_list& roots, const variable_list& grads, bool keep_graph, bool create_graph,
                              bool accumulate_grad, const edge_list& outputs) {
  TORCH_CHECK(roots.size() == grads.size(), "backward: ", roots.size(), " roots but ", grads.size(), " grads");
  GraphTask task;
  task.keep_graph = keep_graph;
  // Backward formulas see no names, and grads carry none, as in torch (a named `gradient=`
  // only as far as the root's hooks: validate_outputs).
  at::NoNamesGuard no_names;
  auto root = make_node<GraphRoot>(roots, grads);
  compute_dependencies(root.get(), task);
  if (!outputs.empty()) {
    init_exec_info(root.get(), outputs, accumulate_grad, task);
    task.captured.resize(outputs.size());
  }
  // Backward formulas record a graph of their own only for create_graph.
  c10::AutoGradMode grad_mode(create_graph);
  // Leaves' grads are stored once every Node has run: a pass that throws (an
  // OutOfMemoryError half-way) leaves each .grad as it was.
  std::optional<PendingLeafGrads> pending;
  if (accumulate_grad) pending.emplace();
  std::vector<std::function<void()>> final_callbacks;
  struct CallbacksScope {  // a nested pass (a backward inside a backward Node) has its own
    std::vector<std::function<void()>>* previous;
    explicit CallbacksScope(std::vector<std::function<void()>>* mine) : previous(t_final_callbacks) {
      t_final_callbacks = mine;
    }
    ~CallbacksScope() { t_final_callbacks = previous; }
  } callbacks_scope(&final_callbacks);
  task.ready.push(NodeTask{root, {}});
  while (!task.ready.empty()) {
    NodeTask t = std::move(const_cast<NodeTask&>(task.ready.top()));
    task.ready.pop();
    evaluate(std::move(t), task);
  }
  if (pending) pending->commit();
  for (size_t i = 0; i < final_callbacks.size(); ++i) {
    auto callback = std::move(final_callbacks[i]);  // it may queue more, growing the list
    callback();
  }
  return std::move(task.captured);
}

}  // namespace torch::autograd
