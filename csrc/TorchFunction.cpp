// The binding side of __torch_function__ (see TorchFunction.h): detecting overrides is C++,
// on every call, and costs one type comparison per tensor argument plus one thread-local
// read; choosing and calling the override is Python (tessera/_torch_function.py), since it
// runs only when a subclass, a tensor-like object or a mode asked for it.
#include "TorchFunction.h"

#include "ArgParser.h"

#include <vector>

namespace tessera::python {

thread_local TorchFunctionTLS torch_function_tls;
std::atomic<int> torch_function_modes_pushed{0};

namespace {

// The TorchFunctionMode stack of this thread (owned references), innermost last.
thread_local std::vector<PyObject*> mode_stack;

PyObject* disabled_impl = nullptr;  // tessera._C._disabled_torch_function_impl
PyObject* torch_function_name = nullptr;  // interned "__torch_function__"

// Types that never override: Python's own scalars and containers (torch's is_basic_python_type).
bool is_basic_python_type(PyTypeObject* tp) {
  return tp == &PyBool_Type || tp == &PyLong_Type || tp == &PyFloat_Type || tp == &PyComplex_Type ||
         tp == &PySlice_Type || tp == Py_TYPE(Py_None) || tp == Py_TYPE(Py_Ellipsis) ||
         tp == Py_TYPE(Py_NotImplemented) || tp == &PyUnicode_Type || tp == &PyBytes_Type ||
         tp == &PyTuple_Type || tp == &PyList_Type || tp == &PyDict_Type || tp == &PyModule_Type;
}

void append_if_overloaded(PyObject* list, PyObject* obj) {
  if (obj == nullptr) return;
  if (PyTuple_Check(obj) || PyList_Check(obj)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    for (Py_ssize_t k = 0; k < n; ++k) append_if_overloaded(list, PySequence_Fast_GET_ITEM(obj, k));
    return;
  }
  if (is_overloaded(obj) && PyList_Append(list, obj) != 0) throw python_error();
}

PyObject* steal_or_throw(PyObject* obj) {
  if (!obj) throw python_error();
  return obj;
}

// tessera._torch_function._handle(public_api, overloaded, args, kwargs), imported once.
PyObject* dispatch_to_python(PyObject* public_api, PyObject* overloaded, PyObject* args, PyObject* kwargs) {
  static PyObject* handler = [] {
    PyObject* mod = PyImport_ImportModule("tessera._torch_function");
    if (!mod) throw python_error();
    PyObject* fn = PyObject_GetAttrString(mod, "_handle");
    Py_DECREF(mod);
    if (!fn) throw python_error();
    return fn;  // kept for the process's lifetime
  }();
  PyObject* result =
      PyObject_CallFunctionObjArgs(handler, public_api, overloaded, args, kwargs ? kwargs : Py_None, nullptr);
  if (!result) throw python_error();
  return result;
}

// (self,) + args: a method's arguments as its public API (Tensor.add) takes them.
PyObject* prepend(PyObject* self, PyObject* args) {
  const Py_ssize_t n = args ? PyTuple_GET_SIZE(args) : 0;
  PyObject* all = steal_or_throw(PyTuple_New(n + 1));
  Py_INCREF(self);
  PyTuple_SET_ITEM(all, 0, self);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(args, i);
    Py_INCREF(item);
    PyTuple_SET_ITEM(all, i + 1, item);
  }
  return all;
}

struct Ref {  // owns one reference
  PyObject* p;
  explicit Ref(PyObject* obj) : p(steal_or_throw(obj)) {}
  ~Ref() { Py_XDECREF(p); }
  Ref(Ref&& other) noexcept : p(other.p) { other.p = nullptr; }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
};

PyObject* tensor_attr(const char* name) {
  return steal_or_throw(PyObject_GetAttrString(reinterpret_cast<PyObject*>(TensorType), name));
}

}  // namespace

namespace {
// PyTorch's torch.Tensor, once that library is loaded. Its tensors are never tensor-like to
// tessera: their __torch_function__ (torch's default, Parameter's opt-out, a torch
// subclass's) would only call the tessera function again, under torch's switches rather
// than tessera's, so a torch tensor gets tessera's usual argument error instead.
bool is_pytorch_tensor(PyTypeObject* tp) {
  static PyObject* torch_tensor = nullptr;
  if (!torch_tensor) {
    PyObject* name = PyUnicode_FromString("torch");
    PyObject* torch = name ? PyImport_GetModule(name) : nullptr;
    Py_XDECREF(name);
    if (torch) {
      PyObject* cls = PyObject_GetAttrString(torch, "Tensor");
      Py_DECREF(torch);
      if (cls && PyType_Check(cls)) torch_tensor = cls;  // kept for the process
      else Py_XDECREF(cls);
    }
    PyErr_Clear();
    if (!torch_tensor) return false;
  }
  return PyType_IsSubtype(tp, reinterpret_cast<PyTypeObject*>(torch_tensor));
}
}  // namespace

