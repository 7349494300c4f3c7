// tessera.dtype, tessera.device, tessera.layout and tessera.memory_format: small
// immutable Python objects mirroring c10's ScalarType, Device, Layout and MemoryFormat.
// dtypes, layouts and memory formats are singletons (compared by identity, as torch's);
// devices are values with ==, hash and torch's repr.
#include "python_api.h"

#include <c10/core/DefaultDtype.h>

#include <c10/util/Exception.h>

#include <array>
#include <cstring>
#include <string>

namespace tessera::python {

namespace {

// ---------------------------------------------------------------- dtype

struct DTypeObject {
  PyObject_HEAD
  c10::ScalarType scalar_type;
  const char* name;  // torch's primary Python name, "float32"
};

// Primary names in ScalarType order, then aliases (torch's).
struct DTypeName {
  c10::ScalarType type;
  const char* name;
};
constexpr DTypeName kPrimaryNames[] = {
    {c10::kByte, "uint8"},          {c10::kChar, "int8"},
    {c10::kShort, "int16"},         {c10::kInt, "int32"},
    {c10::kLong, "int64"},          {c10::kHalf, "float16"},
    {c10::kFloat, "float32"},       {c10::kDouble, "float64"},
    {c10::kComplexHalf, "complex32"}, {c10::kComplexFloat, "complex64"}, {c10::kComplexDouble, "complex128"},
    {c10::kBool, "bool"},           {c10::kQInt8, "qint8"},
    {c10::kQUInt8, "quint8"},       {c10::kQInt32, "qint32"},
    {c10::kBFloat16, "bfloat16"},   {c10::kQUInt4x2, "quint4x2"},
    {c10::kQUInt2x4, "quint2x4"},   {c10::kFloat8_e5m2, "float8_e5m2"},
    {c10::kFloat8_e4m3fn, "float8_e4m3fn"},
};
constexpr DTypeName kAliasNames[] = {
    {c10::kFloat, "float"},  {c10::kDouble, "double"},        {c10::kHalf, "half"},
    {c10::kComplexFloat, "cfloat"}, {c10::kComplexDouble, "cdouble"}, {c10::kShort, "short"},
    {c10::kInt, "int"},      {c10::kLong, "long"},            {c10::kComplexHalf, "chalf"},
};

PyTypeObject DTypeTypeObj{};
std::array<DTypeObject*, c10::kNumScalarTypes> g_dtypes{};

DTypeObject* as_dtype(PyObject* o) { return reinterpret_cast<DTypeObject*>(o); }

PyObject* dtype_repr(PyObject* self) { return PyUnicode_FromFormat("tessera.%s", as_dtype(self)->name); }

PyObject* dtype_is_floating_point(PyObject* self, void*) {
  return PyBool_FromLong(c10::isFloatingType(as_dtype(self)->scalar_type));
}
PyObject* dtype_is_complex(PyObject* self, void*) { return PyBool_FromLong(c10::isComplexType(as_dtype(self)->scalar_type)); }
PyObject* dtype_is_signed(PyObject* self, void*) {
  HANDLE_TH_ERRORS
  c10::ScalarType t = as_dtype(self)->scalar_type;
  TORCH_CHECK(!c10::isQIntType(t), "isSignedType not supported for quantized types");
  return PyBool_FromLong(c10::isSignedType(t));
  END_HANDLE_TH_ERRORS
}
PyObject* dtype_itemsize(PyObject* self, void*) {
  return PyLong_FromSize_t(c10::elementSize(as_dtype(self)->scalar_type));
}
PyObject* dtype_reduce(PyObject* self, PyObject*) { return PyUnicode_FromString(as_dtype(self)->name); }
PyObject* dtype_to_real(PyObject* self, PyObject*) {
  HANDLE_TH_ERRORS
  c10::ScalarType t = as_dtype(self)->scalar_type;
  PyObject* r = dtype_object(c10::isComplexType(t) ? c10::toRealValueType(t) : t);
  Py_INCREF(r);
  return r;
  END_HANDLE_TH_ERRORS
}
PyObject* dtype_to_complex(PyObject* self, PyObject*) {
  HANDLE_TH_ERRORS
  c10::ScalarType t = as_dtype(self)->scalar_type;
  PyObject* r = dtype_object(c10::isComplexType(t) ? t : c10::toComplexType(t));
  Py_INCREF(r);
  return r;
  END_HANDLE_TH_ERRORS
}

PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating_point, nullptr, nullptr, nullptr},
    {"is_complex", dtype_is_complex, nullptr, nullptr, nullptr},
    {"is_signed", dtype_is_signed, nullptr, nullptr, nullptr},
    {"itemsize", dtype_itemsize, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};
PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, nullptr},
    {"to_real", dtype_to_real, METH_NOARGS, nullptr},
    {"to_complex", dtype_to_complex, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

// ---------------------------------------------------------------- layout and memory_format

struct LayoutObject {
  PyObject_HEAD
  c10::Layout layout;
  const char* name;
};
struct MemoryFormatObject {
  PyObject_HEAD
  c10::MemoryFormat format;
  const char* name;
};

PyTypeObject LayoutTypeObj{};
PyTypeObject MemoryFormatTypeObj{};
std::array<LayoutObject*, c10::kNumLayouts> g_layouts{};
std::array<MemoryFormatObject*, c10::kNumMemoryFormats> g_memory_formats{};

PyObject* layout_repr(PyObject* self) {
  return PyUnicode_FromFormat("tessera.%s", reinterpret_cast<LayoutObject*>(self)->name);
}
PyObject* layout_reduce(PyObject* self, PyObject*) {
  return PyUnicode_FromString(reinterpret_cast<LayoutObject*>(self)->name);
}
PyObject* memory_format_repr(PyObject* self) {
  return PyUnicode_FromFormat("tessera.%s", reinterpret_cast<MemoryFormatObject*>(self)->name);
}
PyObject* memory_format_reduce(PyObject* self, PyObject*) {
  return PyUnicode_FromString(reinterpret_cast<MemoryFormatObject*>(self)->name);
}
struct QSchemeObject {
  PyObject_HEAD
  c10::QScheme qscheme;
  const char* name;
};
PyTypeObject QSchemeTypeObj{};
std::array<QSchemeObject*, c10::kNumQSchemes> g_qschemes{};
PyObject* qscheme_repr(PyObject* self) {
  return PyUnicode_FromFormat("tessera.%s", reinterpret_cast<QSchemeObject*>(self)->name);
}
PyObject* qscheme_reduce(PyObject* self, PyObject*) {
  return PyUnicode_FromString(reinterpret_cast<QSchemeObject*>(self)->name);
}
PyMethodDef qscheme_methods[] = {{"__reduce__", qscheme_reduce, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};

PyMethodDef layout_methods[] = {{"__reduce__", layout_reduce, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};
PyMethodDef memory_format_methods[] = {{"__reduce__", memory_format_reduce, METH_NOARGS, nullptr},
                                       {nullptr, nullptr, 0, nullptr}};

// ---------------------------------------------------------------- device

struct DeviceObject {
  PyObject_HEAD
  c10::Device device;
};

PyTypeObject DeviceTypeObj{};

// Cached objects for the common devices: every type, index -1 (none) to kCachedIndices-2.
constexpr int kCachedIndices = 65;
std::array<std::array<PyObject*, kCachedIndices>, c10::kNumDeviceTypes> g_device_cache{};

DeviceObject* as_device(PyObject* o) { return reinterpret_cast<DeviceObject*>(o); }

PyObject* new_device_object(c10::Device d) {
  PyObject* obj = DeviceTypeObj.tp_alloc(&DeviceTypeObj, 0);
  if (!obj) return nullptr;
  new (&as_device(obj)->device) c10::Device(d);
  return obj;
}

std::string type_name_of(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

[[noreturn]] void device_signature_error(PyObject* args, PyObject* kwargs) {
  std::string got = "(";
  Py_ssize_t n = args ? PyTuple_GET_SIZE(args) : 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (i) got += ", ";
    got += type_name_of(PyTuple_GET_ITEM(args, i));
  }
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      if (got.size() > 1) got += ", ";
      const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : "?";
      got += std::string(k ? k : "?") + "=" + type_name_of(value);
    }
  }
  got += ")";
  TORCH_CHECK_TYPE(false, "Device() received an invalid combination of arguments - got ", got,
                   ", but expected one of:\n * (tessera.device device)\n * (str type, int index)\n");
}

bool is_int_object(PyObject* o) { return PyLong_Check(o) && !PyBool_Check(o); }

c10::DeviceIndex checked_index(PyObject* index) {
  long long v = PyLong_AsLongLong(index);
  if (v == -1 && PyErr_Occurred()) throw python_error();
  TORCH_CHECK(v >= 0, "Device index must not be negative");
  TORCH_CHECK(v <= 127, "Device index ", v, " is out of range (at most 127)");
  return static_cast<c10::DeviceIndex>(v);
}

PyObject* device_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  PyObject* type = nargs > 0 ? PyTuple_GET_ITEM(args, 0) : nullptr;
  PyObject* index = nargs > 1 ? PyTuple_GET_ITEM(args, 1) : nullptr;
  if (nargs > 2) device_signature_error(args, kwargs);
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
      if (k && std::strcmp(k, "type") == 0 && !type) {
        type = value;
      } else if (k && std::strcmp(k, "index") == 0 && !index) {
        index = value;
      } else {
        device_signature_error(args, kwargs);
      }
    }
  }
  if (!type) device_signature_error(args, kwargs);
  if (is_device(type) && !index) {
    Py_INCREF(type);
    return type;
  }
  if (is_int_object(type) && !index) {
    // torch.device(1) is the CUDA device with that index.
    return device_object(c10::Device(c10::kCUDA, checked_index(type)));
  }
  if (!PyUnicode_Check(type)) device_signature_error(args, kwargs);
  if (index == Py_None) index = nullptr;
  if (index && !is_int_object(index)) {
    TORCH_CHECK_TYPE(false, "Device(): argument 'index' (position 2) must be int, not ", type_name_of(index));
  }
  const char* spec = PyUnicode_AsUTF8(type);
  if (!spec) throw python_error();
  c10::Device d(spec);
  if (index) {
    TORCH_CHECK(!d.has_index(), "type (string) must not include an index because index was passed explicitly: ", spec);
    d.set_index(checked_index(index));
  }
  return device_object(d);
  END_HANDLE_TH_ERRORS
}

