// The C++ API of tessera._C that every binding uses (the generated operator bindings,
// the argument parser, custom-op calls): wrapping and unwrapping tensors, the dtype /
// device / layout / memory_format objects, and translation of C++ exceptions into
// Python exceptions.
#pragma once

#include <Python.h>

#include <aten/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera::python {

// ---------------------------------------------------------------- tensors

// tessera.Tensor: a raw CPython type whose instances hold one at::Tensor.
extern PyTypeObject* TensorType;

// The instance layout (subclasses append their __dict__ and weakref slots after it).
struct TensorObject {
  PyObject_HEAD
  at::Tensor tensor;
  PyObject* weakreflist;
};

// A new reference to a new tessera.Tensor holding `t`; an undefined Tensor gives None.
PyObject* wrap(at::Tensor t);
// wrap(t), except that a result that is self's own tensor (x.contiguous() of a contiguous
// x, x.to(x.dtype)) comes back as self's object, as torch keeps one object per tensor.
PyObject* wrap_or_self(at::Tensor t, PyObject* self);
// Whether obj is a tessera.Tensor (or an instance of a subclass).
inline bool is_tensor(PyObject* obj) {
  return Py_TYPE(obj) == TensorType || PyObject_TypeCheck(obj, TensorType);
}
// The tensor inside obj; precondition: is_tensor(obj).
inline const at::Tensor& unwrap(PyObject* obj) { return reinterpret_cast<TensorObject*>(obj)->tensor; }

// tessera.tensor's conversion: nested sequences / numbers / numpy arrays / tensors to a new
// tensor, with torch's dtype inference when `dtype` is empty.
at::Tensor tensor_from_data(PyObject* data, std::optional<c10::ScalarType> dtype, std::optional<c10::Device> device);
// Whether obj is a numpy.ndarray (or a subclass); numpy itself is never imported.
bool is_numpy_array(PyObject* obj);
// A device argument as torch's parsers take it: tessera.device, "cuda:1" or an int (CUDA index).
c10::Device device_from_object(PyObject* obj);
// tessera.set_default_device's device: what factories called from Python without device=
// use (nullopt: none set, the CPU); each thread has its own.
std::optional<c10::Device> default_factory_device();

// Whether obj is one of numpy's scalar types (numpy.float32, numpy.int64, ...).
bool is_numpy_scalar(PyObject* obj);
// A Python number (bool, int, float, complex or a numpy scalar) as a Scalar (Bool, Long,
// Double or ComplexDouble); false when obj is not one.
bool number_to_scalar(PyObject* obj, c10::Scalar& out);
// The same as a 0-dim wrapped-number tensor (at::wrapped_scalar_tensor). The tensor may be a
// per-thread cache: use it at once.
bool number_to_tensor(PyObject* obj, at::Tensor& out);
// The other operand of a tensor operator: a number (as above) or a numpy array (copied into
// a tensor, as torch does); false for anything else.
bool operand_to_tensor(PyObject* obj, at::Tensor& out);

// TensorIndexing.cpp: the Tensor type's t[index] and t[index] = value (mapping slots).
PyObject* tensor_getitem(PyObject* self, PyObject* index);
int tensor_setitem(PyObject* self, PyObject* index, PyObject* value);

// A Scalar as a Python bool, int, float or complex (a new reference).
PyObject* scalar_to_python(const c10::Scalar& s);

// tessera.Size (a tuple subclass) of the given sizes: a new reference.
extern PyTypeObject* SizeType;
PyObject* make_size(c10::IntArrayRef sizes);
// mkldnn and nested tensors hide their geometry (torch's OpaqueTensorImpl and
// NestedTensorImpl): the paths that would read elements through sizes, strides or the data
// pointer refuse them with torch's messages. A no-op for every other tensor.
enum class OpaqueAccess { Sizes, Strides, Data, Numpy, Storage };
void check_plain_geometry(const at::Tensor& t, OpaqueAccess what);

// ---------------------------------------------------------------- dtype, device, layout, memory_format

bool is_dtype(PyObject* obj);
c10::ScalarType dtype_of(PyObject* obj);            // precondition: is_dtype(obj)
PyObject* dtype_object(c10::ScalarType t);          // borrowed singleton (tessera.float32, ...)

bool is_device(PyObject* obj);
c10::Device device_of(PyObject* obj);               // precondition: is_device(obj)
PyObject* device_object(c10::Device d);             // new reference

bool is_layout(PyObject* obj);
c10::Layout layout_of(PyObject* obj);               // precondition: is_layout(obj)
PyObject* layout_object(c10::Layout l);             // borrowed singleton

PyObject* qscheme_object(c10::QScheme q);           // borrowed singleton (tessera.per_tensor_affine, ...)

bool is_memory_format(PyObject* obj);
c10::MemoryFormat memory_format_of(PyObject* obj);  // precondition: is_memory_format(obj)
PyObject* memory_format_object(c10::MemoryFormat f);  // borrowed singleton

// ---------------------------------------------------------------- named tuples

// A new tessera.return_types.<name> (a structseq, like torch.return_types.sort) holding the
// items of the sequence `items`, one per field. Steals `items`; a null `items` (a failed
// conversion) rethrows the Python error already set.
PyObject* named_tuple_of(const char* name, std::initializer_list<const char*> fields, PyObject* items);
PyObject* named_tuple_of(const std::string& name, const std::vector<std::string>& fields, PyObject* items);

// ---------------------------------------------------------------- errors

