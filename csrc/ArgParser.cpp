#include "ArgParser.h"

#include <aten/core/CustomClass.h>
#include "TorchFunction.h"

#include "Generator.h"
#include "python_api.h"

#include <aten/core/TensorUtils.h>
#include <aten/ops/Functions.h>

#include <climits>
#include <complex>
#include <map>
#include <mutex>

namespace tessera::python {

using c10::IValue;
using c10::SchemaType;
using Kind = c10::SchemaType::Kind;

namespace {

// ---------------------------------------------------------------- type checks

bool is_int(PyObject* obj) {
  if (PyBool_Check(obj)) return false;
  if (PyLong_Check(obj)) return true;
  return !is_tensor(obj) && !PyFloat_Check(obj) && PyIndex_Check(obj);  // numpy integers
}

bool is_float_like(PyObject* obj) { return PyFloat_Check(obj) || PyLong_Check(obj); }

bool is_sequence_of(PyObject* obj, bool (*pred)(PyObject*)) {
  if (!PyTuple_Check(obj) && !PyList_Check(obj)) return false;
  PyObject* seq = obj;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!pred(PySequence_Fast_GET_ITEM(seq, i))) return false;
  }
  return true;
}

// Tensor lists also take objects that override __torch_function__ (torch's is_tensor_list).
bool is_tensor_like(PyObject* obj) { return is_tensor(obj) || is_overloaded(obj); }
bool is_tensor_or_none(PyObject* obj) { return obj == Py_None || is_tensor_like(obj); }

bool is_dimname(PyObject* obj) { return obj == Py_None || PyUnicode_Check(obj) || PyBytes_Check(obj); }
bool is_bool(PyObject* obj) { return PyBool_Check(obj); }

bool is_scalar_type_object(PyObject* obj) {
  return is_dtype(obj) || obj == reinterpret_cast<PyObject*>(&PyFloat_Type) ||
         obj == reinterpret_cast<PyObject*>(&PyLong_Type) || obj == reinterpret_cast<PyObject*>(&PyBool_Type) ||
         obj == reinterpret_cast<PyObject*>(&PyComplex_Type);
}

// Whether a 0-dim tensor may stand for a float parameter. parse() tries every overload
// without that first, so an overload taking the tensor as a Tensor wins (torch orders its
// overloads so); only when none matches does a tensor become a float.
thread_local bool t_tensor_as_float = false;

bool matches(PyObject* obj, const SchemaType& type, bool allow_number) {
  switch (type.kind()) {
    case Kind::Optional:
      return obj == Py_None || matches(obj, type.elementType(), allow_number);
    case Kind::Tensor:
      return is_tensor(obj) || (allow_number && is_number(obj)) || is_overloaded(obj);
    case Kind::Int:
    case Kind::SymInt:
      // As torch: a 0-dim integral tensor passes for an int (narrow(0, torch.tensor([1]), 1)
      // then reaches narrow.Tensor, whose kernel names the problem).
      return is_int(obj) ||
             (is_tensor(obj) && unwrap(obj).dim() == 0 && c10::isIntegralType(unwrap(obj).scalar_type(), false));
    case Kind::Float:
      // As torch: a 0-dim tensor that needs no grad passes for a float (uniform_(lo, hi)
      // with lo and hi read out of a tensor); it is converted with its __float__.
      return is_float_like(obj) ||
             (t_tensor_as_float && is_tensor(obj) && unwrap(obj).dim() == 0 && !unwrap(obj).requires_grad());
    case Kind::Complex:
      return is_float_like(obj) || PyComplex_Check(obj);
    case Kind::Bool:
      return PyBool_Check(obj);
    case Kind::Scalar:
      return is_number(obj) || (is_tensor(obj) && unwrap(obj).dim() == 0);
    case Kind::Str:
      return PyUnicode_Check(obj);
    case Kind::ScalarType:
      return is_scalar_type_object(obj);
    case Kind::Layout:
      return is_layout(obj);
    case Kind::MemoryFormat:
      return is_memory_format(obj);
    case Kind::Device:
      return is_device(obj) || PyUnicode_Check(obj) || is_int(obj);
    case Kind::Generator:
      return is_generator(obj);
    case Kind::Dimname:
      return is_dimname(obj);
    case Kind::List: {
      const SchemaType& elem = type.elementType();
      if (elem.is(Kind::Dimname)) {
        // as torch: a sequence whose first element is a name (the rest are checked when
        // parsed), or one name where the list has a fixed size (Dimname[1])
        if (PyTuple_Check(obj) || PyList_Check(obj)) {
          return PySequence_Fast_GET_SIZE(obj) == 0 || is_dimname(PySequence_Fast_GET_ITEM(obj, 0));
        }
        return type.fixedSize() && is_dimname(obj);
      }
      if (elem.isIntLike()) return is_sequence_of(obj, is_int) || (type.fixedSize() && is_int(obj));
      if (elem.isTensor()) {
        return is_sequence_of(obj, is_tensor_like) &&
               (!type.fixedSize() || PySequence_Fast_GET_SIZE(obj) == *type.fixedSize());
      }
      if (elem.isOptional() && elem.elementType().isTensor()) return is_sequence_of(obj, is_tensor_or_none);
      if (elem.is(Kind::Float)) return is_sequence_of(obj, is_float_like) || (type.fixedSize() && is_float_like(obj));
      if (elem.is(Kind::Bool)) return is_sequence_of(obj, is_bool) || (type.fixedSize() && PyBool_Check(obj));
      return PyTuple_Check(obj) || PyList_Check(obj);
    }
    default:
      return true;  // types Python cannot check (Any, type variables) accept anything
  }
}

