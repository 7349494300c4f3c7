// __torch_dispatch__: the Python key's fallback, the tensor <-> object link of subclasses that
// define it, Tensor._make_wrapper_subclass and the TorchDispatchMode stack.
//
// A tensor whose class defines __torch_dispatch__ carries a PythonSlot: the class, the
// object that stands for the tensor now (borrowed: the object owns the tensor, never the
// reverse, so no cycle keeps either alive) and, while no object does, the state the last
// one had. The object goes when Python drops it; if the tensor lives on (saved in a graph,
// wrapped by another tensor, on the dispatcher's stack), tensor_finalize moves the
// object's __dict__ and __slots__ values into the slot and the next wrap() puts them on a
// fresh instance. So `r.elem` set in __new__ is there whenever the tensor comes back.
#include "TorchDispatch.h"

#include "ArgParser.h"

#include <aten/dispatch/Dispatcher.h>
#include <aten/library.h>
#include <aten/schema/SchemaParser.h>
#include <c10/core/StorageBounds.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <structmember.h>

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessera::python {

namespace {

struct PythonSlot final : c10::PyObjectSlot {
  PyTypeObject* type;        // strong
  PyObject* live = nullptr;  // borrowed; cleared by tensor_finalize
  PyObject* dict = nullptr;  // strong: the last object's __dict__, while no object is live
  std::vector<std::pair<PyObject*, PyObject*>> members;  // strong: (__slots__ descriptor, value)

  PythonSlot(PyTypeObject* t, PyObject* obj) : type(t), live(obj) { Py_INCREF(type); }
  ~PythonSlot() override {
    if (!Py_IsInitialized()) return;  // at exit the interpreter may be gone: leak, as torch
    PyGILState_STATE gil = PyGILState_Ensure();
    drop_state();
    Py_DECREF(type);
    PyGILState_Release(gil);
  }
  void drop_state() {
    Py_CLEAR(dict);
    for (auto& [descr, value] : members) {
      Py_DECREF(descr);
      Py_DECREF(value);
    }
    members.clear();
  }
};

PythonSlot* slot_of(const at::Tensor& t) {
  return static_cast<PythonSlot*>(t.unsafeGetTensorImpl()->pyobj_slot());
}

PyObject* disabled_dispatch_impl = nullptr;  // _C._disabled_torch_dispatch_impl

// ---------------------------------------------------------------- the mode stack

// This thread's TorchDispatchModes (strong references), innermost last. While it is not
// empty the Python key is in the thread's included set, so every call reaches the fallback.
thread_local std::vector<PyObject*> dispatch_modes;

void push_mode(PyObject* mode) {
  Py_INCREF(mode);
  dispatch_modes.push_back(mode);
  auto& tls = c10::thread_local_state();
  tls.included = tls.included.add(c10::DispatchKey::Python);
}

PyObject* pop_mode() {  // a new reference
  TORCH_CHECK(!dispatch_modes.empty(), "trying to pop from empty mode stack");
  PyObject* mode = dispatch_modes.back();
  dispatch_modes.pop_back();
  if (dispatch_modes.empty()) {
    auto& tls = c10::thread_local_state();
    tls.included = tls.included.remove(c10::DispatchKey::Python);
  }
  return mode;
}

// ---------------------------------------------------------------- the fallback

// tessera.ops.<ns>.<op>.<overload> for the operator: the `func` handlers receive.
// (Looked up on every call, not cached here: unload_library makes tessera.ops forget its
// objects, and `func is tessera.ops.aten.neg.default` must keep holding.) A new reference.
PyObject* overload_object(const c10::OperatorHandle& op) {
  static PyObject* resolve = nullptr;
  if (!resolve) {
    PyObject* mod = PyImport_ImportModule("tessera.ops");
    if (!mod) throw PythonException::fetch();
    resolve = PyObject_GetAttrString(mod, "_overload_of");
    Py_DECREF(mod);
    if (!resolve) throw PythonException::fetch();
  }
  const c10::OperatorName& name = op.operator_name();
  PyObject* obj = PyObject_CallFunction(resolve, "ss", name.name.c_str(), name.overload_name.c_str());
  if (!obj) throw PythonException::fetch();
  return obj;
}

// The arguments that handle the call (objects of a class with __torch_dispatch__), one per
// class, a subclass before its parent class and otherwise in argument order (torch's
// rule). Their own class now, as torch asks the object (`obj.__class__ = B` counts).
void add_overloaded(std::vector<PyObject*>& objects, PyObject* value) {
  if (!is_tensor(value)) {
    if (PyList_Check(value) || PyTuple_Check(value)) {
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(value); ++i) {
        PyObject* item = PySequence_Fast_GET_ITEM(value, i);
        if (is_tensor(item)) add_overloaded(objects, item);
      }
    }
    return;
  }
  if (!unwrap(value).key_set().has(c10::DispatchKey::Python) || !slot_of(unwrap(value))) return;
  PyTypeObject* type = Py_TYPE(value);
  for (PyObject* seen : objects) {
    if (Py_TYPE(seen) == type) return;
  }
  auto pos = objects.end();
  for (auto it = objects.begin(); it != objects.end(); ++it) {
    if (PyType_IsSubtype(type, Py_TYPE(*it))) {
      pos = it;
      break;
    }
  }
  objects.insert(pos, value);
}

struct PyRef {
  PyObject* p = nullptr;
  PyRef() = default;
  explicit PyRef(PyObject* o) : p(o) {}
  ~PyRef() { Py_XDECREF(p); }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  PyObject* get() const { return p; }
  PyObject* release() { return std::exchange(p, nullptr); }
};

PyObject* checked(PyObject* o) {
  if (!o) throw PythonException::fetch();
  return o;
}

// Calls the handlers in torch's order: the innermost mode (popped while it runs, so that
// what it calls goes on to the next mode or to the kernels), then the subclasses' classes.
// NotImplemented passes the call on; a new reference to the first other answer.
PyObject* call_handlers(PyObject* func, PyObject* types, PyObject* args, PyObject* kwargs,
                        const std::vector<PyObject*>& overloaded) {
  const bool had_mode = !dispatch_modes.empty();
  if (had_mode) {
    PyRef mode(pop_mode());
    struct Repush {
      PyObject* mode;
      ~Repush() { push_mode(mode); }
    } repush{mode.get()};
    PyRef handler(checked(PyObject_GetAttrString(mode.get(), "__torch_dispatch__")));
    PyObject* r = checked(PyObject_CallFunctionObjArgs(handler.get(), func, types, args, kwargs, nullptr));
    if (r != Py_NotImplemented) return r;
    Py_DECREF(r);
  }
  for (PyObject* obj : overloaded) {
    // Looked up on the object, as torch does: a classmethod binds to the class, a plain
    // method to the object.
    PyRef handler(checked(PyObject_GetAttrString(obj, "__torch_dispatch__")));
    if (PyMethod_Check(handler.get()) && PyMethod_GET_SELF(handler.get()) == obj &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "Defining your `__torch_dispatch__` as a plain method is deprecated and will be an error in "
                     "future, please define it as a classmethod.",
                     1) != 0) {
      throw PythonException::fetch();
    }
    PyObject* r = checked(PyObject_CallFunctionObjArgs(handler.get(), func, types, args, kwargs, nullptr));
    if (r != Py_NotImplemented) return r;
    Py_DECREF(r);
  }
  PyRef text(checked(PyObject_Str(func)));
  const char* name = PyUnicode_AsUTF8(text.get());
  if (!name) throw PythonException::fetch();
  TORCH_CHECK_TYPE(had_mode || !overloaded.empty(), "no __torch_dispatch__ handler for '", name,
                   "': no TorchDispatchMode is active and no argument is a tensor subclass that defines it");
  std::string names;
  if (had_mode) names += "\n  - the current TorchDispatchMode";
  for (PyObject* obj : overloaded) names += std::string("\n  - tensor subclass ") + Py_TYPE(obj)->tp_name;
  TORCH_CHECK_TYPE(false, "Multiple dispatch failed for '", name,
                   "'; all __torch_dispatch__ handlers returned NotImplemented:", names);
}

