// tessera._C's profiler functions (aten/profiler/Profiler.h): start and stop a session,
// record_function's ranges, and the events as plain tuples for tessera.autograd.profiler.
#include "python_api.h"

#include <aten/profiler/Profiler.h>

namespace tessera::python {

namespace {

PyObject* enable(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  at::profiler::ProfilerConfig config;
  config.record_shapes = PyObject_IsTrue(arg) == 1;
  at::profiler::enable(config);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* enable_on_this_thread(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  at::profiler::enable_on_this_thread();
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* is_enabled(PyObject*, PyObject*) { return PyBool_FromLong(at::profiler::is_enabled()); }

PyObject* list_of_shapes(const at::profiler::Event& e) {
  PyObject* shapes = PyList_New(static_cast<Py_ssize_t>(e.shapes.size()));
  if (!shapes) return nullptr;
  for (size_t i = 0; i < e.shapes.size(); ++i) {
    PyObject* dims = PyList_New(static_cast<Py_ssize_t>(e.shapes[i].size()));
    if (!dims) {
      Py_DECREF(shapes);
      return nullptr;
    }
    for (size_t d = 0; d < e.shapes[i].size(); ++d) {
      PyList_SET_ITEM(dims, static_cast<Py_ssize_t>(d), PyLong_FromLongLong(e.shapes[i][d]));
    }
    PyList_SET_ITEM(shapes, static_cast<Py_ssize_t>(i), dims);
  }
  return shapes;
}

// [(name, start_ns, end_ns, thread, sequence, is_user_range, shapes, dtypes), ...]
PyObject* disable(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  const std::vector<at::profiler::Event> events = at::profiler::disable();
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(events.size()));
  if (!out) return nullptr;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    PyObject* shapes = list_of_shapes(e);
    PyObject* dtypes = shapes ? PyList_New(static_cast<Py_ssize_t>(e.dtypes.size())) : nullptr;
    if (!dtypes) {
      Py_XDECREF(shapes);
      Py_DECREF(out);
      return nullptr;
    }
    for (size_t d = 0; d < e.dtypes.size(); ++d) {
      PyList_SET_ITEM(dtypes, static_cast<Py_ssize_t>(d), PyUnicode_FromString(e.dtypes[d].c_str()));
    }
    PyObject* item = Py_BuildValue("(sLLKKOOO)", e.name.c_str(), static_cast<long long>(e.start_ns),
                                   static_cast<long long>(e.end_ns), static_cast<unsigned long long>(e.thread),
                                   static_cast<unsigned long long>(e.sequence), e.user_range ? Py_True : Py_False,
                                   shapes, dtypes);
    Py_DECREF(shapes);
    Py_DECREF(dtypes);
    if (!item) {
      Py_DECREF(out);
      return nullptr;
    }
    PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), item);
  }
  return out;
  END_HANDLE_TH_ERRORS
}

PyObject* record_function_enter(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name) return nullptr;
  return PyLong_FromUnsignedLongLong(at::profiler::enter_range(name));
  END_HANDLE_TH_ERRORS
}

PyObject* record_function_exit(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const unsigned long long handle = PyLong_AsUnsignedLongLong(arg);
  if (handle == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
  at::profiler::exit_range(handle);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyMethodDef functions[] = {
    {"_profiler_enable", enable, METH_O, "Starts a profiling session on this thread (arg: record_shapes)."},
    {"_profiler_enable_on_this_thread", enable_on_this_thread, METH_NOARGS, "Adds this thread to the session."},
    {"_profiler_enabled", is_enabled, METH_NOARGS, "Whether a profiling session is running."},
    {"_profiler_disable", disable, METH_NOARGS, "Ends the session; its events as tuples."},
    {"_record_function_enter", record_function_enter, METH_O, "Opens a labelled range; returns its handle."},
    {"_record_function_exit", record_function_exit, METH_O, "Closes a range opened by _record_function_enter."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool init_profiler(PyObject* module) { return PyModule_AddFunctions(module, functions) == 0; }

}  // namespace tessera::python
