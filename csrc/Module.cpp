// tessera._C: the extension module. Puts together the Tensor type, the dtype / device /
// layout / memory_format objects, tessera.tensor, the error types, the generated operator
// bindings (generated_module_functions / generated_tensor_methods) and the custom-op entry
// points. pybind11 creates the module; the hot types underneath are raw CPython.
#include "Generator.h"
#include "TorchDispatch.h"
#include "TorchFunction.h"
#include "python_api.h"

#include <aten/core/QTensorImpl.h>
#include <aten/ops/Functions.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#ifndef TESSERA_VERSION_STRING
#define TESSERA_VERSION_STRING "0.0.0"
#endif

namespace py = pybind11;

namespace tessera::python {
void init_autograd(py::module_& m);  // Autograd.cpp
void init_autocast(py::module_& m);  // Autocast.cpp
void init_distributed(py::module_& m);  // Distributed.cpp
void init_custom_classes(py::module_& m);  // CustomClasses.cpp
bool init_extension_api(PyObject* module);  // ExtensionApi.cpp
}  // namespace tessera::python

PYBIND11_MODULE(_C, m) {
  using namespace tessera::python;
  m.doc() = "Tessera's C++ core: tensors, dtypes, devices and every operator's binding.";
  PyObject* mod = m.ptr();
  // Types the Tensor type's methods and the generated bindings rely on come first.
  if (!init_exceptions(mod) || !init_dtypes(mod) || !init_tensor_type(mod) || !init_tensor_new(mod)) {
    throw py::error_already_set();
  }
  if (PyModule_AddFunctions(mod, generated_module_functions()) != 0) throw py::error_already_set();
  // python_module: fft entries (tessera.fft re-exports them by torch.fft's names).
  py::module_ fft = m.def_submodule("_fft", "Bindings of the fft_* operators.");
  if (PyModule_AddFunctions(fft.ptr(), generated_fft_functions()) != 0) throw py::error_already_set();
  // ops.yaml's python_module: linalg entries (tessera.linalg re-exports them by torch's names).
  py::module_ linalg = m.def_submodule("_linalg", "Bindings of the linalg_* operators.");
  if (PyModule_AddFunctions(linalg.ptr(), generated_linalg_functions()) != 0) throw py::error_already_set();
  // python_module: special entries (tessera.special re-exports them by torch.special's names).
  py::module_ special = m.def_submodule("_special", "Bindings of the special_* operators.");
  if (PyModule_AddFunctions(special.ptr(), generated_special_functions()) != 0) throw py::error_already_set();
  // python_module: nested entries (tessera.nested builds on them, as torch.nested on torch._C._nested).
  py::module_ nested = m.def_submodule("_nested", "Bindings of the nested tensor operators.");
  if (PyModule_AddFunctions(nested.ptr(), generated_nested_functions()) != 0) throw py::error_already_set();
  // python_module: nn entries (torch._C._nn's; tessera.nn.functional builds on them).
  py::module_ nn = m.def_submodule("_nn", "Bindings of the torch.nn.functional operators.");
  if (PyModule_AddFunctions(nn.ptr(), generated_nn_functions()) != 0) throw py::error_already_set();
  if (PyModule_AddFunctions(mod, custom_op_functions()) != 0) throw py::error_already_set();
  if (PyModule_AddFunctions(mod, numpy_functions()) != 0 || PyModule_AddFunctions(mod, dlpack_functions()) != 0 ||
      PyModule_AddFunctions(mod, named_tensor_functions()) != 0) {
    throw py::error_already_set();
  }
  if (!init_torch_function(mod)) throw py::error_already_set();
  if (!init_torch_dispatch(mod)) throw py::error_already_set();
  if (!init_profiler(mod)) throw py::error_already_set();
  if (!init_generator(mod) || !init_python_library(mod) || !init_op_call_type(mod)) throw py::error_already_set();
  if (PyModule_AddFunctions(mod, allocator_functions()) != 0) throw py::error_already_set();
  if (!init_extension_api(mod)) throw py::error_already_set();
  init_autograd(m);
  init_autocast(m);
  init_distributed(m);
  init_custom_classes(m);
  // The return_types named tuple of an op written in Python (histogramdd), of the same
  // structseq kind as the generated bindings' results.
  m.def("_named_tuple", [](const std::string& name, const std::vector<std::string>& fields, py::object items) {
    return py::reinterpret_steal<py::object>(named_tuple_of(name, fields, items.release().ptr()));
  });
  // The loader's way into a quint4x2/quint2x4 tensor, which torch saves as its packed bytes
  // (the inverse of int_repr for those dtypes).
  m.def("_set_packed_quantized_", [](py::handle q_obj, py::handle packed_obj) {
    TORCH_CHECK_TYPE(is_tensor(q_obj.ptr()) && is_tensor(packed_obj.ptr()),
                     "_set_packed_quantized_: expected two tensors");
    const at::Tensor& q = unwrap(q_obj.ptr());
    const at::Tensor& packed = unwrap(packed_obj.ptr());
    TORCH_CHECK(q.is_quantized() && c10::isSubByteQIntType(q.scalar_type()),
                "_set_packed_quantized_: expected a quint4x2 or quint2x4 tensor, got ", q.scalar_type());
    at::Tensor bytes = at::integer_alias(q);
    TORCH_CHECK(packed.scalar_type() == c10::kByte && packed.dim() == 1 && packed.numel() == bytes.numel(),
                "_set_packed_quantized_: expected ", bytes.numel(), " uint8 bytes in a 1-D tensor, got ",
                packed.scalar_type(), " of size ", packed.sizes());
    // The bits of the last byte past q's elements keep their value (after a leading slice
    // they are the next elements').
    const int64_t used_bits = (q.numel() * at::quantized_bits(q.scalar_type())) % 8;
    const at::Tensor last = used_bits != 0 ? bytes.select(0, bytes.numel() - 1).clone() : at::Tensor();
    bytes.copy_(packed);
    if (used_bits != 0) {
      const int64_t mask = (1 << used_bits) - 1;
      bytes.select(0, bytes.numel() - 1).bitwise_and_(mask).bitwise_or_(last.bitwise_and(0xFF & ~mask));
    }
  });
  m.attr("_version") = TESSERA_VERSION_STRING;
}
