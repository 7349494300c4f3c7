// Python's operators on tessera.Tensor, written against CPython's number slots so that
// `a + 1` costs one dispatch. The slots that are one operator call (+ - * / // % & | ^ << >>,
// their in-place forms, unary - + abs, the comparisons) are generated from ops.yaml's
// python_operator: (csrc/TensorOperators.h has their shapes); here are their operands
// (Python numbers become 0-dim "wrapped number" tensors, at::wrapped_scalar_tensor, which
// type promotion ranks below every tensor, as torch's do), the slots with rules of their
// own (** takes a number as a Scalar, @ only tensors, ~ refuses floats) and hashing.
#include "TensorOperators.h"

#include <aten/core/TensorUtils.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <cstring>
#include <utility>

namespace tessera::python {

namespace {

// numpy's scalar types by kind (numpy.float32 is not a Python float, numpy.int64 not an int).
enum class NumberKind { None, Bool, Int, Float, Complex };

NumberKind numpy_scalar_kind(PyObject* obj) {
  const char* name = Py_TYPE(obj)->tp_name;
  if (std::strncmp(name, "numpy.", 6) != 0) return NumberKind::None;
  name += 6;
  if (std::strncmp(name, "bool", 4) == 0) return NumberKind::Bool;
  if (std::strncmp(name, "int", 3) == 0 || std::strncmp(name, "uint", 4) == 0 || std::strcmp(name, "longlong") == 0 ||
      std::strcmp(name, "ulonglong") == 0) {
    return NumberKind::Int;
  }
  if (std::strncmp(name, "float", 5) == 0 || std::strcmp(name, "longdouble") == 0) return NumberKind::Float;
  if (std::strncmp(name, "complex", 7) == 0 || std::strcmp(name, "clongdouble") == 0) return NumberKind::Complex;
  return NumberKind::None;
}

int64_t unpack_long_checked(PyObject* obj) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (v == -1 && PyErr_Occurred()) throw python_error();
  TORCH_CHECK(!overflow, "Overflow when unpacking long");
  return v;
}

}  // namespace

bool is_numpy_scalar(PyObject* obj) { return numpy_scalar_kind(obj) != NumberKind::None; }

bool number_to_scalar(PyObject* obj, c10::Scalar& out) {
  if (PyFloat_Check(obj)) {
    out = PyFloat_AS_DOUBLE(obj);
    return true;
  }
  if (PyBool_Check(obj)) {
    out = obj == Py_True;
    return true;
  }
  if (PyLong_Check(obj)) {
    out = unpack_long_checked(obj);
    return true;
  }
  if (PyComplex_Check(obj)) {
    Py_complex z = PyComplex_AsCComplex(obj);
    out = c10::complex<double>(z.real, z.imag);
    return true;
  }
  switch (numpy_scalar_kind(obj)) {
    case NumberKind::None:
      return false;
    case NumberKind::Bool: {
      int b = PyObject_IsTrue(obj);
      if (b < 0) throw python_error();
      out = b != 0;
      return true;
    }
    case NumberKind::Int: {
      PyObject* index = PyNumber_Index(obj);
      if (!index) throw python_error();
      int64_t v = 0;
      try {
        v = unpack_long_checked(index);
      } catch (...) {
        Py_DECREF(index);
        throw;
      }
      Py_DECREF(index);
      out = v;
      return true;
    }
    case NumberKind::Float: {
      double v = PyFloat_AsDouble(obj);
      if (v == -1.0 && PyErr_Occurred()) throw python_error();
      out = v;
      return true;
    }
    case NumberKind::Complex: {
      Py_complex z = PyComplex_AsCComplex(obj);
      if (z.real == -1.0 && PyErr_Occurred()) throw python_error();
      out = c10::complex<double>(z.real, z.imag);
      return true;
    }
  }
  return false;
}

bool number_to_tensor(PyObject* obj, at::Tensor& out) {
  c10::Scalar s;
  if (!number_to_scalar(obj, s)) return false;
  out = at::wrapped_scalar_tensor(s);
  return true;
}

bool operand_to_tensor(PyObject* obj, at::Tensor& out) {
  if (number_to_tensor(obj, out)) return true;
  if (is_numpy_array(obj)) {
    out = tensor_from_data(obj, std::nullopt, std::nullopt);
    return true;
  }
  return false;
}

namespace {
// The Python spelling of an in-place operator by the method its override receives; null
// for the other operators.
const char* inplace_symbol(const char* name) {
  static const std::pair<const char*, const char*> table[] = {
      {"add_", "+="}, {"sub_", "-="}, {"mul_", "*="}, {"div_", "/="}, {"floor_divide_", "//="},
      {"remainder_", "%="}, {"pow_", "**="}, {"__iand__", "&="}, {"__ior__", "|="}, {"__ixor__", "^="},
      {"__ilshift__", "<<="}, {"__irshift__", ">>="}};
  for (const auto& [method, symbol] : table) {
    if (std::strcmp(method, name) == 0) return symbol;
  }
  return nullptr;
}

// What an operator's parser would take: a tensor, an overriding object, a number, a numpy
// array. Anything else never reaches __torch_function__ in torch either.
bool operand_acceptable(PyObject* obj) {
  return is_tensor(obj) || is_overloaded(obj) || PyLong_Check(obj) || PyFloat_Check(obj) || PyComplex_Check(obj) ||
         is_numpy_scalar(obj) || is_numpy_array(obj);
}

PyObject* unsupported_inplace(const char* symbol, PyObject* a, PyObject* b) {
  PyErr_Format(PyExc_TypeError, "unsupported operand type(s) for %s: '%.100s' and '%.100s'", symbol,
               Py_TYPE(a)->tp_name, Py_TYPE(b)->tp_name);
  return nullptr;
}
}  // namespace