// Thrown after a CPython call failed and set the Python error indicator: the binding's
// END_HANDLE_TH_ERRORS leaves that error as it is.
struct python_error {};

// A Python exception carried through C++ as a c10::Error (its message for C++ callers):
// what a Python kernel raised, possibly on another thread than the caller's.
// set_python_error restores the original exception, type, value and traceback.
class PythonException : public c10::Error {
 public:
  // Takes (and clears) the current Python error; the GIL must be held.
  static PythonException fetch();
  // Makes it the current Python error again; the GIL must be held.
  void restore() const;

 private:
  struct Held;
  PythonException(std::string message, std::shared_ptr<Held> held);
  std::shared_ptr<Held> held_;
};

// Sets the Python exception for the C++ exception being handled (call from a catch block):
// c10::IndexError -> IndexError, ValueError -> ValueError, TypeError -> TypeError,
// NotImplementedError -> NotImplementedError, OutOfMemoryError -> tessera.OutOfMemoryError
// (a RuntimeError), other c10::Error -> RuntimeError, python_error -> the error already
// set, std::bad_alloc -> MemoryError, other std::exception -> RuntimeError. The message
// is what() verbatim.
void set_python_error();

// tessera.OutOfMemoryError (borrowed).
extern PyObject* OutOfMemoryErrorType;

// ---------------------------------------------------------------- module pieces

// Defined by build/generated/csrc/python_functions.cpp (codegen/gen_python.py):
// null-terminated method tables of every operator binding.
PyMethodDef* generated_module_functions();  // tessera.add, tessera.empty, ...
PyMethodDef* generated_tensor_methods();    // Tensor.add, Tensor.view, Tensor.fill_, ...
PyMethodDef* generated_fft_functions();     // tessera._C._fft.fft_fft, ...
PyMethodDef* generated_linalg_functions();  // tessera._C._linalg.linalg_vector_norm, ...
PyMethodDef* generated_nested_functions();   // tessera._C._nested.nested_to_padded_tensor
PyMethodDef* generated_special_functions();  // tessera._C._special.special_entr, ...
PyMethodDef* generated_nn_functions();      // tessera._C._nn.gelu, ...
// Defined by CustomOps.cpp: _call_op, _load_library, ... (null-terminated).
PyMethodDef* custom_op_functions();
// Numpy.cpp and DLPack.cpp: zero-copy interop. The tensor_* helpers raise C++ exceptions
// (torch's messages); the tables are Tensor methods (numpy, __dlpack__, __dlpack_device__)
// and module functions (from_numpy, _from_dlpack), null-terminated.
PyObject* tensor_to_numpy(const at::Tensor& t, bool force);
at::Tensor tensor_from_numpy(PyObject* array);
PyObject* tensor_to_dlpack(const at::Tensor& t);
PyObject* tensor_dlpack_device(const at::Tensor& t);
at::Tensor tensor_from_dlpack(PyObject* capsule);
PyMethodDef* numpy_tensor_methods();
PyMethodDef* numpy_functions();
PyMethodDef* dlpack_tensor_methods();
PyMethodDef* dlpack_functions();
// NamedTensor.cpp: Tensor.names (getter/setter) and the named-tensor methods (has_names,
// align_as and the _rename/_refine_names/_align_to primitives; null-terminated).
PyObject* tensor_get_names(PyObject* self, void*);
int tensor_set_names(PyObject* self, PyObject* value, void*);
PyMethodDef* named_tensor_methods();
PyMethodDef* named_tensor_functions();  // _named_rule_operators
// torch's once-per-process UserWarning when names are first set on a tensor; false when
// the warning was raised as an error (the Python error is set).
bool warn_named_tensors_experimental();
// Defined by Allocator.cpp: the CPU allocator's _cpu_* controls (wrapped by tessera.cpu),
// set_num_threads, get_num_threads (null-terminated).
PyMethodDef* allocator_functions();

// Readies a static type and adds it to `module` as `name`; false with a Python error set.
inline bool add_type(PyObject* module, PyTypeObject* type, const char* name) {
  if (Py_TYPE(type) == nullptr) {  // a static type zero-initialised rather than with PyVarObject_HEAD_INIT
    Py_SET_REFCNT(type, 1);
    Py_SET_TYPE(type, &PyType_Type);
  }
  if (PyType_Ready(type) < 0) return false;
  Py_INCREF(type);
  if (PyModule_AddObject(module, name, reinterpret_cast<PyObject*>(type)) == 0) return true;
  Py_DECREF(type);
  return false;
}

// Initialisers called once from the module init (each adds its objects to `module`);
// they return false with a Python error set on failure.
bool init_exceptions(PyObject* module);
bool init_dtypes(PyObject* module);
bool init_tensor_type(PyObject* module);
bool init_tensor_new(PyObject* module);
// CustomOps.cpp: the _OpCall type (an operator bound once, called many times).
bool init_op_call_type(PyObject* module);
// PythonLibrary.cpp: _library_new/_define/_impl and _AutoDispatchBelowAutograd.
bool init_python_library(PyObject* module);
bool init_profiler(PyObject* module);
// TensorOperators.cpp: fills `slots` with the operators and installs them, comparisons and
// hashing on the Tensor type (before PyType_Ready).
void init_number_protocol(PyTypeObject* type, PyNumberMethods& slots);

}  // namespace tessera::python

#define HANDLE_TH_ERRORS try {
#define END_HANDLE_TH_ERRORS              \
  }                                       \
  catch (...) {                           \
    tessera::python::set_python_error();  \
    return nullptr;                       \
  }
