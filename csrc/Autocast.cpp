// tessera._C's autocast state functions (aten/autocast/Autocast.h), with torch's names:
// torch.is_autocast_cpu_enabled, set_autocast_cpu_dtype, autocast_increment_nesting, ...
// tessera.amp.autocast is written in Python on these.
#include "python_api.h"

#include <aten/autocast/Autocast.h>

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace tessera::python {

namespace {

bool bool_argument(const py::handle& v) {
  if (!PyBool_Check(v.ptr())) {
    throw py::type_error("enabled must be a bool (got " + std::string(Py_TYPE(v.ptr())->tp_name) + ")");
  }
  return v.ptr() == Py_True;
}

c10::ScalarType dtype_argument(const py::handle& v) {
  if (!is_dtype(v.ptr())) {
    throw py::type_error("dtype must be a tessera.dtype (got " + std::string(Py_TYPE(v.ptr())->tp_name) + ")");
  }
  return dtype_of(v.ptr());
}

py::object dtype_result(c10::ScalarType t) { return py::reinterpret_borrow<py::object>(dtype_object(t)); }

}  // namespace

void init_autocast(py::module_& m) {
  namespace ac = at::autocast;
  m.def("is_autocast_cpu_enabled", &ac::is_cpu_enabled);
  m.def("set_autocast_cpu_enabled", [](py::object v) { ac::set_cpu_enabled(bool_argument(v)); });
  m.def("get_autocast_cpu_dtype", [] { return dtype_result(ac::get_cpu_dtype()); });
  // A c10::Error (an unsupported dtype) becomes RuntimeError through Autograd.cpp's translator.
  m.def("set_autocast_cpu_dtype", [](py::object v) { ac::set_cpu_dtype(dtype_argument(v)); });
  m.def("is_autocast_enabled", &ac::is_gpu_enabled);
  m.def("set_autocast_enabled", [](py::object v) { ac::set_gpu_enabled(bool_argument(v)); });
  m.def("get_autocast_gpu_dtype", [] { return dtype_result(ac::get_gpu_dtype()); });
  m.def("set_autocast_gpu_dtype", [](py::object v) { ac::set_gpu_dtype(dtype_argument(v)); });
  m.def("is_autocast_cache_enabled", &ac::is_cache_enabled);
  m.def("set_autocast_cache_enabled", [](py::object v) { ac::set_cache_enabled(bool_argument(v)); });
  m.def("clear_autocast_cache", &ac::clear_cache);
  m.def("autocast_increment_nesting", &ac::increment_nesting);
  m.def("autocast_decrement_nesting", &ac::decrement_nesting);
}

}  // namespace tessera::python
