// The one Python argument parser of tessera._C. It is driven by operator schemas (the
// FunctionSchema the dispatcher holds), so every generated binding and every custom op
// parses positional and keyword arguments, defaults, keyword-only arguments, int lists
// given as varargs (t.view(2, 3)), Scalars, optionals, dtypes and devices the same way,
// and reports a bad argument as torch does:
//   add(): argument 'other' (position 1) must be Tensor, not str
#pragma once

#include <Python.h>

#include <aten/core/IValue.h>
#include <aten/schema/FunctionSchema.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::python {

// One overload as Python sees it: a schema, minus `self` for methods, plus an optional
// keyword-only `out` taken from its out= twin.
struct PythonSignature {
  const c10::FunctionSchema* schema;
  const c10::FunctionSchema* out_schema;  // the out= overload sharing these arguments, or null
  bool is_method;
  struct Param {
    std::string name;          // as Python spells it ("input" for a function's self)
    const c10::SchemaType* type;
    bool kwarg_only;
    bool has_default;
    c10::IValue default_value; // None when absent or None
    bool allow_number_as_tensor;
    bool tensor_like = false;  // Tensor, Tensor?, Tensor[] or Tensor?[]: may carry __torch_function__
  };
  std::vector<Param> params;   // in schema order (self excluded for methods), then `out`, then
                               // `requires_grad` for factories (schemas with TensorOptions)
  size_t requires_grad_index = SIZE_MAX;  // that keyword's index, when the schema takes it
  size_t positional_count;     // how many may be given positionally
  // "(Tensor input, Tensor other, *, Number alpha, Tensor out)" for error messages.
  std::string describe() const;
};

class ParsedArgs;

class PythonArgParser {
 public:
  // `schemas` are the overloads in the order to try; `out_schemas[i]` is overload i's
  // out= twin or null. Methods bind `self` separately and never see it as an argument.
  // With numbers_as_tensors (ops.yaml `python_numbers: True`) a Python number may stand for
  // a Tensor argument. With factory_requires_grad (tessera's functions and methods, not
  // tessera.ops), factories also take torch's keyword-only requires_grad=False.
  PythonArgParser(std::string name, std::vector<const c10::FunctionSchema*> schemas,
                  std::vector<const c10::FunctionSchema*> out_schemas, bool is_method,
                  bool numbers_as_tensors = false, bool factory_requires_grad = false);

  // Matches (args, kwargs) against the overloads; fills `out` and returns it, or raises
  // TypeError (via a C++ exception that the binding's END_HANDLE_TH_ERRORS translates).
  ParsedArgs& parse(PyObject* args, PyObject* kwargs, ParsedArgs& out) const;

  const std::string& name() const { return name_; }
  const std::vector<PythonSignature>& signatures() const { return signatures_; }

 private:
  bool try_match(const PythonSignature& sig, PyObject* args, PyObject* kwargs, ParsedArgs& out,
                 std::string* error) const;

  std::string name_;
  std::vector<PythonSignature> signatures_;
};

constexpr size_t kMaxParsedArgs = 24;

// The matched overload and its arguments: borrowed PyObject* (null where defaulted),
// read back with typed accessors that apply the schema's defaults.
class ParsedArgs {
 public:
  int index = -1;                        // which overload matched
  const PythonSignature* signature = nullptr;
  std::array<PyObject*, kMaxParsedArgs> values{};
  PyObject* varargs = nullptr;           // set when an int list came as varargs (owned)
  // A tensor argument overrides __torch_function__, or a TorchFunctionMode is active: the
  // binding hands the call to handle_torch_function (csrc/TorchFunction.h) instead.
  bool has_torch_function = false;

  ParsedArgs() = default;
  ~ParsedArgs() { Py_XDECREF(varargs); }
  ParsedArgs(const ParsedArgs&) = delete;
  ParsedArgs& operator=(const ParsedArgs&) = delete;

  bool has(size_t i) const { return values[i] != nullptr; }
  bool isNone(size_t i) const { return values[i] == nullptr ? default_of(i).isNone() : values[i] == Py_None; }
  // Whether the call itself passed a value (not None) for parameter i, whatever its default.
  bool given(size_t i) const { return values[i] != nullptr && values[i] != Py_None; }
  PyObject* object(size_t i) const { return values[i]; }

