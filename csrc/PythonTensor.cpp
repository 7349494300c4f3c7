// tessera.Tensor, a raw CPython type holding one at::Tensor, and tessera.Size.
// Metadata accessors and the arithmetic fast path (`a + b`, `a * 2.5`) are written
// directly against CPython so that an operator costs little more than its dispatch;
// every other method comes from the generated bindings (generated_tensor_methods()).
#include "ArgParser.h"
#include "TorchDispatch.h"
#include "TorchFunction.h"
#include "python_api.h"

#include <aten/core/Dispatch.h>
#include <aten/core/NamedTensorUtils.h>
#include <aten/core/NestedTensorImpl.h>
#include <aten/ops/Functions.h>
#include <aten/ops/OperatorHandles.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace tessera::python {

void check_plain_geometry(const at::Tensor& t, OpaqueAccess what) {
  const c10::DispatchKeySet ks = t.key_set();
  if (C10_LIKELY(!ks.has_any({c10::DispatchKey::MkldnnCPU, c10::DispatchKey::NestedTensorCPU,
                              c10::DispatchKey::SparseCPU, c10::DispatchKey::SparseCsrCPU,
                              c10::DispatchKey::SparseMeta, c10::DispatchKey::SparseCsrMeta}))) {
    return;
  }
  if (c10::isSparseLayout(t.layout())) {
    // A sparse tensor has a shape but neither strides nor storage (its data are its members).
    if (what == OpaqueAccess::Sizes) return;
    const bool coo = t.layout() == c10::kSparse;
    TORCH_CHECK(what != OpaqueAccess::Strides, coo ? "Sparse" : "Sparse CSR", " tensors do not have strides");
    TORCH_CHECK(what != OpaqueAccess::Data, "Cannot access data pointer of Tensor that doesn't have storage");
    TORCH_CHECK_TYPE(what != OpaqueAccess::Numpy, "can't convert ", coo ? "Sparse" : "SparseCsr",
                     " layout tensor to numpy. Use Tensor.dense() first.");
    TORCH_CHECK(false, "Cannot access storage of ", coo ? "SparseTensorImpl" : "SparseCsrTensorImpl");
  }
  if (ks.has(c10::DispatchKey::NestedTensorCPU)) {
    if (what == OpaqueAccess::Data) return;  // the packed buffer's address, as torch
    const bool sizes = what == OpaqueAccess::Sizes || what == OpaqueAccess::Numpy;
    TORCH_CHECK(false, "Internal error: NestedTensorImpl doesn't support ", sizes ? "sizes" : "strides",
                ". Please file an issue on https://github.com/pytorch/nestedtensor");
  }
  if (what == OpaqueAccess::Sizes) return;  // an mkldnn tensor has sizes
  TORCH_CHECK(what != OpaqueAccess::Strides, "mkldnn tensors have no strides (their memory layout is opaque)");
  TORCH_CHECK(what != OpaqueAccess::Data, "Cannot access data pointer of Tensor that doesn't have storage");
  TORCH_CHECK_TYPE(what != OpaqueAccess::Numpy, "can't convert Mkldnn layout tensor to numpy. Use Tensor.dense() first.");
  TORCH_CHECK_NOT_IMPLEMENTED(false, "Cannot access storage of OpaqueTensorImpl");
}

PyTypeObject* TensorType = nullptr;
PyTypeObject* SizeType = nullptr;

namespace {

PyTypeObject TensorTypeObj{};
PyTypeObject SizeTypeObj{};

TensorObject* as_tensor_object(PyObject* o) { return reinterpret_cast<TensorObject*>(o); }

// ================================================================ tessera.Size

PyObject* size_from_tuple(PyObject* tuple) {
  // A Size with the items of `tuple` (a new reference); consumes nothing.
  Py_ssize_t n = PyTuple_GET_SIZE(tuple);
  PyObject* s = SizeTypeObj.tp_alloc(&SizeTypeObj, n);
  if (!s) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(tuple, i);
    Py_INCREF(item);
    PyTuple_SET_ITEM(s, i, item);
  }
  return s;
}

PyObject* size_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* iterable = nullptr;
  static const char* kwlist[] = {"sizes", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Size", const_cast<char**>(kwlist), &iterable)) return nullptr;
  if (!iterable) return type->tp_alloc(type, 0);
  PyObject* items = PySequence_Tuple(iterable);
  if (!items) return nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(items);
  PyObject* s = type->tp_alloc(type, n);
  if (!s) {
    Py_DECREF(items);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyTuple_GET_ITEM(items, i);
    PyObject* value = nullptr;
    if (is_tensor(item)) {
      const at::Tensor& t = unwrap(item);
      if (t.numel() == 1 && c10::isIntegralType(t.scalar_type(), false)) value = PyNumber_Index(item);
    } else if (PyIndex_Check(item)) {
      value = PyNumber_Index(item);
    }
    if (!value) {
      if (!PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "tessera.Size() takes an iterable of 'int' (item %zd is '%s')", i,
                     Py_TYPE(item)->tp_name);
      }
      Py_DECREF(items);
      Py_DECREF(s);
      return nullptr;
    }
    PyTuple_SET_ITEM(s, i, value);
  }
  Py_DECREF(items);
  return s;
}

