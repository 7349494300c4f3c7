// tessera.Generator and the default-generator functions (see Generator.h).
//
// Also _C._add_tensor_methods(dict): tessera.Tensor is a static (immutable) type, so the
// pure-Python methods of python/tessera (Tensor.float(), Tensor.to's positional-device
// form, ...) are installed into its dict from here.
#include "Generator.h"

#include "python_api.h"

#include <aten/ops/Functions.h>
#include <c10/core/CPUGeneratorImpl.h>

#include <cctype>
#include <cstring>
#include <mutex>
#include <string>

namespace tessera::python {

namespace {

struct GeneratorObject {
  PyObject_HEAD
  at::Generator gen;
};

PyTypeObject GeneratorTypeObj{};
PyObject* g_default_generator = nullptr;  // the Python object wrapping the default CPU generator

at::Generator& gen_of(PyObject* self) { return reinterpret_cast<GeneratorObject*>(self)->gen; }

PyObject* wrap_generator(at::Generator g) {
  PyObject* obj = GeneratorTypeObj.tp_alloc(&GeneratorTypeObj, 0);
  if (!obj) throw python_error();
  new (&gen_of(obj)) at::Generator(std::move(g));
  return obj;
}

c10::CPUGeneratorImpl* cpu_impl(PyObject* self) { return gen_of(self).get<c10::CPUGeneratorImpl>(); }

// A seed as torch takes it: any int in [-2**63, 2**64), negatives wrapping to uint64.
uint64_t unpack_seed(PyObject* seed) {
  TORCH_CHECK_TYPE(PyLong_Check(seed), "manual_seed expected a long, but got ", Py_TYPE(seed)->tp_name);
  unsigned long long v = PyLong_AsUnsignedLongLong(seed);
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw python_error();
    PyErr_Clear();
    int overflow = 0;
    long long s = PyLong_AsLongLongAndOverflow(seed, &overflow);
    TORCH_CHECK(!overflow && s < 0, "Overflow when unpacking long");
    return static_cast<uint64_t>(s);
  }
  return static_cast<uint64_t>(v);
}

void set_seed(PyObject* self, PyObject* seed) {
  uint64_t s = unpack_seed(seed);
  at::Generator& g = gen_of(self);
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_current_seed(s);
}

// ---------------------------------------------------------------- tessera.Generator

PyObject* generator_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  static const char* kwlist[] = {"device", nullptr};
  PyObject* device = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Generator", const_cast<char**>(kwlist), &device)) return nullptr;
  c10::Device d = device && device != Py_None ? device_from_object(device) : c10::Device(c10::DeviceType::CPU);
  if (!d.is_cpu()) {
    std::string name = c10::str(d.type());
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    TORCH_CHECK(false, "Device type ", name, " is not supported for torch.Generator() api.");
  }
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  new (&gen_of(obj)) at::Generator(at::make_generator<c10::CPUGeneratorImpl>());
  return obj;
  END_HANDLE_TH_ERRORS
}

void generator_dealloc(PyObject* self) {
  gen_of(self).~Generator();
  Py_TYPE(self)->tp_free(self);
}

PyObject* generator_manual_seed(PyObject* self, PyObject* seed) {
  HANDLE_TH_ERRORS
  set_seed(self, seed);
  Py_INCREF(self);
  return self;
  END_HANDLE_TH_ERRORS
}

PyObject* generator_seed(PyObject* self, PyObject*) {
  HANDLE_TH_ERRORS
  at::Generator& g = gen_of(self);
  std::lock_guard<std::mutex> lock(g.mutex());
  return PyLong_FromUnsignedLongLong(g.seed());
  END_HANDLE_TH_ERRORS
}

PyObject* generator_initial_seed(PyObject* self, PyObject*) {
  HANDLE_TH_ERRORS
  return PyLong_FromUnsignedLongLong(gen_of(self).current_seed());
  END_HANDLE_TH_ERRORS
}

PyObject* generator_get_state(PyObject* self, PyObject*) {
  HANDLE_TH_ERRORS
  c10::CPUGeneratorImpl* impl = cpu_impl(self);
  std::vector<uint8_t> bytes;
  {
    std::lock_guard<std::mutex> lock(impl->mutex());
    bytes = impl->get_state();
  }
  at::Tensor t = at::empty({static_cast<int64_t>(bytes.size())}, c10::kByte);
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return wrap(std::move(t));
  END_HANDLE_TH_ERRORS
}

PyObject* generator_set_state(PyObject* self, PyObject* state) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(is_tensor(state), "expected a tessera.ByteTensor, but got ", Py_TYPE(state)->tp_name);
  const at::Tensor& t = unwrap(state);
  TORCH_CHECK_TYPE(t.scalar_type() == c10::kByte && t.is_cpu() && t.dim() == 1,
                   "expected a 1-d CPU tensor of dtype uint8 (from get_state()), got one of dtype ", t.scalar_type());
  at::Tensor bytes = at::empty({t.numel()}, c10::kByte);
  bytes.copy_(t);
  c10::CPUGeneratorImpl* impl = cpu_impl(self);
  std::lock_guard<std::mutex> lock(impl->mutex());
  impl->set_state(static_cast<const uint8_t*>(bytes.data_ptr()), static_cast<size_t>(bytes.numel()));
  Py_INCREF(self);
  return self;
  END_HANDLE_TH_ERRORS
}