PyObject* device_repr(PyObject* self) {
  const c10::Device& d = as_device(self)->device;
  if (d.has_index()) {
    return PyUnicode_FromFormat("device(type='%s', index=%d)", c10::DeviceTypeName(d.type()), static_cast<int>(d.index()));
  }
  return PyUnicode_FromFormat("device(type='%s')", c10::DeviceTypeName(d.type()));
}
PyObject* device_str(PyObject* self) { return PyUnicode_FromString(as_device(self)->device.str().c_str()); }
Py_hash_t device_hash(PyObject* self) {
  const c10::Device& d = as_device(self)->device;
  Py_hash_t h = (static_cast<Py_hash_t>(d.type()) << 8) | static_cast<uint8_t>(d.index());
  return h == -1 ? -2 : h;
}
PyObject* device_richcompare(PyObject* a, PyObject* b, int op) {
  if (!is_device(a) || !is_device(b) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
  bool eq = as_device(a)->device == as_device(b)->device;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}
PyObject* device_type(PyObject* self, void*) {
  return PyUnicode_FromString(c10::DeviceTypeName(as_device(self)->device.type()));
}
PyObject* device_index(PyObject* self, void*) {
  const c10::Device& d = as_device(self)->device;
  if (!d.has_index()) Py_RETURN_NONE;
  return PyLong_FromLong(d.index());
}
PyObject* device_reduce(PyObject* self, PyObject*) {
  const c10::Device& d = as_device(self)->device;
  if (d.has_index()) {
    return Py_BuildValue("(O(si))", reinterpret_cast<PyObject*>(&DeviceTypeObj), c10::DeviceTypeName(d.type()),
                         static_cast<int>(d.index()));
  }
  return Py_BuildValue("(O(s))", reinterpret_cast<PyObject*>(&DeviceTypeObj), c10::DeviceTypeName(d.type()));
}

PyGetSetDef device_getset[] = {{"type", device_type, nullptr, nullptr, nullptr},
                               {"index", device_index, nullptr, nullptr, nullptr},
                               {nullptr, nullptr, nullptr, nullptr, nullptr}};
PyMethodDef device_methods[] = {{"__reduce__", device_reduce, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};

template <typename Obj>
bool add_singleton(PyObject* module, PyTypeObject* type, const char* name, Obj** out) {
  Obj* obj = PyObject_New(Obj, type);
  if (!obj) return false;
  *out = obj;
  Py_INCREF(obj);  // one reference for the table, one for the module
  return PyModule_AddObject(module, name, reinterpret_cast<PyObject*>(obj)) == 0;
}

bool ready_type(PyObject* module, PyTypeObject* type, const char* qualname, size_t size, const char* attr) {
  type->tp_name = qualname;
  type->tp_basicsize = static_cast<Py_ssize_t>(size);
  type->tp_flags = Py_TPFLAGS_DEFAULT;
  if (!add_type(module, type, attr)) return false;
  // Instances see __module__ (pickle looks it up on the object to find tessera.float32).
  PyObject* module_name = PyUnicode_FromString("tessera");
  if (!module_name || PyDict_SetItemString(type->tp_dict, "__module__", module_name) != 0) return false;
  Py_DECREF(module_name);
  PyType_Modified(type);
  return true;
}

}  // namespace

// ---------------------------------------------------------------- API

bool is_dtype(PyObject* obj) { return Py_TYPE(obj) == &DTypeTypeObj; }
c10::ScalarType dtype_of(PyObject* obj) { return as_dtype(obj)->scalar_type; }
PyObject* dtype_object(c10::ScalarType t) {
  auto i = static_cast<size_t>(t);
  TORCH_CHECK(i < g_dtypes.size(), "no Python dtype for ScalarType ", c10::toString(t));
  return reinterpret_cast<PyObject*>(g_dtypes[i]);
}

bool is_layout(PyObject* obj) { return Py_TYPE(obj) == &LayoutTypeObj; }
c10::Layout layout_of(PyObject* obj) { return reinterpret_cast<LayoutObject*>(obj)->layout; }
PyObject* layout_object(c10::Layout l) { return reinterpret_cast<PyObject*>(g_layouts[static_cast<size_t>(l)]); }
PyObject* qscheme_object(c10::QScheme q) { return reinterpret_cast<PyObject*>(g_qschemes[static_cast<size_t>(q)]); }

bool is_memory_format(PyObject* obj) { return Py_TYPE(obj) == &MemoryFormatTypeObj; }
c10::MemoryFormat memory_format_of(PyObject* obj) { return reinterpret_cast<MemoryFormatObject*>(obj)->format; }
PyObject* memory_format_object(c10::MemoryFormat f) {
  return reinterpret_cast<PyObject*>(g_memory_formats[static_cast<size_t>(f)]);
}

bool is_device(PyObject* obj) { return Py_TYPE(obj) == &DeviceTypeObj; }
c10::Device device_of(PyObject* obj) { return as_device(obj)->device; }
PyObject* device_object(c10::Device d) {
  int type = static_cast<int>(d.type());
  int slot = static_cast<int>(d.index()) + 1;
  if (type >= 0 && type < c10::kNumDeviceTypes && slot >= 0 && slot < kCachedIndices) {
    PyObject*& cached = g_device_cache[type][slot];
    if (!cached) {
      cached = new_device_object(d);
      if (!cached) return nullptr;
    }
    Py_INCREF(cached);
    return cached;
  }
  return new_device_object(d);
}

PyObject* get_default_dtype_fn(PyObject*, PyObject*) {
  PyObject* d = dtype_object(c10::get_default_dtype());
  Py_INCREF(d);
  return d;
}

PyObject* set_default_dtype_fn(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(is_dtype(arg), "invalid dtype object: only floating-point types are supported as the default type");
  c10::set_default_dtype(dtype_of(arg));
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

// Per thread, as torch 2's (a new thread starts on the CPU).
static thread_local std::optional<c10::Device> default_device;

std::optional<c10::Device> default_factory_device() { return default_device; }

PyObject* get_default_device_fn(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  if (!default_device) Py_RETURN_NONE;
  return device_object(*default_device);
  END_HANDLE_TH_ERRORS
}

PyObject* set_default_device_fn(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  default_device = arg == Py_None ? std::nullopt : std::optional<c10::Device>(device_from_object(arg));
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyMethodDef default_dtype_functions[] = {
    {"_get_default_dtype", get_default_dtype_fn, METH_NOARGS, "The default floating dtype."},
    {"_set_default_dtype", set_default_dtype_fn, METH_O, "Sets the default floating dtype."},
    {"_get_default_device", get_default_device_fn, METH_NOARGS,
     "The device factories use when given none (None: none set, the CPU)."},
    {"_set_default_device", set_default_device_fn, METH_O, "Sets (None: clears) the factories' default device."},
    {nullptr, nullptr, 0, nullptr}};

bool init_dtypes(PyObject* module) {
  if (PyModule_AddFunctions(module, default_dtype_functions) != 0) return false;
  // dtype
  DTypeTypeObj.tp_repr = dtype_repr;
  DTypeTypeObj.tp_str = dtype_repr;
  DTypeTypeObj.tp_getset = dtype_getset;
  DTypeTypeObj.tp_methods = dtype_methods;
  DTypeTypeObj.tp_doc = "The element type of a tensor (tessera.float32, tessera.int64, ...).";
  if (!ready_type(module, &DTypeTypeObj, "tessera.dtype", sizeof(DTypeObject), "dtype")) return false;
  for (const DTypeName& n : kPrimaryNames) {
    DTypeObject* obj = nullptr;
    if (!add_singleton(module, &DTypeTypeObj, n.name, &obj)) return false;
    obj->scalar_type = n.type;
    obj->name = n.name;
    g_dtypes[static_cast<size_t>(n.type)] = obj;
  }
  for (const DTypeName& n : kAliasNames) {
    PyObject* obj = dtype_object(n.type);
    Py_INCREF(obj);
    if (PyModule_AddObject(module, n.name, obj) != 0) return false;
  }

  // layout
  LayoutTypeObj.tp_repr = layout_repr;
  LayoutTypeObj.tp_str = layout_repr;
  LayoutTypeObj.tp_methods = layout_methods;
  LayoutTypeObj.tp_doc = "How a tensor's elements are stored (tessera.strided, tessera.sparse_coo, ...).";
  if (!ready_type(module, &LayoutTypeObj, "tessera.layout", sizeof(LayoutObject), "layout")) return false;
  for (c10::Layout l : {c10::kStrided, c10::kSparse, c10::kSparseCsr, c10::kMkldnn, c10::kSparseCsc, c10::kSparseBsr,
                        c10::kSparseBsc}) {
    const char* name = c10::LayoutName(l);
    LayoutObject*& slot = g_layouts[static_cast<size_t>(l)];
    if (!add_singleton(module, &LayoutTypeObj, name, &slot)) return false;
    slot->layout = l;
    slot->name = name;
  }

  // qscheme
  QSchemeTypeObj.tp_repr = qscheme_repr;
  QSchemeTypeObj.tp_str = qscheme_repr;
  QSchemeTypeObj.tp_methods = qscheme_methods;
  QSchemeTypeObj.tp_doc = "How a quantized tensor maps its integers to reals (tessera.per_tensor_affine, ...).";
  if (!ready_type(module, &QSchemeTypeObj, "tessera.qscheme", sizeof(QSchemeObject), "qscheme")) return false;
  for (int i = 0; i < c10::kNumQSchemes; ++i) {
    const auto q = static_cast<c10::QScheme>(i);
    QSchemeObject*& slot = g_qschemes[static_cast<size_t>(i)];
    if (!add_singleton(module, &QSchemeTypeObj, c10::toString(q), &slot)) return false;
    slot->qscheme = q;
    slot->name = c10::toString(q);
  }

  // memory_format
  MemoryFormatTypeObj.tp_repr = memory_format_repr;
  MemoryFormatTypeObj.tp_str = memory_format_repr;
  MemoryFormatTypeObj.tp_methods = memory_format_methods;
  MemoryFormatTypeObj.tp_doc = "The order of a dense tensor's dimensions in memory.";
  if (!ready_type(module, &MemoryFormatTypeObj, "tessera.memory_format", sizeof(MemoryFormatObject), "memory_format")) {
    return false;
  }
  for (c10::MemoryFormat f : {c10::MemoryFormat::Contiguous, c10::MemoryFormat::Preserve, c10::MemoryFormat::ChannelsLast,
                               c10::MemoryFormat::ChannelsLast3d}) {
    const char* name = c10::MemoryFormatName(f);
    MemoryFormatObject*& slot = g_memory_formats[static_cast<size_t>(f)];
    if (!add_singleton(module, &MemoryFormatTypeObj, name, &slot)) return false;
    slot->format = f;
    slot->name = name;
  }

  // device
  DeviceTypeObj.tp_new = device_new;
  DeviceTypeObj.tp_repr = device_repr;
  DeviceTypeObj.tp_str = device_str;
  DeviceTypeObj.tp_hash = device_hash;
  DeviceTypeObj.tp_richcompare = device_richcompare;
  DeviceTypeObj.tp_getset = device_getset;
  DeviceTypeObj.tp_methods = device_methods;
  DeviceTypeObj.tp_doc = "device(type, index=None): a device type ('cpu', 'cuda', 'meta') and an optional index.";
  return ready_type(module, &DeviceTypeObj, "tessera.device", sizeof(DeviceObject), "device");
}

}  // namespace tessera::python
