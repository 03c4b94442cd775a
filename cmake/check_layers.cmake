# The layer rule (../shared/DESIGN.md, "Layout"): each folder includes only the folders
# below it, and public framework headers include no CUDA header. Run with
#   cmake -DROOT=<source dir> -P cmake/check_layers.cmake
# it names every include that breaks the rule and fails.
if(NOT ROOT)
  message(FATAL_ERROR "check_layers: pass -DROOT=<source dir>")
endif()

set(allowed_base "base")
set(allowed_transport "base;transport")
set(allowed_framework "base;transport;framework")
set(allowed_gpu "base;gpu")
set(allowed_actors "base;transport;framework;gpu;actors")
set(allowed_runtime "base;transport;framework;gpu;actors;runtime")
set(allowed_examples "base;framework")

set(broken "")
foreach(layer base transport framework gpu actors runtime examples)
  file(GLOB_RECURSE sources RELATIVE "${ROOT}"
       "${ROOT}/${layer}/*.hpp" "${ROOT}/${layer}/*.cpp" "${ROOT}/${layer}/*.h"
       "${ROOT}/${layer}/*.cu")
  foreach(source IN LISTS sources)
    file(STRINGS "${ROOT}/${source}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      if(line MATCHES "#[ \t]*include[ \t]*\"([a-z_]+)/")
        set(target "${CMAKE_MATCH_1}")
        list(FIND allowed_${layer} "${target}" at)
        if(at EQUAL -1 AND IS_DIRECTORY "${ROOT}/${target}")
          string(REPLACE ";" "/, " may "${allowed_${layer}}")
          string(APPEND broken "  ${source}: ${line} (${layer}/ may include ${may}/)\n")
        endif()
      elseif(layer STREQUAL "framework" AND source MATCHES "\\.hpp$"
             AND line MATCHES "#[ \t]*include[ \t]*<cuda")
        string(APPEND broken "  ${source}: ${line} (public headers include no CUDA header)\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(broken)
  message(FATAL_ERROR "includes that break the layer rule:\n${broken}")
endif()
