# The layer rule (../shared/DESIGN.md, "Layout"): each folder includes only the folders
# below it, and public framework headers include no CUDA header. Inside actors/, each
# subsystem includes only itself, the subsystems it builds on (actors/subsystems.cmake)
# and any subsystem's protocol.hpp. Tests of a layer (tests/<layer>/) keep their layer's
# rule; those of a subsystem (tests/actors/<subsystem>/) may start a whole node. Run with
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
set(allowed_tools "base;transport;framework;gpu;actors;runtime;tools")
set(allowed_examples "base;framework")
set(allowed_python "base;transport;framework;python")

if(EXISTS "${ROOT}/actors/subsystems.cmake")
  include("${ROOT}/actors/subsystems.cmake")
else()
  set(swarm_subsystems "")
endif()

set(broken "")
# check(<file> <layer> <subsystem or "">): appends to `broken` each include of `file` that
# `layer` (and, inside actors/, `subsystem`) may not make.
function(check source layer subsystem extra)
  set(may ${allowed_${layer}} ${extra})
  file(STRINGS "${ROOT}/${source}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(line MATCHES "#[ \t]*include[ \t]*\"([a-z_]+)/([a-z_]+)?")
      set(target "${CMAKE_MATCH_1}")
      set(second "${CMAKE_MATCH_2}")
      list(FIND may "${target}" at)
      if(at EQUAL -1 AND IS_DIRECTORY "${ROOT}/${target}")
        string(REPLACE ";" "/, " says "${may}")
        string(APPEND broken "  ${source}: ${line} (${layer}/ may include ${says}/)\n")
      elseif(subsystem AND target STREQUAL "actors"
             AND NOT line MATCHES "\"actors/[a-z_]+/protocol\\.hpp\"")
        set(own ${subsystem} ${swarm_subsystem_closure_${subsystem}})
        list(FIND own "${second}" at)
        if(at EQUAL -1)
          string(REPLACE ";" "/, actors/" says "${own}")
          string(APPEND broken "  ${source}: ${line} (actors/${subsystem}/ may include "
                               "actors/${says}/ and any subsystem's protocol.hpp)\n")
        endif()
      endif()
    elseif(layer STREQUAL "framework" AND source MATCHES "^framework/.*\\.hpp$"
           AND line MATCHES "#[ \t]*include[ \t]*<cuda")
      string(APPEND broken "  ${source}: ${line} (public headers include no CUDA header)\n")
    endif()
  endforeach()
  set(broken "${broken}" PARENT_SCOPE)
endfunction()

foreach(layer base transport framework gpu actors runtime tools examples python)
  foreach(top "${layer}" "tests/${layer}")
    file(GLOB_RECURSE sources RELATIVE "${ROOT}"
         "${ROOT}/${top}/*.hpp" "${ROOT}/${top}/*.cpp" "${ROOT}/${top}/*.h"
         "${ROOT}/${top}/*.cu")
    set(extra "")
    if(top MATCHES "^tests/")
      set(extra tests)
    endif()
    foreach(source IN LISTS sources)
      set(subsystem "")
      if(source MATCHES "^(tests/)?actors/([a-z_]+)/")
        set(subsystem "${CMAKE_MATCH_2}")
        list(FIND swarm_subsystems "${subsystem}" at)
        if(at EQUAL -1)
          string(APPEND broken "  ${source}: actors/${subsystem}/ is no subsystem of "
                               "actors/subsystems.cmake\n")
          set(subsystem "")
        endif()
        if(source MATCHES "^tests/")
          set(subsystem "")
        endif()
      elseif(source MATCHES "^actors/[^/]+\\.(hpp|cpp)$")
        string(APPEND broken "  ${source}: a source of actors/ belongs in a subsystem's folder\n")
      endif()
      check("${source}" "${layer}" "${subsystem}" "${extra}")
    endforeach()
  endforeach()
endforeach()

if(broken)
  message(FATAL_ERROR "includes that break the layer rule:\n${broken}")
endif()
