// The __torch_function__ protocol (torch.overrides) at the binding layer: which arguments of
// a call override it, the per-thread state that turns it off (DisableTorchFunction,
// DisableTorchFunctionSubclass) and the TorchFunctionMode stack, and the hand-off of an
// overridden call to tessera.overrides, which picks the override that answers.
#pragma once

#include "python_api.h"

#include <c10/macros/Macros.h>

#include <atomic>
#include <cstdint>

namespace tessera::python {

class ParsedArgs;

// Mirrors torch's TorchFunctionDisabledState: SubclassesDisabled while an override runs its
// default implementation (modes still see the calls), AllDisabled under DisableTorchFunction.
enum class TorchFunctionState : uint8_t { Enabled, SubclassesDisabled, AllDisabled };

struct TorchFunctionTLS {
  TorchFunctionState state = TorchFunctionState::Enabled;
  uint32_t modes = 0;  // the depth of this thread's TorchFunctionMode stack
};
extern thread_local TorchFunctionTLS torch_function_tls;
// How many modes are pushed on all threads together: read first, so that a call made while
// no thread has a mode (the usual case) costs one plain load, not a thread-local lookup.
extern std::atomic<int> torch_function_modes_pushed;

// Whether a TorchFunctionMode must see every call made now.
inline bool torch_function_mode_active() {
  return C10_UNLIKELY(torch_function_modes_pushed.load(std::memory_order_relaxed) != 0) &&
         torch_function_tls.modes != 0 && torch_function_tls.state != TorchFunctionState::AllDisabled;
}

// Whether obj's type defines __torch_function__ (other than _disabled_torch_function_impl),
// whatever the thread's state. Exact tensors and Python's basic types never do.
bool has_torch_function_attr(PyObject* obj);

// Whether obj overrides the call it is passed to: a Tensor subclass or another object with
// __torch_function__, while the thread lets subclasses override.
inline bool is_overloaded(PyObject* obj) {
  PyTypeObject* tp = Py_TYPE(obj);
  if (tp == TensorType || tp == &PyLong_Type || tp == &PyFloat_Type || tp == &PyBool_Type) return false;
  return torch_function_tls.state == TorchFunctionState::Enabled && has_torch_function_attr(obj);
}

// The same for a value in a tensor or tensor-list position: the object, or an item of a
// list or tuple.
bool value_overrides(PyObject* obj);

// Whether a Tensor method (or property getter, or operator) called on self must go to
// __torch_function__.
inline bool self_has_torch_function(PyObject* self) {
  return (Py_TYPE(self) != TensorType && is_overloaded(self)) || torch_function_mode_active();
}

// A parsed call whose arguments (or a mode) override it: hands (public API object, the
// overriding arguments, args, kwargs) to tessera.overrides and returns what answered.
// `self` is the module of a function binding or the tensor of a method; `name` is the
// binding's Python name. Never returns null without a Python error set.
PyObject* handle_torch_function(const ParsedArgs& r, PyObject* self, PyObject* args, PyObject* kwargs,
                                const char* name, bool is_method);
// The same with the public API object given (tessera.ops' operator packets).
PyObject* handle_torch_function(const ParsedArgs& r, PyObject* public_api, PyObject* args, PyObject* kwargs);
// The same for a hand-written Tensor method (self is the only tensor argument it checks).
PyObject* handle_method_torch_function(PyObject* self, const char* name, PyObject* args, PyObject* kwargs);
// The same for a hand-written module function: module.<name> is the public API.
PyObject* handle_function_torch_function(PyObject* module, const char* name, PyObject* args, PyObject* kwargs);
// A property getter: the public API is Tensor.<name>.__get__, called with (self,).
PyObject* handle_getter_torch_function(PyObject* self, const char* name);
// A Python operator (the slots): `name` is the Tensor attribute torch passes as the
// function for it ("add" for +, "__floordiv__" for //); a reflected call (only b is a tensor
// or overrides: 1 - t) passes `reflected` ("__rsub__", or "add" where the operands commute)
// with (b, a), as Python's own protocol would call it. A null `reflected`: never reflected.
PyObject* handle_operator_torch_function(const char* name, const char* reflected, PyObject* a, PyObject* b);
// Whether either operand (or a mode) asks a binary operator to dispatch to __torch_function__.
inline bool operator_has_torch_function(PyObject* a, PyObject* b) {
  return is_overloaded(a) || is_overloaded(b) || torch_function_mode_active();
}

// Adds tessera._C's functions of the protocol (_has_torch_function, the mode stack,
// _disabled_torch_function_impl, ...).
bool init_torch_function(PyObject* module);

}  // namespace tessera::python

// The first statement of a hand-written Tensor method or property getter: an overriding self
// (or a mode) takes the call.
#define TESSERA_TORCH_FUNCTION_METHOD(self, name, args, kwargs)        \
  if (C10_UNLIKELY(::tessera::python::self_has_torch_function(self))) \
  return ::tessera::python::handle_method_torch_function(self, name, args, kwargs)
#define TESSERA_TORCH_FUNCTION_GETTER(self, name)                      \
  if (C10_UNLIKELY(::tessera::python::self_has_torch_function(self))) \
  return ::tessera::python::handle_getter_torch_function(self, name)
#define TESSERA_TORCH_FUNCTION_METHOD_O(self, name, arg)                                          \
  if (C10_UNLIKELY(::tessera::python::self_has_torch_function(self))) {                          \
    PyObject* tf_args_ = PyTuple_Pack(1, arg);                                                   \
    if (!tf_args_) return nullptr;                                                               \
    PyObject* tf_result_ = ::tessera::python::handle_method_torch_function(self, name, tf_args_, nullptr); \
    Py_DECREF(tf_args_);                                                                         \
    return tf_result_;                                                                           \
  }
