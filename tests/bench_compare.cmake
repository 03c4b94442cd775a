# Checks `swarm bench --compare OLD NEW`: ratios for keys in both, keys found in one only,
# and a clear error naming the file for a missing or malformed report. Usage:
#   cmake -DSWARM=path/to/swarm -DDIR=scratch-folder -P bench_compare.cmake
if(NOT SWARM OR NOT DIR)
  message(FATAL_ERROR "bench_compare.cmake needs -DSWARM=<swarm binary> and -DDIR=<folder>")
endif()
file(MAKE_DIRECTORY "${DIR}")
file(WRITE "${DIR}/old.json" "{\n  \"a_per_s\": 100.0000,\n  \"b_us\": 8.0000,\n  \"gone\": 1\n}\n")
file(WRITE "${DIR}/new.json" "{\n  \"a_per_s\": 250.0000,\n  \"b_us\": 4.0000,\n  \"added\": 3\n}\n")
file(WRITE "${DIR}/bad.json" "{\n  \"a_per_s\": 100.0,\n  \"b_us\": fast\n}\n")

function(run_compare old new)
  execute_process(COMMAND "${SWARM}" bench --compare "${old}" "${new}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: expected /${pattern}/ in:\n${text}")
  endif()
endfunction()

run_compare("${DIR}/old.json" "${DIR}/new.json")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--compare of two good reports exited ${rc}: ${err}")
endif()
expect("${out}" "a_per_s +100.00 +250.00 +2.500x" "ratio of a rate")
expect("${out}" "b_us +8.00 +4.00 +0.500x" "ratio of a time")
expect("${out}" "only in OLD[^\n]*\n +gone" "key only in the old report")
expect("${out}" "only in NEW[^\n]*\n +added" "key only in the new report")

run_compare("${DIR}/old.json" "${DIR}/bad.json")
if(rc EQUAL 0)
  message(FATAL_ERROR "--compare accepted a malformed report")
endif()
expect("${err}" "bad.json:3: the value of \"b_us\" is not a finite number" "malformed report")

run_compare("${DIR}/missing.json" "${DIR}/new.json")
if(rc EQUAL 0)
  message(FATAL_ERROR "--compare accepted a missing report")
endif()
expect("${err}" "cannot open '[^']*missing.json': No such file" "missing report")
message(STATUS "${out}")
