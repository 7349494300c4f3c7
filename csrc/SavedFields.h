// What Python sees of a backward Node's saved state: grad_fn._saved_<name> gives a saved
// value (a tensor unpacked as backward would see it, a number, a tuple of sizes, ...) and
// grad_fn._raw_saved_<name> a saved tensor itself, as a tessera.autograd.SavedTensor whose
// register_hooks() moves it behind a pack / unpack pair. The generated
// python_saved_fields.cpp names each Node's fields; the conversions are here.
#pragma once

#include "python_api.h"

#include <autograd/saved_variable.h>

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::python {

namespace py = pybind11;

// One Node type's fields: get(node, name, owner, raw) returns the field's Python value (the
// raw SavedTensor when raw), or a null object when the Node has no such field (or the field
// is not a tensor and raw is asked).
using SavedGetter = py::object (*)(torch::autograd::Node& node, std::string_view field,
                                   const std::shared_ptr<torch::autograd::Node>& owner, bool raw);
struct SavedFieldName {
  const char* name;
  bool is_tensor;
};
struct NodeSavedFields {
  SavedGetter get;
  std::vector<SavedFieldName> fields;
};
// The fields of node's type, or nullptr for a Node that keeps none (generated).
const NodeSavedFields* saved_fields_of(const torch::autograd::Node& node);

// grad_fn._saved_<name> / _raw_saved_<name> on any Node, or a null object.
py::object saved_attribute(const std::shared_ptr<torch::autograd::Node>& node, std::string_view attribute);
// The attribute names dir(grad_fn) lists for its saved fields.
std::vector<std::string> saved_attribute_names(const torch::autograd::Node& node);

// ---- conversions (SavedTensorHooks.cpp defines the tensor ones)

py::object saved_to_py(torch::autograd::SavedVariable& v, const std::shared_ptr<torch::autograd::Node>& owner,
                       bool raw);
py::object saved_to_py(std::vector<torch::autograd::SavedVariable>& v,
                       const std::shared_ptr<torch::autograd::Node>& owner, bool raw);

inline py::object value_to_py(int64_t v) { return py::int_(v); }
inline py::object value_to_py(double v) { return py::float_(v); }
inline py::object value_to_py(bool v) { return py::bool_(v); }
inline py::object value_to_py(const std::string& v) { return py::str(v); }
inline py::object value_to_py(const c10::Scalar& v) { return py::reinterpret_steal<py::object>(scalar_to_python(v)); }
inline py::object value_to_py(c10::ScalarType v) { return py::reinterpret_borrow<py::object>(dtype_object(v)); }
template <typename T>
py::object value_to_py(const std::vector<T>& v) {
  py::tuple out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = value_to_py(v[i]);
  return out;
}
template <typename T>
py::object value_to_py(const std::optional<T>& v) {
  return v ? value_to_py(*v) : py::none();
}

// A saved number, list or flag: its value; it has no raw form.
template <typename T>
py::object saved_to_py(const T& v, const std::shared_ptr<torch::autograd::Node>&, bool raw) {
  return raw ? py::object() : value_to_py(v);
}

}  // namespace tessera::python
