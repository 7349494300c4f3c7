// Tensor.names (get and set in place), has_names() and the primitives behind
// tessera/_named_tensor.py's rename / refine_names / align_to / align_as: names arrive as a
// sequence of str or None, already expanded from their `...` forms by the Python side.
#include "ArgParser.h"
#include "TorchFunction.h"
#include "python_api.h"

#include <aten/core/NamedTensorUtils.h>

namespace tessera::python {

// torch warns from TensorImpl::set_named_tensor_meta, so once a call has set names (None
// included), never for names= None, and never for a call that failed its checks.
bool warn_named_tensors_experimental() {
  static bool warned = false;  // (under the GIL)
  if (warned) return true;
  warned = true;
  return PyErr_WarnEx(PyExc_UserWarning,
                      "Named tensors and all their associated APIs are an experimental feature and subject to "
                      "change. Please do not use them for anything important until they are released as stable.",
                      1) == 0;
}

namespace {

at::DimnameList parse_names(PyObject* seq) { return unpack_dimname_list(seq); }

std::optional<at::DimnameList> parse_optional_names(PyObject* obj) {
  if (obj == Py_None) return std::nullopt;
  return parse_names(obj);
}

PyObject* tensor_has_names(PyObject* self, PyObject*) { return PyBool_FromLong(unwrap(self).has_names()); }

PyObject* tensor_rename_impl(PyObject* self, PyObject* names) {
  HANDLE_TH_ERRORS
  at::Tensor result = at::rename(unwrap(self), parse_optional_names(names));
  if (!warn_named_tensors_experimental()) return nullptr;
  return wrap(std::move(result));
  END_HANDLE_TH_ERRORS
}

// In place, returning self: torch's rename_ keeps the object.
PyObject* tensor_rename_inplace_impl(PyObject* self, PyObject* names) {
  HANDLE_TH_ERRORS
  at::internal_set_names_inplace(unwrap(self), parse_optional_names(names));
  if (!warn_named_tensors_experimental()) return nullptr;
  Py_INCREF(self);
  return self;
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_refine_names_impl(PyObject* self, PyObject* names) {
  HANDLE_TH_ERRORS
  at::Tensor result = at::refine_names(unwrap(self), parse_names(names));
  if (!warn_named_tensors_experimental()) return nullptr;
  return wrap(std::move(result));
  END_HANDLE_TH_ERRORS
}

// _align_to(names) or _align_to(order, ellipsis_idx).
PyObject* tensor_align_to_impl(PyObject* self, PyObject* args) {
  HANDLE_TH_ERRORS
  PyObject* names = nullptr;
  Py_ssize_t ellipsis_idx = -1;
  if (!PyArg_ParseTuple(args, "O|n", &names, &ellipsis_idx)) return nullptr;
  const at::DimnameList parsed = parse_names(names);
  if (ellipsis_idx < 0) return wrap(at::align_to(unwrap(self), parsed));
  return wrap(at::align_to(unwrap(self), parsed, static_cast<int64_t>(ellipsis_idx)));
  END_HANDLE_TH_ERRORS
}

PyObject* tensor_align_as(PyObject* self, PyObject* other) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(is_tensor(other), "align_as(): argument 'other' (position 1) must be Tensor, not ",
                   Py_TYPE(other)->tp_name);
  return wrap(at::align_as(unwrap(self), unwrap(other)));
  END_HANDLE_TH_ERRORS
}

PyMethodDef methods[] = {
    {"has_names", tensor_has_names, METH_NOARGS, "has_names() -> bool\n\nWhether any dim of the tensor is named."},
    {"_rename", tensor_rename_impl, METH_O, "_rename(names): a view with `names` (a sequence of str/None, or None)."},
    {"_rename_", tensor_rename_inplace_impl, METH_O, "_rename_(names): sets the names in place; returns self."},
    {"_refine_names", tensor_refine_names_impl, METH_O, "_refine_names(names): refine_names without `...`."},
    {"_align_to", tensor_align_to_impl, METH_VARARGS, "_align_to(names[, ellipsis_idx]): align_to without `...`."},
    {"align_as", tensor_align_as, METH_O,
     "align_as(other) -> Tensor\n\nThe dims of self permuted (and size-1 dims added) to match other's names."},
    {nullptr, nullptr, 0, nullptr}};

PyObject* named_rule_operators(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  const std::vector<std::string> ops = at::named_rule_operators();
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(ops.size()));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < ops.size(); ++i) {
    PyObject* item = PyUnicode_FromString(ops[i].c_str());
    if (item == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return list;
  END_HANDLE_TH_ERRORS
}

PyMethodDef module_functions[] = {{"_named_rule_operators", named_rule_operators, METH_NOARGS,
                                   "The aten operators (name.overload) whose dim names the Named fallback propagates."},
                                  {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyObject* tensor_get_names(PyObject* self, void*) {
  HANDLE_TH_ERRORS
  TESSERA_TORCH_FUNCTION_GETTER(self, "names");
  const at::DimnameList names = at::names_of(unwrap(self));
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(names.size()));
  if (tuple == nullptr) return nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    PyObject* item = names[i].isWildcard() ? Py_NewRef(Py_None)
                                           : PyUnicode_FromStringAndSize(
                                                 names[i].str().data(), static_cast<Py_ssize_t>(names[i].str().size()));
    if (item == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), item);
  }
  return tuple;
  END_HANDLE_TH_ERRORS
}

int tensor_set_names(PyObject* self, PyObject* value, void*) {
  try {
    TORCH_CHECK_TYPE(value != nullptr, "cannot delete the names of a tensor");
    TORCH_CHECK(value == Py_None || PyTuple_Check(value) || PyList_Check(value),
                "names must either be None or a tuple of dim names");
    at::internal_set_names_inplace(unwrap(self), parse_optional_names(value));
    return warn_named_tensors_experimental() ? 0 : -1;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

PyMethodDef* named_tensor_methods() { return methods; }
PyMethodDef* named_tensor_functions() { return module_functions; }

}  // namespace tessera::python
