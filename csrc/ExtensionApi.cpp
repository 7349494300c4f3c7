// tessera._C._tensor_api: the table of tensor functions that extension modules built on
// csrc/extension.h call (wrapping and unwrapping tessera.Tensor objects).
#include "extension.h"

#include "python_api.h"

namespace tessera::python {

namespace {

bool is_tensor_object(PyObject* obj) { return is_tensor(obj); }
const at::Tensor* unwrap_tensor(PyObject* obj) { return &unwrap(obj); }

const TensorApi kTensorApi{kTensorApiVersion, &wrap, &is_tensor_object, &unwrap_tensor, &set_python_error};

}  // namespace

bool init_extension_api(PyObject* module) {
  // (the capsule is named by its full path, as PyCapsule_Import looks it up)
  PyObject* capsule = PyCapsule_New(const_cast<TensorApi*>(&kTensorApi), kTensorApiCapsule, nullptr);
  if (capsule == nullptr) return false;
  const int added = PyModule_AddObjectRef(module, "_tensor_api", capsule);
  Py_DECREF(capsule);
  return added == 0;
}

}  // namespace tessera::python
