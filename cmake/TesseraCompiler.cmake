# Compiler flags, ccache, sanitizers and the CUDA language switch.

find_program(TESSERA_CCACHE ccache)
if(TESSERA_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER "${TESSERA_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${TESSERA_CCACHE}")
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${TESSERA_CCACHE}")
endif()

# Everything is hidden unless marked C10_API / TORCH_API: smaller symbol tables and
# direct (non-PLT) calls inside each library.
set(CMAKE_CXX_VISIBILITY_PRESET hidden)
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)

add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra;-Wno-unused-parameter>")
if(TESSERA_WERROR)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-Werror>")
endif()

if(TESSERA_SANITIZE)
  string(REPLACE ";" "," _tessera_san "${TESSERA_SANITIZE}")
  add_compile_options(-fsanitize=${_tessera_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  # ASan: -O1 (the sanitizer's own advice) in the Debug build, which is otherwise
  # unoptimised: the instrumented kernels run several times faster, which is most of CI's
  # sanitizer stage; -g1 keeps the line tables the reports print and drops the rest of the
  # debug information. Not TSan: with -O1, GCC 12's TSan instrumentation gives false
  # -Wmaybe-uninitialized errors (TensorOptions' copies), and its tests are few.
  if("address" IN_LIST TESSERA_SANITIZE)
    add_compile_options("$<$<CONFIG:Debug>:-O1;-g1>")
  endif()
  add_link_options(-fsanitize=${_tessera_san})
  if("thread" IN_LIST TESSERA_SANITIZE)
    # GCC 12's TSan instrumentation of function exits hides that TORCH_CHECK(false, ...) does
    # not return, so -Wreturn-type fires falsely there; the other builds keep the warning.
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-Wno-return-type>")
  endif()
  message(STATUS "Sanitizers: ${_tessera_san}")
endif()

# CUDA: AUTO turns it on when nvcc is found. The sanitizer build never uses it.
set(TESSERA_CUDA_ENABLED OFF)
if(TESSERA_CUDA STREQUAL "AUTO")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER AND NOT TESSERA_SANITIZE)
    set(TESSERA_CUDA_ENABLED ON)
  endif()
elseif(TESSERA_CUDA)
  set(TESSERA_CUDA_ENABLED ON)
endif()
if(TESSERA_CUDA_ENABLED)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)  # Hopper only by default; override on the command line.
  endif()
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA 20 dialect for nvcc
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
endif()