// An argument as a handler sees it: a Python number that became a wrapped-number tensor
// (`x + 1`) is the number again, as torch passes it.
// (Read directly: an operator call here would reach this fallback again under a mode.)
PyObject* argument_to_python(const c10::IValue& v) {
  if (v.isTensor() && v.toTensor().defined() && v.toTensor().unsafeGetTensorImpl()->is_wrapped_number() &&
      v.toTensor().is_cpu()) {
    const void* p = v.toTensor().unsafeGetTensorImpl()->data();
    switch (v.toTensor().scalar_type()) {
      case c10::kDouble: return PyFloat_FromDouble(*static_cast<const double*>(p));
      case c10::kLong: return PyLong_FromLongLong(*static_cast<const int64_t*>(p));
      case c10::kBool: return PyBool_FromLong(*static_cast<const bool*>(p));
      case c10::kComplexDouble: {
        const auto z = *static_cast<const c10::complex<double>*>(p);
        return PyComplex_FromDoubles(z.real(), z.imag());
      }
      default: break;
    }
  }
  return from_ivalue(v, /*lists_as_lists=*/true);
}

// The Python key's kernel for every operator: the stack's arguments as torch passes them
// (positional up to the keyword-only ones, trailing defaults left out; keyword-only ones
// that differ from their defaults in kwargs), the handler's answer back on the stack.
void python_fallback_impl(const c10::OperatorHandle& op, c10::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const auto& arguments = schema.arguments();
  const size_t n = arguments.size();
  const size_t first = stack->size() - n;
  PyGILState_STATE gil = PyGILState_Ensure();
  struct Release {
    PyGILState_STATE s;
    ~Release() { PyGILState_Release(s); }
  } release{gil};

  auto is_default = [&](size_t i) {
    return arguments[i].default_value().has_value() && (*stack)[first + i].equals(default_ivalue(arguments[i]));
  };
  size_t kwarg_only_start = n;
  while (kwarg_only_start > 0 && arguments[kwarg_only_start - 1].kwarg_only()) --kwarg_only_start;
  size_t positional_end = kwarg_only_start;
  while (positional_end > 0 && is_default(positional_end - 1)) --positional_end;

  PyRef args(checked(PyTuple_New(static_cast<Py_ssize_t>(positional_end))));
  PyRef kwargs(checked(PyDict_New()));
  for (size_t i = 0; i < n; ++i) {
    if (i >= positional_end && i < kwarg_only_start) continue;
    if (i >= kwarg_only_start && is_default(i)) continue;
    PyObject* value = checked(argument_to_python((*stack)[first + i]));
    if (i < positional_end) {
      PyTuple_SET_ITEM(args.get(), static_cast<Py_ssize_t>(i), value);
    } else {
      PyRef owned(value);
      if (PyDict_SetItemString(kwargs.get(), arguments[i].name().c_str(), value) != 0) throw PythonException::fetch();
    }
  }
  std::vector<PyObject*> overloaded;  // borrowed from args and kwargs
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args.get()); ++i) add_overloaded(overloaded, PyTuple_GET_ITEM(args.get(), i));
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  for (Py_ssize_t pos = 0; PyDict_Next(kwargs.get(), &pos, &key, &value);) add_overloaded(overloaded, value);
  PyRef types(checked(PyTuple_New(static_cast<Py_ssize_t>(overloaded.size()))));
  for (size_t i = 0; i < overloaded.size(); ++i) {
    PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(overloaded[i]));
    Py_INCREF(type);
    PyTuple_SET_ITEM(types.get(), static_cast<Py_ssize_t>(i), type);
  }
  PyRef func(overload_object(op));
  stack->erase(stack->end() - static_cast<std::ptrdiff_t>(n), stack->end());
  PyRef result(call_handlers(func.get(), types.get(), args.get(), kwargs.get(), overloaded));

  const auto& returns = schema.returns();
  auto convert = [&](PyObject* value, const c10::SchemaType& type) {
    TORCH_CHECK_TYPE(fits_schema_type(value, type), "__torch_dispatch__ for ", op.operator_name().str(),
                     " returned ", Py_TYPE(value)->tp_name, " where its schema returns ", type.str());
    return to_ivalue(value, type);
  };
  if (returns.empty()) {
    TORCH_CHECK_TYPE(result.get() == Py_None || (PyTuple_Check(result.get()) && PyTuple_GET_SIZE(result.get()) == 0),
                     "__torch_dispatch__ for ", op.operator_name().str(),
                     " must return None (its schema returns nothing)");
  } else if (returns.size() == 1) {
    stack->push_back(convert(result.get(), returns[0].type()));
  } else {
    PyObject* r = result.get();
    TORCH_CHECK_TYPE((PyTuple_Check(r) || PyList_Check(r)) &&
                         PySequence_Fast_GET_SIZE(r) == static_cast<Py_ssize_t>(returns.size()),
                     "__torch_dispatch__ for ", op.operator_name().str(), " must return a tuple of ", returns.size(),
                     " values");
    for (size_t i = 0; i < returns.size(); ++i) {
      stack->push_back(convert(PySequence_Fast_GET_ITEM(r, static_cast<Py_ssize_t>(i)), returns[i].type()));
    }
  }
}