bool has_torch_function_attr(PyObject* obj) {
  PyTypeObject* tp = Py_TYPE(obj);
  if (tp == TensorType || is_basic_python_type(tp)) return false;
  PyObject* attr = _PyType_Lookup(tp, torch_function_name);  // borrowed; no allocation
  return attr != nullptr && attr != disabled_impl && !is_pytorch_tensor(tp);
}

namespace {
Ref overloaded_of(const ParsedArgs& r, PyObject* self) {
  Ref overloaded(PyList_New(0));
  if (self) append_if_overloaded(overloaded.p, self);
  if (r.signature) {
    for (size_t i = 0; i < r.signature->params.size(); ++i) {
      if (r.signature->params[i].tensor_like) append_if_overloaded(overloaded.p, r.values[i]);
    }
  }
  return overloaded;
}
}  // namespace

bool value_overrides(PyObject* obj) {
  if (PyTuple_Check(obj) || PyList_Check(obj)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    for (Py_ssize_t k = 0; k < n; ++k) {
      if (is_overloaded(PySequence_Fast_GET_ITEM(obj, k))) return true;
    }
    return false;
  }
  return is_overloaded(obj);
}

PyObject* handle_torch_function(const ParsedArgs& r, PyObject* self, PyObject* args, PyObject* kwargs,
                                const char* name, bool is_method) {
  if (is_method) {
    Ref overloaded = overloaded_of(r, self);
    Ref api(tensor_attr(name));
    Ref all(prepend(self, args));
    return dispatch_to_python(api.p, overloaded.p, all.p, kwargs);
  }
  Ref api(PyObject_GetAttrString(self, name));  // self: the binding's module
  return handle_torch_function(r, api.p, args, kwargs);
}

PyObject* handle_torch_function(const ParsedArgs& r, PyObject* public_api, PyObject* args, PyObject* kwargs) {
  Ref overloaded = overloaded_of(r, nullptr);
  Ref call_args(args ? (Py_INCREF(args), args) : PyTuple_New(0));
  return dispatch_to_python(public_api, overloaded.p, call_args.p, kwargs);
}

namespace {
// The overriding objects among self (may be null), args' items and kwargs' values, one
// list or tuple deep.
Ref overloaded_in(PyObject* self, PyObject* args, PyObject* kwargs) {
  Ref overloaded(PyList_New(0));
  if (self) append_if_overloaded(overloaded.p, self);
  if (args) append_if_overloaded(overloaded.p, args);
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) append_if_overloaded(overloaded.p, value);
  }
  return overloaded;
}
}  // namespace

PyObject* handle_method_torch_function(PyObject* self, const char* name, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  Ref overloaded = overloaded_in(self, args, kwargs);
  Ref api(tensor_attr(name));
  Ref all(prepend(self, args));
  return dispatch_to_python(api.p, overloaded.p, all.p, kwargs);
  END_HANDLE_TH_ERRORS
}

PyObject* handle_function_torch_function(PyObject* module, const char* name, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  Ref overloaded = overloaded_in(nullptr, args, kwargs);
  Ref api(PyObject_GetAttrString(module, name));
  Ref call_args(args ? (Py_INCREF(args), args) : PyTuple_New(0));
  return dispatch_to_python(api.p, overloaded.p, call_args.p, kwargs);
  END_HANDLE_TH_ERRORS
}

PyObject* handle_getter_torch_function(PyObject* self, const char* name) {
  HANDLE_TH_ERRORS
  Ref overloaded(PyList_New(0));
  append_if_overloaded(overloaded.p, self);
  Ref descriptor(tensor_attr(name));
  Ref api(PyObject_GetAttrString(descriptor.p, "__get__"));
  Ref all(PyTuple_Pack(1, self));
  return dispatch_to_python(api.p, overloaded.p, all.p, nullptr);
  END_HANDLE_TH_ERRORS
}

PyObject* handle_operator_torch_function(const char* name, const char* reflected, PyObject* a, PyObject* b) {
  HANDLE_TH_ERRORS
  // A slot sees (a, b) in the expression's order; when a is not a tessera tensor, Python is
  // answering through b's reflected method (1 - t, tensor_like - t), which torch reports as
  // that method with b first.
  const bool reflect = reflected != nullptr && b != nullptr && !is_tensor(a);
  PyObject* first = reflect ? b : a;
  PyObject* second = reflect ? a : b;
  Ref overloaded(PyList_New(0));
  append_if_overloaded(overloaded.p, first);
  if (second) append_if_overloaded(overloaded.p, second);
  Ref api(tensor_attr(reflect ? reflected : name));
  Ref all(second ? PyTuple_Pack(2, first, second) : PyTuple_Pack(1, first));
  return dispatch_to_python(api.p, overloaded.p, all.p, nullptr);
  END_HANDLE_TH_ERRORS
}

