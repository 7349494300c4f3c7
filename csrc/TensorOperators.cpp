// Python's operators on tessera.Tensor: arithmetic (+ - * / // % ** @, bitwise & | ^ << >>),
// their reflected and in-place forms, comparisons, unary - + abs ~, and hashing by
// identity. Written against CPython's number slots so that `a + 1` costs one dispatch:
// Python numbers become cached 0-dim "wrapped number" tensors, which type promotion ranks
// below every tensor, as torch's do.
#include "python_api.h"

#include <aten/native/TensorFactories.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <cstring>

namespace tessera::python {

namespace {

// One cached wrapped-number tensor per kind and thread. `a + 1` reuses it when nothing but
// the cache refers to it (no op kept it: no autograd save, no view of its storage, no
// weak reference), which spares two allocations per operator call; otherwise the cache
// lets go of it and takes a fresh one.
template <typename T>
at::Tensor wrapped_number(c10::ScalarType dtype, T value) {
  static thread_local at::Tensor cache;
  if (!(cache.defined() && cache.getIntrusivePtr().unique() && cache.storage().use_count() == 1 &&
        cache.unsafeGetTensorImpl()->is_wrapped_number())) {
    cache = at::native::make_empty(c10::IntArrayRef(), dtype, c10::Device(c10::kCPU));
    cache.unsafeGetTensorImpl()->set_wrapped_number(true);
  }
  *static_cast<T*>(cache.data_ptr()) = value;
  return cache;
}

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

// A Python number as a 0-dim wrapped-number tensor (Bool, Long, Double or ComplexDouble,
// which type promotion ranks below any tensor); false when obj is not a number.
}  // namespace

bool number_to_tensor(PyObject* obj, at::Tensor& out) {
  if (PyFloat_Check(obj)) {
    out = wrapped_number<double>(c10::kDouble, PyFloat_AS_DOUBLE(obj));
    return true;
  }
  if (PyBool_Check(obj)) {
    out = wrapped_number<bool>(c10::kBool, obj == Py_True);
    return true;
  }
  if (PyLong_Check(obj)) {
    out = wrapped_number<int64_t>(c10::kLong, unpack_long_checked(obj));
    return true;
  }
  if (PyComplex_Check(obj)) {
    Py_complex z = PyComplex_AsCComplex(obj);
    out = wrapped_number<c10::complex<double>>(c10::kComplexDouble, c10::complex<double>(z.real, z.imag));
    return true;
  }
  switch (numpy_scalar_kind(obj)) {
    case NumberKind::None:
      return false;
    case NumberKind::Bool: {
      int b = PyObject_IsTrue(obj);
      if (b < 0) throw python_error();
      out = wrapped_number<bool>(c10::kBool, b != 0);
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
      out = wrapped_number<int64_t>(c10::kLong, v);
      return true;
    }
    case NumberKind::Float: {
      double v = PyFloat_AsDouble(obj);
      if (v == -1.0 && PyErr_Occurred()) throw python_error();
      out = wrapped_number<double>(c10::kDouble, v);
      return true;
    }
    case NumberKind::Complex: {
      Py_complex z = PyComplex_AsCComplex(obj);
      if (z.real == -1.0 && PyErr_Occurred()) throw python_error();
      out = wrapped_number<c10::complex<double>>(c10::kComplexDouble, c10::complex<double>(z.real, z.imag));
      return true;
    }
  }
  return false;
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

enum class BinOp { Add, Sub, Mul, Div, FloorDiv, Mod, And, Or, Xor, LShift, RShift };

at::Tensor apply(BinOp op, const at::Tensor& a, const at::Tensor& b) {
  switch (op) {
    case BinOp::Add: return at::add(a, b);
    case BinOp::Sub: return at::sub(a, b);
    case BinOp::Mul: return at::mul(a, b);
    case BinOp::Div: return at::div(a, b);
    case BinOp::FloorDiv: return at::floor_divide(a, b);
    case BinOp::Mod: return at::remainder(a, b);
    case BinOp::And: return at::bitwise_and(a, b);
    case BinOp::Or: return at::bitwise_or(a, b);
    case BinOp::Xor: return at::bitwise_xor(a, b);
    case BinOp::LShift: return at::bitwise_left_shift(a, b);
    case BinOp::RShift: return at::bitwise_right_shift(a, b);
  }
  TORCH_INTERNAL_ASSERT(false, "unknown operator");
}

void apply_(BinOp op, const at::Tensor& a, const at::Tensor& b) {
  switch (op) {
    case BinOp::Add: a.add_(b); return;
    case BinOp::Sub: a.sub_(b); return;
    case BinOp::Mul: a.mul_(b); return;
    case BinOp::Div: a.div_(b); return;
    case BinOp::FloorDiv: a.floor_divide_(b); return;
    case BinOp::Mod: a.remainder_(b); return;
    case BinOp::And: a.bitwise_and_(b); return;
    case BinOp::Or: a.bitwise_or_(b); return;
    case BinOp::Xor: a.bitwise_xor_(b); return;
    case BinOp::LShift: a.bitwise_left_shift_(b); return;
    case BinOp::RShift: a.bitwise_right_shift_(b); return;
  }
}

// a op b with either operand the tensor (b op a arrives here as the reflected call).
template <BinOp op>
PyObject* tensor_binary(PyObject* a, PyObject* b) {
  HANDLE_TH_ERRORS
  bool ta = is_tensor(a), tb = is_tensor(b);
  if (ta && tb) return wrap(apply(op, unwrap(a), unwrap(b)));
  at::Tensor other;
  if (ta) {
    if (!operand_to_tensor(b, other)) Py_RETURN_NOTIMPLEMENTED;
    return wrap(apply(op, unwrap(a), other));
  }
  if (!operand_to_tensor(a, other)) Py_RETURN_NOTIMPLEMENTED;
  return wrap(apply(op, other, unwrap(b)));
  END_HANDLE_TH_ERRORS
}

template <BinOp op>
PyObject* tensor_inplace(PyObject* a, PyObject* b) {
  HANDLE_TH_ERRORS
  if (!is_tensor(a)) Py_RETURN_NOTIMPLEMENTED;
  at::Tensor number;
  const at::Tensor* other = nullptr;
  if (is_tensor(b)) {
    other = &unwrap(b);
  } else if (operand_to_tensor(b, number)) {
    other = &number;
  } else {
    Py_RETURN_NOTIMPLEMENTED;
  }
  apply_(op, unwrap(a), *other);
  Py_INCREF(a);
  return a;
  END_HANDLE_TH_ERRORS
}

// A Python number as a Scalar (pow takes its number operand as a Scalar, as torch's
// Tensor.__pow__ does: int ** negative int is then refused the way torch refuses it).
bool number_to_scalar(PyObject* obj, c10::Scalar& out) {
  at::Tensor t;
  if (!number_to_tensor(obj, t)) return false;
  out = t.item();
  return true;
}

PyObject* tensor_power(PyObject* a, PyObject* b, PyObject* mod) {
  HANDLE_TH_ERRORS
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
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
  if (mod != Py_None || !is_tensor(a)) Py_RETURN_NOTIMPLEMENTED;
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
  if (!is_tensor(a) || !is_tensor(b)) Py_RETURN_NOTIMPLEMENTED;
  return wrap(at::matmul(unwrap(a), unwrap(b)));
  END_HANDLE_TH_ERRORS
}

// ~t: torch refuses floating and complex tensors with a TypeError before dispatching.
PyObject* tensor_invert(PyObject* a) {
  HANDLE_TH_ERRORS
  const at::Tensor& t = unwrap(a);
  TORCH_CHECK_TYPE(c10::isIntegralType(t.scalar_type(), /*includeBool=*/true),
                   "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
  return wrap(at::bitwise_not(t));
  END_HANDLE_TH_ERRORS
}

template <at::Tensor (*fn)(const at::Tensor&)>
PyObject* tensor_unary(PyObject* a) {
  HANDLE_TH_ERRORS
  return wrap(fn(unwrap(a)));
  END_HANDLE_TH_ERRORS
}

// ==, !=, <, <=, >, >= against a tensor, a number or a numpy array; anything else is
// NotImplemented, so `t == None` is False and `t < "a"` a TypeError, as in torch.
PyObject* tensor_richcompare(PyObject* self, PyObject* other, int op) {
  HANDLE_TH_ERRORS
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
  const at::Tensor& lhs = unwrap(self);
  switch (op) {
    case Py_EQ: return wrap(at::eq(lhs, *rhs));
    case Py_NE: return wrap(at::ne(lhs, *rhs));
    case Py_LT: return wrap(at::lt(lhs, *rhs));
    case Py_LE: return wrap(at::le(lhs, *rhs));
    case Py_GT: return wrap(at::gt(lhs, *rhs));
    case Py_GE: return wrap(at::ge(lhs, *rhs));
    default: Py_RETURN_NOTIMPLEMENTED;
  }
  END_HANDLE_TH_ERRORS
}

// Tensors hash by identity (== builds a tensor, so they could not hash by value).
Py_hash_t tensor_hash(PyObject* self) { return _Py_HashPointer(self); }

}  // namespace

void init_number_protocol(PyTypeObject* type, PyNumberMethods& n) {
  n.nb_add = tensor_binary<BinOp::Add>;
  n.nb_subtract = tensor_binary<BinOp::Sub>;
  n.nb_multiply = tensor_binary<BinOp::Mul>;
  n.nb_true_divide = tensor_binary<BinOp::Div>;
  n.nb_floor_divide = tensor_binary<BinOp::FloorDiv>;
  n.nb_remainder = tensor_binary<BinOp::Mod>;
  n.nb_and = tensor_binary<BinOp::And>;
  n.nb_or = tensor_binary<BinOp::Or>;
  n.nb_xor = tensor_binary<BinOp::Xor>;
  n.nb_lshift = tensor_binary<BinOp::LShift>;
  n.nb_rshift = tensor_binary<BinOp::RShift>;
  n.nb_power = tensor_power;
  n.nb_matrix_multiply = tensor_matmul;
  n.nb_inplace_add = tensor_inplace<BinOp::Add>;
  n.nb_inplace_subtract = tensor_inplace<BinOp::Sub>;
  n.nb_inplace_multiply = tensor_inplace<BinOp::Mul>;
  n.nb_inplace_true_divide = tensor_inplace<BinOp::Div>;
  n.nb_inplace_floor_divide = tensor_inplace<BinOp::FloorDiv>;
  n.nb_inplace_remainder = tensor_inplace<BinOp::Mod>;
  n.nb_inplace_and = tensor_inplace<BinOp::And>;
  n.nb_inplace_or = tensor_inplace<BinOp::Or>;
  n.nb_inplace_xor = tensor_inplace<BinOp::Xor>;
  n.nb_inplace_lshift = tensor_inplace<BinOp::LShift>;
  n.nb_inplace_rshift = tensor_inplace<BinOp::RShift>;
  n.nb_inplace_power = tensor_inplace_power;
  n.nb_negative = tensor_unary<at::neg>;
  n.nb_positive = tensor_unary<at::positive>;
  n.nb_absolute = tensor_unary<at::abs>;
  n.nb_invert = tensor_invert;
  type->tp_as_number = &n;
  type->tp_richcompare = tensor_richcompare;
  type->tp_hash = tensor_hash;
}

}  // namespace tessera::python
