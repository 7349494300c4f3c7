// Python saved-tensor hooks: tessera.autograd.graph.saved_tensors_hooks pushes a pair of
// Python callables; each tensor a backward formula saves inside the block keeps only what
// pack returned, and backward asks unpack for the tensor back. SavedTensor.register_hooks
// does the same for one tensor already saved; grad_fn._saved_<name> and _raw_saved_<name>
// read a Node's saved fields (SavedFields.h).
#include "SavedFields.h"
#include "python_api.h"

#include <autograd/saved_variable_hooks.h>

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace py = pybind11;

namespace tessera::python {
namespace {

// Python objects that a graph may outlive the interpreter with: released under the GIL,
// or leaked once Python is gone.
struct GilReleased {
  py::object obj;
  explicit GilReleased(py::object o) : obj(std::move(o)) {}
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;
  ~GilReleased() {
    if (!Py_IsInitialized()) {
      obj.release();
      return;
    }
    py::gil_scoped_acquire gil;
    obj = py::object();
  }
};

struct HookPair {
  GilReleased pack, unpack;
};

[[noreturn]] void rethrow(py::error_already_set& e) {
  e.restore();
  throw PythonException::fetch();
}

class PySavedVariableHooks final : public torch::autograd::SavedVariableHooks {
 public:
  explicit PySavedVariableHooks(std::shared_ptr<HookPair> pair) : pair_(std::move(pair)) {}

  void call_pack_hook(const at::Tensor& tensor) override {
    py::gil_scoped_acquire gil;
    auto version = tensor._version();
    try {
      py::object arg = py::reinterpret_steal<py::object>(wrap(tensor));
      packed_ = std::make_unique<GilReleased>(pair_->pack.obj(arg));
    } catch (py::error_already_set& e) {
      rethrow(e);
    }
    TORCH_CHECK(tensor._version() == version,
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                "can not be modified by in-place operations as this can lead to unexpected side-effects. Please "
                "open an issue if you need to perform in-place operations on the input to a pack hook.");
  }

  at::Tensor call_unpack_hook() override {
    py::gil_scoped_acquire gil;
    py::object result;
    try {
      result = pair_->unpack.obj(packed_->obj);
    } catch (py::error_already_set& e) {
      rethrow(e);
    }
    TORCH_CHECK_TYPE(is_tensor(result.ptr()),
                     "Output of saved tensor unpack_hook expected to be a Tensor but got result of type ",
                     Py_TYPE(result.ptr())->tp_name);
    return unwrap(result.ptr());
  }

 private:
  std::shared_ptr<HookPair> pair_;
  std::unique_ptr<GilReleased> packed_;
};

// tessera.autograd.SavedTensor: one saved tensor of a Node, kept alive with the Node.
struct SavedTensorRef {
  std::shared_ptr<torch::autograd::Node> owner;
  torch::autograd::SavedVariable* variable;
};

std::shared_ptr<HookPair> hook_pair(py::function pack, py::function unpack) {
  return std::shared_ptr<HookPair>(new HookPair{GilReleased(std::move(pack)), GilReleased(std::move(unpack))});
}

constexpr std::string_view kSaved = "_saved_", kRawSaved = "_raw_saved_";

}  // namespace

py::object saved_to_py(torch::autograd::SavedVariable& v, const std::shared_ptr<torch::autograd::Node>& owner,
                       bool raw) {
  // A number the caller passed (kept as a wrapped-number tensor) comes back as the number,
  // and has no raw form, as torch's saved numbers.
  if (raw) return v.is_wrapped_number() ? py::object() : py::cast(SavedTensorRef{owner, &v});
  at::Tensor t = v.unpack(owner);
  if (v.is_wrapped_number()) return py::reinterpret_steal<py::object>(scalar_to_python(t.item()));
  return py::reinterpret_steal<py::object>(wrap(std::move(t)));  // (None when undefined)
}

py::object saved_to_py(std::vector<torch::autograd::SavedVariable>& v,
                       const std::shared_ptr<torch::autograd::Node>& owner, bool raw) {
  py::tuple out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = saved_to_py(v[i], owner, raw);
  return out;
}

py::object saved_attribute(const std::shared_ptr<torch::autograd::Node>& node, std::string_view attribute) {
  const bool raw = attribute.substr(0, kRawSaved.size()) == kRawSaved;
  if (!raw && attribute.substr(0, kSaved.size()) != kSaved) return py::object();
  const NodeSavedFields* fields = saved_fields_of(*node);
  if (!fields) return py::object();
  return fields->get(*node, attribute.substr(raw ? kRawSaved.size() : kSaved.size()), node, raw);
}

std::vector<std::string> saved_attribute_names(const torch::autograd::Node& node) {
  std::vector<std::string> names;
  if (const NodeSavedFields* fields = saved_fields_of(node)) {
    for (const SavedFieldName& f : fields->fields) {
      names.push_back(std::string(kSaved) + f.name);
      if (f.is_tensor) names.push_back(std::string(kRawSaved) + f.name);
    }
  }
  return names;
}

void init_saved_tensor_hooks(py::module_& autograd) {
  namespace hooks = torch::autograd::saved_tensor_hooks;
  py::class_<SavedTensorRef>(autograd, "SavedTensor")
      .def(py::init([]() -> SavedTensorRef {
        TORCH_CHECK(false, "Trying to create a SavedTensor object from Python is forbidden.");
        return SavedTensorRef{nullptr, nullptr};
      }))
      .def("register_hooks", [](SavedTensorRef& self, py::function pack, py::function unpack) {
        self.variable->register_hooks(std::make_unique<PySavedVariableHooks>(hook_pair(std::move(pack),
                                                                                         std::move(unpack))));
      });
  autograd.def("_push_saved_tensors_default_hooks", [](py::function pack, py::function unpack) {
    std::shared_ptr<HookPair> pair = hook_pair(std::move(pack), std::move(unpack));
    hooks::push([pair]() -> std::unique_ptr<torch::autograd::SavedVariableHooks> {
      return std::make_unique<PySavedVariableHooks>(pair);
    });
  });
  autograd.def("_pop_saved_tensors_default_hooks", [] { hooks::pop(); });
  autograd.def("_saved_tensors_hooks_disable", [](std::string message) { hooks::disable(std::move(message)); });
  autograd.def("_saved_tensors_hooks_enable", [] { hooks::enable(); });
  autograd.def("_saved_tensors_hooks_get_disabled_error_message", []() -> py::object {
    const std::optional<std::string>& m = hooks::disabled_message();
    if (!m) return py::none();
    return py::str(*m);
  });
}

}  // namespace tessera::python
