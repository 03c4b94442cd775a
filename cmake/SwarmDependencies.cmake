# The libraries Swarm links, listed once. Read three ways:
#   - the build includes this file to find them (CMakeLists.txt);
#   - the installed package (SwarmConfig.cmake) includes it again, with
#     swarm_dependencies_mode set to "package", to find them for its users;
#   - cmake/install.cmake makes the package's link interface and swarm.pc from the
#     lists it leaves: swarm_dependency_targets (and _api_targets), swarm_pc_requires,
#     swarm_pc_libs (and _api_libs).
#
# swarm_dependency(TARGETS <targets> [FIND <find_package arguments>]
#                  [PKG <prefix> <pkg-config module>] [API] [PC <module>] LIBS <flags>)
#   FIND: found with find_package (find_dependency in the package); PKG: with
#   pkg_check_modules, which makes PkgConfig::<prefix>, needing no language of the user's
#   (Cap'n Proto's CMake package needs C). API: the installed headers include it, so
#   programs link it themselves, also against libswarm.so. PC: the module swarm.pc
#   names under Requires.private; LIBS: the flags it gives for linking.
if(NOT DEFINED swarm_dependencies_mode)
  set(swarm_dependencies_mode build)
endif()
set(swarm_dependency_targets "")
set(swarm_dependency_api_targets "")
set(swarm_pc_requires "")
set(swarm_pc_libs "")
set(swarm_pc_api_libs "")

macro(swarm_dependency)
  cmake_parse_arguments(swarm_dep "API" "PC" "TARGETS;FIND;PKG;LIBS" ${ARGN})
  if(swarm_dep_FIND AND swarm_dependencies_mode STREQUAL "package")
    find_dependency(${swarm_dep_FIND})
  elseif(swarm_dep_FIND)
    find_package(${swarm_dep_FIND} REQUIRED)
  endif()
  if(swarm_dep_PKG)
    list(GET swarm_dep_PKG 0 swarm_dep_prefix)
    list(GET swarm_dep_PKG 1 swarm_dep_module)
    if(TARGET PkgConfig::${swarm_dep_prefix})
    elseif(swarm_dependencies_mode STREQUAL "package")
      pkg_check_modules(${swarm_dep_prefix} QUIET IMPORTED_TARGET ${swarm_dep_module})
      if(NOT ${swarm_dep_prefix}_FOUND)
        # As find_dependency does: Swarm is not found, and why.
        set(Swarm_FOUND FALSE)
        set(Swarm_NOT_FOUND_MESSAGE "Swarm needs ${swarm_dep_module}, which pkg-config did not find")
        return()
      endif()
    else()
      pkg_check_modules(${swarm_dep_prefix} REQUIRED IMPORTED_TARGET ${swarm_dep_module})
    endif()
  endif()
  if(swarm_dep_API)
    list(APPEND swarm_dependency_api_targets ${swarm_dep_TARGETS})
    list(APPEND swarm_pc_api_libs ${swarm_dep_LIBS})
  else()
    list(APPEND swarm_dependency_targets ${swarm_dep_TARGETS})
    list(APPEND swarm_pc_libs ${swarm_dep_LIBS})
  endif()
  if(swarm_dep_PC)
    list(APPEND swarm_pc_requires ${swarm_dep_PC})
  endif()
endmacro()

if(swarm_dependencies_mode STREQUAL "package")
  include(CMakeFindDependencyMacro)
  find_dependency(PkgConfig)
else()
  find_package(PkgConfig REQUIRED)
  # CUDA is optional: a Swarm built with it makes its users link the CUDA runtime.
  find_package(CUDAToolkit QUIET)
  set(SWARM_WITH_CUDA ${CUDAToolkit_FOUND})
endif()

swarm_dependency(TARGETS CAF::core FIND CAF 0.17 API LIBS -lcaf_core)
swarm_dependency(TARGETS Threads::Threads FIND Threads LIBS -lpthread)
swarm_dependency(TARGETS OpenSSL::SSL OpenSSL::Crypto FIND OpenSSL PC openssl
                 LIBS -lssl -lcrypto)
swarm_dependency(TARGETS spdlog::spdlog FIND spdlog CONFIG PC spdlog LIBS -lspdlog -lfmt)
swarm_dependency(TARGETS prometheus-cpp::core FIND prometheus-cpp CONFIG
                 LIBS -lprometheus-cpp-core)
swarm_dependency(TARGETS civetweb::civetweb FIND civetweb CONFIG LIBS -lcivetweb)
swarm_dependency(TARGETS PkgConfig::CAPNP PKG CAPNP capnp PC capnp LIBS -lcapnp -lkj)
swarm_dependency(TARGETS PkgConfig::HWLOC PKG HWLOC hwloc>=2.0 PC hwloc LIBS -lhwloc)
swarm_dependency(TARGETS PkgConfig::TOMLPP PKG TOMLPP tomlplusplus>=3 PC tomlplusplus
                 LIBS -ltomlplusplus)
swarm_dependency(TARGETS ${CMAKE_DL_LIBS} LIBS -ldl)
if(SWARM_WITH_CUDA)
  swarm_dependency(TARGETS CUDA::cudart_static FIND CUDAToolkit
                   LIBS -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt)
endif()
