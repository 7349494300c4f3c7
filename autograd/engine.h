// The Engine runs a backward pass: it counts how many grads each Node of the graph will
// receive, then runs Nodes whose grads have all arrived, later forward ops first, on the
// calling thread. Passes are independent (several threads may run their own at once)
// and re-entrant (a backward Node may start a backward of its own).
#pragma once

#include <autograd/function.h>

#include <functional>
#include <string>

namespace torch::autograd {

class TORCH_API Engine {
 public:
  static Engine& get_default_engine();

  // Runs backward from `roots` seeded with `grads`. Without `outputs` every reachable leaf
  // accumulates its grad; with `outputs`, only what leads to them runs, and their grads are
  // returned (autograd.grad; with accumulate_grad, backward(inputs=...)).
  variable_list execute(const edge_list& roots, const variable_list& grads, bool keep_graph, bool create_graph,
                        bool accumulate_grad, const edge_list& outputs = {});

  // Runs `callback` once the backward pass running on this thread has finished, after the
  // leaves' .grad are stored (torch's queue_callback; DDP's reducer finishes there). Only
  // during a backward pass; callbacks may queue more.
  static void queue_callback(std::function<void()> callback);
  // Whether this thread is running a backward pass (queue_callback may be called).
  static bool in_backward();
};

// Anomaly mode: nodes record the forward call that made them, backward results are
// checked for NaN, and an error names the forward call of the node that failed.
struct TORCH_API AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
  // Where anomaly traces come from (Python installs one that formats its stack).
  static void set_trace_provider(std::function<std::string()> provider);
  static std::string current_trace();
};

}  // namespace torch::autograd