// ---------------------------------------------------------------- tessera._C's functions

namespace {

// _disabled_torch_function_impl(func, types, args=(), kwargs=None): what a subclass sets as
// its __torch_function__ to opt out (nn.Parameter): calls func with subclasses disabled.
PyObject* disabled_torch_function_impl(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  PyObject *func = nullptr, *types = nullptr, *fargs = nullptr, *fkwargs = nullptr;
  if (!PyArg_ParseTuple(args, "OO|OO", &func, &types, &fargs, &fkwargs)) return nullptr;
  const TorchFunctionState saved = torch_function_tls.state;
  if (saved == TorchFunctionState::Enabled) torch_function_tls.state = TorchFunctionState::SubclassesDisabled;
  PyObject* empty = nullptr;
  if (fargs == nullptr || fargs == Py_None) fargs = empty = PyTuple_New(0);
  PyObject* result = nullptr;
  if (fargs && PyTuple_Check(fargs)) {
    result = PyObject_Call(func, fargs, (fkwargs && fkwargs != Py_None) ? fkwargs : nullptr);
  } else if (fargs) {
    PyErr_SetString(PyExc_TypeError, "_disabled_torch_function_impl: args must be a tuple");
  }
  Py_XDECREF(empty);
  torch_function_tls.state = saved;
  return result;
  END_HANDLE_TH_ERRORS
}

// Whether any of the objects overrides (or a mode is active): torch._C._has_torch_function.
bool any_overloaded(PyObject* seq) {
  if (torch_function_mode_active()) return true;
  PyObject* fast = PySequence_Fast(seq, "expected a sequence");
  if (!fast) throw python_error();
  bool found = false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  for (Py_ssize_t i = 0; i < n && !found; ++i) found = is_overloaded(PySequence_Fast_GET_ITEM(fast, i));
  Py_DECREF(fast);
  return found;
}

PyObject* has_torch_function(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  return PyBool_FromLong(any_overloaded(arg));
  END_HANDLE_TH_ERRORS
}

PyObject* has_torch_function_unary(PyObject*, PyObject* arg) {
  return PyBool_FromLong(is_overloaded(arg) || torch_function_mode_active());
}

PyObject* has_torch_function_variadic(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  bool found = torch_function_mode_active();
  for (Py_ssize_t i = 0; i < nargs && !found; ++i) found = is_overloaded(args[i]);
  return PyBool_FromLong(found);
}

// _torch_function_args_need_dispatch(args, kwargs): for the Python-defined functions'
// wrapper: any overriding object among the positional and keyword values, one list or tuple
// deep (cat([a, b])), or an active mode.
PyObject* args_need_dispatch(PyObject*, PyObject* const* argv, Py_ssize_t nargs) {
  if (torch_function_mode_active()) Py_RETURN_TRUE;
  if (torch_function_tls.state != TorchFunctionState::Enabled) Py_RETURN_FALSE;
  if (nargs >= 1 && PyTuple_Check(argv[0])) {
    Py_ssize_t n = PyTuple_GET_SIZE(argv[0]);
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (value_overrides(PyTuple_GET_ITEM(argv[0], i))) Py_RETURN_TRUE;
    }
  }
  if (nargs >= 2 && PyDict_Check(argv[1])) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(argv[1], &pos, &key, &value)) {
      if (value_overrides(value)) Py_RETURN_TRUE;
    }
  }
  Py_RETURN_FALSE;
}

PyObject* is_torch_function_enabled(PyObject*, PyObject*) {
  return PyBool_FromLong(torch_function_tls.state == TorchFunctionState::Enabled);
}

PyObject* is_torch_function_mode_enabled(PyObject*, PyObject*) { return PyBool_FromLong(torch_function_mode_active()); }

// _get_torch_function_state() -> int and _set_torch_function_state(int): 0 enabled,
// 1 subclasses disabled, 2 all disabled (DisableTorchFunction[Subclass] save and restore it).
PyObject* get_torch_function_state(PyObject*, PyObject*) {
  return PyLong_FromLong(static_cast<long>(torch_function_tls.state));
}

PyObject* set_torch_function_state(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred()) return nullptr;
  TORCH_CHECK_VALUE(v >= 0 && v <= 2, "_set_torch_function_state: expected 0, 1 or 2, got ", v);
  torch_function_tls.state = static_cast<TorchFunctionState>(v);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* push_mode(PyObject*, PyObject* mode) {
  Py_INCREF(mode);
  mode_stack.push_back(mode);
  torch_function_tls.modes = static_cast<uint32_t>(mode_stack.size());
  torch_function_modes_pushed.fetch_add(1, std::memory_order_relaxed);
  Py_RETURN_NONE;
}

