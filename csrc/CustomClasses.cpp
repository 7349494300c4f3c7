// tessera.ScriptObject: Python's handle to a custom-class object (aten/core/CustomClass.h),
// as torch.ScriptObject is: an operator returning `__torch__.torch.classes.<ns>.<Name>`
// gives one, an operator taking that type accepts it, and the class's methods are its
// attributes (packed.unpack()).
#include "ArgParser.h"
#include "python_api.h"

#include <aten/core/CustomClass.h>

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace tessera::python {

namespace {

struct ScriptObject {
  c10::IValue value;  // always an Object
};

struct ClassTypeHandle {
  const c10::CustomClassType* type;
};

py::attribute_error no_attribute(const c10::IValue& self, const std::string& name) {
  return py::attribute_error("'" + self.objectType().qualified_name + "' object has no attribute '" + name + "'");
}

py::object call_method(const c10::IValue& self, const std::string& name, const py::args& args) {
  c10::BoxedMethod method = c10::find_custom_class_method(self.objectType(), name);
  if (!method) throw no_attribute(self, name);
  if (!args.empty()) {
    throw py::type_error(name + "() takes no arguments (" + std::to_string(args.size()) + " given)");
  }
  c10::Stack stack{self};
  {
    py::gil_scoped_release no_gil;
    method(stack);
  }
  TORCH_INTERNAL_ASSERT(stack.size() == 1, "a method left ", stack.size(), " values on the stack");
  return py::reinterpret_steal<py::object>(from_ivalue(stack[0], /*lists_as_lists=*/true));
}

// A pickled state back into an IValue: the values a __getstate__ can give (tensors, None,
// numbers, strings, objects, and tuples and lists of them). A pickle may hold a list that
// contains itself: Python's recursion limit turns that into RecursionError.
c10::IValue state_to_ivalue(py::handle obj) {
  PyObject* o = obj.ptr();
  if (o == Py_None) return c10::IValue();
  if (is_tensor(o)) return c10::IValue(unwrap(o));
  if (PyBool_Check(o)) return c10::IValue(o == Py_True);
  if (PyLong_Check(o)) return c10::IValue(obj.cast<int64_t>());
  if (PyFloat_Check(o)) return c10::IValue(PyFloat_AsDouble(o));
  if (PyUnicode_Check(o)) return c10::IValue(obj.cast<std::string>());
  if (py::isinstance<ScriptObject>(obj)) return obj.cast<const ScriptObject&>().value;
  if (PyTuple_Check(o) || PyList_Check(o)) {
    if (Py_EnterRecursiveCall(" while reading a custom class's state")) throw py::error_already_set();
    std::vector<c10::IValue> items;
    try {
      for (py::handle item : obj) items.push_back(state_to_ivalue(item));
    } catch (...) {
      Py_LeaveRecursiveCall();
      throw;
    }
    Py_LeaveRecursiveCall();
    return PyTuple_Check(o) ? c10::IValue::makeTuple(std::move(items)) : c10::IValue(std::move(items));
  }
  throw py::type_error(std::string("a custom class's state cannot hold a ") + Py_TYPE(o)->tp_name);
}

py::object from_state(const std::string& qualified_name, py::handle state) {
  const c10::CustomClassType* type = c10::find_custom_class(qualified_name);
  if (!type) throw py::value_error("no custom class is registered as " + qualified_name);
  c10::BoxedMethod make = c10::find_custom_class_from_state(*type);
  if (!make) throw py::type_error(qualified_name + " cannot be unpickled: its class has no def_pickle");
  c10::Stack stack{state_to_ivalue(state)};
  {
    py::gil_scoped_release no_gil;
    make(stack);
  }
  return py::reinterpret_steal<py::object>(from_ivalue(stack.at(0), /*lists_as_lists=*/true));
}

}  // namespace

bool is_script_object(PyObject* obj) { return py::isinstance<ScriptObject>(obj); }

const c10::IValue& script_object_value(PyObject* obj) { return py::handle(obj).cast<const ScriptObject&>().value; }

PyObject* script_object_new(const c10::IValue& value) { return py::cast(ScriptObject{value}).release().ptr(); }

void init_custom_classes(py::module_& m) {
  py::class_<ClassTypeHandle>(m, "ClassType")
      .def("qualified_name", [](const ClassTypeHandle& t) { return t.type->qualified_name; })
      .def("name",
           [](const ClassTypeHandle& t) {
             const std::string& q = t.type->qualified_name;
             return q.substr(q.rfind('.') + 1);
           })
      .def("__repr__", [](const ClassTypeHandle& t) { return t.type->qualified_name; });
  py::class_<ScriptObject>(m, "ScriptObject")
      .def("_type", [](const ScriptObject& self) { return ClassTypeHandle{&self.value.objectType()}; })
      .def("_has_method",
           [](const ScriptObject& self, const std::string& name) {
             return static_cast<bool>(c10::find_custom_class_method(self.value.objectType(), name));
           })
      .def("__getattr__",
           [](const ScriptObject& self, const std::string& name) {
             if (!c10::find_custom_class_method(self.value.objectType(), name)) throw no_attribute(self.value, name);
             c10::IValue value = self.value;
             return py::cpp_function([value, name](const py::args& args) { return call_method(value, name, args); });
           })
      .def("__eq__",
           [](const ScriptObject& self, py::object other) {
             return is_script_object(other.ptr()) && self.value.equals(script_object_value(other.ptr()));
           })
      .def("__hash__", [](const ScriptObject& self) { return reinterpret_cast<intptr_t>(self.value.toObject().get()); })
      .def("__repr__",
           [](const ScriptObject& self) {
             return "<tessera.ScriptObject object of class " + self.value.objectType().qualified_name + ">";
           })
      // object.__getstate__ would answer before __getattr__ (Python 3.11): the class's own
      .def("__getstate__", [](const ScriptObject& self) { return call_method(self.value, "__getstate__", py::args()); })
      // pickle, copy.deepcopy and tessera.save: the class's __getstate__, rebuilt by its
      // def_pickle constructor.
      .def("__reduce__", [](const ScriptObject& self) {
        const std::string& name = self.value.objectType().qualified_name;
        if (!c10::find_custom_class_from_state(self.value.objectType())) {
          throw py::type_error("cannot pickle a " + name + " object: its class has no def_pickle");
        }
        py::object state = call_method(self.value, "__getstate__", py::args());
        return py::make_tuple(py::module_::import("tessera._classes").attr("_script_object_from_state"),
                              py::make_tuple(name, state));
      });
  m.def("_script_object_from_state", &from_state);
  m.def("_custom_class_exists", [](const std::string& name) { return c10::find_custom_class(name) != nullptr; });
}

}  // namespace tessera::python