PyObject* size_repr(PyObject* self) {
  std::string r = "tessera.Size([";
  Py_ssize_t n = PyTuple_GET_SIZE(self);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (i) r += ", ";
    PyObject* s = PyObject_Repr(PyTuple_GET_ITEM(self, i));
    if (!s) return nullptr;
    const char* c = PyUnicode_AsUTF8(s);
    if (!c) {
      Py_DECREF(s);
      return nullptr;
    }
    r += c;
    Py_DECREF(s);
  }
  r += "])";
  return PyUnicode_FromStringAndSize(r.data(), static_cast<Py_ssize_t>(r.size()));
}

// Tuple operations that give a tuple give a Size, as torch's do.
PyObject* as_size_result(PyObject* result) {
  if (!result || !PyTuple_CheckExact(result)) return result;
  PyObject* s = size_from_tuple(result);
  Py_DECREF(result);
  return s;
}
PyObject* size_concat(PyObject* a, PyObject* b) { return as_size_result(PyTuple_Type.tp_as_sequence->sq_concat(a, b)); }
PyObject* size_repeat(PyObject* a, Py_ssize_t n) { return as_size_result(PyTuple_Type.tp_as_sequence->sq_repeat(a, n)); }
PyObject* size_subscript(PyObject* a, PyObject* key) {
  PyObject* r = PyTuple_Type.tp_as_mapping->mp_subscript(a, key);
  return PySlice_Check(key) ? as_size_result(r) : r;
}

PyObject* size_numel(PyObject* self, PyObject*) {
  long long n = 1;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(self, i));
    if (v == -1 && PyErr_Occurred()) return nullptr;
    n *= v;
  }
  return PyLong_FromLongLong(n);
}
PyObject* size_reduce(PyObject* self, PyObject*) {
  PyObject* items = PyTuple_GetSlice(self, 0, PyTuple_GET_SIZE(self));
  if (!items) return nullptr;
  return Py_BuildValue("(O(N))", reinterpret_cast<PyObject*>(&SizeTypeObj), items);
}

PySequenceMethods size_as_sequence{};
PyMappingMethods size_as_mapping{};
PyMethodDef size_methods[] = {{"numel", size_numel, METH_NOARGS, "The number of elements a tensor of this shape has."},
                              {"__reduce__", size_reduce, METH_NOARGS, nullptr},
                              {nullptr, nullptr, 0, nullptr}};

bool init_size_type(PyObject* module) {
  PyTypeObject* t = &SizeTypeObj;
  t->tp_name = "tessera.Size";
  t->tp_base = &PyTuple_Type;
  t->tp_flags = Py_TPFLAGS_DEFAULT;
  t->tp_new = size_new;
  t->tp_repr = size_repr;
  t->tp_methods = size_methods;
  size_as_sequence.sq_concat = size_concat;
  size_as_sequence.sq_repeat = size_repeat;
  size_as_mapping.mp_subscript = size_subscript;
  t->tp_as_sequence = &size_as_sequence;
  t->tp_as_mapping = &size_as_mapping;
  t->tp_doc = "The shape of a tensor: a tuple of ints.";
  SizeType = t;
  return add_type(module, t, "Size");
}

// ================================================================ reading elements


at::Tensor readable(const at::Tensor& t, const char* what) {
  TORCH_CHECK_NOT_IMPLEMENTED(!t.is_meta(), what);
  if (t.is_cpu()) return t;
  at::Tensor cpu = at::empty(t.sizes(), at::TensorOptions(t.scalar_type()).device(c10::Device(c10::kCPU)));
  cpu.copy_(t);
  return cpu;
}

template <typename T>
PyObject* element_to_python(const char* p) {
  if constexpr (std::is_same_v<T, bool>) {
    // Read as a byte: memory from outside (a file, numpy) may hold bytes other than 0 and 1,
    // and loading those as bool is undefined; any nonzero byte is true.
    return PyBool_FromLong(*reinterpret_cast<const unsigned char*>(p) != 0);
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::is_integral_v<T>) {
      return PyLong_FromLongLong(static_cast<long long>(v));
    } else if constexpr (std::is_same_v<T, c10::complex<float>> || std::is_same_v<T, c10::complex<double>>) {
      return PyComplex_FromDoubles(static_cast<double>(v.real()), static_cast<double>(v.imag()));
    } else if constexpr (std::is_same_v<T, c10::complex<c10::Half>>) {
      return PyComplex_FromDoubles(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      return PyFloat_FromDouble(static_cast<double>(v));
    } else {
      return PyFloat_FromDouble(static_cast<double>(static_cast<float>(v)));
    }
  }
}

