// torch.return_types for tessera: the named tuples that ops returning several named
// tensors give back (sort -> (values, indices)). Each is a CPython structseq type, created
// on first use and kept for the life of the process, named tessera.return_types.<op>.
#include "python_api.h"

#include <c10/util/Exception.h>

#include <map>
#include <string>
#include <vector>

namespace tessera::python {

namespace {

struct NamedTupleType {
  std::vector<std::string> field_names;  // owned storage the structseq descriptors point to
  std::vector<PyStructSequence_Field> fields;
  std::string qualified_name;
  PyStructSequence_Desc desc{};
  PyTypeObject* type = nullptr;
};

// Called with the GIL held, so the map needs no lock of its own.
PyTypeObject* type_for(const std::string& name, const std::vector<std::string>& fields) {
  static std::map<std::string, NamedTupleType*>* types = new std::map<std::string, NamedTupleType*>();
  auto it = types->find(name);
  if (it != types->end()) return it->second->type;
  auto* t = new NamedTupleType();
  t->field_names = fields;
  for (const auto& f : t->field_names) t->fields.push_back({f.c_str(), nullptr});
  t->fields.push_back({nullptr, nullptr});
  t->qualified_name = std::string("tessera.return_types.") + name;
  t->desc = {t->qualified_name.c_str(), nullptr, t->fields.data(), static_cast<int>(fields.size())};
  t->type = PyStructSequence_NewType(&t->desc);
  if (!t->type) {
    delete t;
    throw python_error();
  }
  types->emplace(name, t);
  return t->type;
}

}  // namespace

PyObject* named_tuple_of(const char* name, std::initializer_list<const char*> fields, PyObject* items) {
  return named_tuple_of(name, std::vector<std::string>(fields.begin(), fields.end()), items);
}

PyObject* named_tuple_of(const std::string& name, const std::vector<std::string>& fields, PyObject* items) {
  if (!items) throw python_error();
  PyObject* seq = PySequence_Fast(items, "expected a sequence");
  Py_DECREF(items);  // steals: the sequence (or its fast copy) keeps what is needed
  if (!seq) throw python_error();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n != static_cast<Py_ssize_t>(fields.size())) {
    Py_DECREF(seq);
    TORCH_CHECK(false, name, ": ", n, " results for ", fields.size(), " fields");
  }
  PyTypeObject* type = nullptr;
  try {
    type = type_for(name, fields);
  } catch (...) {
    Py_DECREF(seq);
    throw;
  }
  PyObject* result = PyStructSequence_New(type);
  if (!result) {
    Py_DECREF(seq);
    throw python_error();
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
    Py_INCREF(item);
    PyStructSequence_SET_ITEM(result, i, item);
  }
  Py_DECREF(seq);
  return result;
}

}  // namespace tessera::python
