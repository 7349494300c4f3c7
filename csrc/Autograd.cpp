// tessera._C._autograd: the autograd API for Python — tensor attributes (requires_grad,
// grad, grad_fn, is_leaf, ...), backward and grad (run with the GIL released), grad
// modes, hooks and backward Nodes. python/tessera/autograd and _tensor_autograd.py build
// torch's Python surface on these.
#include "SavedFields.h"
#include "TorchDispatch.h"
#include "python_api.h"

#include <autograd/autograd.h>
#include <autograd/custom_function.h>
#include <autograd/engine.h>
#include <autograd/functions/basic_ops.h>
#include <autograd/variable.h>
#include <aten/core/NestedTensorImpl.h>
#include <aten/ops/OperatorHandles.h>

#include <c10/core/ThreadLocalState.h>

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using torch::autograd::Node;

namespace tessera::python {

void init_saved_tensor_hooks(py::module_& autograd);  // SavedTensorHooks.cpp

namespace {

const at::Tensor& tensor_arg(py::handle h, const char* what) {
  TORCH_CHECK_TYPE(is_tensor(h.ptr()), what, " must be a Tensor, not ", Py_TYPE(h.ptr())->tp_name);
  return unwrap(h.ptr());
}

py::object to_py(at::Tensor t) { return py::reinterpret_steal<py::object>(wrap(std::move(t))); }

std::vector<at::Tensor> tensor_list(py::handle seq, const char* what, bool allow_none) {
  std::vector<at::Tensor> out;
  if (seq.is_none()) return out;
  for (py::handle h : seq) {
    if (allow_none && h.is_none()) {
      out.emplace_back();
    } else {
      out.push_back(tensor_arg(h, what));
    }
  }
  return out;
}

std::optional<bool> optional_bool(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return h.cast<bool>();
}

// A Python callable as a grad hook: called with the GIL, its result (None or a Tensor)
// replaces the grad when it is a Tensor.
std::function<at::Tensor(const at::Tensor&)> python_hook(py::object fn) {
  auto holder = std::make_shared<py::object>(std::move(fn));
  return [holder](const at::Tensor& grad) -> at::Tensor {
    py::gil_scoped_acquire gil;
    py::object r = (*holder)(to_py(grad));
    if (r.is_none()) return at::Tensor();
    return tensor_arg(r, "a hook's result");
  };
}

// The backward Node of a Python tessera.autograd.Function: apply() takes the GIL and calls
// the Function's backward(ctx, *grads); the C++ rules (grad count, materialized grads,
// saved tensors) are those of torch::autograd::Function<T>.
class PyNode final : public Node {
 public:
  PyNode(std::string name, py::object backward, py::object ctx,
         std::shared_ptr<torch::autograd::AutogradContext> state, std::vector<bool> is_tensor_input)
      : name_(std::move(name)), backward_(std::move(backward)), ctx_(std::move(ctx)), state_(std::move(state)),
        is_tensor_input_(std::move(is_tensor_input)) {}
  ~PyNode() override {
    // The last reference may go on a thread without the GIL (the engine's, a C++ owner's).
    if (!Py_IsInitialized()) {
      backward_.release();
      ctx_.release();
      return;
    }
    py::gil_scoped_acquire gil;
    backward_ = py::object();
    ctx_ = py::object();
  }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    torch::autograd::variable_list inputs =
        state_->materialize_grads() ? torch::autograd::materialize_grads(*this, std::move(grads)) : std::move(grads);
    torch::autograd::variable_list results;
    {
      std::lock_guard<std::mutex> lock(mutex());  // before the GIL: release_variables takes only this
      py::gil_scoped_acquire gil;
      TORCH_CHECK(ctx_, torch::autograd::ERR_BACKWARD_TWICE);
      py::tuple args(inputs.size() + 1);
      args[0] = ctx_;
      for (size_t i = 0; i < inputs.size(); ++i) args[i + 1] = inputs[i].defined() ? to_py(inputs[i]) : py::none();
      py::object r = backward_(*args);
      if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
        results = tensor_list(r, "backward's result", true);
      } else {
        results.push_back(r.is_none() ? at::Tensor() : tensor_arg(r, "backward's result"));
      }
    }
    return torch::autograd::grads_for_tensor_inputs(name_, std::move(results), is_tensor_input_);
  }
  std::string name() const override { return name_; }
  // Frees the saved tensors and lets go of ctx: a tensor stored on ctx whose grad_fn is
  // this Node (ctx.out = out) would otherwise keep both alive in a cycle no collector sees.
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex());
    state_->release_variables();
    py::gil_scoped_acquire gil;
    backward_ = py::object();
    ctx_ = py::object();
  }

 private:
  std::string name_;
  py::object backward_, ctx_;
  std::shared_ptr<torch::autograd::AutogradContext> state_;
  std::vector<bool> is_tensor_input_;
};