// The type as torch names it in argument errors.
std::string python_type_name(const SchemaType& type) {
  switch (type.kind()) {
    case Kind::Optional: return python_type_name(type.elementType());
    case Kind::Tensor: return "Tensor";
    case Kind::Int:
    case Kind::SymInt: return "int";
    case Kind::Float: return "float";
    case Kind::Complex: return "complex";
    case Kind::Bool: return "bool";
    case Kind::Scalar: return "Number";
    case Kind::Str: return "str";
    case Kind::ScalarType: return "tessera.dtype";
    case Kind::Layout: return "tessera.layout";
    case Kind::MemoryFormat: return "tessera.memory_format";
    case Kind::Device: return "tessera.device";
    case Kind::Generator: return "tessera.Generator";
    case Kind::Dimname: return "name";
    case Kind::List: {
      const SchemaType& e = type.elementType();
      if (e.is(Kind::Dimname)) return "tuple of names";
      if (e.isSymInt()) return "tuple of SymInts";
      if (e.isIntLike()) return "tuple of ints";
      if (e.isTensor()) return "tuple of Tensors";
      if (e.isOptional()) return "tuple of (Tensor or None)";
      if (e.is(Kind::Float)) return "tuple of floats";
      if (e.is(Kind::Bool)) return "tuple of bools";
      return "list";
    }
    default: return type.str();
  }
}

std::string object_type_name(PyObject* obj) {
  if (is_tensor(obj)) return "Tensor";
  std::string name = Py_TYPE(obj)->tp_name;
  auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

IValue enum_default(const c10::DefaultValue& d, const SchemaType& type) {
  const std::string& name = d.enumName();
  const SchemaType& t = type.unwrapOptional();
  if (t.is(Kind::MemoryFormat)) {
    if (name == "contiguous_format") return IValue(c10::MemoryFormat::Contiguous);
    if (name == "channels_last") return IValue(c10::MemoryFormat::ChannelsLast);
    if (name == "channels_last_3d") return IValue(c10::MemoryFormat::ChannelsLast3d);
    if (name == "preserve_format") return IValue(c10::MemoryFormat::Preserve);
  }
  if (t.is(Kind::Layout) && name == "strided") return IValue(c10::kStrided);
  if (t.is(Kind::ScalarType)) {
    if (name == "long") return IValue(c10::kLong);
    if (name == "float") return IValue(c10::kFloat);
    if (name == "double") return IValue(c10::kDouble);
  }
  return IValue(d.toInt());
}

}  // namespace

bool fits_schema_type(PyObject* value, const SchemaType& type) {
  switch (type.kind()) {
    case Kind::Optional: return value == Py_None || fits_schema_type(value, type.elementType());
    case Kind::Tensor: return is_tensor(value);
    case Kind::List: {
      if (!PyList_Check(value) && !PyTuple_Check(value)) return false;
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(value); ++i) {
        if (!fits_schema_type(PySequence_Fast_GET_ITEM(value, i), type.elementType())) return false;
      }
      return true;
    }
    case Kind::Int:
    case Kind::SymInt: return PyLong_Check(value) && !PyBool_Check(value);
    case Kind::Float: return PyFloat_Check(value) || (PyLong_Check(value) && !PyBool_Check(value));
    case Kind::Bool: return PyBool_Check(value);
    case Kind::Complex:
    case Kind::Scalar: return is_number(value);
    case Kind::Str: return PyUnicode_Check(value);
    case Kind::ScalarType: return is_dtype(value);
    case Kind::Layout: return is_layout(value);
    case Kind::MemoryFormat: return is_memory_format(value);
    case Kind::Device: return is_device(value);
    case Kind::None: return value == Py_None;
    case Kind::Class:
      return is_script_object(value) && script_object_value(value).objectType().qualified_name == type.name();
    default: return true;  // the rest: to_ivalue checks them itself
  }
}

IValue default_ivalue(const c10::Argument& arg) {
  const auto& d = arg.default_value();
  if (!d) return IValue();
  switch (d->kind()) {
    case c10::DefaultValue::Kind::None: return IValue();
    case c10::DefaultValue::Kind::Bool: return IValue(d->toBool());
    case c10::DefaultValue::Kind::Int: {
      // torch prints some enum defaults as the enum's number: `ScalarType? dtype=4`
      // (randint, randperm), `MemoryFormat memory_format=0` (contiguous),
      // `MemoryFormat? memory_format=0`; the parser must hand kernels the enum.
      const SchemaType& t = arg.type().unwrapOptional();
      const int64_t v = d->toInt();
      if (t.is(Kind::ScalarType)) {
        TORCH_INTERNAL_ASSERT(v >= 0 && v < c10::kNumScalarTypes, arg.name(), ": no dtype numbered ", v);
        return IValue(static_cast<c10::ScalarType>(v));
      }
      if (t.is(Kind::MemoryFormat)) {
        TORCH_INTERNAL_ASSERT(v >= 0 && v < c10::kNumMemoryFormats, arg.name(),
                              ": no memory format numbered ", v);
        return IValue(static_cast<c10::MemoryFormat>(v));
      }
      if (t.is(Kind::Layout)) {
        TORCH_INTERNAL_ASSERT(v >= 0 && v < c10::kNumLayouts, arg.name(), ": no layout numbered ", v);
        return IValue(static_cast<c10::Layout>(v));
      }
      return IValue(v);
    }
    case c10::DefaultValue::Kind::Double: return IValue(d->toDouble());
    case c10::DefaultValue::Kind::Complex: return IValue(c10::complex<double>(d->complexReal(), d->complexImag()));
    case c10::DefaultValue::Kind::String: return IValue(d->toStringRef());
    case c10::DefaultValue::Kind::IntList: return IValue(d->toIntList());
    case c10::DefaultValue::Kind::DoubleList: return IValue(d->toDoubleList());
    case c10::DefaultValue::Kind::BoolList: return IValue(d->toBoolList());
    case c10::DefaultValue::Kind::Enum: return enum_default(*d, arg.type());
  }
  return IValue();
}

