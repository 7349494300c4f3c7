// The shapes of tessera.Tensor's Python operators, which the number slots generated from
// ops.yaml (python_operator:, csrc/python_number_slots.cpp) instantiate: one operator call
// each, a Python number or numpy array on either side turned into a tensor operand first.
#pragma once

#include "python_api.h"

namespace tessera::python {

using BinaryOperator = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
using InplaceOperator = void (*)(const at::Tensor&, const at::Tensor&);
using UnaryOperator = at::Tensor (*)(const at::Tensor&);

// a op b with either operand the tensor (b op a arrives here as the reflected call).
template <BinaryOperator fn>
PyObject* binary_slot(PyObject* a, PyObject* b) {
  HANDLE_TH_ERRORS
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
template <InplaceOperator fn>
PyObject* inplace_slot(PyObject* a, PyObject* b) {
  HANDLE_TH_ERRORS
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

template <UnaryOperator fn>
PyObject* unary_slot(PyObject* a) {
  HANDLE_TH_ERRORS
  return wrap(fn(unwrap(a)));
  END_HANDLE_TH_ERRORS
}

// Generated: fills the slots ops.yaml names, and gives the operator of a rich comparison
// (Py_EQ, ...; null for none).
void init_generated_number_slots(PyNumberMethods& n);
BinaryOperator comparison_operator(int op);

}  // namespace tessera::python