template <typename T>
PyObject* tolist_rec(const char* data, c10::IntArrayRef sizes, c10::IntArrayRef strides, size_t dim) {
  if (dim == sizes.size()) return element_to_python<T>(data);
  int64_t n = sizes[dim];
  PyObject* list = PyList_New(n);
  if (!list) return nullptr;
  const int64_t step = strides[dim] * static_cast<int64_t>(sizeof(T));
  for (int64_t i = 0; i < n; ++i) {
    PyObject* item = tolist_rec<T>(data + i * step, sizes, strides, dim + 1);
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

c10::Scalar item_of(const at::Tensor& t) {
  TORCH_CHECK_NOT_IMPLEMENTED(!t.is_mkldnn() && !t.is_nested(), "item() is not supported on ",
                              t.is_mkldnn() ? "mkldnn" : "nested", " tensors");
  if (!t.is_cpu() && !t.is_meta()) return readable(t, "").item();
  return t.item();
}

// ================================================================ methods

int64_t dim_argument(PyObject* obj) {
  if (PyBool_Check(obj) || !PyIndex_Check(obj) || is_tensor(obj)) {
    TORCH_CHECK_TYPE(false, "argument 'dim' must be int, not ", Py_TYPE(obj)->tp_name);
  }
  long long v = PyLong_AsLongLong(obj);
  if (v == -1 && PyErr_Occurred()) throw python_error();
  return v;
}

// Parses the single optional argument `dim` (positionally or by keyword) of size()/stride().
PyObject* optional_dim(const char* fname, PyObject* args, PyObject* kwargs) {
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  TORCH_CHECK_TYPE(nargs <= 1, fname, "() takes at most 1 argument (", nargs, " given)");
  PyObject* dim = nargs ? PyTuple_GET_ITEM(args, 0) : nullptr;
  if (kwargs && PyDict_GET_SIZE(kwargs) > 0) {
    PyObject* kw = PyDict_GetItemString(kwargs, "dim");
    TORCH_CHECK_TYPE(kw && PyDict_GET_SIZE(kwargs) == 1 && !dim, fname, "() got an unexpected keyword argument");
    dim = kw;
  }
  return dim;
}

// A dim given by name (a str, or None, which torch reads as a name and refuses) or index.
bool is_named_dim(PyObject* dim) { return dim == Py_None || PyUnicode_Check(dim) || PyBytes_Check(dim); }
int64_t named_dim_position(const at::Tensor& t, PyObject* dim) {
  return at::dimname_to_position(t, unpack_dimname(dim));
}

PyObject* tensor_size(PyObject* self, PyObject* args, PyObject* kwargs) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "size", args, kwargs);
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(self);
  PyObject* dim = optional_dim("size", args, kwargs);
  if (!dim) {
    check_plain_geometry(t, OpaqueAccess::Sizes);
    return make_size(t.sizes());
  }
  if (is_named_dim(dim)) return PyLong_FromLongLong(t.size(named_dim_position(t, dim)));
  const int64_t d = dim_argument(dim);
  if (const at::NestedTensorImpl* nt = at::get_nested_impl(t)) {
    const int64_t n = t.dim();
    TORCH_CHECK_INDEX(d >= -n && d < n, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                      "], but got ", d, ")");
    std::optional<int64_t> size = nt->regular_size(d < 0 ? d + n : d);
    TORCH_CHECK(size, "Given dimension ", d, " is irregular and does not have a size.");
    return PyLong_FromLongLong(*size);
  }
  return PyLong_FromLongLong(t.size(d));
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_stride(PyObject* self, PyObject* args, PyObject* kwargs) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "stride", args, kwargs);
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(self);
  PyObject* dim = optional_dim("stride", args, kwargs);
  check_plain_geometry(t, OpaqueAccess::Strides);
  if (dim) return PyLong_FromLongLong(t.stride(is_named_dim(dim) ? named_dim_position(t, dim) : dim_argument(dim)));
  c10::IntArrayRef strides = t.strides();
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(strides.size()));
  if (!tuple) return nullptr;
  for (size_t i = 0; i < strides.size(); ++i) {
    PyObject* v = PyLong_FromLongLong(strides[i]);
    if (!v) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), v);
  }
  return tuple;
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_dim(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "dim", nullptr, nullptr); return PyLong_FromLongLong(unwrap(self).dim()); }
PyObject* tensor_numel(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "numel", nullptr, nullptr); return PyLong_FromLongLong(unwrap(self).numel()); }
PyObject* tensor_element_size(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "element_size", nullptr, nullptr); return PyLong_FromSize_t(unwrap(self).element_size()); }
PyObject* tensor_storage_offset(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "storage_offset", nullptr, nullptr); return PyLong_FromLongLong(unwrap(self).storage_offset()); }
PyObject* tensor_data_ptr(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "data_ptr", nullptr, nullptr);
  HANDLE_TH_ERRORS
  check_plain_geometry(unwrap(self), OpaqueAccess::Data);
  const at::Tensor& t = unwrap(self);
  // A storage without memory (a wrapper subclass's) has address 0, as in torch.
  if (t.unsafeGetTensorImpl()->has_storage() && t.unsafeGetTensorImpl()->storage().data() == nullptr) {
    return PyLong_FromLong(0);
  }
  return PyLong_FromVoidPtr(t.data_ptr());
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_is_contiguous(PyObject* self, PyObject* args, PyObject* kwargs) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "is_contiguous", args, kwargs);
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(PyTuple_GET_SIZE(args) == 0, "is_contiguous() takes 0 positional arguments but ",
                   PyTuple_GET_SIZE(args), " was given");
  c10::MemoryFormat format = c10::MemoryFormat::Contiguous;
  if (kwargs && PyDict_GET_SIZE(kwargs) > 0) {
    PyObject* mf = PyDict_GetItemString(kwargs, "memory_format");
    TORCH_CHECK_TYPE(mf && PyDict_GET_SIZE(kwargs) == 1, "is_contiguous() got an unexpected keyword argument");
    TORCH_CHECK_TYPE(is_memory_format(mf), "is_contiguous(): argument 'memory_format' must be tessera.memory_format, not ",
                     Py_TYPE(mf)->tp_name);
    format = memory_format_of(mf);
  }
  TORCH_CHECK(format != c10::MemoryFormat::Preserve, "is_contiguous: preserve_format is not a memory format a tensor has");
  TORCH_CHECK(!c10::isSparseLayout(unwrap(self).layout()), "Tensors of type ",
              unwrap(self).layout() == c10::kSparse ? "SparseTensorImpl" : "SparseCsrTensorImpl",
              " do not have is_contiguous");
  return PyBool_FromLong(unwrap(self).is_contiguous(format));
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_tolist(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "tolist", nullptr, nullptr);
  HANDLE_TH_ERRORS
  check_plain_geometry(unwrap(self), unwrap(self).is_nested() ? OpaqueAccess::Strides : OpaqueAccess::Data);
  at::Tensor t = readable(unwrap(self), "Cannot copy out of meta tensor; no data!");
  if (t.key_set().has_any(c10::math_bits_keyset)) {
    // The loop below reads raw memory: materialise a conj/neg view first, outside the graph.
    at::AutoDispatchBelowADInplaceOrView guard;
    t = t.resolve_conj().resolve_neg();
  }
  return at::dispatch_types<at::kAllTypes>(t.scalar_type(), "tolist", [&]<typename T>() -> PyObject* {
    return tolist_rec<T>(static_cast<const char*>(t.data_ptr()), t.sizes(), t.strides(), 0);
  });
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_item(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "item", nullptr, nullptr);
  HANDLE_TH_ERRORS
  return scalar_to_python(item_of(unwrap(self)));
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_format(PyObject* self, PyObject* spec) {
  TESSERA_TORCH_FUNCTION_METHOD_O(self, "__format__", spec);
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(self);
  PyObject* base = nullptr;
  if (t.dim() == 0 && !t.is_meta() && Py_TYPE(self) == TensorType) {
    base = scalar_to_python(item_of(t));
  } else {
    base = PyObject_Str(self);
  }
  if (!base) return nullptr;
  PyObject* r = PyObject_Format(base, spec);
  Py_DECREF(base);
  return r;
  END_HANDLE_TH_ERRORS
}