namespace {

[[noreturn]] void type_error(const std::string& msg) { TORCH_CHECK_TYPE(false, msg); }

int64_t unpack_long(PyObject* obj) {
  if (is_tensor(obj)) return unwrap(obj).item().toLong();
  int overflow = 0;
  long long v = PyLong_Check(obj) ? PyLong_AsLongLongAndOverflow(obj, &overflow) : -1;
  if (!PyLong_Check(obj)) {
    PyObject* index = PyNumber_Index(obj);
    if (!index) throw python_error();
    v = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
  }
  TORCH_CHECK(!overflow, "Overflow when unpacking long");
  if (v == -1 && PyErr_Occurred()) throw python_error();
  return v;
}

c10::Scalar unpack_scalar(PyObject* obj) {
  if (PyBool_Check(obj)) return c10::Scalar(obj == Py_True);
  if (PyLong_Check(obj)) return c10::Scalar(unpack_long(obj));
  if (PyFloat_Check(obj)) return c10::Scalar(PyFloat_AS_DOUBLE(obj));
  if (PyComplex_Check(obj)) {
    return c10::Scalar(c10::complex<double>(PyComplex_RealAsDouble(obj), PyComplex_ImagAsDouble(obj)));
  }
  if (is_tensor(obj)) return unwrap(obj).item();
  if (c10::Scalar s; is_numpy_scalar(obj) && number_to_scalar(obj, s)) return s;
  if (PyIndex_Check(obj)) return c10::Scalar(unpack_long(obj));
  PyObject* f = PyNumber_Float(obj);
  if (!f) throw python_error();
  double v = PyFloat_AS_DOUBLE(f);
  Py_DECREF(f);
  return c10::Scalar(v);
}

c10::ScalarType unpack_scalar_type(PyObject* obj) {
  if (obj == reinterpret_cast<PyObject*>(&PyFloat_Type)) return c10::kDouble;
  if (obj == reinterpret_cast<PyObject*>(&PyLong_Type)) return c10::kLong;
  if (obj == reinterpret_cast<PyObject*>(&PyBool_Type)) return c10::kBool;
  if (obj == reinterpret_cast<PyObject*>(&PyComplex_Type)) return c10::kComplexDouble;
  return dtype_of(obj);
}

c10::Device unpack_device(PyObject* obj) {
  if (is_device(obj)) return device_of(obj);
  if (PyUnicode_Check(obj)) return c10::Device(std::string_view(PyUnicode_AsUTF8(obj)));
  int64_t index = unpack_long(obj);
  TORCH_CHECK(index >= 0, "Device index must not be negative");
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
}

template <typename T, typename F>
std::vector<T> unpack_sequence(PyObject* obj, F&& unpack) {
  std::vector<T> out;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
  out.reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) out.push_back(unpack(PySequence_Fast_GET_ITEM(obj, i)));
  return out;
}

}  // namespace

// Python's numbers (bool is a PyLong) and numpy's scalars, as torch's parser takes them.
bool is_number(PyObject* obj) {
  return PyLong_Check(obj) || PyFloat_Check(obj) || PyComplex_Check(obj) || is_numpy_scalar(obj);
}

at::Tensor scalar_to_tensor(PyObject* obj) { return at::wrapped_scalar_tensor(unpack_scalar(obj)); }

// ---------------------------------------------------------------- signatures

std::string PythonSignature::describe() const {
  std::string out = "(";
  bool star = false;
  for (size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    if (p.kwarg_only && !star) {
      out += (i ? ", *" : "*");
      star = true;
    }
    if (i || star) out += ", ";
    out += python_type_name(*p.type) + (p.type->isOptional() && !p.type->elementType().isTensor() ? "" : "") + " " +
           p.name;
  }
  // Tidy the "(*, x" and "(, " artefacts of the loop above.
  if (out.rfind("(, ", 0) == 0) out.erase(1, 2);
  return out + ")";
}

