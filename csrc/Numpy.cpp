// numpy interop without copies: Tensor.numpy() is an ndarray over the tensor's memory
// (whose base keeps the tensor alive), tessera.from_numpy a tensor over the array's
// memory (holding a reference to the array until its storage goes). numpy's C API is
// loaded on first use, so `import tessera` does not import numpy.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tessera_numpy_array_api
#include "python_api.h"

#include <numpy/arrayobject.h>

#include <aten/core/TensorUtils.h>
#include <autograd/variable.h>
#include <c10/util/Exception.h>

#include <vector>

namespace tessera::python {

namespace {

void ensure_numpy() {
  static bool loaded = false;
  if (loaded) return;
  if (_import_array() < 0) throw python_error();
  loaded = true;
}

int numpy_type_of(c10::ScalarType t) {
  switch (t) {
    case c10::kDouble: return NPY_DOUBLE;
    case c10::kFloat: return NPY_FLOAT;
    case c10::kHalf: return NPY_HALF;
    case c10::kComplexDouble: return NPY_CDOUBLE;
    case c10::kComplexFloat: return NPY_CFLOAT;
    case c10::kLong: return NPY_INT64;
    case c10::kInt: return NPY_INT32;
    case c10::kShort: return NPY_INT16;
    case c10::kChar: return NPY_INT8;
    case c10::kByte: return NPY_UINT8;
    case c10::kBool: return NPY_BOOL;
    default: TORCH_CHECK_TYPE(false, "Got unsupported ScalarType ", t);
  }
}

c10::ScalarType scalar_type_of(PyArrayObject* array) {
  switch (PyArray_TYPE(array)) {
    case NPY_DOUBLE: return c10::kDouble;
    case NPY_FLOAT: return c10::kFloat;
    case NPY_HALF: return c10::kHalf;
    case NPY_CDOUBLE: return c10::kComplexDouble;
    case NPY_CFLOAT: return c10::kComplexFloat;
    case NPY_LONG:
    case NPY_LONGLONG:
      TORCH_CHECK_TYPE(PyArray_ITEMSIZE(array) == 8, "can't convert np.ndarray of a 4-byte long");
      return c10::kLong;
    case NPY_INT: return c10::kInt;
    case NPY_SHORT: return c10::kShort;
    case NPY_BYTE: return c10::kChar;
    case NPY_UBYTE: return c10::kByte;
    case NPY_BOOL: return c10::kBool;
    default: {
      PyObject* type = reinterpret_cast<PyObject*>(PyArray_DESCR(array)->typeobj);
      PyObject* name = PyObject_GetAttrString(type, "__name__");
      std::string n = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : "unknown";
      Py_XDECREF(name);
      PyErr_Clear();
      TORCH_CHECK_TYPE(false, "can't convert np.ndarray of type numpy.", n,
                       ". The only supported types are: float64, float32, float16, complex64, complex128, int64, "
                       "int32, int16, int8, uint8, and bool.");
    }
  }
}

void release_array(void* array) {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(array));
  PyGILState_Release(gil);
}

}  // namespace

PyObject* tensor_to_numpy(const at::Tensor& tensor, bool force) {
  check_plain_geometry(tensor, OpaqueAccess::Numpy);
  ensure_numpy();
  at::Tensor t = tensor;
  if (force) {
    t = torch::autograd::impl::tensor_data(t);
    if (!t.is_cpu()) t = t.to(std::nullopt, std::nullopt, c10::Device(c10::kCPU));
    t = t.resolve_conj().resolve_neg();  // numpy sees raw memory: a copy with the logical values
  } else {
    TORCH_CHECK_TYPE(t.is_cpu(), "can't convert ", t.device(), " device type tensor to numpy. Use Tensor.cpu() to copy ",
                     "the tensor to host memory first.");
    TORCH_CHECK(!t.requires_grad(), "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
    // An array would alias raw memory that the view reads conjugated/negated.
    TORCH_CHECK(!t.is_conj(), "Can't call numpy() on Tensor that has conjugate bit set. ",
                "Use tensor.resolve_conj().numpy() instead.");
    TORCH_CHECK(!t.is_neg(), "Can't call numpy() on Tensor that has negative bit set. ",
                "Use tensor.resolve_neg().numpy() instead.");
  }
  const int type = numpy_type_of(t.scalar_type());
  const int ndim = static_cast<int>(t.dim());
  std::vector<npy_intp> dims(t.sizes().begin(), t.sizes().end());
  std::vector<npy_intp> strides;
  for (int64_t s : t.strides()) strides.push_back(static_cast<npy_intp>(s * static_cast<int64_t>(t.itemsize())));
  PyObject* array = PyArray_New(&PyArray_Type, ndim, dims.data(), type, strides.data(), t.numel() ? t.data_ptr() : nullptr,
                                0, NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE, nullptr);
  if (!array) throw python_error();
  if (t.numel() == 0) return array;  // numpy allocated its own (empty) buffer
  PyObject* owner = wrap(t);
  if (!owner || PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), owner) < 0) {
    Py_DECREF(array);
    throw python_error();
  }
  return array;
}

