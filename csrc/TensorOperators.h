// The shapes of tessera.Tensor's Python operators, which the number slots generated from
// ops.yaml (python_operator:, csrc/python_number_slots.cpp) instantiate: one operator call
// each, a Python number or numpy array on either side turned into a tensor operand first.
#pragma once

#include "TorchFunction.h"
#include "python_api.h"

namespace tessera::python {

using BinaryOperator = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
using InplaceOperator = void (*)(const at::Tensor&, const at::Tensor&);
using UnaryOperator = at::Tensor (*)(const at::Tensor&);

// An operator's __torch_function__ hand-off: a TypeError (no override answered) becomes
// NotImplemented, so Python tries the other operand and then reports the operand types,
// as torch's operators do.
PyObject* operator_torch_function(const char* name, const char* reflected, PyObject* a, PyObject* b);

// a op b with either operand the tensor (b op a arrives here as the reflected call).
// `name` and `reflected` are what __torch_function__ sees as the function (see
// handle_operator_torch_function).
template <BinaryOperator fn, const char* name, const char* reflected>
PyObject* binary_slot(PyObject* a, PyObject* b) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(operator_has_torch_function(a, b))) return operator_torch_function(name, reflected, a, b);
  const bool ta = is_tensor(a), tb = is_tensor(b);
  if (ta && tb) return wrap(fn(unwrap(a), unwrap(b)));
  at::Tensor other;
  if (ta) {
    if (!operand_to_tensor(b, other)) Py_RETURN_NOTIMPLEMENTED;
    return wrap(fn(unwrap(a), other));
  }
  if (!operand_to_tensor(a, other)) Py_RETURN_NOTIMPLEMENTED;
  return wrap(fn(other, unwrap(b)));
  END_HANDLE_TH_ERRORS
}

// a op= b: the very object a comes back.
template <InplaceOperator fn, const char* name>
PyObject* inplace_slot(PyObject* a, PyObject* b) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(operator_has_torch_function(a, b))) return operator_torch_function(name, nullptr, a, b);
  if (!is_tensor(a)) Py_RETURN_NOTIMPLEMENTED;
  at::Tensor number;
  if (is_tensor(b)) {
    fn(unwrap(a), unwrap(b));
  } else if (operand_to_tensor(b, number)) {
    fn(unwrap(a), number);
  } else {
    Py_RETURN_NOTIMPLEMENTED;
  }
  Py_INCREF(a);
  return a;
  END_HANDLE_TH_ERRORS
}

template <UnaryOperator fn, const char* name>
PyObject* unary_slot(PyObject* a) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(self_has_torch_function(a))) return handle_operator_torch_function(name, nullptr, a, nullptr);
  return wrap(fn(unwrap(a)));
  END_HANDLE_TH_ERRORS
}

// Generated: fills the slots ops.yaml names, and gives the operator of a rich comparison
// (Py_EQ, ...; null for none).
void init_generated_number_slots(PyNumberMethods& n);
BinaryOperator comparison_operator(int op);

}  // namespace tessera::python