// torch's Python factories take requires_grad=: functions with TensorOptions (dtype,
// layout, device, pin_memory) that make a tensor from no tensor, or from one as a model
// (*_like, new_*); not casts such as _to_copy.
static bool takes_requires_grad(const c10::FunctionSchema& schema) {
  int options = 0;
  bool tensor_input = false;
  for (const auto& a : schema.arguments()) {
    const std::string& n = a.name();
    options += n == "dtype" || n == "layout" || n == "device" || n == "pin_memory";
    tensor_input |= a.type().unwrapOptional().isTensor();
  }
  const std::string& full = schema.name();  // "aten::zeros_like"
  const size_t colons = full.rfind("::");
  const std::string name = colons == std::string::npos ? full : full.substr(colons + 2);
  const bool like = name.size() > 5 && name.compare(name.size() - 5, 5, "_like") == 0;
  const bool returns_tensor = schema.returns().size() == 1 && schema.returns()[0].type().isTensor();
  // The sparse constructors take their members as tensors and requires_grad= as factories do.
  const bool sparse_factory = name.rfind("sparse_", 0) == 0 && name.size() > 7 &&
                              name.compare(name.size() - 7, 7, "_tensor") == 0;
  return options == 4 && returns_tensor && (!tensor_input || like || sparse_factory || name.rfind("new_", 0) == 0);
}

static const SchemaType& bool_type() {
  static const SchemaType* type = new SchemaType(Kind::Bool);
  return *type;
}

// The type of an out= keyword taking n tensors: Tensor[n], one per n (kept for the process).
static const SchemaType& tensor_tuple_type(size_t n) {
  static std::mutex mutex;
  static std::map<size_t, SchemaType>* types = new std::map<size_t, SchemaType>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = types->find(n);
  if (it == types->end()) {
    it = types->emplace(n, SchemaType::list(SchemaType(Kind::Tensor), static_cast<int64_t>(n))).first;
  }
  return it->second;
}

PythonArgParser::PythonArgParser(std::string name, std::vector<const c10::FunctionSchema*> schemas,
                                 std::vector<const c10::FunctionSchema*> out_schemas, bool is_method,
                                 bool numbers_as_tensors, bool factory_requires_grad)
    : name_(std::move(name)) {
  for (size_t s = 0; s < schemas.size(); ++s) {
    PythonSignature sig;
    sig.schema = schemas[s];
    sig.out_schema = s < out_schemas.size() ? out_schemas[s] : nullptr;
    sig.is_method = is_method;
    const auto& args = sig.schema->arguments();
    // A method binds self, wherever the schema has it (polygamma(int n, Tensor self)).
    size_t self_index = args.size();
    if (is_method) {
      for (size_t i = 0; i < args.size() && self_index == args.size(); ++i) {
        if (args[i].name() == "self") self_index = i;
      }
      TORCH_INTERNAL_ASSERT(self_index < args.size(), name_, ": a method's schema has no self");
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (i == self_index) continue;
      const auto& a = args[i];
      // torch's Python name for a function's self is `input`, wherever it stands (polygamma).
      bool is_self = !is_method && a.name() == "self";
      sig.params.push_back(PythonSignature::Param{is_self ? "input" : a.name(), &a.type(), a.kwarg_only(),
                                                  a.default_value().has_value(), default_ivalue(a),
                                                  numbers_as_tensors && a.type().unwrapOptional().isTensor()});
    }
    if (sig.out_schema) {
      const auto& oargs = sig.out_schema->arguments();
      size_t n_out = 0;
      for (const auto& a : oargs) n_out += a.is_out() ? 1 : 0;
      if (n_out == 1) {
        for (const auto& a : oargs) {
          if (a.is_out()) sig.params.push_back(PythonSignature::Param{a.name(), &a.type(), true, true, IValue(), false});
        }
      } else {
        // Several outputs (sort's values and indices) come as one keyword, out=(v, i).
        sig.params.push_back(PythonSignature::Param{"out", &tensor_tuple_type(n_out), true, true, IValue(), false});
      }
    }
    if (factory_requires_grad && takes_requires_grad(*sig.schema)) {
      sig.requires_grad_index = sig.params.size();
      sig.params.push_back(PythonSignature::Param{"requires_grad", &bool_type(), true, true, IValue(false), false});
    }
    sig.positional_count = 0;
    for (auto& p : sig.params) {
      sig.positional_count += p.kwarg_only ? 0 : 1;
      const SchemaType& t = p.type->unwrapOptional();
      p.tensor_like = t.isTensor() || (t.is(Kind::List) && t.elementType().unwrapOptional().isTensor());
    }
    TORCH_INTERNAL_ASSERT(sig.params.size() <= kMaxParsedArgs, name_, " has too many arguments for the parser");
    signatures_.push_back(std::move(sig));
  }
}