PyObject* operator_torch_function(const char* name, const char* reflected, PyObject* a, PyObject* b) {
  // An in-place operator raises itself: CPython would otherwise go on to a subclass's
  // sq_inplace_concat (filled from Tensor.__iadd__), get NotImplemented again and bind it.
  const char* symbol = inplace_symbol(name);
  if (!operand_acceptable(a) || !operand_acceptable(b)) {
    if (symbol) return unsupported_inplace(symbol, a, b);
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject* result = handle_operator_torch_function(name, reflected, a, b);
  if (!result && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    if (symbol) return unsupported_inplace(symbol, a, b);
    Py_RETURN_NOTIMPLEMENTED;
  }
  if (symbol && result == Py_NotImplemented) {
    Py_DECREF(result);
    return unsupported_inplace(symbol, a, b);
  }
  return result;
}

namespace {

// (** takes its number operand as a Scalar, as torch's Tensor.__pow__ does: int ** negative
// int is then refused the way torch refuses it.)

PyObject* tensor_power(PyObject* a, PyObject* b, PyObject* mod) {
  HANDLE_TH_ERRORS
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
  if (C10_UNLIKELY(operator_has_torch_function(a, b))) return operator_torch_function("pow", "__rpow__", a, b);
  bool ta = is_tensor(a), tb = is_tensor(b);
  if (ta && tb) return wrap(at::pow(unwrap(a), unwrap(b)));
  c10::Scalar s;
  if (ta) {
    if (number_to_scalar(b, s)) return wrap(at::pow(unwrap(a), s));
    at::Tensor other;
    if (!operand_to_tensor(b, other)) Py_RETURN_NOTIMPLEMENTED;
    return wrap(at::pow(unwrap(a), other));
  }
  if (number_to_scalar(a, s)) return wrap(at::pow(s, unwrap(b)));
  at::Tensor other;
  if (!operand_to_tensor(a, other)) Py_RETURN_NOTIMPLEMENTED;
  return wrap(at::pow(other, unwrap(b)));
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_inplace_power(PyObject* a, PyObject* b, PyObject* mod) {
  HANDLE_TH_ERRORS
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
  if (C10_UNLIKELY(operator_has_torch_function(a, b))) return operator_torch_function("pow_", nullptr, a, b);
  if (!is_tensor(a)) Py_RETURN_NOTIMPLEMENTED;
  c10::Scalar s;
  at::Tensor other;
  if (is_tensor(b)) {
    unwrap(a).pow_(unwrap(b));
  } else if (number_to_scalar(b, s)) {
    unwrap(a).pow_(s);
  } else if (operand_to_tensor(b, other)) {
    unwrap(a).pow_(other);
  } else {
    Py_RETURN_NOTIMPLEMENTED;
  }
  Py_INCREF(a);
  return a;
  END_HANDLE_TH_ERRORS
}

// a @ b: at::matmul for two tensors (torch takes no Python number here either).
PyObject* tensor_matmul(PyObject* a, PyObject* b) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(operator_has_torch_function(a, b))) return operator_torch_function("matmul", "__rmatmul__", a, b);
  if (!is_tensor(a) || !is_tensor(b)) Py_RETURN_NOTIMPLEMENTED;
  return wrap(at::matmul(unwrap(a), unwrap(b)));
  END_HANDLE_TH_ERRORS
}

// ~t: torch refuses floating and complex tensors with a TypeError before dispatching.
PyObject* tensor_invert(PyObject* a) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(self_has_torch_function(a))) return handle_operator_torch_function("__invert__", nullptr, a, nullptr);
  const at::Tensor& t = unwrap(a);
  TORCH_CHECK_TYPE(c10::isIntegralType(t.scalar_type(), /*includeBool=*/true),
                   "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
  return wrap(at::bitwise_not(t));
  END_HANDLE_TH_ERRORS
}

// ==, !=, <, <=, >, >= against a tensor, a number or a numpy array; anything else is
// NotImplemented, so `t == None` is False and `t < "a"` a TypeError, as in torch.
PyObject* tensor_richcompare(PyObject* self, PyObject* other, int op) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(operator_has_torch_function(self, other))) {
    static const char* const names[] = {"lt", "le", "eq", "ne", "gt", "ge"};  // Py_LT .. Py_GE
    if (op < Py_LT || op > Py_GE) Py_RETURN_NOTIMPLEMENTED;
    return operator_torch_function(names[op], nullptr, self, other);
  }
  if (!is_tensor(self)) Py_RETURN_NOTIMPLEMENTED;
  at::Tensor number;
  const at::Tensor* rhs = nullptr;
  if (is_tensor(other)) {
    rhs = &unwrap(other);
  } else if (operand_to_tensor(other, number)) {
    rhs = &number;
  } else {
    Py_RETURN_NOTIMPLEMENTED;
  }
  const BinaryOperator compare = comparison_operator(op);
  if (!compare) Py_RETURN_NOTIMPLEMENTED;
  return wrap(compare(unwrap(self), *rhs));
  END_HANDLE_TH_ERRORS
}

// Tensors hash by identity (== builds a tensor, so they could not hash by value).
Py_hash_t tensor_hash(PyObject* self) { return _Py_HashPointer(self); }

}  // namespace

void init_number_protocol(PyTypeObject* type, PyNumberMethods& n) {
  init_generated_number_slots(n);
  n.nb_power = tensor_power;
  n.nb_inplace_power = tensor_inplace_power;
  n.nb_matrix_multiply = tensor_matmul;
  n.nb_invert = tensor_invert;
  type->tp_as_number = &n;
  type->tp_richcompare = tensor_richcompare;
  type->tp_hash = tensor_hash;
}

}  // namespace tessera::python