void python_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet, c10::Stack* stack) {
  try {
    python_fallback_impl(op, stack);
  } catch (const python_error&) {  // a Python error left set by a conversion: carry it as a C++ one
    PyGILState_STATE gil = PyGILState_Ensure();
    PythonException e = PythonException::fetch();
    PyGILState_Release(gil);
    throw e;
  }
}

TORCH_LIBRARY_IMPL(_, Python, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction(&python_fallback)); }

// ---------------------------------------------------------------- object state

// The state is copied without the entries that are the object itself: the garbage
// collector finalizes the objects of a cycle (`o.me = o`) while they still refer to each
// other, and a reference to the object kept here, from C++ where the collector cannot see
// it, would keep the whole cycle alive forever.
void save_state(PythonSlot* slot, PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  if (type->tp_dictoffset != 0) {
    PyObject* dict = PyObject_GenericGetDict(self, nullptr);
    PyObject* copy = dict ? PyDict_New() : nullptr;
    PyObject* key = nullptr;
    PyObject* value = nullptr;
    bool ok = copy != nullptr;
    for (Py_ssize_t pos = 0; ok && PyDict_Next(dict, &pos, &key, &value);) {
      if (value != self) ok = PyDict_SetItem(copy, key, value) == 0;
    }
    Py_XDECREF(dict);
    if (ok) {
      Py_XSETREF(slot->dict, copy);
    } else {
      Py_XDECREF(copy);
      PyErr_Clear();
    }
  }
  PyObject* mro = type->tp_mro;
  for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (!(base->tp_flags & Py_TPFLAGS_HEAPTYPE)) continue;  // __slots__ live on Python classes only
    PyObject* key = nullptr;
    PyObject* descr = nullptr;
    Py_ssize_t pos = 0;
    while (PyDict_Next(base->tp_dict, &pos, &key, &descr)) {
      if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)) continue;
      PyObject* value = Py_TYPE(descr)->tp_descr_get(descr, self, reinterpret_cast<PyObject*>(type));
      if (!value || value == self) {  // an unset slot, or the object itself (see above)
        if (!value) PyErr_Clear();
        Py_XDECREF(value);
        continue;
      }
      Py_INCREF(descr);
      slot->members.emplace_back(descr, value);
    }
  }
}