bool PythonArgParser::try_match(const PythonSignature& sig, PyObject* args, PyObject* kwargs, ParsedArgs& out,
                                std::string* error) const {
  Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
  out.values.fill(nullptr);
  Py_CLEAR(out.varargs);
  out.has_torch_function = false;
  PyObject* const* positional = args ? &PyTuple_GET_ITEM(args, 0) : nullptr;

  // t.view(2, 3): an int list that is the only positional parameter may come as varargs.
  bool varargs = sig.positional_count == 1 && !sig.params.empty() && sig.params[0].type->unwrapOptional().isIntList() &&
                 nargs >= 1 && is_int(positional[0]) && (nargs > 1 || !sig.params[0].type->fixedSize());
  if (varargs) {
    Py_INCREF(args);
    out.varargs = args;
    out.values[0] = args;
    nargs = 1;
  }
  if (static_cast<size_t>(nargs) > sig.positional_count) {
    if (error) {
      *error = c10::str(name_, "() takes ", sig.positional_count, " positional argument",
                        sig.positional_count == 1 ? "" : "s", " but ", nargs, " were given");
    }
    return false;
  }
  Py_ssize_t kwargs_used = 0;
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const auto& p = sig.params[i];
    PyObject* obj = nullptr;
    bool from_kwargs = false;
    if (static_cast<Py_ssize_t>(i) < nargs) {
      obj = varargs && i == 0 ? args : positional[i];
      if (kwargs && PyDict_GetItemString(kwargs, p.name.c_str())) {
        if (error) *error = c10::str(name_, "() got multiple values for argument '", p.name, "'");
        return false;
      }
    } else if (kwargs) {
      obj = PyDict_GetItemString(kwargs, p.name.c_str());
      from_kwargs = obj != nullptr;
      kwargs_used += from_kwargs ? 1 : 0;
    }
    if (obj == nullptr) {
      if (p.has_default) continue;  // as torch: an optional without a default must be passed (None allowed)
      if (error) *error = c10::str(name_, "() missing 1 required positional arguments: \"", p.name, "\"");
      return false;
    }
    if (const SchemaType& t = p.type->unwrapOptional(); t.isIntList() && (PyTuple_Check(obj) || PyList_Check(obj))) {
      // torch names the first bad element of an int list, varargs included.
      Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
      for (Py_ssize_t k = 0; k < n; ++k) {
        PyObject* item = PySequence_Fast_GET_ITEM(obj, k);
        if (!is_int(item)) {
          if (error) {
            *error = c10::str(name_, "(): argument '", p.name, "' must be ", python_type_name(*p.type),
                              ", but found element of type ", object_type_name(item), " at pos ", k + 1);
          }
          return false;
        }
      }
    } else if (!matches(obj, *p.type, p.allow_number_as_tensor)) {
      if (error) {
        *error = from_kwargs ? c10::str(name_, "(): argument '", p.name, "' must be ", python_type_name(*p.type),
                                        ", not ", object_type_name(obj))
                             : c10::str(name_, "(): argument '", p.name, "' (position ", i + 1, ") must be ",
                                        python_type_name(*p.type), ", not ", object_type_name(obj));
      }
      return false;
    }
    out.values[i] = obj;
    if (p.tensor_like && C10_UNLIKELY(Py_TYPE(obj) != TensorType) && !out.has_torch_function) {
      out.has_torch_function = value_overrides(obj);
    }
  }
  if (kwargs && kwargs_used < PyDict_Size(kwargs)) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      const char* k = PyUnicode_AsUTF8(key);
      bool known = false;
      for (const auto& p : sig.params) known = known || p.name == k;
      if (!known) {
        if (error) *error = c10::str(name_, "() got an unexpected keyword argument '", k, "'");
        return false;
      }
    }
  }
  out.signature = &sig;
  return true;
}

ParsedArgs& PythonArgParser::parse(PyObject* args, PyObject* kwargs, ParsedArgs& out) const {
  struct TensorAsFloat {  // restored however parse leaves (it throws on no match)
    explicit TensorAsFloat(bool on) : previous(t_tensor_as_float) { t_tensor_as_float = on; }
    ~TensorAsFloat() { t_tensor_as_float = previous; }
    bool previous;
  };
  auto match_any = [&]() {
    for (size_t i = 0; i < signatures_.size(); ++i) {
      if (try_match(signatures_[i], args, kwargs, out, nullptr)) {
        out.index = static_cast<int>(i);
        out.has_torch_function = out.has_torch_function || torch_function_mode_active();
        return true;
      }
    }
    return false;
  };
  // The common first pass touches the thread-local only when a nested parse left it on.
  if (!t_tensor_as_float) {
    if (match_any()) return out;
  } else {
    TensorAsFloat off(false);
    if (match_any()) return out;
  }
  TensorAsFloat scope(true);  // the fallback: 0-dim tensors where floats are expected
  if (match_any()) return out;
  // Only one overload takes this many arguments: its own error says what is wrong (torch's
  // rule; an int list that may come as varargs takes any number).
  const size_t nargs_total = static_cast<size_t>((args ? PyTuple_GET_SIZE(args) : 0) + (kwargs ? PyDict_Size(kwargs) : 0));
  std::vector<size_t> plausible;
  for (size_t i = 0; i < signatures_.size(); ++i) {
    const PythonSignature& sig = signatures_[i];
    size_t required = 0;
    for (const auto& p : sig.params) required += p.has_default ? 0 : 1;
    const bool varargs = sig.positional_count == 1 && !sig.params.empty() &&
                         sig.params[0].type->unwrapOptional().isIntList();
    if (nargs_total >= required && (varargs || nargs_total <= sig.params.size())) plausible.push_back(i);
  }
  if (signatures_.size() == 1 || plausible.size() == 1) {
    std::string error;
    try_match(signatures_[signatures_.size() == 1 ? 0 : plausible[0]], args, kwargs, out, &error);
    type_error(error);
  }
  std::string got = "(";
  Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
  for (Py_ssize_t i = 0; i < nargs; ++i) got += (i ? ", " : "") + object_type_name(PyTuple_GET_ITEM(args, i));
  if (kwargs) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      got += (got.size() > 1 ? ", " : "") + std::string(PyUnicode_AsUTF8(key)) + "=" + object_type_name(value);
    }
  }
  got += ")";
  std::string msg = c10::str(name_, "() received an invalid combination of arguments - got ", got,
                             ", but expected one of:");
  for (const auto& sig : signatures_) msg += "\n * " + sig.describe();
  type_error(msg);
}

// ---------------------------------------------------------------- accessors

