// The Python side of the dispatcher: calling any registered operator by name (how
// tessera.ops.<namespace>.<op> reaches custom operators), loading and unloading
// extension libraries, and torch's _dispatch_dump.
#include "ArgParser.h"
#include "python_api.h"

#include <aten/dispatch/Dispatcher.h>

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tessera::python {

namespace {

// Overloads of one operator name ("myops::scale"), default overload first.
std::vector<c10::OperatorHandle> overloads_of(const std::string& qualified, const std::string* overload) {
  std::vector<c10::OperatorHandle> out;
  auto& d = c10::Dispatcher::singleton();
  if (overload) {
    if (auto h = d.findSchema(c10::OperatorName{qualified, *overload})) out.push_back(*h);
    return out;
  }
  for (const auto& name : d.allOperatorNames()) {
    if (name.name != qualified) continue;
    if (auto h = d.findSchema(name)) out.push_back(*h);
  }
  std::stable_sort(out.begin(), out.end(), [](const c10::OperatorHandle& a, const c10::OperatorHandle& b) {
    return a.operator_name().overload_name.empty() && !b.operator_name().overload_name.empty();
  });
  return out;
}

// _call_op(qualified_name, overload_or_None, args, kwargs): parse against the op's
// schemas, call it boxed, convert the results back.
PyObject* call_op(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  const char* name = nullptr;
  PyObject* overload_obj = nullptr;
  PyObject* call_args = nullptr;
  PyObject* call_kwargs = nullptr;
  if (!PyArg_ParseTuple(args, "sOO!O", &name, &overload_obj, &PyTuple_Type, &call_args, &call_kwargs)) return nullptr;
  std::string overload_name = overload_obj == Py_None ? "" : PyUnicode_AsUTF8(overload_obj);
  std::string qualified(name);
  auto handles = overloads_of(qualified, overload_obj == Py_None ? nullptr : &overload_name);
  TORCH_CHECK(!handles.empty(), "No such operator ", qualified,
              (overload_obj == Py_None ? std::string() : "." + overload_name));
  // Built per call: a library unloading invalidates schemas, so nothing is cached here.
  std::vector<const c10::FunctionSchema*> schemas;
  for (const auto& h : handles) schemas.push_back(&h.schema());
  std::string short_name = qualified.substr(qualified.find("::") + 2);
  PythonArgParser parser(short_name, schemas, {}, false);
  ParsedArgs r;
  parser.parse(call_args, call_kwargs == Py_None ? nullptr : call_kwargs, r);
  const c10::OperatorHandle& op = handles[static_cast<size_t>(r.index)];
  c10::Stack stack;
  stack.reserve(r.signature->params.size());
  for (size_t i = 0; i < r.signature->params.size(); ++i) stack.push_back(r.ivalue(i));
  op.callBoxed(&stack);
  if (stack.empty()) Py_RETURN_NONE;
  if (stack.size() == 1 && stack[0].isTensor()) {
    // In-place and out= ops give back the very object they wrote to, as torch.ops does.
    const auto& args_schema = op.schema().arguments();
    for (size_t i = 0; i < args_schema.size() && i < r.signature->params.size(); ++i) {
      const c10::AliasInfo* alias = args_schema[i].alias_info();
      PyObject* obj = r.object(i);
      if (alias && alias->isWrite() && obj && is_tensor(obj) && unwrap(obj).is_same(stack[0].toTensor())) {
        Py_INCREF(obj);
        return obj;
      }
    }
  }
  if (stack.size() == 1) return from_ivalue(stack[0]);
  return from_ivalue(c10::IValue::makeTuple(std::move(stack)));
  END_HANDLE_TH_ERRORS
}

// Names of the overloads of an operator ("" for the default one), for OpOverloadPacket.
PyObject* op_overloads(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name) return nullptr;
  auto handles = overloads_of(name, nullptr);
  PyObject* list = PyList_New(0);
  for (const auto& h : handles) {
    PyObject* s = PyUnicode_FromString(h.operator_name().overload_name.c_str());
    PyList_Append(list, s);
    Py_DECREF(s);
  }
  return list;
  END_HANDLE_TH_ERRORS
}

PyObject* dispatch_dump(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name) return nullptr;
  std::string dump = c10::Dispatcher::singleton().dumpState(name);
  return PyUnicode_FromStringAndSize(dump.data(), static_cast<Py_ssize_t>(dump.size()));
  END_HANDLE_TH_ERRORS
}

std::mutex g_libraries_mutex;
std::map<std::string, void*>& libraries() {
  static std::map<std::string, void*> libs;
  return libs;
}

// Loads a shared library whose static TORCH_LIBRARY blocks register its operators.
PyObject* load_library(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const char* path = PyUnicode_AsUTF8(arg);
  if (!path) return nullptr;
  std::lock_guard<std::mutex> lock(g_libraries_mutex);
  if (libraries().count(path)) Py_RETURN_NONE;
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  TORCH_CHECK(handle != nullptr, "Could not load library ", path, ": ", dlerror());
  libraries()[path] = handle;
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

// Unloads it again: its static Library objects die and take their registrations along.
PyObject* unload_library(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const char* path = PyUnicode_AsUTF8(arg);
  if (!path) return nullptr;
  std::lock_guard<std::mutex> lock(g_libraries_mutex);
  auto it = libraries().find(path);
  TORCH_CHECK(it != libraries().end(), "library ", path, " was not loaded with tessera.ops.load_library");
  TORCH_CHECK(dlclose(it->second) == 0, "Could not unload library ", path, ": ", dlerror());
  libraries().erase(it);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

}  // namespace

PyMethodDef* custom_op_functions() {
  static PyMethodDef table[] = {
      {"_call_op", call_op, METH_VARARGS, "Calls a registered operator by name with Python arguments."},
      {"_op_overloads", op_overloads, METH_O, "Overload names of a registered operator."},
      {"_dispatch_dump", dispatch_dump, METH_O, "The dispatcher's registration table of one operator."},
      {"_load_library", load_library, METH_O, "Loads a library of custom operators."},
      {"_unload_library", unload_library, METH_O, "Unloads a library loaded with _load_library."},
      {nullptr, nullptr, 0, nullptr}};
  return table;
}

}  // namespace tessera::python