// The math bits as methods (is_conj/is_neg are manual_cpp_binding ops: no generated binding).
PyObject* tensor_is_conj(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "is_conj", nullptr, nullptr); return PyBool_FromLong(unwrap(self).is_conj()); }
PyObject* tensor_is_neg(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "is_neg", nullptr, nullptr); return PyBool_FromLong(unwrap(self).is_neg()); }

bool bool_argument(PyObject* obj, const char* fname, const char* name) {
  TORCH_CHECK_TYPE(PyBool_Check(obj), fname, "(): argument '", name, "' (position 1) must be bool, not ",
                   Py_TYPE(obj)->tp_name);
  return obj == Py_True;
}

// _set_conj/_set_neg: set a bit in place (what load and unpickle use to restore a view's bits).
PyObject* tensor_set_conj(PyObject* self, PyObject* arg) {
  TESSERA_TORCH_FUNCTION_METHOD_O(self, "_set_conj", arg);
  HANDLE_TH_ERRORS
  unwrap(self)._set_conj(bool_argument(arg, "_set_conj", "conj"));
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_set_neg(PyObject* self, PyObject* arg) {
  TESSERA_TORCH_FUNCTION_METHOD_O(self, "_set_neg", arg);
  HANDLE_TH_ERRORS
  unwrap(self)._set_neg(bool_argument(arg, "_set_neg", "neg"));
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

// The bytes of the tensor's whole storage (what pickling and tessera.save write out).
PyObject* tensor_storage_nbytes(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "_storage_nbytes", nullptr, nullptr);
  HANDLE_TH_ERRORS
  check_plain_geometry(unwrap(self), OpaqueAccess::Storage);
  const at::Tensor& t = unwrap(self);
  return PyLong_FromSize_t(t.storage().defined() ? t.storage().nbytes() : 0);
  END_HANDLE_TH_ERRORS
}

// ================================================================ properties

PyObject* get_shape(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "shape");
  HANDLE_TH_ERRORS
  check_plain_geometry(unwrap(self), OpaqueAccess::Sizes);
  return make_size(unwrap(self).sizes());
  END_HANDLE_TH_ERRORS
}
PyObject* get_dtype(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "dtype");
  HANDLE_TH_ERRORS
  PyObject* d = dtype_object(unwrap(self).scalar_type());
  Py_INCREF(d);
  return d;
  END_HANDLE_TH_ERRORS
}
PyObject* get_device(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "device");
  HANDLE_TH_ERRORS
  return device_object(unwrap(self).device());
  END_HANDLE_TH_ERRORS
}
PyObject* get_layout(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "layout");
  PyObject* l = layout_object(unwrap(self).layout());
  Py_INCREF(l);
  return l;
}
PyObject* get_ndim(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "ndim"); return PyLong_FromLongLong(unwrap(self).dim()); }
PyObject* get_is_cuda(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "is_cuda"); return PyBool_FromLong(unwrap(self).is_cuda()); }
PyObject* get_is_cpu(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "is_cpu"); return PyBool_FromLong(unwrap(self).is_cpu()); }
PyObject* get_is_meta(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "is_meta"); return PyBool_FromLong(unwrap(self).is_meta()); }
PyObject* get_is_sparse(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "is_sparse"); return PyBool_FromLong(unwrap(self).layout() == c10::Layout::SparseCoo); }
PyObject* get_is_sparse_csr(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "is_sparse_csr"); return PyBool_FromLong(unwrap(self).is_sparse_csr()); }
PyObject* get_is_mkldnn(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "is_mkldnn"); return PyBool_FromLong(unwrap(self).is_mkldnn()); }
PyObject* get_is_nested(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "is_nested"); return PyBool_FromLong(unwrap(self).is_nested()); }
PyObject* get_is_quantized(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "is_quantized"); return PyBool_FromLong(unwrap(self).is_quantized()); }
PyObject* get_itemsize(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "itemsize"); return PyLong_FromSize_t(unwrap(self).itemsize()); }
PyObject* get_nbytes(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "nbytes"); return PyLong_FromSize_t(unwrap(self).nbytes()); }

