// Bindings for the CPU allocator (tessera.cpu.memory_stats, empty_cache, ...: the private
// _cpu_* functions python/tessera/cpu.py wraps) and for the intra-op thread count
// (tessera.set_num_threads / get_num_threads), and the kernels' ISA (_cpu_capability).
#include "python_api.h"

#include <aten/core/CPUCapability.h>
#include <aten/core/Parallel.h>
#include <c10/core/AllocationFaults.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/CachingCPUAllocator.h>

#include <atomic>
#include <climits>
#include <string>

namespace tessera::python {

namespace {

// An int argument (not a bool) of a one-argument function, or false with TypeError set.
bool int_arg(PyObject* arg, const char* function, long long* out) {
  if (!PyLong_Check(arg) || PyBool_Check(arg)) {
    PyErr_Format(PyExc_TypeError, "%s(): argument 'int' must be int, not %s", function, Py_TYPE(arg)->tp_name);
    return false;
  }
  *out = PyLong_AsLongLong(arg);
  return !(*out == -1 && PyErr_Occurred());
}

bool set_item(PyObject* dict, const std::string& key, int64_t value) {
  PyObject* v = PyLong_FromLongLong(value);
  if (v == nullptr) return false;
  int rc = PyDict_SetItemString(dict, key.c_str(), v);
  Py_DECREF(v);
  return rc == 0;
}

bool set_stat(PyObject* dict, const char* name, const c10::CachingCPUAllocatorStats::Stat& s) {
  const std::string base = std::string(name) + ".all.";
  return set_item(dict, base + "current", s.current) && set_item(dict, base + "peak", s.peak) &&
         set_item(dict, base + "allocated", s.allocated) && set_item(dict, base + "freed", s.freed);
}

// Keys as torch.cuda.memory_stats() spells them ("allocated_bytes.all.current", ...),
// plus the CPU cache's own counters.
PyObject* cpu_memory_stats(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  const auto s = c10::GetCachingCPUAllocator()->stats();
  PyObject* d = PyDict_New();
  if (d == nullptr) return nullptr;
  bool ok = set_stat(d, "allocated_bytes", s.allocated_bytes) && set_stat(d, "reserved_bytes", s.reserved_bytes) &&
            set_stat(d, "requested_bytes", s.requested_bytes) && set_stat(d, "allocation", s.allocation) &&
            set_stat(d, "segment", s.segment) && set_stat(d, "cached_bytes", s.cached_bytes) &&
            set_stat(d, "cached_blocks", s.cached_blocks) && set_item(d, "num_cache_hits", s.num_cache_hits) &&
            set_item(d, "num_cache_misses", s.num_cache_misses) && set_item(d, "num_small_allocs", s.num_small_allocs) &&
            set_item(d, "num_alloc_retries", s.num_alloc_retries) && set_item(d, "num_ooms", s.num_ooms) &&
            set_item(d, "num_empty_cache", s.num_empty_cache) &&
            set_item(d, "num_cache_limit_releases", s.num_cache_limit_releases) &&
            set_item(d, "cache_limit_bytes", s.cache_limit_bytes);
  if (!ok) {
    Py_DECREF(d);
    return nullptr;
  }
  return d;
  END_HANDLE_TH_ERRORS
}

PyObject* cpu_memory_allocated(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  return PyLong_FromLongLong(c10::GetCachingCPUAllocator()->stats().allocated_bytes.current);
  END_HANDLE_TH_ERRORS
}

PyObject* cpu_memory_reserved(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  return PyLong_FromLongLong(c10::GetCachingCPUAllocator()->stats().reserved_bytes.current);
  END_HANDLE_TH_ERRORS
}

PyObject* cpu_empty_cache(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  c10::GetCachingCPUAllocator()->empty_cache();
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* cpu_reset_peak_memory_stats(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  c10::GetCachingCPUAllocator()->reset_peak_stats();
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* cpu_reset_accumulated_memory_stats(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  c10::GetCachingCPUAllocator()->reset_accumulated_stats();
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* cpu_set_cache_limit(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  long long n = 0;
  if (!int_arg(arg, "set_cache_limit", &n)) return nullptr;
  if (n < 0) {
    PyErr_Format(PyExc_ValueError, "set_cache_limit(): the limit must be non-negative, got %lld", n);
    return nullptr;
  }
  c10::GetCachingCPUAllocator()->set_cache_limit(static_cast<size_t>(n));
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* cpu_cache_limit(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  return PyLong_FromSize_t(c10::GetCachingCPUAllocator()->cache_limit());
  END_HANDLE_TH_ERRORS
}

// "caching" when the caching allocator is the installed CPU allocator, else "plain".
PyObject* cpu_allocator_backend(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  return PyUnicode_FromString(c10::GetCPUAllocator() == c10::GetCachingCPUAllocator() ? "caching" : "plain");
  END_HANDLE_TH_ERRORS
}

PyObject* set_num_threads(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  long long n = 0;
  if (!int_arg(arg, "set_num_threads", &n)) return nullptr;
  if (n <= 0 || n > INT_MAX) {
    PyErr_SetString(PyExc_RuntimeError, "set_num_threads expects a positive integer");
    return nullptr;
  }
  at::set_num_threads(static_cast<int>(n));
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* get_num_threads(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  return PyLong_FromLong(at::get_num_threads());
  END_HANDLE_TH_ERRORS
}

// Test hook: sum(range(n)) through at::parallel_reduce with `grain`, with the GIL released;
// returns (sum, number of distinct threads that ran chunks).
PyObject* parallel_sum(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  long long n = 0, grain = 0;
  if (!PyArg_ParseTuple(args, "LL", &n, &grain)) return nullptr;
  if (n < 0 || grain < 0) {
    PyErr_SetString(PyExc_ValueError, "_parallel_sum(): n and grain must be non-negative");
    return nullptr;
  }
  int64_t sum = 0;
  size_t threads = 0;
  Py_BEGIN_ALLOW_THREADS;
  std::atomic<uint64_t> seen{0};
  sum = at::parallel_reduce(
      int64_t{0}, static_cast<int64_t>(n), static_cast<int64_t>(grain), int64_t{0},
      [&](int64_t b, int64_t e, int64_t acc) {
        seen.fetch_or(uint64_t{1} << (at::get_thread_num() % 64));
        for (int64_t i = b; i < e; ++i) acc += i;
        return acc;
      },
      [](int64_t x, int64_t y) { return x + y; });
  threads = static_cast<size_t>(__builtin_popcountll(seen.load()));
  Py_END_ALLOW_THREADS;
  return Py_BuildValue("(Ln)", static_cast<long long>(sum), static_cast<Py_ssize_t>(threads));
  END_HANDLE_TH_ERRORS
}

// The kernels' instruction set: "default" or "avx2" (TESSERA_CPU_CAPABILITY lowers it), so
// tests can say which per-ISA path they ran.
PyObject* cpu_capability(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  return PyUnicode_FromString(at::cpu_capability());
  END_HANDLE_TH_ERRORS
}

// Test hooks: c10::set_allocation_fault(n) and the allocations it has counted.
PyObject* set_allocation_fault(PyObject*, PyObject* arg) {
  HANDLE_TH_ERRORS
  long long n = 0;
  if (!int_arg(arg, "_set_allocation_fault", &n)) return nullptr;
  c10::set_allocation_fault(n);
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject* allocation_fault_count(PyObject*, PyObject*) {
  HANDLE_TH_ERRORS
  return PyLong_FromLongLong(c10::allocation_fault_count());
  END_HANDLE_TH_ERRORS
}

PyMethodDef methods[] = {
    {"_set_allocation_fault", set_allocation_fault, METH_O,
     "Test hook: n >= 1 makes the n-th CPU allocation from now raise OutOfMemoryError; n < 0 counts only; 0 "
     "turns it off."},
    {"_allocation_fault_count", allocation_fault_count, METH_NOARGS,
     "Allocations counted since the last _set_allocation_fault call."},
    {"_cpu_memory_stats", cpu_memory_stats, METH_NOARGS, "The caching CPU allocator's counters, as a dict."},
    {"_cpu_memory_allocated", cpu_memory_allocated, METH_NOARGS, nullptr},
    {"_cpu_memory_reserved", cpu_memory_reserved, METH_NOARGS, nullptr},
    {"_cpu_empty_cache", cpu_empty_cache, METH_NOARGS, nullptr},
    {"_cpu_reset_peak_memory_stats", cpu_reset_peak_memory_stats, METH_NOARGS, nullptr},
    {"_cpu_reset_accumulated_memory_stats", cpu_reset_accumulated_memory_stats, METH_NOARGS, nullptr},
    {"_cpu_set_cache_limit", cpu_set_cache_limit, METH_O, nullptr},
    {"_cpu_cache_limit", cpu_cache_limit, METH_NOARGS, nullptr},
    {"_cpu_allocator_backend", cpu_allocator_backend, METH_NOARGS, nullptr},
    {"_parallel_sum", parallel_sum, METH_VARARGS, nullptr},
    {"_cpu_capability", cpu_capability, METH_NOARGS, nullptr},
    {"set_num_threads", set_num_threads, METH_O,
     "set_num_threads(int) -> None\n\nSets the number of threads used for intra-op parallelism on CPU "
     "(OpenMP regions, OpenBLAS and oneDNN)."},
    {"get_num_threads", get_num_threads, METH_NOARGS,
     "get_num_threads() -> int\n\nReturns the number of threads used for intra-op parallelism on CPU."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

PyMethodDef* allocator_functions() { return methods; }

}  // namespace tessera::python
