# `cmake --install`: the library, the public headers, the `swarm` tool, a CMake package
# (SwarmConfig.cmake with Swarm::swarm and Swarm::plugin, and its version) and swarm.pc.
# The package's targets come from install(EXPORT); its dependencies and swarm.pc's
# come from the one list in cmake/SwarmDependencies.cmake.
include(CMakePackageConfigHelpers)

set(SWARM_INCLUDE_DIR "${CMAKE_INSTALL_INCLUDEDIR}/swarm")
set(SWARM_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/Swarm")
# Headers are found as <swarm/swarm.hpp> and, within, "framework/...".
set(swarm_install_includes "$<INSTALL_INTERFACE:${SWARM_INCLUDE_DIR}>"
                           "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")

# Installed, Swarm::swarm's users link the dependencies the headers use; those of
# libswarm.a link the rest too, and only as link items ($<LINK_ONLY:...>).
set(swarm_install_links ${swarm_dependency_api_targets})
if(NOT SWARM_SHARED)
  foreach(dep ${swarm_dependency_targets})
    list(APPEND swarm_install_links "$<LINK_ONLY:${dep}>")
  endforeach()
endif()
target_include_directories(swarm INTERFACE ${swarm_install_includes})
target_compile_features(swarm INTERFACE cxx_std_17)
target_link_libraries(swarm INTERFACE "$<INSTALL_INTERFACE:${swarm_install_links}>")
# A sanitizer build's library needs the sanitizer's runtime in the programs it links into.
set(swarm_sanitize_link "")
if(SWARM_SANITIZE STREQUAL "address")
  set(swarm_sanitize_link -fsanitize=address,undefined)
elseif(SWARM_SANITIZE STREQUAL "thread")
  set(swarm_sanitize_link -fsanitize=thread)
endif()
if(swarm_sanitize_link)
  target_link_options(swarm INTERFACE "$<INSTALL_INTERFACE:${swarm_sanitize_link}>")
endif()

# Swarm::plugin: a library of user code that `swarm start --load` loads. Swarm's headers;
# its symbols come from the node that loads it.
add_library(swarm_plugin INTERFACE)
set_target_properties(swarm_plugin PROPERTIES EXPORT_NAME plugin)
target_include_directories(swarm_plugin INTERFACE ${swarm_install_includes}
  "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR};${PROJECT_SOURCE_DIR}/include>"
  "$<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/generated>")
target_compile_features(swarm_plugin INTERFACE cxx_std_17)
target_link_libraries(swarm_plugin INTERFACE ${swarm_dependency_api_targets})

# The same names for a project that adds Swarm with add_subdirectory.
add_library(Swarm::swarm ALIAS swarm)
add_library(Swarm::plugin ALIAS swarm_plugin)

install(TARGETS swarm swarm_plugin EXPORT SwarmTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(EXPORT SwarmTargets NAMESPACE Swarm:: DESTINATION "${SWARM_CMAKE_DIR}")
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

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/SwarmConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/SwarmConfig.cmake" INSTALL_DESTINATION "${SWARM_CMAKE_DIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/SwarmConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/SwarmConfig.cmake"
              "${PROJECT_BINARY_DIR}/SwarmConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/SwarmDependencies.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/FindCAF.cmake"
        DESTINATION "${SWARM_CMAKE_DIR}")

# swarm.pc: programs link libswarm.a with every dependency, or libswarm.so with those
# the headers use (the rest under Libs.private, for `pkg-config --static`).
list(JOIN swarm_pc_requires " " SWARM_PC_REQUIRES)
list(APPEND swarm_pc_api_libs ${swarm_sanitize_link})
list(JOIN swarm_pc_api_libs " " SWARM_PC_LIBS)
list(JOIN swarm_pc_libs " " SWARM_PC_LIBS_PRIVATE)
if(NOT SWARM_SHARED)
  string(APPEND SWARM_PC_LIBS " ${SWARM_PC_LIBS_PRIVATE}")
  set(SWARM_PC_LIBS_PRIVATE "")
endif()
file(RELATIVE_PATH SWARM_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file("${PROJECT_SOURCE_DIR}/cmake/swarm.pc.in" "${PROJECT_BINARY_DIR}/swarm.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/swarm.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" "${PROJECT_SOURCE_DIR}/README.md"
              "${PROJECT_SOURCE_DIR}/CHANGELOG.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