// T, mT, H, mH: transposes as views, with torch 1.13's rules and messages.
at::Tensor reversed_dims(const at::Tensor& t) {
  std::vector<int64_t> dims(static_cast<size_t>(t.dim()));
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(dims.size() - 1 - i);
  return t.permute(dims);
}

// torch's _adjoint check (mT, mH; adjoint() is an op with its own name in the message).
void check_matrices(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.dim() != 1, "tensor.", name, " is only supported on matrices or batches of matrices. Got 1-D tensor.");
}

PyObject* get_T(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "T");
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(self);
  const int64_t n = t.dim();
  static bool warned = false;  // torch warns once per process
  if (n != 0 && n != 2 && !warned) {
    warned = true;
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and "
                     "it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices "
                     "or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                     1) < 0) {
      return nullptr;
    }
  }
  return wrap(reversed_dims(t));
  END_HANDLE_TH_ERRORS
}

// A 0-dim tensor's mT, a real one's H and mH are the tensor itself (the same object, as in torch).
PyObject* get_mT(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "mT");
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(self);
  check_matrices(t, "mT");
  return wrap_or_self(t.dim() == 0 ? t : t.transpose(-2, -1), self);
  END_HANDLE_TH_ERRORS
}

PyObject* get_H(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "H");
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(self);
  const int64_t n = t.dim();
  TORCH_CHECK(n == 0 || n == 2, "tensor.H is only supported on matrices (2-D tensors). Got ", n, "-D tensor.",
              n > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  at::Tensor r = n == 0 ? t : t.transpose(0, 1);
  return wrap_or_self(t.is_complex() ? r.conj() : r, self);
  END_HANDLE_TH_ERRORS
}

PyObject* get_mH(PyObject* self, void*) {
  TESSERA_TORCH_FUNCTION_GETTER(self, "mH");
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(self);
  check_matrices(t, "mH");
  return wrap_or_self(t.adjoint(), self);
  END_HANDLE_TH_ERRORS
}

PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, nullptr, "The sizes of the tensor, a tessera.Size.", nullptr},
    {"dtype", get_dtype, nullptr, nullptr, nullptr},
    {"device", get_device, nullptr, nullptr, nullptr},
    {"layout", get_layout, nullptr, nullptr, nullptr},
    {"ndim", get_ndim, nullptr, nullptr, nullptr},
    {"is_cuda", get_is_cuda, nullptr, nullptr, nullptr},
    {"is_cpu", get_is_cpu, nullptr, nullptr, nullptr},
    {"is_meta", get_is_meta, nullptr, nullptr, nullptr},
    {"is_sparse", get_is_sparse, nullptr, nullptr, nullptr},
    {"is_sparse_csr", get_is_sparse_csr, nullptr, "Whether the layout is CSR, CSC, BSR or BSC.", nullptr},
    {"is_quantized", get_is_quantized, nullptr, nullptr, nullptr},
    {"is_mkldnn", get_is_mkldnn, nullptr, "Whether the tensor has the _mkldnn layout (to_mkldnn()).", nullptr},
    {"is_nested", get_is_nested, nullptr, "Whether the tensor is a nested tensor (tessera.nested).", nullptr},
    {"names", tensor_get_names, tensor_set_names,
     "The dims' names, a tuple of str or None (named tensors); settable in place.", nullptr},
    {"itemsize", get_itemsize, nullptr, nullptr, nullptr},
    {"nbytes", get_nbytes, nullptr, nullptr, nullptr},
    {"T", get_T, nullptr, "The tensor with its dimensions reversed (a view); the transpose of a matrix.", nullptr},
    {"mT", get_mT, nullptr, "The last two dimensions swapped (a view): each matrix of a batch transposed.", nullptr},
    {"H", get_H, nullptr, "The conjugate transpose of a matrix (a view; a conj() view when complex).", nullptr},
    {"mH", get_mH, nullptr, "The conjugate transpose of each matrix of a batch (a view; a conj() view when complex).",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyObject* tensor_reversed(PyObject* self, PyObject*);
PyObject* tensor_complex(PyObject* self, PyObject*);

#define TESSERA_KW(fn) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn))

PyMethodDef core_methods[] = {
    {"size", TESSERA_KW(tensor_size), METH_VARARGS | METH_KEYWORDS, "size(dim=None): the shape, or one dimension's size."},
    {"stride", TESSERA_KW(tensor_stride), METH_VARARGS | METH_KEYWORDS, "stride(dim=None)"},
    {"dim", tensor_dim, METH_NOARGS, nullptr},
    {"ndimension", tensor_dim, METH_NOARGS, nullptr},
    {"numel", tensor_numel, METH_NOARGS, nullptr},
    {"nelement", tensor_numel, METH_NOARGS, nullptr},
    {"element_size", tensor_element_size, METH_NOARGS, nullptr},
    {"storage_offset", tensor_storage_offset, METH_NOARGS, nullptr},
    {"data_ptr", tensor_data_ptr, METH_NOARGS, nullptr},
    {"is_contiguous", TESSERA_KW(tensor_is_contiguous), METH_VARARGS | METH_KEYWORDS,
     "is_contiguous(*, memory_format=tessera.contiguous_format)"},
    {"tolist", tensor_tolist, METH_NOARGS, "The elements as (nested) Python lists of Python numbers."},
    {"item", tensor_item, METH_NOARGS, "The value of a one-element tensor as a Python number."},
    {"__format__", tensor_format, METH_O, nullptr},
    {"__reversed__", tensor_reversed, METH_NOARGS, nullptr},
    {"__complex__", tensor_complex, METH_NOARGS, nullptr},
    // ("-> " in the docs: tessera.is_conj/is_neg, the function forms, take their docs from these)
    {"is_conj", tensor_is_conj, METH_NOARGS, "is_conj() -> bool\n\nWhether the conjugate bit is set (a conj() view)."},
    {"is_neg", tensor_is_neg, METH_NOARGS, "is_neg() -> bool\n\nWhether the negative bit is set (a negated view)."},
    {"_set_conj", tensor_set_conj, METH_O, "_set_conj(conj): set or clear the conjugate bit in place (complex only)."},
    {"_set_neg", tensor_set_neg, METH_O, "_set_neg(neg): set or clear the negative bit in place."},
    {"_storage_nbytes", tensor_storage_nbytes, METH_NOARGS, "The byte size of the tensor's storage."},
    {nullptr, nullptr, 0, nullptr}};

// ================================================================ type slots

void tensor_dealloc(PyObject* self) {
  TensorObject* obj = as_tensor_object(self);
  if (obj->weakreflist) PyObject_ClearWeakRefs(self);
  if (C10_UNLIKELY(Py_TYPE(self) != TensorType)) forget_object(self);
  obj->tensor.~Tensor();
  Py_TYPE(self)->tp_free(self);
}

PyObject* call_python_printer(PyObject* self) {
  if (C10_UNLIKELY(self_has_torch_function(self))) return handle_operator_torch_function("__repr__", nullptr, self, nullptr);
  static PyObject* printer = nullptr;
  if (!printer) {
    PyObject* mod = PyImport_ImportModule("tessera._tensor_str");
    if (!mod) return nullptr;
    printer = PyObject_GetAttrString(mod, "_str");
    Py_DECREF(mod);
    if (!printer) return nullptr;
  }
  return PyObject_CallOneArg(printer, self);
}

Py_ssize_t tensor_length(PyObject* self) {
  if (C10_UNLIKELY(self_has_torch_function(self))) {
    PyObject* n = handle_operator_torch_function("__len__", nullptr, self, nullptr);
    if (!n) return -1;
    Py_ssize_t len = PyNumber_AsSsize_t(n, PyExc_OverflowError);
    Py_DECREF(n);
    return len;
  }
  const at::Tensor& t = unwrap(self);
  try {
    check_plain_geometry(t, OpaqueAccess::Sizes);
  } catch (...) {
    set_python_error();
    return -1;
  }
  if (t.dim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return static_cast<Py_ssize_t>(t.size(0));
}

int tensor_bool(PyObject* self) {
  if (C10_UNLIKELY(self_has_torch_function(self))) {
    PyObject* b = handle_operator_torch_function("__bool__", nullptr, self, nullptr);
    if (!b) return -1;
    const int truth = PyObject_IsTrue(b);
    Py_DECREF(b);
    return truth;
  }
  try {
    const at::Tensor& t = unwrap(self);
    TORCH_CHECK(t.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
    TORCH_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
    return item_of(t).toBool() ? 1 : 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

PyObject* tensor_float(PyObject* self) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(self_has_torch_function(self))) return handle_operator_torch_function("__float__", nullptr, self, nullptr);
  const at::Tensor& t = unwrap(self);
  TORCH_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python scalars");
  c10::Scalar s = item_of(t);
  return PyFloat_FromDouble(s.toDouble());
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_int(PyObject* self) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(self_has_torch_function(self))) return handle_operator_torch_function("__int__", nullptr, self, nullptr);
  const at::Tensor& t = unwrap(self);
  TORCH_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python scalars");
  c10::Scalar s = item_of(t);
  if (s.isFloatingPoint()) {
    PyObject* f = PyFloat_FromDouble(s.toDouble());
    if (!f) return nullptr;
    PyObject* r = PyNumber_Long(f);
    Py_DECREF(f);
    return r;
  }
  return PyLong_FromLongLong(s.toLong());
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_index(PyObject* self) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(self_has_torch_function(self))) return handle_operator_torch_function("__index__", nullptr, self, nullptr);
  const at::Tensor& t = unwrap(self);
  TORCH_CHECK_TYPE(c10::isIntegralType(t.scalar_type(), true) && t.numel() == 1,
                   "only integer tensors of a single element can be converted to an index");
  return PyLong_FromLongLong(item_of(t).toLong());
  END_HANDLE_TH_ERRORS
}

// iter(t): the sub-tensors along dim 0 (views), as torch's unbind(0).
PyObject* tensor_iter(PyObject* self) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(self_has_torch_function(self))) {
    // as torch's Python __iter__: through unbind, which overrides see
    PyObject* rows = PyObject_CallMethod(self, "unbind", "i", 0);
    if (!rows) return nullptr;
    PyObject* it = PyObject_GetIter(rows);
    Py_DECREF(rows);
    return it;
  }
  const at::Tensor& t = unwrap(self);
  TORCH_CHECK_TYPE(t.dim() > 0, "iteration over a 0-d tensor");
  std::vector<at::Tensor> rows = t.unbind(0);
  PyObject* items = PyTuple_New(static_cast<Py_ssize_t>(rows.size()));
  if (!items) return nullptr;
  for (size_t i = 0; i < rows.size(); ++i) {
    PyObject* row = wrap(std::move(rows[i]));
    if (!row) {
      Py_DECREF(items);
      return nullptr;
    }
    PyTuple_SET_ITEM(items, static_cast<Py_ssize_t>(i), row);
  }
  PyObject* it = PyObject_GetIter(items);
  Py_DECREF(items);
  return it;
  END_HANDLE_TH_ERRORS
}