// tessera.autograd.Function.apply: records a PyNode when grad mode is on and a tensor
// argument requires grad, runs forward(ctx, *args) without grad, and gives its outputs
// their history (torch::autograd::wrap_outputs).
py::object function_apply(py::object cls, py::object ctx, py::args args) {
  using namespace torch::autograd;
  auto state = ctx.attr("_state").cast<std::shared_ptr<AutogradContext>>();
  std::vector<bool> is_tensor_input;
  variable_list inputs;
  bool executable = false;
  for (py::handle h : args) {
    const bool t = is_tensor(h.ptr());
    is_tensor_input.push_back(t);
    if (!t) continue;
    inputs.push_back(unwrap(h.ptr()));
    executable = executable || inputs.back().requires_grad();
  }
  executable = executable && c10::GradMode::is_enabled();
  std::shared_ptr<PyNode> node;
  if (executable) {
    std::string name = py::str(cls.attr("__name__")).cast<std::string>() + "Backward";
    node = std::shared_ptr<PyNode>(new PyNode(std::move(name), cls.attr("backward"), ctx, state, is_tensor_input),
                                   deleteNode);
    edge_list edges;
    append_edges(edges, inputs);
    node->set_next_edges(std::move(edges));
  }
  state->set_grad_fn(node);
  state->set_input_edges(detail::edge_indices(is_tensor_input));
  py::tuple needs(args.size());
  for (size_t i = 0; i < args.size(); ++i) needs[i] = py::bool_(state->needs_input_grad(i));
  ctx.attr("needs_input_grad") = needs;

  py::object raw;
  {
    c10::AutoGradMode no_grad(false);
    raw = cls.attr("forward")(ctx, *args);
  }
  const bool single = !py::isinstance<py::tuple>(raw);
  py::tuple raw_tuple = single ? py::make_tuple(raw) : py::reinterpret_borrow<py::tuple>(raw);
  std::vector<std::optional<at::Tensor>> outs;
  for (py::handle h : raw_tuple) {
    outs.push_back(is_tensor(h.ptr()) ? std::optional<at::Tensor>(unwrap(h.ptr())) : std::nullopt);
  }
  auto wrapped = wrap_outputs(inputs, state->get_non_differentiable(), state->get_and_bump_dirty(), outs, node);
  if (node) state->save_variables();
  py::tuple result(raw_tuple.size());
  for (size_t i = 0; i < raw_tuple.size(); ++i) {
    // The same tensor (an input marked dirty) comes back as the caller's own object.
    const bool same = !wrapped[i] || (outs[i] && wrapped[i]->is_same(*outs[i]));
    result[i] = same ? py::reinterpret_borrow<py::object>(raw_tuple[i]) : to_py(*wrapped[i]);
  }
  return single ? py::object(result[0]) : py::object(result);
}

// A new instance of the Tensor subclass cls (checked by the caller) holding t.
py::object subclass_instance(py::handle cls, at::Tensor t) {
  return py::reinterpret_steal<py::object>(new_subclass_instance(reinterpret_cast<PyTypeObject*>(cls.ptr()), std::move(t)));
}

}  // namespace

