// Python saved-tensor hooks: tessera.autograd.graph.saved_tensors_hooks pushes a pair of
// Python callables; each tensor a backward formula saves inside the block keeps only what
// pack returned, and backward asks unpack for the tensor back.
#include "python_api.h"

#include <autograd/saved_variable_hooks.h>

#include <pybind11/pybind11.h>

#include <memory>

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

}  // namespace

void init_saved_tensor_hooks(py::module_& autograd) {
  namespace hooks = torch::autograd::saved_tensor_hooks;
  autograd.def("_push_saved_tensors_default_hooks", [](py::function pack, py::function unpack) {
    std::shared_ptr<HookPair> pair(new HookPair{GilReleased(std::move(pack)), GilReleased(std::move(unpack))});
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