// `x in t`: whether any element equals x (a number or a tensor broadcast against t).
int tensor_contains(PyObject* self, PyObject* element) {
  if (C10_UNLIKELY(self_has_torch_function(self) || is_overloaded(element))) {
    PyObject* found = handle_operator_torch_function("__contains__", nullptr, self, element);
    if (!found) return -1;
    const int truth = PyObject_IsTrue(found);
    Py_DECREF(found);
    return truth;
  }
  try {
    at::Tensor other;
    if (is_tensor(element)) {
      other = unwrap(element);
    } else if (!number_to_tensor(element, other)) {
      PyObject* type_repr = PyObject_Repr(reinterpret_cast<PyObject*>(Py_TYPE(element)));
      if (!type_repr) return -1;
      std::string name = PyUnicode_AsUTF8(type_repr);
      Py_DECREF(type_repr);
      TORCH_CHECK(false, "Tensor.__contains__ only supports Tensor or scalar, but you passed in a ", name, ".");
    }
    return at::eq(unwrap(self), other).any().item().toBool() ? 1 : 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

PyObject* tensor_reversed(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "__reversed__", nullptr, nullptr);
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(self);
  if (t.dim() == 0) return wrap(t);
  return wrap(t.flip({0}));
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_complex(PyObject* self, PyObject*) {
  TESSERA_TORCH_FUNCTION_METHOD(self, "__complex__", nullptr, nullptr);
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(self);
  TORCH_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python scalars");
  c10::complex<double> z = item_of(t).toComplexDouble();
  return PyComplex_FromDoubles(z.real(), z.imag());
  END_HANDLE_TH_ERRORS
}

// Tensor(*sizes), Tensor(sequence), Tensor(tensor), Tensor(): torch's legacy float32 constructor.
PyObject* tensor_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  std::optional<c10::Device> device;
  if (kwargs && PyDict_GET_SIZE(kwargs) > 0) {
    PyObject* d = PyDict_GetItemString(kwargs, "device");
    TORCH_CHECK_TYPE(d && PyDict_GET_SIZE(kwargs) == 1, "Tensor(): the only keyword argument is 'device'");
    if (d != Py_None) device = device_from_object(d);
  }
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  at::Tensor result;
  PyObject* first = nargs > 0 ? PyTuple_GET_ITEM(args, 0) : nullptr;
  auto options = at::TensorOptions(c10::get_default_dtype()).device(device.value_or(c10::Device(c10::kCPU)));
  if (nargs == 0) {
    result = at::empty({0}, options);
  } else if (nargs == 1 && is_tensor(first)) {
    result = unwrap(first);
    TORCH_CHECK_TYPE(result.scalar_type() == c10::get_default_dtype(), "expected a tensor of type ",
                     c10::toString(c10::get_default_dtype()), " (got ",
                     c10::toString(result.scalar_type()), ")");
  } else if (nargs == 1 && PyObject_TypeCheck(first, SizeType)) {
    std::vector<int64_t> sizes;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(first); ++i) sizes.push_back(PyLong_AsLongLong(PyTuple_GET_ITEM(first, i)));
    result = at::empty(sizes, options);
  } else if (nargs == 1 && PySequence_Check(first)) {
    result = tensor_from_data(first, c10::get_default_dtype(), device);
  } else {
    std::vector<int64_t> sizes;
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      PyObject* a = PyTuple_GET_ITEM(args, i);
      TORCH_CHECK_TYPE(PyIndex_Check(a) && !is_tensor(a), "new() received an invalid combination of arguments - got an ",
                       Py_TYPE(a)->tp_name, " at position ", i);
      long long v = PyLong_AsLongLong(a);
      if (v == -1 && PyErr_Occurred()) throw python_error();
      sizes.push_back(v);
    }
    result = at::empty(sizes, options);
  }
  if (type == TensorType) return wrap(std::move(result));
  // A class that handles its operators gets its own tensor (an alias), never the argument's.
  if (nargs == 1 && is_tensor(first) && type_has_torch_dispatch(type)) result = at::ops::op_alias().call(result);
  return new_subclass_instance(type, std::move(result));
  END_HANDLE_TH_ERRORS
}

PyNumberMethods tensor_as_number{};
PyMappingMethods tensor_as_mapping{};
PySequenceMethods tensor_as_sequence{};
std::vector<PyMethodDef> g_all_methods;

}  // namespace

