# CPU kernel files are compiled once per capability: DEFAULT with no extra flags and, on
# x86-64 outside the sanitizer build (which runs the default ISA), AVX2 with
# -mavx2 -mfma -mf16c; neither contracts a * b + c into an FMA. Each copy defines CPU_CAPABILITY=<X> and CPU_CAPABILITY_<X>; the
# target gets TESSERA_CPU_AVX2_KERNELS so DEFINE_DISPATCH knows the AVX2 kernels exist.
# Only these files are compiled twice; aten/native/DispatchStub.h picks one at run time.
function(tessera_add_cpu_kernels target)
  # No contraction of a * b + c into FMA: scalar code gives the same bits on every ISA;
  # kernels fuse where they ask to (fmadd). -Wno-psabi: GCC notes that 32-byte-aligned
  # arguments (Vectorized) changed ABI in GCC 4.6; these never cross a library boundary.
  set(flags_DEFAULT -ffp-contract=off -Wno-psabi)
  set(flags_AVX2 -mavx2 -mfma -mf16c -ffp-contract=off -Wno-psabi)
  set(capabilities DEFAULT)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT TESSERA_SANITIZE)
    list(APPEND capabilities AVX2)
    target_compile_definitions(${target} PRIVATE TESSERA_CPU_AVX2_KERNELS)
  endif()
  foreach(src IN LISTS ARGN)
    get_filename_component(name ${src} NAME_WE)
    foreach(cap IN LISTS capabilities)
      set(copy ${CMAKE_CURRENT_BINARY_DIR}/cpu_kernels/${name}.${cap}.cpp)
      file(CONFIGURE OUTPUT ${copy} CONTENT "#include \"${src}\"\n")
      set_source_files_properties(${copy} PROPERTIES
        COMPILE_DEFINITIONS "CPU_CAPABILITY=${cap};CPU_CAPABILITY_${cap}"
        COMPILE_OPTIONS "${flags_${cap}}")
      target_sources(${target} PRIVATE ${copy})
    endforeach()
  endforeach()
endfunction()