bool restore_state(PythonSlot* slot, PyObject* obj) {
  if (slot->dict && PyObject_GenericSetDict(obj, slot->dict, nullptr) != 0) return false;
  for (auto& [descr, value] : slot->members) {
    if (Py_TYPE(descr)->tp_descr_set(descr, obj, value) != 0) return false;
  }
  slot->drop_state();
  return true;
}

PyObject* alloc_instance(PyTypeObject* type, at::Tensor t) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  auto* tobj = reinterpret_cast<TensorObject*>(obj);
  new (&tobj->tensor) at::Tensor(std::move(t));
  tobj->weakreflist = nullptr;
  return obj;
}

// ---------------------------------------------------------------- _C functions

// Tensor._make_wrapper_subclass's arguments after cls, as torch 1.13 declares them.
const PythonArgParser& wrapper_subclass_parser() {
  static const c10::FunctionSchema schema = c10::parseSchema(
      "_make_wrapper_subclass(SymInt[] size, SymInt[]? strides=None, SymInt? storage_offset=None, "
      "MemoryFormat? memory_format=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=False, bool? requires_grad=False, str? dispatch_sizes_strides_policy=None, "
      "bool dispatch_device=False, bool dispatch_layout=False) -> Tensor");
  static const PythonArgParser parser("_make_wrapper_subclass", {&schema}, {nullptr}, false);
  return parser;
}

