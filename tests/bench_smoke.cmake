# Runs `swarm bench --nodes N --quick --json OUT` and checks that the report holds every
# figure as a number. Usage:
#   cmake -DSWARM=path/to/swarm -DOUT=report.json [-DNODES=2] -P bench_smoke.cmake
if(NOT SWARM OR NOT OUT)
  message(FATAL_ERROR "bench_smoke.cmake needs -DSWARM=<swarm binary> and -DOUT=<json file>")
endif()

if(NOT NODES)
  set(NODES 1)
endif()

file(REMOVE "${OUT}")
execute_process(COMMAND "${SWARM}" bench --nodes ${NODES} --quick --json "${OUT}"
                RESULT_VARIABLE rc
                OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "swarm bench exited with '${rc}':\n${err}")
endif()
if(NOT EXISTS "${OUT}")
  message(FATAL_ERROR "swarm bench exited 0 but wrote no report at ${OUT}")
endif()

file(READ "${OUT}" report)
if(NODES EQUAL 2)
  set(keys
    remote_actor_call_rtt_p50_us
    remote_actor_call_rtt_p99_us
    tcp_floor_rtt_p50_us
    caf_raw_remote_rtt_p50_us
    remote_1_1_actor_calls_sync
    remote_1_1_actor_calls_async
    remote_single_client_tasks_async
    remote_transfer_gigabytes
    tcp_floor_gigabytes)
else()
set(keys
  local_actor_call_rtt_p50_us
  caf_raw_local_rtt_p50_us
  local_actor_call_rtt_ratio
  single_client_tasks_sync
  single_client_tasks_async
  1_1_actor_calls_sync
  1_1_actor_calls_async
  n_n_actor_calls_async
  single_client_put_calls
  single_client_get_calls
  single_client_get_100mb_us
  dag_1000_fanin_ms
  memcpy_100mb_us)
endif()
foreach(key IN LISTS keys)
  string(JSON type ERROR_VARIABLE json_err TYPE "${report}" ${key})
  if(json_err)
    message(FATAL_ERROR "${OUT} has no key '${key}': ${json_err}")
  endif()
  if(NOT type STREQUAL "NUMBER")
    message(FATAL_ERROR "${OUT}: '${key}' is a ${type}, not a number")
  endif()
  string(JSON value GET "${report}" ${key})
  message(STATUS "${key} = ${value}")
endforeach()
