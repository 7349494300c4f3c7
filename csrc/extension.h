// What a Python extension module includes (torch's <torch/extension.h>): tessera's C++ API,
// pybind11, and a pybind11 caster that passes tessera.Tensor objects to and from functions
// taking and returning at::Tensor (std::vector, std::optional and tuples of them too).
// Built by tessera.utils.cpp_extension (load, load_inline, CppExtension).
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <aten/aten.h>
#include <aten/library.h>
#include <autograd/autograd.h>

#include <atomic>
#include <exception>
#include <stdexcept>

namespace tessera::python {

// The functions tessera._C lends to extension modules: a module links tessera's libraries
// but not tessera._C (a Python module, loaded without exporting its symbols), so it reaches
// them through the capsule tessera._C._tensor_api. The version changes with the layout.
struct TensorApi {
  int version;
  // A new reference to a tessera.Tensor holding t (None for an undefined t); nullptr with a
  // Python error set on failure.
  PyObject* (*wrap)(at::Tensor t);
  // Whether obj is a tessera.Tensor (or a subclass's instance).
  bool (*is_tensor)(PyObject* obj);
  // The tensor inside obj; precondition: is_tensor(obj).
  const at::Tensor* (*unwrap)(PyObject* obj);
  // Sets the Python error for the C++ exception being handled (call from a catch block), as
  // tessera's own bindings do: c10::IndexError -> IndexError, ... (csrc/python_api.h).
  void (*set_error)();
};
inline constexpr int kTensorApiVersion = 2;
inline constexpr const char* kTensorApiCapsule = "tessera._C._tensor_api";

// tessera._C's table, imported on first use (the module imports tessera._C if the program
// has not), when this module also learns to raise tessera's exception types. Throws
// pybind11::error_already_set when tessera cannot be imported. (No function-local static:
// its guard, held across an import that may release the GIL, could deadlock two threads.)
inline const TensorApi& tensor_api() {
  static std::atomic<const TensorApi*> cached{nullptr};
  if (const TensorApi* api = cached.load(std::memory_order_acquire)) return *api;
  pybind11::module_::import("tessera._C");
  auto* table = static_cast<const TensorApi*>(PyCapsule_Import(kTensorApiCapsule, 0));
  if (table == nullptr) throw pybind11::error_already_set();
  if (table->version != kTensorApiVersion) {
    throw std::runtime_error("this extension was built against another version of tessera; rebuild it");
  }
  if (cached.exchange(table, std::memory_order_acq_rel) == nullptr) {
    // (a module built by another compiler has pybind11 internals of its own, which do not
    // see tessera._C's translator)
    pybind11::register_local_exception_translator([](std::exception_ptr p) {
      if (!p) return;
      try {
        std::rethrow_exception(p);
      } catch (const c10::Error&) {
        tensor_api().set_error();
      }
    });
  }
  return *table;
}

}  // namespace tessera::python

namespace pybind11::detail {

template <>
struct type_caster<at::Tensor> {
  PYBIND11_TYPE_CASTER(at::Tensor, const_name("tessera.Tensor"));

  bool load(handle src, bool /*convert*/) {
    const tessera::python::TensorApi& api = tessera::python::tensor_api();
    if (!api.is_tensor(src.ptr())) return false;
    value = *api.unwrap(src.ptr());
    return true;
  }

  static handle cast(const at::Tensor& t, return_value_policy /*policy*/, handle /*parent*/) {
    return tessera::python::tensor_api().wrap(t);
  }
};

}  // namespace pybind11::detail

// torch::Tensor, torch::ones, ... as an extension written for torch spells them: in torch
// every at:: name is reachable as torch:: too.
namespace torch {
using namespace at;  // NOLINT(google-build-using-namespace): torch's own spelling
}  // namespace torch