// A tensor of the given geometry whose storage has no memory, in an instance of cls: what a
// subclass that keeps its data elsewhere (a wrapped tensor, a scale and int8 values, nothing
// at all) builds its instances from. Its operators go to cls.__torch_dispatch__.
PyObject* make_wrapper_subclass(PyObject*, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(PyTuple_GET_SIZE(args) >= 1, "_make_wrapper_subclass() missing required argument 'cls'");
  PyObject* cls = PyTuple_GET_ITEM(args, 0);
  TORCH_CHECK_TYPE(PyType_Check(cls) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), TensorType),
                   "_make_wrapper_subclass: cls must be a subclass of Tensor");
  TORCH_CHECK_TYPE(type_has_torch_dispatch(reinterpret_cast<PyTypeObject*>(cls)),
                   reinterpret_cast<PyTypeObject*>(cls)->tp_name, " must define __torch_dispatch__");
  PyRef rest(checked(PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args))));
  ParsedArgs r;
  wrapper_subclass_parser().parse(rest.get(), kwargs, r);
  TORCH_CHECK(!r.toBoolOptional(7).value_or(false), "_make_wrapper_subclass: pin_memory is not supported");
  const c10::Layout layout = r.layoutOptional(5).value_or(c10::kStrided);
  TORCH_CHECK_NOT_IMPLEMENTED(layout == c10::kStrided, "_make_wrapper_subclass: only the strided layout is supported");
  TORCH_CHECK_NOT_IMPLEMENTED(!r.stringViewOptional(9).has_value(),
                              "_make_wrapper_subclass: dispatch_sizes_strides_policy is not supported (sizes and "
                              "strides are the ones given)");
  const std::vector<int64_t> sizes = r.intlist(0);
  // Contiguous unless strides are given: memory_format is accepted and, as in torch, unused.
  std::vector<int64_t> strides(sizes.size(), 1);
  if (auto given = r.intlistOptional(1)) {
    strides = *given;
  } else {
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  }
  TORCH_CHECK(strides.size() == sizes.size(), "_make_wrapper_subclass: ", sizes.size(), " sizes but ",
              strides.size(), " strides");
  const int64_t offset = r.toInt64Optional(2).value_or(0);
  const c10::ScalarType dtype = r.scalartypeOptional(4).value_or(c10::get_default_dtype());
  const c10::Device device = r.deviceOptional(6).value_or(c10::Device(c10::kCPU));

  const size_t nbytes = c10::computeStorageNbytes(sizes, strides, c10::elementSize(dtype), offset);
  c10::Storage storage(c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t{}, nbytes,
                                                             c10::DataPtr(nullptr, device), nullptr,
                                                             /*resizable=*/false));
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(storage), dtype, c10::kStrided);
  impl->set_sizes_and_strides(sizes, strides);
  impl->set_storage_offset(offset);
  at::Tensor t(std::move(impl));
  if (r.toBoolOptional(8).value_or(false)) t.set_requires_grad(true);
  return new_subclass_instance(reinterpret_cast<PyTypeObject*>(cls), std::move(t));
  END_HANDLE_TH_ERRORS
}

// Tensor.__torch_dispatch__: runs func with the Python key excluded (the kernels below it).
PyObject* disabled_torch_dispatch_impl(PyObject*, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  PyObject* func = nullptr;
  PyObject* types = nullptr;
  PyObject* fargs = nullptr;
  PyObject* fkwargs = nullptr;
  static const char* kwlist[] = {"func", "types", "args", "kwargs", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OO:_disabled_torch_dispatch_impl", const_cast<char**>(kwlist),
                                   &func, &types, &fargs, &fkwargs)) {
    return nullptr;
  }
  TORCH_CHECK_TYPE(fkwargs == nullptr || fkwargs == Py_None || PyDict_Check(fkwargs),
                   "_disabled_torch_dispatch_impl: kwargs must be a dict or None");
  PyRef empty;
  if (!fargs) fargs = empty.p = checked(PyTuple_New(0));
  TORCH_CHECK_TYPE(PyTuple_Check(fargs), "_disabled_torch_dispatch_impl: args must be a tuple");
  if (fkwargs == Py_None) fkwargs = nullptr;
  c10::impl::ExcludeDispatchKeyGuard no_python(c10::DispatchKey::Python);
  return PyObject_Call(func, fargs, fkwargs);
  END_HANDLE_TH_ERRORS
}