  at::Tensor tensor(size_t i) const;
  std::optional<at::Tensor> optionalTensor(size_t i) const;
  std::vector<at::Tensor> tensorlist(size_t i) const;
  std::vector<std::optional<at::Tensor>> optionalTensorlist(size_t i) const;
  int64_t toInt64(size_t i) const;
  std::optional<int64_t> toInt64Optional(size_t i) const;
  std::vector<int64_t> intlist(size_t i) const;
  std::optional<std::vector<int64_t>> intlistOptional(size_t i) const;
  std::vector<double> doublelist(size_t i) const;
  double toDouble(size_t i) const;
  std::optional<double> toDoubleOptional(size_t i) const;
  bool toBool(size_t i) const;
  std::optional<bool> toBoolOptional(size_t i) const;
  c10::Scalar scalar(size_t i) const;
  std::optional<c10::Scalar> scalarOptional(size_t i) const;
  c10::ScalarType scalartype(size_t i) const;
  std::optional<c10::ScalarType> scalartypeOptional(size_t i) const;
  c10::Layout layout(size_t i) const;
  std::optional<c10::Layout> layoutOptional(size_t i) const;
  c10::Device device(size_t i) const;
  std::optional<c10::Device> deviceOptional(size_t i) const;
  // A factory's device= (an op with no tensor argument): the given one, else
  // tessera.set_default_device's, else the CPU; always a device, as torch's bindings pass
  // it (so __torch_dispatch__ sees device= on every factory).
  std::optional<c10::Device> factoryDevice(size_t i) const;
  c10::MemoryFormat memoryformat(size_t i) const;
  std::optional<c10::MemoryFormat> memoryformatOptional(size_t i) const;
  std::string_view stringView(size_t i) const;
  std::optional<std::string_view> stringViewOptional(size_t i) const;
  std::optional<at::Generator> generator(size_t i) const;
  at::Dimname dimname(size_t i) const;
  // Dimname[] (one name where the list has a fixed size) and names= (None: no names).
  std::vector<at::Dimname> dimnamelist(size_t i) const;
  std::optional<std::vector<at::Dimname>> dimnamelistOptional(size_t i) const;

  // Any argument as the boxed value its schema type calls for (custom ops, fallbacks).
  c10::IValue ivalue(size_t i) const;
  // A factory's result with requires_grad set as the call asked (factories only).
  at::Tensor with_requires_grad(at::Tensor result) const;
  // A factory's result, after torch's first-named-tensor warning when names= (argument i) named it.
  at::Tensor with_names_warning(at::Tensor result, size_t i) const;

 private:
  const c10::IValue& default_of(size_t i) const;
};

// A factory called with out=: the options it was also given must describe out (torch's
// check_out_type_matches, with its words).
void check_out_options(const at::Tensor& out, std::optional<c10::ScalarType> dtype, std::optional<c10::Layout> layout,
                       std::optional<c10::Device> device);

// tessera.ScriptObject (CustomClasses.cpp): the Python handle of an IValue Object.
bool is_script_object(PyObject* obj);
const c10::IValue& script_object_value(PyObject* obj);  // precondition: is_script_object(obj)
PyObject* script_object_new(const c10::IValue& value);   // new reference; value is an Object

// Python value <-> IValue by schema type; numbers become 0-dim "wrapped number" tensors
// where a Tensor is expected and numbers are allowed.
c10::IValue to_ivalue(PyObject* obj, const c10::SchemaType& type, bool allow_number_as_tensor = false);
// Lists come back as tuples (what the bindings return, as torch's), or with lists_as_lists
// as lists (what __torch_dispatch__ handlers get, as torch gives them).
PyObject* from_ivalue(const c10::IValue& value, bool lists_as_lists = false);
// Whether a Python value fits a schema type (a result from Python code: a __torch_dispatch__
// handler, a Python kernel): tensors where Tensor is, lists of them where Tensor[] is, ...
// to_ivalue converts only values that fit.
bool fits_schema_type(PyObject* value, const c10::SchemaType& type);
// An argument's schema default as the value a call without it passes (None when absent).
c10::IValue default_ivalue(const c10::Argument& arg);
// A Python bool/int/float/complex as a 0-dim tensor marked as a wrapped number.
at::Tensor scalar_to_tensor(PyObject* obj);
bool is_number(PyObject* obj);
// A dim name (str, or None for the wildcard) and a sequence of them, with torch's messages
// ("expected None or string for Dimname but got int", "Invalid name: ...").
at::Dimname unpack_dimname(PyObject* obj);
std::vector<at::Dimname> unpack_dimname_list(PyObject* seq);

}  // namespace tessera::python
