# The fuzz targets, each fuzzed briefly by scripts/fuzz.sh in a clang tree under this
# build (built by the first run: the timeout covers that). Skipped when clang++ cannot
# build a fuzzer; SWARM_FUZZ_CXX=/nonexistent/clang++ in the environment simulates that.
set(swarm_fuzz_tests
  frame_decoder "the frame decoder survives 10 seconds of fuzzing, re-encoding what it decodes"
  value_codec "the value codec survives 10 seconds of fuzzing over several types"
  cluster_config "the cluster-file parser survives 10 seconds of fuzzing"
  gcs_log "control-store recovery survives 10 seconds of fuzzing of its files")
while(swarm_fuzz_tests)
  list(POP_FRONT swarm_fuzz_tests target name)
  add_test(NAME "${name}" COMMAND ${PROJECT_SOURCE_DIR}/scripts/fuzz.sh ${target} 10)
  set_tests_properties("${name}" PROPERTIES
    LABELS "fuzz;slow" TIMEOUT 900 SKIP_RETURN_CODE 77
    # One at a time: they share the clang tree and its build.
    RESOURCE_LOCK swarm_fuzz_build
    ENVIRONMENT "SWARM_FUZZ_BUILD_DIR=${CMAKE_BINARY_DIR}/fuzz")
endwhile()