const IValue& ParsedArgs::default_of(size_t i) const { return signature->params[i].default_value; }

void check_out_options(const at::Tensor& out, std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                       std::optional<c10::Device> device) {
  TORCH_CHECK(!dtype || out.scalar_type() == *dtype, "dtype ", *dtype, " does not match dtype of out parameter (",
              out.scalar_type(), ")");
  TORCH_CHECK(!layout || out.layout() == *layout, "layout ", *layout, " does not match layout of out parameter (",
              out.layout(), ")");
  TORCH_CHECK(!device || out.device().type() == device->type(), "device type ", device->type(),
              " does not match device type of out parameter (", out.device().type(), ")");
}

at::Tensor ParsedArgs::with_requires_grad(at::Tensor result) const {
  const size_t i = signature->requires_grad_index;
  if (i == SIZE_MAX || !toBool(i)) return result;
  // (torch's factories capitalise this message; Tensor.requires_grad_'s does not)
  TORCH_CHECK(c10::isFloatingType(result.scalar_type()) || c10::isComplexType(result.scalar_type()),
              "Only Tensors of floating point and complex dtype can require gradients");
  result.set_requires_grad(true);
  return result;
}

at::Tensor ParsedArgs::with_names_warning(at::Tensor result, size_t i) const {
  if (!isNone(i) && !warn_named_tensors_experimental()) throw python_error();
  return result;
}

at::Tensor ParsedArgs::tensor(size_t i) const {
  PyObject* obj = values[i];
  if (!obj) {
    const IValue& d = default_of(i);
    return d.isTensor() ? d.toTensor() : at::Tensor();
  }
  if (is_tensor(obj)) return unwrap(obj);
  if (obj == Py_None) return at::Tensor();
  return scalar_to_tensor(obj);
}

std::optional<at::Tensor> ParsedArgs::optionalTensor(size_t i) const {
  at::Tensor t = tensor(i);
  return t.defined() ? std::optional<at::Tensor>(std::move(t)) : std::nullopt;
}

std::vector<at::Tensor> ParsedArgs::tensorlist(size_t i) const {
  if (!values[i]) return {};
  return unpack_sequence<at::Tensor>(values[i], [](PyObject* o) { return unwrap(o); });
}

std::vector<std::optional<at::Tensor>> ParsedArgs::optionalTensorlist(size_t i) const {
  if (!values[i]) return {};
  return unpack_sequence<std::optional<at::Tensor>>(values[i], [](PyObject* o) {
    return o == Py_None ? std::optional<at::Tensor>() : std::optional<at::Tensor>(unwrap(o));
  });
}

int64_t ParsedArgs::toInt64(size_t i) const { return values[i] ? unpack_long(values[i]) : default_of(i).toInt(); }

std::optional<int64_t> ParsedArgs::toInt64Optional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return toInt64(i);
}

std::vector<int64_t> ParsedArgs::intlist(size_t i) const {
  PyObject* obj = values[i];
  if (!obj) {
    const IValue& d = default_of(i);
    if (d.isIntList()) {
      std::vector<int64_t> v = d.toIntVector();
      auto n = signature->params[i].type->unwrapOptional().fixedSize();
      if (n && v.size() == 1) v.assign(static_cast<size_t>(*n), v[0]);
      return v;
    }
    if (d.isInt()) {
      auto n = signature->params[i].type->unwrapOptional().fixedSize().value_or(1);
      return std::vector<int64_t>(static_cast<size_t>(n), d.toInt());
    }
    return {};
  }
  if (is_int(obj)) {
    auto n = signature->params[i].type->unwrapOptional().fixedSize().value_or(1);
    return std::vector<int64_t>(static_cast<size_t>(n), unpack_long(obj));
  }
  return unpack_sequence<int64_t>(obj, unpack_long);
}

std::optional<std::vector<int64_t>> ParsedArgs::intlistOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return intlist(i);
}

std::vector<double> ParsedArgs::doublelist(size_t i) const {
  PyObject* obj = values[i];
  if (!obj) return default_of(i).isDoubleList() ? default_of(i).toDoubleList().vec() : std::vector<double>{};
  if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
    auto n = signature->params[i].type->unwrapOptional().fixedSize().value_or(1);
    return std::vector<double>(static_cast<size_t>(n), PyFloat_AsDouble(obj));
  }
  return unpack_sequence<double>(obj, [](PyObject* o) { return PyFloat_AsDouble(o); });
}

double ParsedArgs::toDouble(size_t i) const {
  if (!values[i]) return default_of(i).toDouble();
  double v = PyFloat_AsDouble(values[i]);
  if (v == -1.0 && PyErr_Occurred()) throw python_error();
  return v;
}

std::optional<double> ParsedArgs::toDoubleOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return toDouble(i);
}

bool ParsedArgs::toBool(size_t i) const { return values[i] ? values[i] == Py_True : default_of(i).toBool(); }

std::optional<bool> ParsedArgs::toBoolOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return toBool(i);
}

c10::Scalar ParsedArgs::scalar(size_t i) const {
  return values[i] ? unpack_scalar(values[i]) : default_of(i).toScalar();
}

std::optional<c10::Scalar> ParsedArgs::scalarOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return scalar(i);
}

c10::ScalarType ParsedArgs::scalartype(size_t i) const {
  return values[i] ? unpack_scalar_type(values[i]) : default_of(i).toScalarType();
}

