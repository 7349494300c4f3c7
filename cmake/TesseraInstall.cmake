# `cmake --install` lays out a relocatable package: headers under include/ as they stand in
# the source tree, the shared libraries, and a CMake config so that a user's project says
#   find_package(Tessera CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE Tessera::aten)   # tensors, operators and autograd
#                                                      # (or Tessera::c10 alone)
include(CMakePackageConfigHelpers)

# Each library finds the others beside it ($ORIGIN), in lib/ here as in a wheel's package
# directory (csrc/CMakeLists.txt).
set_target_properties(c10 aten autograd distributed PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS c10 aten autograd aten_with_autograd autograd_with_aten distributed EXPORT TesseraTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/c10 ${PROJECT_SOURCE_DIR}/aten ${PROJECT_SOURCE_DIR}/autograd
                  ${PROJECT_SOURCE_DIR}/distributed
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
# (the one header of the Python glue an extension module includes)
install(FILES ${PROJECT_SOURCE_DIR}/csrc/extension.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/csrc)
install(DIRECTORY ${CMAKE_BINARY_DIR}/generated/aten ${CMAKE_BINARY_DIR}/generated/autograd
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "*.inc")

set(TESSERA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${TESSERA_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/TesseraConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/TesseraConfig.cmake INSTALL_DESTINATION ${TESSERA_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/TesseraConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/TesseraConfig.cmake ${CMAKE_BINARY_DIR}/TesseraConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/TesseraLinkFeatures.cmake
        DESTINATION ${TESSERA_CMAKE_DIR})
