// Operators defined and implemented from Python (tessera.library.Library): a Library
// handle owns a torch::Library (DEF, IMPL or FRAGMENT), whose define() registers a schema
// and whose impl() registers a boxed kernel that calls a Python function. The kernel
// converts the dispatcher's stack to Python values by the schema, calls the function once
// (taking the GIL) and converts its result back, so a call from tessera.ops.<ns>.<op>
// crosses from C++ into Python exactly once.
#include "ArgParser.h"
#include "python_api.h"

#include <aten/dispatch/Dispatcher.h>
#include <aten/library.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <memory>
#include <string>

namespace tessera::python {

namespace {

constexpr const char* kCapsuleName = "tessera.Library";

// The Python function of one kernel; the last reference goes under the GIL.
struct PythonFunction {
  PyObject* fn;
  explicit PythonFunction(PyObject* f) : fn(f) { Py_INCREF(fn); }
  ~PythonFunction() {
    if (!Py_IsInitialized()) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(fn);
    PyGILState_Release(gil);
  }
  PythonFunction(const PythonFunction&) = delete;
  PythonFunction& operator=(const PythonFunction&) = delete;
};

// A Python exception raised by a kernel travels through the dispatcher (and possibly
// another thread) as a PythonException, restored as itself when it reaches Python.
[[noreturn]] void rethrow_python_error() { throw PythonException::fetch(); }

void call_python_kernel(const PythonFunction& f, const c10::OperatorHandle& op, c10::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const auto& arguments = schema.arguments();
  const size_t n = arguments.size();
  PyGILState_STATE gil = PyGILState_Ensure();
  struct Release {
    PyGILState_STATE s;
    ~Release() { PyGILState_Release(s); }
  } release{gil};
  size_t positional = 0;
  while (positional < n && !arguments[positional].kwarg_only()) ++positional;
  PyObject* args = PyTuple_New(static_cast<Py_ssize_t>(positional));
  PyObject* kwargs = positional < n ? PyDict_New() : nullptr;
  const size_t first = stack->size() - n;
  bool failed = args == nullptr;
  for (size_t i = 0; i < n && !failed; ++i) {
    PyObject* v = from_ivalue((*stack)[first + i]);
    if (!v) {
      failed = true;
    } else if (i < positional) {
      PyTuple_SET_ITEM(args, static_cast<Py_ssize_t>(i), v);
    } else {
      failed = PyDict_SetItemString(kwargs, arguments[i].name().c_str(), v) != 0;
      Py_DECREF(v);
    }
  }
  stack->erase(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  PyObject* result = failed ? nullptr : PyObject_Call(f.fn, args, kwargs);
  Py_XDECREF(args);
  Py_XDECREF(kwargs);
  if (!result) rethrow_python_error();
  const auto& returns = schema.returns();
  // A result must fit its schema type (to_ivalue would read a Python number as a Tensor).
  auto convert = [&](PyObject* value, const c10::SchemaType& type) {
    TORCH_CHECK_TYPE(fits_schema_type(value, type), "the Python kernel of ", schema.operator_name(), " returned ",
                     Py_TYPE(value)->tp_name, " where its schema returns ", type.str());
    return to_ivalue(value, type);
  };
  try {
    if (returns.empty()) {
      TORCH_CHECK_TYPE(result == Py_None, "the Python kernel of ", schema.operator_name(),
                       " must return None (its schema returns nothing)");
    } else if (returns.size() == 1) {
      stack->push_back(convert(result, returns[0].type()));
    } else {
      TORCH_CHECK_TYPE((PyTuple_Check(result) || PyList_Check(result)) &&
                           PySequence_Fast_GET_SIZE(result) == static_cast<Py_ssize_t>(returns.size()),
                       "the Python kernel of ", schema.operator_name(), " must return a tuple of ", returns.size(),
                       " values");
      for (size_t i = 0; i < returns.size(); ++i) {
        stack->push_back(convert(PySequence_Fast_GET_ITEM(result, static_cast<Py_ssize_t>(i)), returns[i].type()));
      }
    }
  } catch (const python_error&) {
    Py_DECREF(result);
    rethrow_python_error();
  } catch (...) {
    Py_DECREF(result);
    throw;
  }
  Py_DECREF(result);
}

torch::Library* library_of(PyObject* capsule) {
  auto* lib = static_cast<torch::Library*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (!lib) throw python_error();
  return lib;
}

void destroy_library(PyObject* capsule) {
  delete static_cast<torch::Library*>(PyCapsule_GetPointer(capsule, kCapsuleName));
}

// _library_new(kind, ns, dispatch_key): a handle whose death undoes every registration.
PyObject* library_new(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  const char *kind = nullptr, *ns = nullptr, *key = nullptr;
  if (!PyArg_ParseTuple(args, "sss", &kind, &ns, &key)) return nullptr;
  const std::string k(kind);
  torch::Library::Kind lib_kind = k == "DEF" ? torch::Library::DEF : k == "IMPL" ? torch::Library::IMPL : torch::Library::FRAGMENT;
  TORCH_CHECK_VALUE(k == "DEF" || k == "IMPL" || k == "FRAGMENT", "Unsupported kind: ", k);
  std::optional<c10::DispatchKey> dispatch_key;
  if (*key) dispatch_key = c10::parseDispatchKey(key);
  auto lib = std::make_unique<torch::Library>(lib_kind, ns, dispatch_key, "<python>", 0);
  PyObject* capsule = PyCapsule_New(lib.get(), kCapsuleName, destroy_library);
  if (!capsule) return nullptr;
  lib.release();
  return capsule;
  END_HANDLE_TH_ERRORS
}

PyObject* library_define(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  PyObject* capsule = nullptr;
  const char* schema = nullptr;
  if (!PyArg_ParseTuple(args, "Os", &capsule, &schema)) return nullptr;
  library_of(capsule)->def(schema);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* library_impl(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  PyObject *capsule = nullptr, *fn = nullptr;
  const char *name = nullptr, *key = nullptr;
  if (!PyArg_ParseTuple(args, "OssO", &capsule, &name, &key, &fn)) return nullptr;
  TORCH_CHECK_TYPE(PyCallable_Check(fn), "Input function is required to be a callable but found type ",
                   Py_TYPE(fn)->tp_name);
  auto function = std::make_shared<PythonFunction>(fn);
  auto kernel = torch::CppFunction::makeFromBoxedCallable(
      [function](const c10::OperatorHandle& op, c10::DispatchKeySet, c10::Stack* stack) {
        call_python_kernel(*function, op, stack);
      });
  torch::Library* lib = library_of(capsule);
  if (*key) {
    lib->impl(name, torch::dispatch(c10::parseDispatchKey(key), std::move(kernel)));
  } else {
    lib->impl(name, std::move(kernel));
  }
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

// _AutoDispatchBelowAutograd: a context manager under which calls skip the autograd keys
// (what a Python Autograd kernel uses to reach the op's backend kernel).
struct BelowAutogradObject {
  PyObject_HEAD
  std::optional<at::AutoDispatchBelowADInplaceOrView> guard;
};

PyObject* below_autograd_enter(PyObject* self, PyObject*) {
  auto* obj = reinterpret_cast<BelowAutogradObject*>(self);
  if (obj->guard) {
    PyErr_SetString(PyExc_RuntimeError, "_AutoDispatchBelowAutograd is already entered (use a new one per with-block)");
    return nullptr;
  }
  obj->guard.emplace();
  Py_INCREF(self);
  return self;
}

PyObject* below_autograd_exit(PyObject* self, PyObject*) {
  reinterpret_cast<BelowAutogradObject*>(self)->guard.reset();
  Py_RETURN_FALSE;
}

PyObject* below_autograd_new(PyTypeObject* type, PyObject*, PyObject*) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (obj) new (&reinterpret_cast<BelowAutogradObject*>(obj)->guard) std::optional<at::AutoDispatchBelowADInplaceOrView>();
  return obj;
}

void below_autograd_dealloc(PyObject* self) {
  reinterpret_cast<BelowAutogradObject*>(self)->guard.~optional();
  Py_TYPE(self)->tp_free(self);
}

PyMethodDef below_autograd_methods[] = {{"__enter__", below_autograd_enter, METH_NOARGS, nullptr},
                                       {"__exit__", below_autograd_exit, METH_VARARGS, nullptr},
                                       {nullptr, nullptr, 0, nullptr}};
PyTypeObject BelowAutogradType{};

}  // namespace

PyMethodDef* python_library_functions() {
  static PyMethodDef table[] = {
      {"_library_new", library_new, METH_VARARGS, "A registration handle: _library_new(kind, ns, dispatch_key)."},
      {"_library_define", library_define, METH_VARARGS, "Registers a schema in a library."},
      {"_library_impl", library_impl, METH_VARARGS, "Registers a Python kernel: (lib, name, dispatch_key, fn)."},
      {nullptr, nullptr, 0, nullptr}};
  return table;
}

bool init_python_library(PyObject* module) {
  PyTypeObject* t = &BelowAutogradType;
  t->tp_name = "tessera._C._AutoDispatchBelowAutograd";
  t->tp_basicsize = sizeof(BelowAutogradObject);
  t->tp_flags = Py_TPFLAGS_DEFAULT;
  t->tp_new = below_autograd_new;
  t->tp_dealloc = below_autograd_dealloc;
  t->tp_methods = below_autograd_methods;
  t->tp_doc = "with _AutoDispatchBelowAutograd(): calls skip autograd (inside a Python Autograd kernel).";
  return add_type(module, t, "_AutoDispatchBelowAutograd") &&
         PyModule_AddFunctions(module, python_library_functions()) == 0;
}

}  // namespace tessera::python
