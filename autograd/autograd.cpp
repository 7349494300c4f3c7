#include <autograd/autograd.h>

#include <autograd/engine.h>
#include <autograd/functions/accumulate_grad.h>
#include <autograd/variable.h>

#include <aten/core/TensorOperators.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

namespace torch::autograd {

namespace {

std::string size_string(const Tensor& t) {
  std::string s = "tessera.Size([";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "])";
}

// The seeds: given grads checked against their outputs, ones for one-element outputs.
variable_list make_grads(const variable_list& outputs, const variable_list& grad_outputs) {
  TORCH_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "grad requires ", outputs.size(),
              " gradient tensors but got ", grad_outputs.size());
  variable_list grads;
  grads.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (g.defined()) {
      if (g.is_nested() || out.is_nested() || g.layout() != out.layout()) {
        InputMetadata(out).check_kind(g, c10::str("Mismatch in layout or nested shapes: grad_output[", i, "]"));
      }
      TORCH_CHECK(g.sizes().equals(out.sizes()), "Mismatch in shape: grad_output[", i, "] has a shape of ",
                  size_string(g), " and output[", i, "] has a shape of ", size_string(out), ".");
      bool out_complex = c10::isComplexType(out.scalar_type()), g_complex = c10::isComplexType(g.scalar_type());
      TORCH_CHECK(out_complex == g_complex, "For complex Tensors, both grad_output and output are required to have "
                                            "the same dtype. Mismatch in dtype: grad_output[", i, "] has a dtype of ",
                  g.scalar_type(), " and output[", i, "] has a dtype of ", out.scalar_type(), ".");
      grads.push_back(g);
    } else if (out.requires_grad()) {
      TORCH_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      TORCH_CHECK(!c10::isComplexType(out.scalar_type()), "grad can be implicitly created only for real scalar "
                                                          "outputs but got ", out.scalar_type());
      grads.push_back(at::ones_like(out));
    } else {
      grads.push_back(Tensor());
    }
  }
  return grads;
}

edge_list root_edges(const variable_list& outputs) {
  edge_list roots;
  roots.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    TORCH_CHECK(out.defined(), "element ", i, " of tensors is undefined");
    Edge e = impl::gradient_edge(out);
    TORCH_CHECK(e.is_valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    roots.push_back(std::move(e));
  }
  return roots;
}

// Where the grad of each input is collected: its grad_fn's output or its accumulator.
edge_list input_edges(const variable_list& inputs) {
  edge_list edges;
  edges.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    TORCH_CHECK(in.defined(), "element ", i, " of inputs is undefined");
    TORCH_CHECK(in.requires_grad(), "One of the differentiated Tensors does not require grad");
    Edge e = impl::gradient_edge(in);
    if (!e.function) e = Edge(impl::grad_accumulator(in), 0);
    edges.push_back(std::move(e));
  }
  return edges;
}

}  // namespace

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const variable_list& inputs) {
  TORCH_CHECK(!tensors.empty(), "backward() needs at least one tensor");
  variable_list grads = make_grads(tensors, grad_tensors);
  edge_list roots = root_edges(tensors);
  bool keep_graph = retain_graph.value_or(create_graph);
  if (inputs.empty()) {
    Engine::get_default_engine().execute(roots, grads, keep_graph, create_graph, /*accumulate_grad=*/true);
    return;
  }
  // backward(inputs=...): only what leads to the inputs runs. Leaves accumulate through
  // their AccumulateGrad as usual; the grads of non-leaf inputs are captured on the way
  // and added to their .grad here.
  edge_list wanted = input_edges(inputs);
  variable_list captured = Engine::get_default_engine().execute(roots, grads, keep_graph, create_graph, true, wanted);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_leaf() || !captured[i].defined()) continue;
    Tensor& g = impl::materialize_autograd_meta(inputs[i])->grad_;
    g = g.defined() ? g + captured[i] : captured[i];
  }
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  TORCH_CHECK(!inputs.empty(), "grad requires non-empty inputs.");
  variable_list grads = make_grads(outputs, grad_outputs);
  edge_list roots = root_edges(outputs);
  edge_list wanted = input_edges(inputs);
  variable_list results = Engine::get_default_engine().execute(roots, grads, retain_graph.value_or(create_graph),
                                                               create_graph, /*accumulate_grad=*/false, wanted);
  for (size_t i = 0; i < results.size(); ++i) {
    TORCH_CHECK(allow_unused || results[i].defined(),
                "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
                "if this is the desired behavior.");
  }
  return results;
}

}  // namespace torch::autograd