std::optional<c10::ScalarType> ParsedArgs::scalartypeOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return scalartype(i);
}

c10::Layout ParsedArgs::layout(size_t i) const { return values[i] ? layout_of(values[i]) : default_of(i).toLayout(); }

std::optional<c10::Layout> ParsedArgs::layoutOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return layout(i);
}

c10::Device ParsedArgs::device(size_t i) const { return values[i] ? unpack_device(values[i]) : default_of(i).toDevice(); }

std::optional<c10::Device> ParsedArgs::deviceOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return device(i);
}

std::optional<c10::Device> ParsedArgs::factoryDevice(size_t i) const {
  if (isNone(i)) return default_factory_device().value_or(c10::Device(c10::kCPU));
  return device(i);
}

c10::MemoryFormat ParsedArgs::memoryformat(size_t i) const {
  return values[i] ? memory_format_of(values[i]) : default_of(i).toMemoryFormat();
}

std::optional<c10::MemoryFormat> ParsedArgs::memoryformatOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return memoryformat(i);
}

std::string_view ParsedArgs::stringView(size_t i) const {
  if (!values[i]) return default_of(i).toStringView();
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(values[i], &size);
  if (!data) throw python_error();
  return std::string_view(data, static_cast<size_t>(size));
}

std::optional<std::string_view> ParsedArgs::stringViewOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return stringView(i);
}

std::optional<at::Generator> ParsedArgs::generator(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return generator_of(values[i]);
}

at::Dimname ParsedArgs::dimname(size_t i) const {
  TORCH_INTERNAL_ASSERT(values[i] != nullptr, "a Dimname argument has no default");
  return unpack_dimname(values[i]);
}

std::vector<at::Dimname> ParsedArgs::dimnamelist(size_t i) const {
  PyObject* obj = values[i];
  TORCH_INTERNAL_ASSERT(obj != nullptr, "a Dimname[] argument has no default");
  if (PyTuple_Check(obj) || PyList_Check(obj)) return unpack_dimname_list(obj);
  return {unpack_dimname(obj)};  // one name for a Dimname[1]
}

std::optional<std::vector<at::Dimname>> ParsedArgs::dimnamelistOptional(size_t i) const {
  if (isNone(i)) return std::nullopt;
  return dimnamelist(i);
}

at::Dimname unpack_dimname(PyObject* obj) {
  if (obj == Py_None) return at::Dimname::wildcard();
  TORCH_CHECK_TYPE(PyUnicode_Check(obj) || PyBytes_Check(obj), "expected None or string for Dimname but got ",
                   Py_TYPE(obj)->tp_name);
  Py_ssize_t len = 0;
  char* bytes = nullptr;
  const char* text = PyUnicode_Check(obj) ? PyUnicode_AsUTF8AndSize(obj, &len)
                                          : (PyBytes_AsStringAndSize(obj, &bytes, &len) == 0 ? bytes : nullptr);
  if (text == nullptr) throw python_error();
  const std::string_view name(text, static_cast<size_t>(len));
  // "*" is torch's spelling of the wildcard, as None is
  return name == "*" ? at::Dimname::wildcard() : at::Dimname::fromString(name);
}

std::vector<at::Dimname> unpack_dimname_list(PyObject* seq) {
  PyObject* fast = PySequence_Fast(seq, "names must either be None or a tuple of dim names");
  if (fast == nullptr) throw python_error();
  std::vector<at::Dimname> names;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  names.reserve(static_cast<size_t>(n));
  try {
    for (Py_ssize_t k = 0; k < n; ++k) names.push_back(unpack_dimname(PySequence_Fast_GET_ITEM(fast, k)));
  } catch (...) {
    Py_DECREF(fast);
    throw;
  }
  Py_DECREF(fast);
  return names;
}

IValue ParsedArgs::ivalue(size_t i) const {
  const auto& p = signature->params[i];
  if (!values[i]) return p.default_value;
  return to_ivalue(values[i], *p.type, p.allow_number_as_tensor);
}

// ---------------------------------------------------------------- IValue conversion

