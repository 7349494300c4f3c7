// The Python side of the dispatcher: calling any registered operator by name (how
// tessera.ops.<namespace>.<op> reaches custom operators), loading and unloading
// extension libraries, and torch's _dispatch_dump.
#include "ArgParser.h"
#include "TorchFunction.h"
#include "python_api.h"

#include <aten/dispatch/Dispatcher.h>
#include <aten/library.h>

#include <memory>
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

// The overloads of one operator name resolved once, with their argument parser; rebuilt
// when the dispatcher's schemas change (a library defined or unloaded something).
struct ResolvedOp {
  // One resolution; a call holds on to it, so a refresh during the call (a kernel that
  // defines an operator, another thread) cannot free what the call is using.
  struct Snapshot {
    std::vector<c10::OperatorHandle> handles;
    std::unique_ptr<PythonArgParser> parser;
  };
  std::string qualified;
  std::optional<std::string> overload;
  uint64_t generation = ~uint64_t{0};
  std::shared_ptr<Snapshot> current;

  std::shared_ptr<Snapshot> refresh() {
    const uint64_t now = c10::Dispatcher::singleton().schemaGeneration();
    if (now == generation && current) return current;
    auto next = std::make_shared<Snapshot>();
    next->handles = overloads_of(qualified, overload ? &*overload : nullptr);
    TORCH_CHECK(!next->handles.empty(), "No such operator ", qualified, (overload ? "." + *overload : std::string()));
    std::vector<const c10::FunctionSchema*> schemas;
    for (const auto& h : next->handles) schemas.push_back(&h.schema());
    next->parser = std::make_unique<PythonArgParser>(qualified.substr(qualified.find("::") + 2), schemas,
                                                     std::vector<const c10::FunctionSchema*>{}, false,
                                                     /*numbers_as_tensors=*/true);  // as torch.ops
    current = std::move(next);
    generation = now;
    return current;
  }

  // Parses (args, kwargs) against the overloads, calls the chosen one boxed, converts back.
  // public_api: what __torch_function__ overrides see as the function (the Python packet or
  // overload calling this), or null when there is none (_call_op).
  PyObject* call(PyObject* args, PyObject* kwargs, PyObject* public_api) {
    const std::shared_ptr<Snapshot> snapshot = refresh();
    ParsedArgs r;
    snapshot->parser->parse(args, kwargs, r);
    if (C10_UNLIKELY(r.has_torch_function) && public_api) return handle_torch_function(r, public_api, args, kwargs);
    const c10::OperatorHandle& op = snapshot->handles[static_cast<size_t>(r.index)];
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
    // int[] and Tensor[] results are Python lists, as torch.ops gives them
    if (stack.size() == 1) return from_ivalue(stack[0], /*lists_as_lists=*/true);
    return from_ivalue(c10::IValue::makeTuple(std::move(stack)), /*lists_as_lists=*/true);
  }
};

// _call_op(qualified_name, overload_or_None, args, kwargs): one call, resolved on the spot.
PyObject* call_op(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  const char* name = nullptr;
  PyObject* overload_obj = nullptr;
  PyObject* call_args = nullptr;
  PyObject* call_kwargs = nullptr;
  if (!PyArg_ParseTuple(args, "sOO!O", &name, &overload_obj, &PyTuple_Type, &call_args, &call_kwargs)) return nullptr;
  TORCH_CHECK_TYPE(overload_obj == Py_None || PyUnicode_Check(overload_obj), "_call_op: the overload must be a str or None");
  TORCH_CHECK_TYPE(call_kwargs == Py_None || PyDict_Check(call_kwargs), "_call_op: kwargs must be a dict or None");
  ResolvedOp op;
  op.qualified = name;
  if (overload_obj != Py_None) op.overload = PyUnicode_AsUTF8(overload_obj);
  return op.call(call_args, call_kwargs == Py_None ? nullptr : call_kwargs, nullptr);
  END_HANDLE_TH_ERRORS
}

// tessera._C._OpCall(qualified_name, overload_or_None): a callable bound to one operator
// (tessera.ops' packets and overloads hold one), resolved once instead of per call.
struct OpCallObject {
  PyObject_HEAD
  ResolvedOp* op;
  PyObject* owner;  // a weak reference to the Python packet or overload that calls it, or null
};

