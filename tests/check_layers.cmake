# Checks cmake/check_layers.cmake itself: a tree where transport/ includes framework/
# must fail naming the file and the rule; the same tree without that include passes.
set(tree "${WORK}/layers-tree")
file(REMOVE_RECURSE "${tree}")
file(WRITE "${tree}/framework/api.hpp" "#pragma once\n#include \"base/error.hpp\"\n")
file(WRITE "${tree}/base/error.hpp" "#pragma once\n")
file(WRITE "${tree}/transport/codec.hpp"
     "#pragma once\n#include <vector>\n#include \"framework/api.hpp\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${tree} -P ${SCRIPT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "the layer check passed a transport header that includes framework/")
endif()
if(NOT err MATCHES "transport/codec.hpp: #include \"framework/api.hpp\"")
  message(FATAL_ERROR "the layer check did not name the include:\n${err}")
endif()
file(WRITE "${tree}/transport/codec.hpp" "#pragma once\n#include \"base/error.hpp\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${tree} -P ${SCRIPT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the layer check refused a tree that keeps the rule:\n${err}")
endif()

# Inside actors/, a subsystem includes another's headers only when it builds on it
# (actors/subsystems.cmake), and any subsystem's protocol.hpp.
file(WRITE "${tree}/actors/subsystems.cmake"
     "set(swarm_subsystems low high)\nset(swarm_subsystem_deps_low \"\")\n"
     "set(swarm_subsystem_deps_high low)\nset(swarm_subsystem_closure_low \"\")\n"
     "set(swarm_subsystem_closure_high low)\n")
file(WRITE "${tree}/actors/high/protocol.hpp" "#pragma once\n")
file(WRITE "${tree}/actors/high/part.hpp" "#pragma once\n#include \"actors/low/part.hpp\"\n")
file(WRITE "${tree}/actors/low/part.hpp"
     "#pragma once\n#include \"actors/high/protocol.hpp\"\n#include \"actors/high/part.hpp\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${tree} -P ${SCRIPT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "the layer check passed a subsystem that includes one above it")
endif()
if(NOT err MATCHES "actors/low/part.hpp: #include \"actors/high/part.hpp\""
   OR err MATCHES "protocol.hpp\" \\(")
  message(FATAL_ERROR "the layer check did not name just the subsystem's include:\n${err}")
endif()
file(WRITE "${tree}/actors/low/part.hpp" "#pragma once\n#include \"actors/high/protocol.hpp\"\n")
file(WRITE "${tree}/actors/stray.hpp" "#pragma once\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${tree} -P ${SCRIPT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "actors/stray.hpp: a source of actors/ belongs in a subsystem")
  message(FATAL_ERROR "the layer check passed a source at the top of actors/:\n${err}")
endif()
file(REMOVE "${tree}/actors/stray.hpp")
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${tree} -P ${SCRIPT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the layer check refused subsystems that keep the rule:\n${err}")
endif()
