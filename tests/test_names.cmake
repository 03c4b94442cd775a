# Fails naming each test case whose name holds a semicolon: CTest splits a discovered
# name there, neither half names a test case, and the test case never runs while CTest
# reports both halves passed. BINARIES: the test binaries, separated by '|'.
string(REPLACE "|" ";" binaries "${BINARIES}")
set(bad "")
foreach(binary IN LISTS binaries)
  execute_process(COMMAND ${binary} --list-test-cases --no-version
                  OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${binary} --list-test-cases failed (${rc})")
  endif()
  # A CMake list splits on semicolons too: they are shown as "[semicolon]".
  string(REPLACE ";" "[semicolon]" listed "${listed}")
  string(REGEX MATCHALL "[^\n]*\\[semicolon\\][^\n]*" found "${listed}")
  foreach(name IN LISTS found)
    string(APPEND bad "\n  ${binary}: ${name}")
  endforeach()
endforeach()
if(NOT bad STREQUAL "")
  message(FATAL_ERROR "test case names with a semicolon, which CTest never runs:${bad}")
endif()
message(STATUS "no test case name holds a semicolon")