PyObject* op_call_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  const char* name = nullptr;
  PyObject* overload_obj = Py_None;
  PyObject* owner = Py_None;
  if (!PyArg_ParseTuple(args, "s|OO", &name, &overload_obj, &owner)) return nullptr;
  TORCH_CHECK_TYPE(overload_obj == Py_None || PyUnicode_Check(overload_obj), "_OpCall: the overload must be a str or None");
  auto resolved = std::make_unique<ResolvedOp>();
  resolved->qualified = name;
  if (overload_obj != Py_None) resolved->overload = PyUnicode_AsUTF8(overload_obj);
  resolved->refresh();
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  reinterpret_cast<OpCallObject*>(self)->op = resolved.release();
  reinterpret_cast<OpCallObject*>(self)->owner = owner == Py_None ? nullptr : PyWeakref_NewRef(owner, nullptr);
  if (owner != Py_None && !reinterpret_cast<OpCallObject*>(self)->owner) {
    Py_DECREF(self);
    return nullptr;
  }
  return self;
  END_HANDLE_TH_ERRORS
}

void op_call_dealloc(PyObject* self) {
  delete reinterpret_cast<OpCallObject*>(self)->op;
  Py_XDECREF(reinterpret_cast<OpCallObject*>(self)->owner);
  Py_TYPE(self)->tp_free(self);
}

PyObject* op_call_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  auto* call = reinterpret_cast<OpCallObject*>(self);
  PyObject* owner = call->owner ? PyWeakref_GetObject(call->owner) : nullptr;  // borrowed
  return call->op->call(args, kwargs, owner && owner != Py_None ? owner : self);
  END_HANDLE_TH_ERRORS
}

PyTypeObject OpCallType{};

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

// One overload's schema as torch prints it ("aten::add.Tensor(Tensor self, ...) -> Tensor").
PyObject* op_schema(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  const char* name = nullptr;
  const char* overload = nullptr;
  if (!PyArg_ParseTuple(args, "ss", &name, &overload)) return nullptr;
  const std::string wanted = overload;
  auto handles = overloads_of(name, &wanted);
  TORCH_CHECK(!handles.empty(), "operator ", name, " has no overload '", wanted, "'");
  const std::string text = handles.front().schema().toString();
  return PyUnicode_FromStringAndSize(text.data(), static_cast<Py_ssize_t>(text.size()));
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

// Loads a shared library whose TORCH_LIBRARY blocks register its operators. A library that
// cannot be opened is an OSError, as torch.ops.load_library's ctypes.CDLL raises.
PyObject* load_library(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const char* path = PyUnicode_AsUTF8(arg);
  if (!path) return nullptr;
  try {
    torch::load_library(path);
  } catch (const c10::Error& e) {
    PyErr_SetString(PyExc_OSError, e.what());
    return nullptr;
  }
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

// Unloads it again: its registrations go, whether or not the loader unmaps it.
PyObject* unload_library(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const char* path = PyUnicode_AsUTF8(arg);
  if (!path) return nullptr;
  torch::unload_library(path);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

}  // namespace

bool init_op_call_type(PyObject* module) {
  PyTypeObject* t = &OpCallType;
  t->tp_name = "tessera._C._OpCall";
  t->tp_basicsize = sizeof(OpCallObject);
  t->tp_flags = Py_TPFLAGS_DEFAULT;
  t->tp_new = op_call_new;
  t->tp_dealloc = op_call_dealloc;
  t->tp_call = op_call_call;
  t->tp_doc = "_OpCall(qualified_name, overload=None, owner=None): calls one registered operator with Python "
                "arguments; owner (weakly held) is the function __torch_function__ overrides see.";
  return add_type(module, t, "_OpCall");
}

PyMethodDef* custom_op_functions() {
  static PyMethodDef table[] = {
      {"_call_op", call_op, METH_VARARGS, "Calls a registered operator by name with Python arguments."},
      {"_op_overloads", op_overloads, METH_O, "Overload names of a registered operator."},
      {"_op_schema", op_schema, METH_VARARGS, "The schema of one overload of a registered operator."},
      {"_dispatch_dump", dispatch_dump, METH_O, "The dispatcher's registration table of one operator."},
      {"_load_library", load_library, METH_O, "Loads a library of custom operators."},
      {"_unload_library", unload_library, METH_O, "Unloads a library loaded with _load_library."},
      {nullptr, nullptr, 0, nullptr}};
  return table;
}

}  // namespace tessera::python