PyObject* pop_mode(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  TORCH_CHECK(!mode_stack.empty(), "trying to pop from empty mode stack");
  PyObject* mode = mode_stack.back();  // the stack's reference passes to the caller
  mode_stack.pop_back();
  torch_function_tls.modes = static_cast<uint32_t>(mode_stack.size());
  torch_function_modes_pushed.fetch_sub(1, std::memory_order_relaxed);
  return mode;
  END_HANDLE_TH_ERRORS
}

PyObject* len_mode_stack(PyObject*, PyObject*) { return PyLong_FromSsize_t(static_cast<Py_ssize_t>(mode_stack.size())); }

PyObject* get_mode_at(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  Py_ssize_t i = PyLong_AsSsize_t(arg);
  if (i == -1 && PyErr_Occurred()) return nullptr;
  const auto n = static_cast<Py_ssize_t>(mode_stack.size());
  if (i < 0) i += n;
  TORCH_CHECK_INDEX(i >= 0 && i < n, "_get_function_stack_at: index ", i, " out of range for a stack of ", n);
  PyObject* mode = mode_stack[static_cast<size_t>(i)];
  Py_INCREF(mode);
  return mode;
  END_HANDLE_TH_ERRORS
}

PyMethodDef disabled_impl_def = {
    "_disabled_torch_function_impl", disabled_torch_function_impl, METH_VARARGS,
    "_disabled_torch_function_impl(func, types, args=(), kwargs=None)\n\nA __torch_function__ that opts a "
    "subclass out of the protocol: calls func with subclass overrides disabled."};

PyMethodDef functions[] = {
    {"_has_torch_function", has_torch_function, METH_O,
     "_has_torch_function(args) -> bool\n\nWhether an object of the sequence overrides __torch_function__ (or a "
     "mode is active)."},
    {"_has_torch_function_unary", has_torch_function_unary, METH_O,
     "_has_torch_function_unary(obj) -> bool\n\nThe same for one object."},
    {"_has_torch_function_variadic", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(has_torch_function_variadic)),
     METH_FASTCALL, "_has_torch_function_variadic(*objs) -> bool\n\nThe same for the positional arguments."},
    {"_torch_function_args_need_dispatch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(args_need_dispatch)),
     METH_FASTCALL, "_torch_function_args_need_dispatch(args, kwargs) -> bool\n\nWhether a call with these "
     "arguments goes to __torch_function__ (values and the items of list or tuple values are checked)."},
    {"_is_torch_function_enabled", is_torch_function_enabled, METH_NOARGS,
     "_is_torch_function_enabled() -> bool\n\nWhether subclass overrides run on this thread."},
    {"_is_torch_function_mode_enabled", is_torch_function_mode_enabled, METH_NOARGS,
     "_is_torch_function_mode_enabled() -> bool\n\nWhether a TorchFunctionMode sees calls now."},
    {"_get_torch_function_state", get_torch_function_state, METH_NOARGS,
     "_get_torch_function_state() -> int\n\n0: enabled, 1: subclasses disabled, 2: all disabled."},
    {"_set_torch_function_state", set_torch_function_state, METH_O,
     "_set_torch_function_state(state)\n\nSets this thread's state (see _get_torch_function_state)."},
    {"_push_on_torch_function_stack", push_mode, METH_O,
     "_push_on_torch_function_stack(mode)\n\nPushes a TorchFunctionMode on this thread's stack."},
    {"_pop_torch_function_stack", pop_mode, METH_NOARGS,
     "_pop_torch_function_stack() -> mode\n\nPops and returns the innermost TorchFunctionMode."},
    {"_len_torch_function_stack", len_mode_stack, METH_NOARGS,
     "_len_torch_function_stack() -> int\n\nThe depth of this thread's TorchFunctionMode stack."},
    {"_get_function_stack_at", get_mode_at, METH_O,
     "_get_function_stack_at(i) -> mode\n\nThe i-th mode of the stack (0: outermost)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool init_torch_function(PyObject* module) {
  torch_function_name = PyUnicode_InternFromString("__torch_function__");
  // One object, kept for the process: subclasses assign it and the override check compares
  // against it by identity.
  disabled_impl = PyCFunction_NewEx(&disabled_impl_def, nullptr, PyModule_GetNameObject(module));
  if (!torch_function_name || !disabled_impl) return false;
  Py_INCREF(disabled_impl);
  if (PyModule_AddObject(module, "_disabled_torch_function_impl", disabled_impl) != 0) return false;
  return PyModule_AddFunctions(module, functions) == 0;
}

}  // namespace tessera::python
