// C++ exceptions -> Python exceptions, and tessera.OutOfMemoryError.
#include "python_api.h"

#include <aten/core/LinAlgError.h>
#include <c10/util/Exception.h>

#include <new>
#include <string>

namespace tessera::python {

PyObject* OutOfMemoryErrorType = nullptr;
PyObject* LinAlgErrorType = nullptr;

struct PythonException::Held {
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  ~Held() {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    PyGILState_Release(gil);
  }
};

PythonException::PythonException(std::string message, std::shared_ptr<Held> held)
    : c10::Error(std::move(message), C10_HERE_), held_(std::move(held)) {}

PythonException PythonException::fetch() {
  auto held = std::make_shared<Held>();
  PyErr_Fetch(&held->type, &held->value, &held->traceback);
  PyErr_NormalizeException(&held->type, &held->value, &held->traceback);
  std::string message = "a Python exception";
  if (held->value) {
    if (PyObject* s = PyObject_Str(held->value)) {
      if (const char* c = PyUnicode_AsUTF8(s)) message = c;
      Py_DECREF(s);
    }
    PyErr_Clear();
  }
  return PythonException(std::move(message), std::move(held));
}

void PythonException::restore() const {
  Py_XINCREF(held_->type);
  Py_XINCREF(held_->value);
  Py_XINCREF(held_->traceback);
  PyErr_Restore(held_->type, held_->value, held_->traceback);
}

void set_python_error() {
  try {
    throw;
  } catch (const python_error&) {
    // The Python error is already set; keep it. Guard against a binding that threw
    // python_error without setting one.
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "unknown error (python_error without a Python exception)");
  } catch (const PythonException& e) {
    e.restore();
  } catch (const c10::IndexError& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const c10::ValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const c10::TypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const c10::NotImplementedError& e) {
    PyErr_SetString(PyExc_NotImplementedError, e.what());
  } catch (const c10::OutOfMemoryError& e) {
    PyErr_SetString(OutOfMemoryErrorType ? OutOfMemoryErrorType : PyExc_RuntimeError, e.what());
  } catch (const at::LinAlgError& e) {
    PyErr_SetString(LinAlgErrorType ? LinAlgErrorType : PyExc_RuntimeError, e.what());
  } catch (const c10::Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (const std::bad_alloc& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

bool init_exceptions(PyObject* module) {
  OutOfMemoryErrorType = PyErr_NewExceptionWithDoc(
      "tessera.OutOfMemoryError", "Raised when a device allocator runs out of memory (a RuntimeError, as torch's).",
      PyExc_RuntimeError, nullptr);
  if (!OutOfMemoryErrorType) return false;
  Py_INCREF(OutOfMemoryErrorType);
  if (PyModule_AddObject(module, "OutOfMemoryError", OutOfMemoryErrorType) != 0) return false;
  LinAlgErrorType = PyErr_NewExceptionWithDoc(
      "tessera._C._LinAlgError",
      "Raised by torch.linalg functions on inputs they cannot handle: a singular or not positive-definite matrix, "
      "or an algorithm that did not converge (a RuntimeError, as torch's).",
      PyExc_RuntimeError, nullptr);
  if (!LinAlgErrorType) return false;
  Py_INCREF(LinAlgErrorType);
  return PyModule_AddObject(module, "_LinAlgError", LinAlgErrorType) == 0;
}

}  // namespace tessera::python
