// libFuzzer for tessera's Python-level entry points (the checkpoint loader, numpy and
// DLPack import, tensor() of nested data): an embedded interpreter runs one target of
// test/fuzz/fuzz_targets.py per input, chosen by TESSERA_FUZZ_TARGET. The code those
// paths run is mostly Python (zipfile, the restricted unpickler, tessera.serialization,
// Hypothesis' input decoding), which the compiler cannot instrument, so a trace function
// turns each (previous line, line) pair the interpreter executes into a hit on an extra
// 8-bit counter region registered with libFuzzer (as atheris does): inputs that reach
// new Python lines are kept. A target that raises means tessera misbehaved: the harness
// prints the traceback and aborts, and libFuzzer saves the input.
//   TESSERA_FUZZ_TARGET=load PYTHONPATH=build/release/python build/fuzz/fuzz_python_entry CORPUS
#include <Python.h>
#include <frameobject.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" void __sanitizer_cov_8bit_counters_init(uint8_t* start, uint8_t* stop);
extern "C" void __sanitizer_cov_pcs_init(const uintptr_t* pcs_begin, const uintptr_t* pcs_end);

// CPython and the libraries it loads keep their objects until exit by design.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

namespace {

constexpr size_t kCounters = size_t{1} << 16;
alignas(64) uint8_t g_counters[kCounters];
uintptr_t g_pcs[2 * kCounters];  // (pc, flags) per counter: libFuzzer wants a table of the same size
PyObject* g_target = nullptr;
uint32_t g_previous = 0;

int trace(PyObject*, PyFrameObject* frame, int what, PyObject*) {
  if (what != PyTrace_LINE && what != PyTrace_CALL) return 0;
  PyCodeObject* code = PyFrame_GetCode(frame);
  const auto where = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(code) >> 4) * 2654435761u ^
                     static_cast<uint32_t>(PyFrame_GetLineNumber(frame)) * 40503u;
  Py_DECREF(code);
  uint8_t& counter = g_counters[(where ^ g_previous) % kCounters];
  counter = static_cast<uint8_t>(counter + 1);
  g_previous = where >> 1;
  return 0;
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_python_entry: %s\n", what);
  if (PyErr_Occurred()) PyErr_Print();
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (size_t i = 0; i < kCounters; ++i) g_pcs[2 * i] = i + 1;
  __sanitizer_cov_8bit_counters_init(g_counters, g_counters + kCounters);
  __sanitizer_cov_pcs_init(g_pcs, g_pcs + 2 * kCounters);

  const char* target = std::getenv("TESSERA_FUZZ_TARGET");
  if (target == nullptr) fail("set TESSERA_FUZZ_TARGET to load, numpy or nested");
  Py_Initialize();
  PyObject* sys_path = PySys_GetObject("path");  // borrowed
  PyObject* here = PyUnicode_FromString(TESSERA_FUZZ_DIR);
  if (sys_path == nullptr || here == nullptr || PyList_Insert(sys_path, 0, here) != 0) fail("cannot set sys.path");
  Py_DECREF(here);
  PyObject* module = PyImport_ImportModule("fuzz_targets");
  if (module == nullptr) fail("cannot import fuzz_targets (is PYTHONPATH the build's python folder?)");
  g_target = PyObject_GetAttrString(module, target);
  Py_DECREF(module);
  if (g_target == nullptr || !PyCallable_Check(g_target)) fail("no such target in fuzz_targets.py");
  PyEval_SetTrace(trace, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  PyObject* bytes = PyBytes_FromStringAndSize(reinterpret_cast<const char*>(data), static_cast<Py_ssize_t>(size));
  if (bytes == nullptr) fail("out of memory");
  PyObject* result = PyObject_CallOneArg(g_target, bytes);
  Py_DECREF(bytes);
  if (result == nullptr) fail("the target raised: tessera misbehaved on this input");
  Py_DECREF(result);
  return 0;
}