// ================================================================ API

namespace {
// torch warns once per process when the first complex32 tensor is made.
bool warn_complex_half_once() {
  static bool warned = false;
  if (warned) return true;
  warned = true;
  return PyErr_WarnEx(PyExc_UserWarning,
                      "ComplexHalf support is experimental and many operators don't support it yet.", 1) == 0;
}
}  // namespace

PyObject* wrap(at::Tensor t) {
  if (!t.defined()) Py_RETURN_NONE;
  if (C10_UNLIKELY(t.key_set().has(c10::DispatchKey::Python)) && t.unsafeGetTensorImpl()->pyobj_slot()) {
    return wrap_python_dispatch_tensor(std::move(t));
  }
  if (C10_UNLIKELY(t.scalar_type() == c10::kComplexHalf) && !warn_complex_half_once()) return nullptr;
  auto* obj = static_cast<TensorObject*>(PyObject_Malloc(sizeof(TensorObject)));
  if (!obj) return PyErr_NoMemory();
  PyObject_Init(reinterpret_cast<PyObject*>(obj), TensorType);
  new (&obj->tensor) at::Tensor(std::move(t));
  obj->weakreflist = nullptr;
  return reinterpret_cast<PyObject*>(obj);
}

PyObject* wrap_or_self(at::Tensor t, PyObject* self) {
  if (t.defined() && t.unsafeGetTensorImpl() == unwrap(self).unsafeGetTensorImpl()) {
    Py_INCREF(self);
    return self;
  }
  return wrap(std::move(t));
}

PyObject* make_size(c10::IntArrayRef sizes) {
  auto n = static_cast<Py_ssize_t>(sizes.size());
  PyObject* s = SizeTypeObj.tp_alloc(&SizeTypeObj, n);
  if (!s) throw python_error();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(sizes[static_cast<size_t>(i)]);
    if (!v) {
      Py_DECREF(s);
      throw python_error();
    }
    PyTuple_SET_ITEM(s, i, v);
  }
  return s;
}

bool init_tensor_type(PyObject* module) {
  if (!init_size_type(module)) return false;

  PyTypeObject* t = &TensorTypeObj;
  t->tp_name = "tessera.Tensor";
  t->tp_basicsize = sizeof(TensorObject);
  t->tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  t->tp_doc = "A multi-dimensional array of one element type on one device.";
  t->tp_dealloc = tensor_dealloc;
  t->tp_finalize = tensor_finalize;  // subclasses' only (see csrc/TorchDispatch.h)
  t->tp_free = PyObject_Free;
  t->tp_new = tensor_new;
  t->tp_repr = call_python_printer;
  // str() goes through repr(), so a subclass's __repr__ serves both, as for torch's Tensor.
  t->tp_weaklistoffset = offsetof(TensorObject, weakreflist);
  t->tp_getset = tensor_getset;

  init_number_protocol(t, tensor_as_number);
  tensor_as_number.nb_bool = tensor_bool;
  tensor_as_number.nb_float = tensor_float;
  tensor_as_number.nb_int = tensor_int;
  tensor_as_number.nb_index = tensor_index;
  t->tp_as_number = &tensor_as_number;
  tensor_as_mapping.mp_length = tensor_length;
  tensor_as_mapping.mp_subscript = tensor_getitem;
  tensor_as_mapping.mp_ass_subscript = tensor_setitem;
  tensor_as_sequence.sq_contains = tensor_contains;
  t->tp_as_sequence = &tensor_as_sequence;
  t->tp_iter = tensor_iter;
  t->tp_as_mapping = &tensor_as_mapping;

  // The hand-written methods first: where a generated binding has the same name, the
  // hand-written one (first in the table) is the one the type keeps.
  for (PyMethodDef* m = core_methods; m->ml_name; ++m) g_all_methods.push_back(*m);
  for (PyMethodDef* table : {numpy_tensor_methods(), dlpack_tensor_methods(), named_tensor_methods()}) {
    for (PyMethodDef* m = table; m->ml_name; ++m) g_all_methods.push_back(*m);
  }
  for (PyMethodDef* m = generated_tensor_methods(); m && m->ml_name; ++m) {
    bool taken = false;
    for (PyMethodDef* c = core_methods; c->ml_name; ++c) taken = taken || std::strcmp(c->ml_name, m->ml_name) == 0;
    if (!taken) g_all_methods.push_back(*m);
  }
  g_all_methods.push_back({nullptr, nullptr, 0, nullptr});
  t->tp_methods = g_all_methods.data();

  TensorType = t;
  if (!add_type(module, t, "Tensor")) return false;
  // numpy defers binary operators to types with a higher priority than its arrays.
  PyObject* priority = PyLong_FromLong(1000);
  if (!priority || PyDict_SetItemString(t->tp_dict, "__array_priority__", priority) != 0) return false;
  Py_DECREF(priority);
  PyType_Modified(t);
  return true;
}

PyObject* scalar_to_python(const c10::Scalar& s) {
  if (s.isBoolean()) return PyBool_FromLong(s.toBool());
  if (s.isIntegral(false)) return PyLong_FromLongLong(s.toLong());
  if (s.isComplex()) {
    c10::complex<double> z = s.toComplexDouble();
    return PyComplex_FromDoubles(z.real(), z.imag());
  }
  return PyFloat_FromDouble(s.toDouble());
}

}  // namespace tessera::python
