# Operator code generated from ops.yaml, derivatives.yaml and opdocs.yaml by codegen/gen.py.
#
# The generator runs once per build into ${TESSERA_GENERATED_DIR}, one subfolder per layer
# (aten/, autograd/, csrc/). It rewrites only files whose text changed, and Ninja's restat
# then rebuilds only what depends on those. The list of files it writes is known at
# configure time (gen.py --list), so each layer declares its own generated sources:
#
#   tessera_generated_sources(<var> <layer>)   # the layer's generated .cpp files
#   add_dependencies(<target> tessera_codegen) # generated headers exist before compiling
set(TESSERA_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
file(GLOB TESSERA_CODEGEN_SCRIPTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/codegen/*.py)
set(TESSERA_CODEGEN_COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/codegen/gen.py
    --ops ${PROJECT_SOURCE_DIR}/ops.yaml --derivatives ${PROJECT_SOURCE_DIR}/derivatives.yaml
    --docs ${PROJECT_SOURCE_DIR}/opdocs.yaml --out ${TESSERA_GENERATED_DIR})
# gen.py decides the file list, so a change to it re-runs configure.
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/codegen/gen.py)
execute_process(COMMAND ${TESSERA_CODEGEN_COMMAND} --list
                OUTPUT_VARIABLE TESSERA_GENERATED_NAMES OUTPUT_STRIP_TRAILING_WHITESPACE
                COMMAND_ERROR_IS_FATAL ANY)
list(TRANSFORM TESSERA_GENERATED_NAMES PREPEND ${TESSERA_GENERATED_DIR}/ OUTPUT_VARIABLE TESSERA_GENERATED_FILES)

add_custom_command(
  OUTPUT ${TESSERA_GENERATED_DIR}/codegen.stamp
  BYPRODUCTS ${TESSERA_GENERATED_FILES}
  COMMAND ${TESSERA_CODEGEN_COMMAND}
  DEPENDS ${PROJECT_SOURCE_DIR}/ops.yaml ${PROJECT_SOURCE_DIR}/derivatives.yaml ${PROJECT_SOURCE_DIR}/opdocs.yaml
          ${TESSERA_CODEGEN_SCRIPTS}
  COMMENT "Generating operator and autograd code from ops.yaml, derivatives.yaml and opdocs.yaml"
  VERBATIM)
add_custom_target(tessera_codegen DEPENDS ${TESSERA_GENERATED_DIR}/codegen.stamp)

function(tessera_generated_sources out_var layer)
  set(files ${TESSERA_GENERATED_FILES})
  list(FILTER files INCLUDE REGEX "/generated/${layer}/.*\\.cpp$")
  set_source_files_properties(${files} PROPERTIES GENERATED TRUE)
  set(${out_var} ${files} PARENT_SCOPE)
endfunction()
