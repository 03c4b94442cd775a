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