IValue to_ivalue(PyObject* obj, const SchemaType& type, bool allow_number_as_tensor) {
  switch (type.kind()) {
    case Kind::Optional:
      return obj == Py_None ? IValue() : to_ivalue(obj, type.elementType(), allow_number_as_tensor);
    case Kind::Tensor:
      if (is_tensor(obj)) return IValue(unwrap(obj));
      return IValue(scalar_to_tensor(obj));
    case Kind::Int:
    case Kind::SymInt: return IValue(unpack_long(obj));
    case Kind::Float: {
      if (is_tensor(obj)) return IValue(unwrap(obj).item().toDouble());
      const double v = PyFloat_AsDouble(obj);
      if (v == -1.0 && PyErr_Occurred()) throw python_error();
      return IValue(v);
    }
    case Kind::Complex: return IValue(unpack_scalar(obj).toComplexDouble());
    case Kind::Bool: return IValue(obj == Py_True);
    case Kind::Scalar: return IValue(unpack_scalar(obj));
    case Kind::Str: return IValue(std::string(PyUnicode_AsUTF8(obj)));
    case Kind::ScalarType: return IValue(unpack_scalar_type(obj));
    case Kind::Layout: return IValue(layout_of(obj));
    case Kind::MemoryFormat: return IValue(memory_format_of(obj));
    case Kind::Device: return IValue(unpack_device(obj));
    case Kind::Generator: return IValue(generator_of(obj));
    case Kind::Dimname: return IValue(unpack_dimname(obj));
    case Kind::List: {
      const SchemaType& e = type.elementType();
      if (e.is(Kind::Dimname)) {
        if (PyTuple_Check(obj) || PyList_Check(obj)) return IValue(at::ArrayRef<at::Dimname>(unpack_dimname_list(obj)));
        return IValue(at::ArrayRef<at::Dimname>(unpack_dimname(obj)));
      }
      if (e.isIntLike()) {
        if (is_int(obj)) return IValue(std::vector<int64_t>(static_cast<size_t>(type.fixedSize().value_or(1)), unpack_long(obj)));
        return IValue(unpack_sequence<int64_t>(obj, unpack_long));
      }
      if (e.isTensor()) return IValue(unpack_sequence<at::Tensor>(obj, [](PyObject* o) { return unwrap(o); }));
      if (e.isOptional() && e.elementType().isTensor()) {
        return IValue(unpack_sequence<std::optional<at::Tensor>>(obj, [](PyObject* o) {
          return o == Py_None ? std::optional<at::Tensor>() : std::optional<at::Tensor>(unwrap(o));
        }));
      }
      if (e.is(Kind::Float)) return IValue(unpack_sequence<double>(obj, [](PyObject* o) { return PyFloat_AsDouble(o); }));
      if (e.is(Kind::Bool)) return IValue(unpack_sequence<bool>(obj, [](PyObject* o) { return o == Py_True; }));
      TORCH_ERROR_WITH(NotImplementedError, "lists of ", e, " cannot be passed from Python yet");
    }
    case Kind::Class: {
      if (is_script_object(obj)) {
        const IValue& v = script_object_value(obj);
        if (v.objectType().qualified_name == type.name()) return v;
        TORCH_ERROR_WITH(TypeError, "expected an object of ", type.name(), " but got one of ",
                         v.objectType().qualified_name);
      }
      TORCH_ERROR_WITH(TypeError, "expected an object of ", type.name(), " but got ", Py_TYPE(obj)->tp_name);
    }
    default:
      TORCH_ERROR_WITH(NotImplementedError, "arguments of type ", type, " cannot be passed from Python yet");
  }
}

PyObject* from_ivalue(const IValue& v, bool lists_as_lists) {
  switch (v.tag()) {
    case IValue::Tag::None: Py_RETURN_NONE;
    case IValue::Tag::Tensor: return wrap(v.toTensor());
    case IValue::Tag::Double: return PyFloat_FromDouble(v.toDouble());
    case IValue::Tag::Int: return PyLong_FromLongLong(v.toInt());
    case IValue::Tag::Bool: return PyBool_FromLong(v.toBool());
    case IValue::Tag::ComplexDouble: {
      auto z = v.toComplexDouble();
      return PyComplex_FromDoubles(z.real(), z.imag());
    }
    case IValue::Tag::String: return PyUnicode_FromStringAndSize(v.toStringView().data(), static_cast<Py_ssize_t>(v.toStringView().size()));
    case IValue::Tag::ScalarType: {
      PyObject* d = dtype_object(v.toScalarType());
      Py_INCREF(d);
      return d;
    }
    case IValue::Tag::Device: return device_object(v.toDevice());
    case IValue::Tag::Layout: {
      PyObject* l = layout_object(v.toLayout());
      Py_INCREF(l);
      return l;
    }
    case IValue::Tag::MemoryFormat: {
      PyObject* f = memory_format_object(v.toMemoryFormat());
      Py_INCREF(f);
      return f;
    }
    case IValue::Tag::Generator: return generator_object(v.toGenerator());
    case IValue::Tag::Object: return script_object_new(v);
    default: {
      std::vector<IValue> items;
      if (v.isTuple()) {
        for (const auto& e : v.toTupleElements()) items.push_back(e);
      } else if (v.isBoolList()) {
        for (bool x : v.toBoolList()) items.emplace_back(x);
      } else if (v.isOptionalTensorList()) {
        for (const auto& t : v.toOptionalTensorList()) items.push_back(t ? IValue(*t) : IValue());
      } else if (v.isIntList()) {
        for (int64_t x : v.toIntList()) items.emplace_back(x);
      } else if (v.isDoubleList()) {
        for (double x : v.toDoubleList()) items.emplace_back(x);
      } else if (v.isTensorList()) {
        for (const auto& t : v.toTensorList()) items.emplace_back(t);
      } else if (v.isList()) {
        for (const auto& e : v.toList()) items.push_back(e);
      } else {
        TORCH_CHECK_NOT_IMPLEMENTED(false, "returning a ", v.tagKind(), " to Python is not supported yet");
      }
      const bool tuple = v.isTuple() || !lists_as_lists;
      const auto n = static_cast<Py_ssize_t>(items.size());
      PyObject* out = tuple ? PyTuple_New(n) : PyList_New(n);
      if (!out) throw python_error();
      for (size_t i = 0; i < items.size(); ++i) {
        PyObject* item = from_ivalue(items[i], lists_as_lists);
        if (!item) {
          Py_DECREF(out);
          throw python_error();
        }
        if (tuple) {
          PyTuple_SET_ITEM(out, static_cast<Py_ssize_t>(i), item);
        } else {
          PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), item);
        }
      }
      return out;
    }
  }
}

}  // namespace tessera::python
