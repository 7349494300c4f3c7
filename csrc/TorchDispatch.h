// The __torch_dispatch__ protocol (torch.utils._python_dispatch): a Tensor subclass whose
// class defines __torch_dispatch__, or a TorchDispatchMode on this thread's stack, sees
// every operator below autograd through the Python dispatch key. This layer keeps the
// tensor <-> Python object link such tensors need, and the mode stack.
#pragma once

#include "python_api.h"

namespace tessera::python {

// Whether instances of `type` handle their operators in Python: its __torch_dispatch__ is
// not Tensor's (_disabled_torch_dispatch_impl).
bool type_has_torch_dispatch(PyTypeObject* type);

// A new instance of the Tensor subclass `type` holding t (a new reference). When the class
// defines __torch_dispatch__, t gets the Python key and keeps the object's class and
// state, so the tensor comes back to Python as that object (see wrap).
PyObject* new_subclass_instance(PyTypeObject* type, at::Tensor t);

// wrap() of a tensor with the Python key: the object that stands for it now, else a new
// instance of its class with the state (__dict__ and __slots__) the last one had.
PyObject* wrap_python_dispatch_tensor(at::Tensor t);

// Tensor's tp_finalize: an object of a __torch_dispatch__ class that goes while its tensor
// lives on (in a graph, in another tensor's wrapper) leaves its state with the tensor.
void tensor_finalize(PyObject* self);
// Tensor's dealloc: the tensor no longer has that object (whether or not tensor_finalize ran:
// a class with __del__ replaces it).
void forget_object(PyObject* self);

// Whether this thread has a TorchDispatchMode pushed.
bool torch_dispatch_mode_active();

// Registers the Python key's fallback and _C's functions (_make_wrapper_subclass, the
// dispatch-mode stack, _DisableTorchDispatch, _disabled_torch_dispatch_impl).
bool init_torch_dispatch(PyObject* module);

}  // namespace tessera::python