PyObject* push_on_stack(PyObject*, PyObject* mode) {
  HANDLE_TH_ERRORS
  push_mode(mode);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* pop_stack(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  return pop_mode();
  END_HANDLE_TH_ERRORS
}

PyObject* stack_len(PyObject*, PyObject*) { return PyLong_FromSize_t(dispatch_modes.size()); }

PyObject* stack_at(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  const Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return nullptr;
  TORCH_CHECK_INDEX(i >= 0 && static_cast<size_t>(i) < dispatch_modes.size(),
                    "Index out of range: the dispatch mode stack has ", dispatch_modes.size(), " entries");
  PyObject* mode = dispatch_modes[static_cast<size_t>(i)];
  Py_INCREF(mode);
  return mode;
  END_HANDLE_TH_ERRORS
}

// _DisableTorchDispatch's switch: whether the Python key is excluded on this thread; sets it
// and returns what it was.
PyObject* set_torch_dispatch_disabled(PyObject*, PyObject* arg) {
  auto& tls = c10::thread_local_state();
  const bool was = tls.excluded.has(c10::DispatchKey::Python);
  tls.excluded = PyObject_IsTrue(arg) ? tls.excluded.add(c10::DispatchKey::Python)
                                      : tls.excluded.remove(c10::DispatchKey::Python);
  return PyBool_FromLong(was);
}

PyObject* is_python_dispatch(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(is_tensor(arg), "_is_python_dispatch: expected a Tensor");
  return PyBool_FromLong(unwrap(arg).key_set().has(c10::DispatchKey::Python));
  END_HANDLE_TH_ERRORS
}

PyMethodDef functions[] = {
    {"_make_wrapper_subclass", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(make_wrapper_subclass)),
     METH_VARARGS | METH_KEYWORDS, nullptr},
    {"_disabled_torch_dispatch_impl",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(disabled_torch_dispatch_impl)),
     METH_VARARGS | METH_KEYWORDS, nullptr},
    {"_push_on_torch_dispatch_stack", push_on_stack, METH_O, nullptr},
    {"_pop_torch_dispatch_stack", pop_stack, METH_NOARGS, nullptr},
    {"_len_torch_dispatch_stack", stack_len, METH_NOARGS, nullptr},
    {"_get_dispatch_stack_at", stack_at, METH_O, nullptr},
    {"_set_torch_dispatch_disabled", set_torch_dispatch_disabled, METH_O, nullptr},
    {"_is_python_dispatch", is_python_dispatch, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool torch_dispatch_mode_active() { return !dispatch_modes.empty(); }

bool type_has_torch_dispatch(PyTypeObject* type) {
  if (type == TensorType) return false;
  static PyObject* name = PyUnicode_InternFromString("__torch_dispatch__");
  PyObject* attr = _PyType_Lookup(type, name);
  if (!attr) return false;
  if (Py_IS_TYPE(attr, &PyClassMethod_Type) || Py_IS_TYPE(attr, &PyStaticMethod_Type)) {
    PyObject* inner = PyObject_GetAttrString(attr, "__func__");
    if (!inner) {
      PyErr_Clear();
      return true;
    }
    const bool disabled = inner == disabled_dispatch_impl;
    Py_DECREF(inner);
    return !disabled;
  }
  return attr != disabled_dispatch_impl;
}

PyObject* new_subclass_instance(PyTypeObject* type, at::Tensor t) {
  const bool dispatch = type_has_torch_dispatch(type);
  if (dispatch) {
    const PythonSlot* held = slot_of(t);
    TORCH_CHECK(held == nullptr, "Creating a new Tensor subclass ", type->tp_name,
                " but the raw Tensor object is already associated to a python object of type ", held->type->tp_name);
  }
  c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  PyObject* obj = alloc_instance(type, std::move(t));
  if (!obj) throw python_error();
  if (dispatch) impl->set_pyobj_slot(std::make_unique<PythonSlot>(type, obj));
  return obj;
}

PyObject* wrap_python_dispatch_tensor(at::Tensor t) {
  PythonSlot* slot = slot_of(t);
  if (slot->live) {
    Py_INCREF(slot->live);
    return slot->live;
  }
  PyObject* obj = alloc_instance(slot->type, std::move(t));
  if (!obj) return nullptr;
  if (!restore_state(slot, obj)) {
    Py_DECREF(obj);
    return nullptr;
  }
  slot->live = obj;
  return obj;
}

void tensor_finalize(PyObject* self) {
  const at::Tensor& t = unwrap(self);
  if (!t.defined() || !t.key_set().has(c10::DispatchKey::Python)) return;
  PythonSlot* slot = slot_of(t);
  if (!slot || slot->live != self || t.use_count() == 1) return;  // (the tensor goes with its object)
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  save_state(slot, self);
  PyErr_Restore(type, value, traceback);
}

void forget_object(PyObject* self) {
  const at::Tensor& t = unwrap(self);
  if (!t.defined() || !t.key_set().has(c10::DispatchKey::Python)) return;
  PythonSlot* slot = slot_of(t);
  if (slot && slot->live == self) slot->live = nullptr;
}

bool init_torch_dispatch(PyObject* module) {
  if (PyModule_AddFunctions(module, functions) != 0) return false;
  disabled_dispatch_impl = PyObject_GetAttrString(module, "_disabled_torch_dispatch_impl");
  return disabled_dispatch_impl != nullptr;
}

}  // namespace tessera::python
