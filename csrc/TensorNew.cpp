// tessera.tensor(data, *, dtype=None, device=None): a new tensor from nested sequences of
// Python numbers, numpy arrays and scalars, or another tensor, following torch's rules:
// the shape comes from the first element at each depth, the dtype is inferred (bool ->
// bool, int -> int64, float -> float32, complex -> complex64, mixed -> promoted) unless
// given, and elements are written straight into the new tensor with torch's per-dtype
// conversions and overflow checks.
#include "ArgParser.h"
#include "TorchDispatch.h"
#include "TorchFunction.h"
#include "python_api.h"

#include <aten/core/Dispatch.h>
#include <aten/core/NamedTensorUtils.h>
#include <aten/ops/Functions.h>
#include <aten/ops/OperatorHandles.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/core/Scalar.h>
#include <c10/util/ComplexHalf.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <string>
#include <vector>

namespace tessera::python {

namespace {

constexpr size_t kMaxDims = 128;

bool type_chain_has(PyObject* obj, const char* name) {
  for (PyTypeObject* t = Py_TYPE(obj); t; t = t->tp_base) {
    if (std::strcmp(t->tp_name, name) == 0) return true;
  }
  return false;
}

// The dtype of a numpy scalar (numpy.float32(1.5), numpy.int64(2), ...), if obj is one.
std::optional<c10::ScalarType> numpy_scalar_dtype(PyObject* obj) {
  const char* name = Py_TYPE(obj)->tp_name;
  if (std::strncmp(name, "numpy.", 6) != 0) return std::nullopt;
  name += 6;
  struct Entry {
    const char* name;
    c10::ScalarType type;
  };
  static constexpr Entry kTable[] = {
      {"float64", c10::kDouble}, {"float32", c10::kFloat},       {"float16", c10::kHalf},
      {"int64", c10::kLong},     {"longlong", c10::kLong},       {"int32", c10::kInt},
      {"int16", c10::kShort},    {"int8", c10::kChar},           {"uint8", c10::kByte},
      {"bool_", c10::kBool},     {"bool", c10::kBool},           {"complex64", c10::kComplexFloat},
      {"complex128", c10::kComplexDouble},
  };
  for (const Entry& e : kTable) {
    if (std::strcmp(name, e.name) == 0) return e.type;
  }
  return std::nullopt;
}

bool is_string(PyObject* obj) { return PyUnicode_Check(obj) || PyBytes_Check(obj); }

// ---------------------------------------------------------------- shape and dtype

// torch's compute_sizes: follow the first element down while it is a sequence.
std::vector<int64_t> compute_sizes(PyObject* data) {
  std::vector<int64_t> sizes;
  PyObject* seq = data;
  Py_INCREF(seq);
  while (PySequence_Check(seq)) {
    Py_ssize_t length = PySequence_Length(seq);
    if (length < 0) {
      Py_DECREF(seq);
      throw python_error();
    }
    sizes.push_back(length);
    if (sizes.size() > kMaxDims) {
      std::string name = Py_TYPE(seq)->tp_name;
      Py_DECREF(seq);
      TORCH_CHECK_VALUE(false, "too many dimensions '", name, "'");
    }
    if (length == 0) break;
    PyObject* first = PySequence_GetItem(seq, 0);
    if (!first) {
      std::string name = Py_TYPE(seq)->tp_name;
      Py_DECREF(seq);
      PyErr_Clear();
      TORCH_CHECK_VALUE(false, "could not determine the shape of object type '", name, "'");
    }
    Py_DECREF(seq);
    seq = first;
  }
  Py_DECREF(seq);
  return sizes;
}

struct BufferView {
  Py_buffer view{};
  bool held = false;
  ~BufferView() {
    if (held) PyBuffer_Release(&view);
  }
};

// The dtype of a numpy array, from its buffer format.
c10::ScalarType buffer_dtype(PyObject* array, const Py_buffer& view) {
  const char* f = view.format ? view.format : "B";
  bool big_endian = false;
  while (*f == '<' || *f == '>' || *f == '=' || *f == '@' || *f == '|' || *f == '!') {
    big_endian = big_endian || *f == '>' || *f == '!';
    ++f;
  }
  std::string fmt = f;
  std::optional<c10::ScalarType> t;
  if (!big_endian) {
    if (fmt == "?") t = c10::kBool;
    else if (fmt == "b") t = c10::kChar;
    else if (fmt == "B") t = c10::kByte;
    else if (fmt == "h") t = c10::kShort;
    else if (fmt == "i" && view.itemsize == 4) t = c10::kInt;
    else if ((fmt == "l" || fmt == "q") && view.itemsize == 8) t = c10::kLong;
    else if (fmt == "e") t = c10::kHalf;
    else if (fmt == "f") t = c10::kFloat;
    else if (fmt == "d") t = c10::kDouble;
    else if (fmt == "Zf") t = c10::kComplexFloat;
    else if (fmt == "Zd") t = c10::kComplexDouble;
  }
  if (!t) {
    // numpy's name for the element type: array.dtype.type.__name__ ("uint16", "str_").
    std::string name = fmt;
    if (PyObject* dt = PyObject_GetAttrString(array, "dtype")) {
      if (PyObject* scalar_type = PyObject_GetAttrString(dt, "type")) {
        if (PyObject* s = PyObject_GetAttrString(scalar_type, "__name__")) {
          if (const char* c = PyUnicode_AsUTF8(s)) name = c;
          Py_DECREF(s);
        }
        Py_DECREF(scalar_type);
      }
      Py_DECREF(dt);
    }
    PyErr_Clear();
    TORCH_CHECK_TYPE(false, "can't convert np.ndarray of type numpy.", name,
                     ". The only supported types are: float64, float32, float16, complex64, complex128, int64, "
                     "int32, int16, int8, uint8, and bool.");
  }
  return *t;
}

c10::ScalarType infer_scalar_type(PyObject* obj) {
  if (PyFloat_CheckExact(obj)) return c10::get_default_dtype();
  if (PyBool_Check(obj)) return c10::kBool;
  if (PyLong_CheckExact(obj)) return c10::kLong;
  if (PyComplex_CheckExact(obj)) return c10::get_default_complex_dtype();
  if (is_tensor(obj)) return unwrap(obj).scalar_type();
  if (auto t = numpy_scalar_dtype(obj)) return *t;
  if (PyFloat_Check(obj)) return c10::get_default_dtype();
  if (PyLong_Check(obj)) return c10::kLong;
  if (PyComplex_Check(obj)) return c10::get_default_complex_dtype();
  TORCH_CHECK_TYPE(!is_string(obj), "new(): invalid data type '", Py_TYPE(obj)->tp_name, "'");
  if (is_numpy_array(obj)) {
    BufferView b;
    if (PyObject_GetBuffer(obj, &b.view, PyBUF_RECORDS_RO) != 0) throw python_error();
    b.held = true;
    return buffer_dtype(obj, b.view);
  }
  if (PySequence_Check(obj)) {
    Py_ssize_t length = PySequence_Length(obj);
    if (length < 0) throw python_error();
    if (length == 0) return c10::get_default_dtype();
    std::optional<c10::ScalarType> result;
    for (Py_ssize_t i = 0; i < length; ++i) {
      PyObject* item = PySequence_GetItem(obj, i);
      if (!item) throw python_error();
      if (item == obj) {
        Py_DECREF(item);
        TORCH_CHECK_TYPE(false, "new(): self-referential lists are incompatible");
      }
      c10::ScalarType t;
      try {
        t = infer_scalar_type(item);
      } catch (...) {
        Py_DECREF(item);
        throw;
      }
      Py_DECREF(item);
      result = result ? c10::promoteTypes(*result, t) : t;
      if (*result == c10::kComplexDouble) return *result;  // nothing promotes further
    }
    return *result;
  }
  TORCH_CHECK(false, "Could not infer dtype of ", Py_TYPE(obj)->tp_name);
}

// ---------------------------------------------------------------- storing elements

const char* integral_name(c10::ScalarType t) {
  switch (t) {
    case c10::kByte: return "uint8";
    case c10::kChar: return "int8";
    case c10::kShort: return "int16";
    case c10::kInt: return "int32";
    default: return "int64";
  }
}

template <typename T>
void store_integral(char* data, c10::ScalarType type, PyObject* obj) {
  T value;
  if (PyFloat_Check(obj)) {
    double d = PyFloat_AS_DOUBLE(obj);
    TORCH_CHECK(!c10::detail::overflows<T>(d), "value cannot be converted to type ", integral_name(type),
                " without overflow");
    value = static_cast<T>(d);
  } else {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (v == -1 && PyErr_Occurred()) throw python_error();
    TORCH_CHECK(!overflow, "Overflow when unpacking long");
    TORCH_CHECK(!c10::detail::overflows<T>(static_cast<int64_t>(v)), "value cannot be converted to type ",
                integral_name(type), " without overflow");
    value = static_cast<T>(v);  // unsigned targets wrap (uint8 takes -1 as 255), as torch
  }
  std::memcpy(data, &value, sizeof(T));
}

double unpack_double(PyObject* obj) {
  double d = PyFloat_AsDouble(obj);
  if (d == -1.0 && PyErr_Occurred()) throw python_error();
  return d;
}

void store_scalar(char* data, c10::ScalarType type, PyObject* obj);

// A tensor element: its one value, as the Python number it holds.
void store_tensor_element(char* data, c10::ScalarType type, PyObject* obj) {
  const at::Tensor& t = unwrap(obj);
  TORCH_CHECK_VALUE(t.numel() == 1, "only one element tensors can be converted to Python scalars");
  PyObject* item = PyObject_CallMethod(obj, "item", nullptr);
  if (!item) throw python_error();
  try {
    store_scalar(data, type, item);
  } catch (...) {
    Py_DECREF(item);
    throw;
  }
  Py_DECREF(item);
}

void store_scalar(char* data, c10::ScalarType type, PyObject* obj) {
  if (is_tensor(obj)) return store_tensor_element(data, type, obj);
  switch (type) {
    case c10::kByte: return store_integral<uint8_t>(data, type, obj);
    case c10::kChar: return store_integral<int8_t>(data, type, obj);
    case c10::kShort: return store_integral<int16_t>(data, type, obj);
    case c10::kInt: return store_integral<int32_t>(data, type, obj);
    case c10::kLong: return store_integral<int64_t>(data, type, obj);
    case c10::kBool: {
      bool b;
      if (PyFloat_Check(obj)) {
        b = PyFloat_AS_DOUBLE(obj) != 0;
      } else if (PyComplex_Check(obj)) {
        Py_complex z = PyComplex_AsCComplex(obj);
        b = z.real != 0 || z.imag != 0;
      } else if (numpy_scalar_dtype(obj) == c10::kBool) {
        int r = PyObject_IsTrue(obj);
        if (r < 0) throw python_error();
        b = r != 0;
      } else {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (v == -1 && PyErr_Occurred()) throw python_error();
        b = overflow != 0 || v != 0;
      }
      *reinterpret_cast<bool*>(data) = b;
      return;
    }
    case c10::kFloat: {
      float v = static_cast<float>(unpack_double(obj));
      std::memcpy(data, &v, sizeof v);
      return;
    }
    case c10::kDouble: {
      double v = unpack_double(obj);
      std::memcpy(data, &v, sizeof v);
      return;
    }
    case c10::kHalf: {
      c10::Half v(static_cast<float>(unpack_double(obj)));
      std::memcpy(data, &v, sizeof v);
      return;
    }
    case c10::kBFloat16: {
      c10::BFloat16 v(static_cast<float>(unpack_double(obj)));
      std::memcpy(data, &v, sizeof v);
      return;
    }
    case c10::kFloat8_e4m3fn: {
      c10::Float8_e4m3fn v(static_cast<float>(unpack_double(obj)));
      std::memcpy(data, &v, sizeof v);
      return;
    }
    case c10::kFloat8_e5m2: {
      c10::Float8_e5m2 v(static_cast<float>(unpack_double(obj)));
      std::memcpy(data, &v, sizeof v);
      return;
    }
    case c10::kComplexHalf:
    case c10::kComplexFloat:
    case c10::kComplexDouble: {
      Py_complex z = PyComplex_AsCComplex(obj);
      if (z.real == -1.0 && PyErr_Occurred()) throw python_error();
      if (type == c10::kComplexHalf) {
        c10::complex<c10::Half> v(c10::complex<float>(static_cast<float>(z.real), static_cast<float>(z.imag)));
        std::memcpy(data, &v, sizeof v);
      } else if (type == c10::kComplexFloat) {
        c10::complex<float> v(static_cast<float>(z.real), static_cast<float>(z.imag));
        std::memcpy(data, &v, sizeof v);
      } else {
        c10::complex<double> v(z.real, z.imag);
        std::memcpy(data, &v, sizeof v);
      }
      return;
    }
    default:
      TORCH_CHECK(false, "invalid type");
  }
}

void recursive_store(char* data, const std::vector<int64_t>& sizes, const std::vector<int64_t>& byte_strides,
                     size_t dim, c10::ScalarType type, PyObject* obj) {
  if (dim == sizes.size()) return store_scalar(data, type, obj);
  PyObject* seq = PySequence_Fast(obj, "not a sequence");
  if (!seq) throw python_error();
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n != sizes[dim]) {
    Py_DECREF(seq);
    TORCH_CHECK_VALUE(false, "expected sequence of length ", sizes[dim], " at dim ", dim, " (got ", n, ")");
  }
  PyObject** items = PySequence_Fast_ITEMS(seq);
  try {
    for (Py_ssize_t i = 0; i < n; ++i) {
      recursive_store(data, sizes, byte_strides, dim + 1, type, items[i]);
      data += byte_strides[dim];
    }
  } catch (...) {
    Py_DECREF(seq);
    throw;
  }
  Py_DECREF(seq);
}

// ---------------------------------------------------------------- sources

at::Tensor from_numpy_copy(PyObject* array) {
  BufferView b;
  if (PyObject_GetBuffer(array, &b.view, PyBUF_RECORDS_RO) != 0) throw python_error();
  b.held = true;
  c10::ScalarType type = buffer_dtype(array, b.view);
  const Py_buffer& v = b.view;
  std::vector<int64_t> sizes(v.shape, v.shape + v.ndim);
  at::Tensor t = at::empty(sizes, at::TensorOptions(type));
  if (t.numel() == 0) return t;
  const size_t itemsize = static_cast<size_t>(v.itemsize);
  char* dst = static_cast<char*>(t.data_ptr());
  if (PyBuffer_IsContiguous(&v, 'C')) {
    std::memcpy(dst, v.buf, static_cast<size_t>(t.numel()) * itemsize);
    return t;
  }
  // Strided source (views, negative strides): walk it with an index counter.
  std::vector<int64_t> index(static_cast<size_t>(v.ndim), 0);
  for (int64_t k = 0; k < t.numel(); ++k) {
    const char* src = static_cast<const char*>(v.buf);
    for (int d = 0; d < v.ndim; ++d) src += index[static_cast<size_t>(d)] * v.strides[d];
    std::memcpy(dst + static_cast<size_t>(k) * itemsize, src, itemsize);
    for (int d = v.ndim - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < v.shape[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return t;
}

at::Tensor converted(const at::Tensor& src, c10::ScalarType type) {
  if (src.scalar_type() == type) return src;
  at::Tensor dst = at::empty(src.sizes(), at::TensorOptions(type).device(src.device()));
  dst.copy_(src);
  return dst;
}

at::Tensor on_device(const at::Tensor& cpu, c10::Device device) {
  if (device.is_cpu()) return cpu;
  at::Tensor dst = at::empty(cpu.sizes(), at::TensorOptions(cpu.scalar_type()).device(device));
  if (!device.is_meta()) dst.copy_(cpu);
  return dst;
}

// ---------------------------------------------------------------- tessera.tensor

std::optional<c10::ScalarType> dtype_argument(PyObject* obj) {
  if (!obj || obj == Py_None) return std::nullopt;
  if (is_dtype(obj)) return dtype_of(obj);
  if (obj == reinterpret_cast<PyObject*>(&PyFloat_Type)) return c10::kDouble;
  if (obj == reinterpret_cast<PyObject*>(&PyLong_Type)) return c10::kLong;
  if (obj == reinterpret_cast<PyObject*>(&PyBool_Type)) return c10::kBool;
  if (obj == reinterpret_cast<PyObject*>(&PyComplex_Type)) return c10::kComplexDouble;
  TORCH_CHECK_TYPE(false, "tensor(): argument 'dtype' must be tessera.dtype, not ", Py_TYPE(obj)->tp_name);
}

PyObject* tensor_fn(PyObject* module, PyObject* args, PyObject* kwargs) {
  // a TorchFunctionMode sees tessera.tensor(...) as torch's modes see torch.tensor
  if (C10_UNLIKELY(torch_function_mode_active())) return handle_function_torch_function(module, "tensor", args, kwargs);
  HANDLE_TH_ERRORS
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  TORCH_CHECK_TYPE(nargs <= 1, "tensor() takes 1 positional argument but ", nargs, " were given");
  PyObject* data = nargs ? PyTuple_GET_ITEM(args, 0) : nullptr;
  PyObject *dtype = nullptr, *device = nullptr, *requires_grad = nullptr, *pin_memory = nullptr, *names = nullptr;
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      const char* k = PyUnicode_AsUTF8(key);
      if (!k) throw python_error();
      if (std::strcmp(k, "dtype") == 0) dtype = value;
      else if (std::strcmp(k, "device") == 0) device = value;
      else if (std::strcmp(k, "requires_grad") == 0) requires_grad = value;
      else if (std::strcmp(k, "pin_memory") == 0) pin_memory = value;
      else if (std::strcmp(k, "names") == 0) names = value;
      else if (std::strcmp(k, "data") == 0 && !data) data = value;
      else TORCH_CHECK_TYPE(false, "tensor() got an unexpected keyword argument '", k, "'");
    }
  }
  TORCH_CHECK_TYPE(data, "tensor() missing 1 required positional arguments: \"data\"");
  TORCH_CHECK_NOT_IMPLEMENTED(!pin_memory || pin_memory == Py_False || pin_memory == Py_None,
                              "tensor(): pin_memory=True is not supported");
  const std::optional<c10::Device> dev =
      device && device != Py_None ? std::optional<c10::Device>(device_from_object(device)) : default_factory_device();
  at::Tensor result = tensor_from_data(data, dtype_argument(dtype), dev);
  if (requires_grad && requires_grad != Py_None) {
    int r = PyObject_IsTrue(requires_grad);
    if (r < 0) throw python_error();
    if (r) result.set_requires_grad(true);
  }
  if (names && names != Py_None) {
    // torch's parser takes a tuple or list of str / None only, naming the argument's type
    bool names_ok = PyTuple_Check(names) || PyList_Check(names);
    for (Py_ssize_t i = 0; names_ok && i < PySequence_Fast_GET_SIZE(names); ++i) {
      PyObject* item = PySequence_Fast_GET_ITEM(names, i);
      names_ok = item == Py_None || PyUnicode_Check(item);
    }
    TORCH_CHECK_TYPE(names_ok, "tensor(): argument 'names' must be tuple of names, not ", Py_TYPE(names)->tp_name);
    at::internal_set_names_inplace(result, unpack_dimname_list(names));
    if (!warn_named_tensors_experimental()) return nullptr;
  }
  return wrap(std::move(result));
  END_HANDLE_TH_ERRORS
}

PyMethodDef tensor_new_functions[] = {
    {"tensor", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensor_fn)), METH_VARARGS | METH_KEYWORDS,
     "tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False, names=None) -> Tensor\n\nA new "
     "tensor holding a copy of data (nested sequences of numbers, a numpy array, a number or a tensor), its dims "
     "named `names` when given."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool is_numpy_array(PyObject* obj) { return type_chain_has(obj, "numpy.ndarray"); }

c10::Device device_from_object(PyObject* obj) {
  if (is_device(obj)) return device_of(obj);
  if (PyUnicode_Check(obj)) {
    const char* s = PyUnicode_AsUTF8(obj);
    if (!s) throw python_error();
    return c10::Device(s);
  }
  if (PyLong_Check(obj) && !PyBool_Check(obj)) {
    long long v = PyLong_AsLongLong(obj);
    if (v == -1 && PyErr_Occurred()) throw python_error();
    TORCH_CHECK(v >= 0, "Device index must not be negative");
    TORCH_CHECK(v <= 127, "Device index ", v, " is out of range");
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(v));
  }
  TORCH_CHECK_TYPE(false, "argument 'device' must be tessera.device, not ", Py_TYPE(obj)->tp_name);
}

namespace {
at::Tensor tensor_from_data_unlifted(PyObject* data, std::optional<c10::ScalarType> dtype,
                                     std::optional<c10::Device> device);
}

// Built with the Python key off (a TorchDispatchMode must not swap the buffer that the data
// is written into), then shown to an active mode through lift_fresh, as torch does.
at::Tensor tensor_from_data(PyObject* data, std::optional<c10::ScalarType> dtype, std::optional<c10::Device> device) {
  at::Tensor t;
  {
    c10::impl::ExcludeDispatchKeyGuard no_python(c10::DispatchKey::Python);
    t = tensor_from_data_unlifted(data, dtype, device);
  }
  if (C10_UNLIKELY(torch_dispatch_mode_active())) {
    // Below autograd: the result is a fresh tensor (a leaf to be), not a view of t.
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    t = at::ops::op_lift_fresh().call(t);
  }
  return t;
}

namespace {
at::Tensor tensor_from_data_unlifted(PyObject* data, std::optional<c10::ScalarType> dtype,
                                     std::optional<c10::Device> device) {
  TORCH_CHECK_TYPE(!is_string(data), "new(): invalid data type '", Py_TYPE(data)->tp_name, "'");
  c10::Device target = device.value_or(c10::Device(c10::kCPU));
  if (is_tensor(data)) {
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
                     "sourceTensor.clone().detach().requires_grad_(True), rather than tessera.tensor(sourceTensor).",
                     1) != 0) {
      throw python_error();
    }
    const at::Tensor& src = unwrap(data);
    c10::Device dst_device = device.value_or(src.device());
    at::Tensor dst = at::empty(src.sizes(), at::TensorOptions(dtype.value_or(src.scalar_type())).device(dst_device));
    if (!dst.is_meta()) dst.copy_(src);
    return dst;
  }
  if (is_numpy_array(data)) {
    at::Tensor t = from_numpy_copy(data);
    if (dtype) t = converted(t, *dtype);
    return on_device(t, target);
  }
  std::vector<int64_t> sizes = compute_sizes(data);
  c10::ScalarType type = dtype ? *dtype : infer_scalar_type(data);
  // Meta tensors have no data to write: torch reads only the shape and the dtype.
  if (target.is_meta()) return at::empty(sizes, at::TensorOptions(type).device(target));
  at::Tensor t = at::empty(sizes, at::TensorOptions(type));
  std::vector<int64_t> byte_strides(sizes.size());
  int64_t itemsize = static_cast<int64_t>(c10::elementSize(type));
  for (size_t d = 0; d < sizes.size(); ++d) byte_strides[d] = t.stride(static_cast<int64_t>(d)) * itemsize;
  if (t.numel() > 0) recursive_store(static_cast<char*>(t.data_ptr()), sizes, byte_strides, 0, type, data);
  return on_device(t, target);
}
}  // namespace

bool init_tensor_new(PyObject* module) { return PyModule_AddFunctions(module, tensor_new_functions) == 0; }

}  // namespace tessera::python
