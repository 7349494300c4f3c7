# Every external dependency is found here, from Debian's packages (scripts/install-deps.sh).
# PyTorch's own headers and libraries are never searched for: see test/tools/check_no_pytorch.py.

find_package(fmt REQUIRED)
find_package(Threads REQUIRED)
# OpenMP (libgomp, the runtime Debian's oneDNN is built on): at::parallel_for.
find_package(OpenMP REQUIRED COMPONENTS CXX)

# OpenBLAS (double/complex and small float GEMMs) and oneDNN (float GEMMs, convolution,
# pooling, int8) serve the aten kernels.
find_package(PkgConfig REQUIRED)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
# Debian's dnnl-config.cmake insists on OpenCL (its GPU runtime), which the CPU
# primitives we use do not need: find the library and header directly.
find_library(TESSERA_DNNL_LIBRARY NAMES dnnl REQUIRED)
find_path(TESSERA_DNNL_INCLUDE_DIR NAMES oneapi/dnnl/dnnl.hpp REQUIRED)
add_library(tessera_dnnl INTERFACE IMPORTED)
target_link_libraries(tessera_dnnl INTERFACE ${TESSERA_DNNL_LIBRARY})
target_include_directories(tessera_dnnl SYSTEM INTERFACE ${TESSERA_DNNL_INCLUDE_DIR})
message(STATUS "oneDNN: ${TESSERA_DNNL_LIBRARY}")

if(BUILD_TESTING)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(TESSERA_BENCH)
  find_package(benchmark REQUIRED)
endif()

# Python: Debian's interpreter, never the first python3 on PATH (it cannot see Debian's
# numpy and torch, which the tests use as the oracle).
if(NOT DEFINED Python3_EXECUTABLE)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
if(TESSERA_PYTHON)
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
  find_package(pybind11 CONFIG REQUIRED)
else()
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
endif()

if(TESSERA_CUDA_ENABLED)
  find_package(CUDAToolkit REQUIRED)
endif()
