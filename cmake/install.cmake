# `cmake --install`: the library, the public headers, the `swarm` tool, a CMake package
# (SwarmConfig.cmake with Swarm::swarm and Swarm::plugin, and its version) and swarm.pc.
include(CMakePackageConfigHelpers)

set(SWARM_INCLUDE_DIR "${CMAKE_INSTALL_INCLUDEDIR}/swarm")
install(TARGETS swarm ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
                      LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
# What SwarmConfig.cmake imports: libswarm.a, or libswarm.so with its soname.
if(SWARM_SHARED)
  set(SWARM_LIB_KIND SHARED)
  set(SWARM_LIB_FILE "libswarm.so.${PROJECT_VERSION}")
  set(SWARM_LIB_SONAME "libswarm.so.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
else()
  set(SWARM_LIB_KIND STATIC)
  set(SWARM_LIB_FILE "libswarm.a")
  set(SWARM_LIB_SONAME "")
endif()
install(TARGETS swarm_cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
# The public API (framework/) and the headers it includes.
foreach(dir base transport framework)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/${dir}/" DESTINATION "${SWARM_INCLUDE_DIR}/${dir}"
          FILES_MATCHING PATTERN "*.hpp")
endforeach()
# <swarm/swarm.hpp> and <swarm/plugin.hpp>, beside the folders they include from.
install(FILES "${PROJECT_SOURCE_DIR}/include/swarm/swarm.hpp"
              "${PROJECT_SOURCE_DIR}/include/swarm/plugin.hpp"
        DESTINATION "${SWARM_INCLUDE_DIR}")
install(FILES "${PROJECT_BINARY_DIR}/generated/framework/version.hpp"
        DESTINATION "${SWARM_INCLUDE_DIR}/framework")
install(FILES "${PROJECT_BINARY_DIR}/generated/transport/wire_message.hpp"
        DESTINATION "${SWARM_INCLUDE_DIR}/transport")

set(SWARM_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Swarm")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/SwarmConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/SwarmConfig.cmake" INSTALL_DESTINATION "${SWARM_CMAKE_DIR}"
  PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR CMAKE_INSTALL_INCLUDEDIR
            SWARM_INCLUDE_DIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/SwarmConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/SwarmConfig.cmake"
              "${PROJECT_BINARY_DIR}/SwarmConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/FindCAF.cmake"
        DESTINATION "${SWARM_CMAKE_DIR}")

if(SWARM_WITH_CUDA)
  set(SWARM_PC_CUDA "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt")
endif()
file(RELATIVE_PATH SWARM_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file("${PROJECT_SOURCE_DIR}/cmake/swarm.pc.in" "${PROJECT_BINARY_DIR}/swarm.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/swarm.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" "${PROJECT_SOURCE_DIR}/README.md"
              "${PROJECT_SOURCE_DIR}/CHANGELOG.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
