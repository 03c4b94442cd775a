# Finds what the Python driver (python/) needs: Python's development files and nanobind
# (from PyPI: scripts/install_deps.sh installs it). Sets SWARM_PYTHON_BUILD, or
# SWARM_PYTHON_SKIPPED to why it is not built.
set(SWARM_PYTHON_BUILD OFF)
set(SWARM_PYTHON_SKIPPED "")
if(SWARM_SANITIZE OR SWARM_FUZZ)
  set(SWARM_PYTHON_SKIPPED "a sanitizer or fuzzing build does not build the Python driver")
  return()
endif()
find_package(Python 3.8 COMPONENTS Interpreter Development.Module)
if(NOT Python_FOUND)
  set(SWARM_PYTHON_SKIPPED "no Python 3.8+ with its development files was found")
  return()
endif()
execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                OUTPUT_VARIABLE swarm_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE swarm_nanobind_rc ERROR_QUIET)
if(NOT swarm_nanobind_rc EQUAL 0)
  set(SWARM_PYTHON_SKIPPED
      "nanobind is not installed for ${Python_EXECUTABLE} (python3 -m pip install nanobind)")
  return()
endif()
find_package(nanobind CONFIG PATHS "${swarm_nanobind_dir}" NO_DEFAULT_PATH)
if(NOT nanobind_FOUND)
  set(SWARM_PYTHON_SKIPPED "nanobind's CMake files in ${swarm_nanobind_dir} did not load")
  return()
endif()
set(SWARM_PYTHON_BUILD ON)