at::Tensor tensor_from_numpy(PyObject* obj) {
  ensure_numpy();
  TORCH_CHECK_TYPE(PyArray_Check(obj), "expected np.ndarray (got ", Py_TYPE(obj)->tp_name, ")");
  auto* array = reinterpret_cast<PyArrayObject*>(obj);
  // torch's order of checks (and so of the errors a bad array gets): writability warning,
  // strides, byte order, dtype.
  if (!PyArray_ISWRITEABLE(array)) {
    static bool warned = false;
    if (!warned) {
      warned = true;
      if (PyErr_WarnEx(PyExc_UserWarning,
                       "The given NumPy array is not writable, and tessera does not support non-writable tensors. "
                       "This means writing to this tensor will result in undefined behavior. You may want to copy the "
                       "array to protect its data or make it writable before converting it to a tensor. This type of "
                       "warning will be suppressed for the rest of this program.",
                       1) < 0) {
        throw python_error();
      }
    }
  }
  const int ndim = PyArray_NDIM(array);
  const auto itemsize = static_cast<int64_t>(PyArray_ITEMSIZE(array));
  std::vector<int64_t> sizes(PyArray_DIMS(array), PyArray_DIMS(array) + ndim);
  std::vector<int64_t> strides;
  for (int d = 0; d < ndim; ++d) {
    const int64_t s = PyArray_STRIDES(array)[d];
    TORCH_CHECK_VALUE(s >= 0, "At least one stride in the given numpy array is negative, and tensors with negative "
                      "strides are not currently supported. (You can probably work around this by making a copy of your "
                      "array  with array.copy().) ");
    TORCH_CHECK_VALUE(s % itemsize == 0, "given numpy array strides not a multiple of the element byte size. Copy the "
                      "numpy array to reallocate the memory.");
    strides.push_back(s / itemsize);
  }
  TORCH_CHECK_VALUE(PyArray_ISNOTSWAPPED(array), "given numpy array has byte order different from the native byte "
                    "order. Conversion between byte orders is currently not supported.");
  const c10::ScalarType dtype = scalar_type_of(array);
  Py_INCREF(obj);
  c10::DataPtr data(PyArray_DATA(array), obj, release_array, c10::Device(c10::kCPU));
  return at::from_blob(std::move(data), sizes, strides, dtype);
}

namespace {

PyObject* numpy_method(PyObject* self, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  static const char* names[] = {"force", nullptr};
  int force = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$p:numpy", const_cast<char**>(names), &force)) return nullptr;
  return tensor_to_numpy(unwrap(self), force != 0);
  END_HANDLE_TH_ERRORS
}

PyObject* from_numpy_fn(PyObject*, PyObject* array) {
  HANDLE_TH_ERRORS
  return wrap(tensor_from_numpy(array));
  END_HANDLE_TH_ERRORS
}

PyMethodDef tensor_methods[] = {
    {"numpy", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(numpy_method)), METH_VARARGS | METH_KEYWORDS,
     "numpy(*, force=False) -> numpy.ndarray\n\nAn ndarray sharing this tensor's memory (force=True: a detached CPU "
     "copy when sharing is impossible)."},
    {nullptr, nullptr, 0, nullptr}};

PyMethodDef module_functions[] = {
    {"from_numpy", from_numpy_fn, METH_O,
     "from_numpy(ndarray) -> Tensor\n\nA tensor sharing the array's memory: writes to either show in the other."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyMethodDef* numpy_tensor_methods() { return tensor_methods; }
PyMethodDef* numpy_functions() { return module_functions; }

}  // namespace tessera::python