PyObject* generator_device(PyObject* self, void*) {
  HANDLE_TH_ERRORS
  return device_object(gen_of(self).device());
  END_HANDLE_TH_ERRORS
}

PyObject* generator_repr(PyObject* self) {
  return PyUnicode_FromFormat("<tessera.Generator object at %p>", static_cast<void*>(self));
}

PyMethodDef generator_methods[] = {
    {"manual_seed", generator_manual_seed, METH_O, "manual_seed(seed) -> Generator\n\nSets the seed; returns self."},
    {"seed", generator_seed, METH_NOARGS, "seed() -> int\n\nSeeds from a nondeterministic source; returns the seed."},
    {"initial_seed", generator_initial_seed, METH_NOARGS, "initial_seed() -> int\n\nThe seed last set."},
    {"get_state", generator_get_state, METH_NOARGS, "get_state() -> Tensor\n\nThe state as a uint8 tensor."},
    {"set_state", generator_set_state, METH_O, "set_state(state) -> Generator\n\nRestores a get_state() result."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef generator_getset[] = {{"device", generator_device, nullptr, "The generator's device.", nullptr},
                                  {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---------------------------------------------------------------- module functions

PyObject* module_manual_seed(PyObject*, PyObject* seed) {
  HANDLE_TH_ERRORS
  PyObject* as_int = PyNumber_Long(seed);  // torch.manual_seed does int(seed)
  if (!as_int) return nullptr;
  try {
    set_seed(g_default_generator, as_int);
  } catch (...) {
    Py_DECREF(as_int);
    throw;
  }
  Py_DECREF(as_int);
  Py_INCREF(g_default_generator);
  return g_default_generator;
  END_HANDLE_TH_ERRORS
}

PyObject* module_seed(PyObject*, PyObject*) { return generator_seed(g_default_generator, nullptr); }
PyObject* module_initial_seed(PyObject*, PyObject*) { return generator_initial_seed(g_default_generator, nullptr); }
PyObject* module_get_rng_state(PyObject*, PyObject*) { return generator_get_state(g_default_generator, nullptr); }
PyObject* module_set_rng_state(PyObject*, PyObject* state) {
  PyObject* r = generator_set_state(g_default_generator, state);
  if (!r) return nullptr;
  Py_DECREF(r);
  Py_RETURN_NONE;
}

PyObject* module_add_tensor_methods(PyObject*, PyObject* methods) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(PyDict_Check(methods), "_add_tensor_methods expects a dict of name -> function");
  // Every Python-defined method and property goes through __torch_function__ as the C ones
  // do (tessera._torch_function.wrap_tensor_methods leaves out torch's ignored names).
  PyObject* mod = PyImport_ImportModule("tessera._torch_function");
  if (!mod) return nullptr;
  PyObject* wrapped = PyObject_CallMethod(mod, "wrap_tensor_methods", "O", methods);
  Py_DECREF(mod);
  if (!wrapped) return nullptr;
  PyTypeObject* t = TensorType;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(wrapped, &pos, &key, &value)) {
    if (PyDict_SetItem(t->tp_dict, key, value) != 0) {
      Py_DECREF(wrapped);
      return nullptr;
    }
  }
  Py_DECREF(wrapped);
  PyType_Modified(t);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyMethodDef module_functions[] = {
    {"manual_seed", module_manual_seed, METH_O,
     "manual_seed(seed) -> Generator\n\nSeeds the default CPU generator; returns it."},
    {"seed", module_seed, METH_NOARGS, "seed() -> int\n\nSeeds the default generator nondeterministically."},
    {"initial_seed", module_initial_seed, METH_NOARGS, "initial_seed() -> int\n\nThe default generator's seed."},
    {"get_rng_state", module_get_rng_state, METH_NOARGS, "get_rng_state() -> Tensor\n\nThe default generator's state."},
    {"set_rng_state", module_set_rng_state, METH_O, "set_rng_state(state)\n\nRestores the default generator's state."},
    {"_add_tensor_methods", module_add_tensor_methods, METH_O,
     "_add_tensor_methods(dict)\n\nInstalls Python functions as tessera.Tensor methods (the type is immutable)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool is_generator(PyObject* obj) { return PyObject_TypeCheck(obj, &GeneratorTypeObj); }

at::Generator generator_of(PyObject* obj) { return gen_of(obj); }

bool init_generator(PyObject* module) {
  PyTypeObject* t = &GeneratorTypeObj;
  t->tp_name = "tessera.Generator";
  t->tp_basicsize = sizeof(GeneratorObject);
  t->tp_flags = Py_TPFLAGS_DEFAULT;
  t->tp_doc = "Generator(device='cpu')\n\nA random-number generator's state (Philox4x32-10 on the CPU).";
  t->tp_new = generator_new;
  t->tp_dealloc = generator_dealloc;
  t->tp_repr = generator_repr;
  t->tp_methods = generator_methods;
  t->tp_getset = generator_getset;
  if (!add_type(module, t, "Generator")) return false;
  try {
    g_default_generator = wrap_generator(at::Generator(c10::default_cpu_generator()));
  } catch (...) {
    set_python_error();
    return false;
  }
  Py_INCREF(g_default_generator);
  if (PyModule_AddObject(module, "default_generator", g_default_generator) != 0) return false;
  return PyModule_AddFunctions(module, module_functions) == 0;
}

PyObject* generator_object(at::Generator g) { return wrap_generator(std::move(g)); }

}  // namespace tessera::python
