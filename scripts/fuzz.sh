#!/usr/bin/env bash
# Runs a libFuzzer target of tests/fuzz/ for a number of seconds:
#
#   scripts/fuzz.sh TARGET SECONDS   # TARGET: frame_decoder, value_codec, cluster_config,
#                                    # gcs_log, or all (each in turn)
#   scripts/fuzz.sh corpus           # rewrites the seed corpus tests/fuzz/corpus/
#
# Configures and builds the clang tree (address+undefined sanitizers) into build-fuzz/
# when needed, then fuzzes a copy of tests/fuzz/corpus/TARGET/: new inputs go to
# BUILD/corpus/TARGET/ (emptied each run), a crashing input to BUILD/findings/TARGET/.
# Prints libFuzzer's final stats and exits 1 on a finding, 77 (skipped) when clang++
# cannot build a fuzzer.
#
# Environment: SWARM_FUZZ_BUILD_DIR (default build-fuzz/), SWARM_FUZZ_CC and
# SWARM_FUZZ_CXX (default clang, clang++), SWARM_FUZZ_JOBS (build jobs, default nproc).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SWARM_FUZZ_BUILD_DIR:-$root/build-fuzz}
cc=${SWARM_FUZZ_CC:-clang}
cxx=${SWARM_FUZZ_CXX:-clang++}
jobs=${SWARM_FUZZ_JOBS:-$(nproc)}
targets=(frame_decoder value_codec cluster_config gcs_log)
skip=77

usage() {
  echo "usage: $0 {$(IFS='|'; echo "${targets[*]}")|all} SECONDS | $0 corpus" >&2
  exit 2
}

# Exits with the skip code when the compilers cannot build a libFuzzer program.
require_clang() {
  if ! command -v "$cxx" >/dev/null 2>&1 || ! command -v "$cc" >/dev/null 2>&1; then
    echo "skipped: $cxx or $cc not found (install clang and libclang-rt-14-dev)"
    exit $skip
  fi
  local probe
  probe=$(mktemp -d)
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
    >"$probe/probe.cpp"
  if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" \
    >/dev/null 2>&1; then
    rm -rf "$probe"
    echo "skipped: $cxx cannot link a libFuzzer program (install libclang-rt-14-dev)"
    exit $skip
  fi
  rm -rf "$probe"
}

# Configures the clang tree unless it is there, then builds `fuzz_$1`.
build_target() {
  if [ ! -f "$build/CMakeCache.txt" ]; then
    local werror=OFF
    [ -n "${CI:-}" ] && werror=ON
    echo "configuring the clang fuzz build in $build"
    CC="$cc" CXX="$cxx" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE= \
      -DCMAKE_C_FLAGS="-O1 -g" -DCMAKE_CXX_FLAGS="-O1 -g" -DSWARM_FUZZ=ON \
      -DSWARM_SANITIZE=address -DSWARM_WERROR="$werror" >/dev/null
  elif ! grep -q '^SWARM_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    echo "$build is not a fuzz build (configured without -DSWARM_FUZZ=ON)" >&2
    exit 2
  fi
  cmake --build "$build" -j "$jobs" --target "fuzz_$1" >"$build/build-$1.log" 2>&1 || {
    tail -n 40 "$build/build-$1.log"
    echo "building fuzz_$1 failed (log: $build/build-$1.log)" >&2
    exit 2
  }
}

# Fuzzes one target for $2 seconds; returns libFuzzer's status (0: no finding).
run_target() {
  local target=$1 seconds=$2
  local corpus=$build/corpus/$target findings=$build/findings/$target
  local log=$build/fuzz-$target.log
  build_target "$target"
  rm -rf "$corpus"
  mkdir -p "$corpus" "$findings"
  cp "$root/tests/fuzz/corpus/$target/"* "$corpus/"
  echo "fuzzing $target for $seconds s (log: $log)"
  local status=0
  # -error_exitcode: libFuzzer's default, 77, would read as a skipped test.
  "$build/bin/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
    -error_exitcode=1 -artifact_prefix="$findings/" "$corpus" >"$log" 2>&1 || status=$?
  local runs speed
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  grep -E '^(#[0-9]+[[:space:]]+INITED|Done |stat::)' "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log"
    echo "FINDING: fuzz_$target exited with $status; input in $findings/" >&2
    return 1
  fi
  echo "$target: ${runs:-?} executions in $seconds s (${speed:-?} exec/s)," \
    "corpus $(find "$corpus" -type f | wc -l) inputs, no findings"
}

case "${1:-}" in
corpus)
  require_clang
  build_target make_corpus
  "$build/bin/fuzz_make_corpus" "$root/tests/fuzz/corpus"
  echo "wrote the seed corpus under tests/fuzz/corpus/"
  ;;
all)
  [ $# -eq 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || usage
  require_clang
  failed=0
  for t in "${targets[@]}"; do
    run_target "$t" "$2" || failed=1
  done
  exit $failed
  ;;
*)
  [ $# -eq 2 ] || usage
  [[ " ${targets[*]} " == *" $1 "* ]] || usage
  [[ "$2" =~ ^[0-9]+$ ]] || usage
  require_clang
  run_target "$1" "$2"
  ;;
esac
