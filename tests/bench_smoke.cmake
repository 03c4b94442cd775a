# Runs `swarm bench --nodes N --quick --json OUT` and checks that the report holds every
# figure as a number. Usage:
#   cmake -DSWARM=path/to/swarm -DOUT=report.json [-DNODES=2] [-DPLOT=dir] -P bench_smoke.cmake
# NODES=2 checks the single-node figures and the two-node ones; PLOT also passes --plot DIR
# and checks that both pictures are SVG documents.
if(NOT SWARM OR NOT OUT)
  message(FATAL_ERROR "bench_smoke.cmake needs -DSWARM=<swarm binary> and -DOUT=<json file>")
endif()

if(NOT NODES)
  set(NODES 1)
endif()

file(REMOVE "${OUT}")
set(plot_args)
if(PLOT)
  file(REMOVE_RECURSE "${PLOT}")
  set(plot_args --plot "${PLOT}")
endif()
execute_process(COMMAND "${SWARM}" bench --nodes ${NODES} --quick --json "${OUT}" ${plot_args}
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
set(local_keys
  local_actor_call_rtt_p50_us
  caf_raw_local_rtt_p50_us
  local_actor_call_rtt_ratio
  thread_handoff_rtt_p50_us
  single_client_tasks_sync
  single_client_tasks_async
  multi_client_tasks_async
  single_client_wait_1k_refs
  1_1_actor_calls_sync
  1_1_actor_calls_async
  1_1_async_actor_calls_async
  1_1_actor_calls_with_args
  checkpointed_actor_calls_sync
  1_n_actor_calls_sync
  1_n_actor_calls_async
  n_n_actor_calls_sync
  n_n_actor_calls_async
  actors_created_per_s
  placement_group_create_removal
  caf_raw_spawn_per_s
  caf_raw_sync_per_s
  caf_raw_pipelined_per_s
  checkpointed_calls_answers_not_kept_per_s
  single_client_put_calls
  single_client_get_calls
  single_client_get_10k_refs
  single_client_put_gigabytes
  memcpy_gigabytes
  single_client_get_100mb_us
  dag_1000_fanin_ms
  memcpy_100mb_us)
set(remote_keys
  remote_actor_call_rtt_p50_us
  remote_actor_call_rtt_p99_us
  tcp_floor_rtt_p50_us
  caf_raw_remote_rtt_p50_us
  remote_1_1_actor_calls_sync
  remote_1_1_actor_calls_async
  remote_single_client_tasks_async
  remote_transfer_gigabytes
  remote_transfer_gigabytes_vs_buffer
  remote_transfer_1gb_gigabytes
  remote_transfer_cold_gigabytes
  remote_transfer_cold_gigabytes_vs_fresh
  tcp_floor_into_buffer_gigabytes
  tcp_floor_into_fresh_gigabytes
  remote_reread_us
  remote_read_peak_rss_mb
  remote_read_object_mb
  remote_call_p99_during_bulk_us
  remote_call_p99_idle_us
  heartbeat_gap_during_bulk_ms
  heartbeat_gap_idle_ms
  remote_small_task_us
  tcp_floor_gigabytes)
set(curves actor_call_latency_local caf_raw_latency_local)
if(NODES EQUAL 2)
  list(APPEND curves actor_call_latency_remote tcp_floor_latency)
endif()
foreach(curve IN LISTS curves)
  foreach(bytes 64 1024 16384 262144 1048576)
    foreach(pct p50 p90 p99 p999 max)
      list(APPEND local_keys ${curve}_${bytes}b_${pct}_us)
    endforeach()
  endforeach()
endforeach()
set(keys ${local_keys})
if(NODES EQUAL 2)
  list(APPEND keys ${remote_keys})
  # The link in network namespaces is made as root with ip and tc (skipped otherwise).
  execute_process(COMMAND sh -c "[ \"$(id -u)\" = 0 ] && ip -V && tc -V && ip netns add swarm-smoke-$$ && ip netns del swarm-smoke-$$"
                  RESULT_VARIABLE no_link OUTPUT_QUIET ERROR_QUIET)
  if(no_link EQUAL 0)
    list(APPEND keys link_tcp_megabytes link_transfer_megabytes
         link_priority_1_beside_0_megabytes link_priority_0_beside_1_megabytes
         link_latency_critical_call_p99_idle_us
         link_latency_critical_call_p99_during_transfer_us)
  endif()
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

if(PLOT)
  foreach(svg latency.svg ratios.svg)
    if(NOT EXISTS "${PLOT}/${svg}")
      message(FATAL_ERROR "swarm bench --plot ${PLOT} wrote no ${svg}")
    endif()
    file(READ "${PLOT}/${svg}" text)
    if(NOT text MATCHES "^<svg xmlns=\"http://www.w3.org/2000/svg\".*</svg>")
      message(FATAL_ERROR "${PLOT}/${svg} is not an SVG document")
    endif()
  endforeach()
  file(READ "${PLOT}/latency.svg" text)
  if(NOT text MATCHES "1 MiB")
    message(FATAL_ERROR "${PLOT}/latency.svg has no 1 MiB message size")
  endif()
endif()