void init_autograd(py::module_& m) {
  // Errors from the functions below reach Python as the binding layer maps them
  // everywhere else (NotImplementedError, IndexError, ...), not as pybind11's default.
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const c10::Error&) {
      set_python_error();
    }
  });
  py::module_ a = m.def_submodule("_autograd", "The autograd engine and tensor attributes.");
  init_saved_tensor_hooks(a);

  py::class_<Node, std::shared_ptr<Node>>(a, "_Node")
      .def("name", &Node::name)
      .def_property_readonly("next_functions",
                             [](Node& n) {
                               py::list out;
                               for (const auto& e : n.next_edges()) {
                                 out.append(py::make_tuple(e.function ? py::cast(e.function) : py::none(),
                                                           e.input_nr));
                               }
                               return py::tuple(out);
                             })
      .def("_sequence_nr", &Node::sequence_nr)
      // _saved_<name> / _raw_saved_<name>: the Node's saved fields (SavedFields.h)
      .def("__getattr__",
           [](const std::shared_ptr<Node>& n, const std::string& attribute) {
             py::object value = saved_attribute(n, attribute);
             if (!value) throw py::attribute_error("'" + n->name() + "' object has no attribute '" + attribute + "'");
             return value;
           })
      .def("__dir__",
           [](py::object self) {
             py::list names = py::module_::import("builtins").attr("object").attr("__dir__")(self);
             for (const std::string& name : saved_attribute_names(*self.cast<std::shared_ptr<Node>>())) {
               names.append(py::str(name));
             }
             return names;
           })
      .def("_id", [](Node& n) { return reinterpret_cast<uintptr_t>(&n); })
      .def("register_prehook",
           [](Node& n, py::object fn) {
             auto holder = std::make_shared<py::object>(std::move(fn));
             n.add_pre_hook([holder](const torch::autograd::variable_list& grads) {
               py::gil_scoped_acquire gil;
               py::tuple args(grads.size());
               for (size_t i = 0; i < grads.size(); ++i) args[i] = grads[i].defined() ? to_py(grads[i]) : py::none();
               py::object r = (*holder)(args);
               torch::autograd::variable_list out;
               if (r.is_none()) return out;
               return tensor_list(r, "a pre-hook's result", true);
             });
           })
      .def("register_hook", [](Node& n, py::object fn) {
        auto holder = std::make_shared<py::object>(std::move(fn));
        n.add_post_hook([holder](const torch::autograd::variable_list& grad_inputs,
                                 const torch::autograd::variable_list& grad_outputs) {
          py::gil_scoped_acquire gil;
          auto as_tuple = [](const torch::autograd::variable_list& v) {
            py::tuple t(v.size());
            for (size_t i = 0; i < v.size(); ++i) t[i] = v[i].defined() ? to_py(v[i]) : py::none();
            return t;
          };
          py::object r = (*holder)(as_tuple(grad_inputs), as_tuple(grad_outputs));
          torch::autograd::variable_list out;
          if (r.is_none()) return out;
          return tensor_list(r, "a hook's result", true);
        });
      });

  using torch::autograd::AutogradContext;
  py::class_<AutogradContext, std::shared_ptr<AutogradContext>>(a, "_FunctionState")
      .def(py::init([] { return std::make_shared<AutogradContext>(); }))
      .def("save_for_backward",
           [](AutogradContext& c, py::args ts) { c.save_for_backward(tensor_list(ts, "save_for_backward", true)); })
      .def("mark_dirty", [](AutogradContext& c, py::args ts) { c.mark_dirty(tensor_list(ts, "mark_dirty", false)); })
      .def("mark_non_differentiable",
           [](AutogradContext& c, py::args ts) { c.mark_non_differentiable(tensor_list(ts, "mark_non_differentiable", false)); })
      .def("set_materialize_grads", &AutogradContext::set_materialize_grads)
      .def("saved_tensors", [](AutogradContext& c) {
        auto saved = c.get_saved_variables();
        py::tuple out(saved.size());
        for (size_t i = 0; i < saved.size(); ++i) out[i] = saved[i].defined() ? to_py(saved[i]) : py::none();
        return out;
      });
  a.def("_function_apply", &function_apply);
  // @once_differentiable: outputs whose grad_fn raises if a second derivative is asked for.
  a.def("_delayed_error", [](std::string msg, py::tuple outputs) {
    auto err = torch::autograd::make_node<torch::autograd::Error>(std::move(msg), torch::autograd::edge_list());
    py::tuple result(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      py::handle h = outputs[i];
      if (!is_tensor(h.ptr())) {
        result[i] = py::reinterpret_borrow<py::object>(h);
        continue;
      }
      at::Tensor alias = torch::autograd::impl::tensor_data(unwrap(h.ptr()));
      torch::autograd::impl::set_history(alias, err);
      result[i] = to_py(alias);
    }
    return result;
  });

  a.def("requires_grad", [](py::handle t) { return tensor_arg(t, "self").requires_grad(); });
  a.def("set_requires_grad", [](py::handle t, bool r) { tensor_arg(t, "self").set_requires_grad(r); });
  a.def("grad", [](py::handle t) -> py::object {
    const at::Tensor& g = tensor_arg(t, "self").grad();
    return g.defined() ? to_py(g) : py::none();
  });
  a.def("set_grad", [](py::handle t, py::handle g) {
    const at::Tensor& self = tensor_arg(t, "self");
    if (g.is_none()) {
      if (torch::autograd::impl::get_autograd_meta(self)) self.mutable_grad() = at::Tensor();
      return;
    }
    const at::Tensor& grad = tensor_arg(g, "assigned grad");
    TORCH_CHECK(grad.is_nested() == self.is_nested() && grad.layout() == self.layout(),
                "assigned grad has data of a different type");
    TORCH_CHECK(grad.sizes().equals(self.sizes()), "assigned grad has data of a different size");
    if (self.is_nested()) {
      TORCH_CHECK(at::get_nested_impl(grad)->component_sizes() == at::get_nested_impl(self)->component_sizes(),
                  "assigned grad has data of a different size");
    }
    TORCH_CHECK_TYPE(grad.scalar_type() == self.scalar_type(), "assigned grad has data of a different type");
    TORCH_CHECK(grad.device() == self.device(), "assigned grad has data located on a different device");
    self.mutable_grad() = grad;
  });
  a.def("grad_fn", [](py::handle t) -> py::object {
    const std::shared_ptr<Node>& fn = tensor_arg(t, "self").grad_fn();
    return fn ? py::cast(fn) : py::none();
  });
  a.def("is_leaf", [](py::handle t) { return tensor_arg(t, "self").is_leaf(); });
  a.def("output_nr", [](py::handle t) { return tensor_arg(t, "self").output_nr(); });
  a.def("version", [](py::handle t) { return tensor_arg(t, "self")._version(); });
  a.def("retain_grad", [](py::handle t) { tensor_arg(t, "self").retain_grad(); });
  a.def("retains_grad", [](py::handle t) { return tensor_arg(t, "self").retains_grad(); });
  a.def("is_view", [](py::handle t) { return tensor_arg(t, "self").is_view(); });
  a.def("base", [](py::handle t) -> py::object {
    const at::Tensor& b = tensor_arg(t, "self")._base();
    return b.defined() ? to_py(b) : py::none();
  });
  // Tensor._make_subclass(cls, data, requires_grad): an instance of the Tensor subclass cls
  // (nn.Parameter) holding an alias of data outside every graph, as detach() makes.
  a.def("make_subclass", [](py::handle cls, py::handle data, bool requires_grad) -> py::object {
    TORCH_CHECK_TYPE(PyType_Check(cls.ptr()) &&
                         PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), TensorType),
                     "_make_subclass: cls must be a subclass of Tensor");
    at::Tensor alias = torch::autograd::impl::tensor_data(tensor_arg(data, "data"));
    if (requires_grad) alias.set_requires_grad(true);
    return subclass_instance(cls, std::move(alias));
  }, py::arg("cls"), py::arg("data"), py::arg("require_grad") = false);
  // t.as_subclass(cls): an alias of t (the alias operator: a view in t's graph, sharing its
  // memory and version counter) in a new Python object of the Tensor subclass cls, as
  // torch's as_subclass.
  a.def("as_subclass", [](py::handle data, py::handle cls) -> py::object {
    TORCH_CHECK(PyType_Check(cls.ptr()) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), TensorType),
                "Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. Make sure "
                "your class inherits from Tensor.");
    return subclass_instance(cls, at::ops::op_alias().call(tensor_arg(data, "self")));
  });
  // t.data = new (the set_data operator: t keeps its autograd state and version counter).
  a.def("set_data", [](py::handle t, py::handle data) {
    at::Tensor self = tensor_arg(t, "self");
    at::ops::op_set_data().call(self, tensor_arg(data, "data"));
  });
  // t.data (the data operator: an alias outside every graph with its own version counter).
  a.def("data", [](py::handle t) { return to_py(at::ops::op_data().call(tensor_arg(t, "self"))); });
  a.def("register_hook", [](py::handle t, py::object fn) {
    return tensor_arg(t, "self")._register_hook(python_hook(std::move(fn)));
  });
  a.def("remove_hook", [](py::handle t, unsigned handle) { tensor_arg(t, "self").remove_hook(handle); });

  a.def("backward", [](py::handle tensors, py::handle grads, py::handle retain_graph, bool create_graph,
                       py::handle inputs) {
    auto ts = tensor_list(tensors, "tensors", false);
    auto gs = tensor_list(grads, "grad_tensors", true);
    auto in = tensor_list(inputs, "inputs", false);
    std::optional<bool> retain = optional_bool(retain_graph);
    py::gil_scoped_release nogil;
    torch::autograd::backward(ts, gs, retain, create_graph, in);
  });
  a.def("run_grad", [](py::handle outputs, py::handle inputs, py::handle grad_outputs, py::handle retain_graph,
                       bool create_graph, bool allow_unused) {
    auto outs = tensor_list(outputs, "outputs", false);
    auto ins = tensor_list(inputs, "inputs", false);
    auto gs = tensor_list(grad_outputs, "grad_outputs", true);
    std::optional<bool> retain = optional_bool(retain_graph);
    std::vector<at::Tensor> result;
    {
      py::gil_scoped_release nogil;
      result = torch::autograd::grad(outs, ins, gs, retain, create_graph, allow_unused);
    }
    py::tuple r(result.size());
    for (size_t i = 0; i < result.size(); ++i) r[i] = result[i].defined() ? to_py(result[i]) : py::none();
    return r;
  });

  a.def("is_grad_enabled", [] { return c10::GradMode::is_enabled(); });
  a.def("set_grad_enabled", [](bool e) { c10::GradMode::set_enabled(e); });
  a.def("is_inference_mode_enabled", [] { return c10::InferenceMode::is_enabled(); });
  // Inference mode as a stack of C++ guards, so nested Python contexts restore in order.
  static thread_local std::vector<std::unique_ptr<c10::InferenceMode>> inference_guards;
  a.def("enter_inference_mode", [](bool enabled) { inference_guards.push_back(std::make_unique<c10::InferenceMode>(enabled)); });
  a.def("exit_inference_mode", [] {
    TORCH_CHECK(!inference_guards.empty(), "exit_inference_mode without a matching enter");
    inference_guards.pop_back();
  });
  a.def("set_anomaly_enabled", [](bool e) { torch::autograd::AnomalyMode::set_enabled(e); });
  a.def("is_anomaly_enabled", [] { return torch::autograd::AnomalyMode::is_enabled(); });
}

}  // namespace tessera::python
