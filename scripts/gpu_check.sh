#!/usr/bin/env bash
# Runs every GPU check of Swarm in one go, each bounded, and prints one summary line per
# check (also written to <out>/summary.txt, with each check's log beside it):
#   - the CUDA device tests (tests/device/), one line per case: real kernels, transfers,
#     memory, an illegal-address fault (the worker is replaced, other tasks run on), a
#     device buffer mapped by another node process (CUDA IPC) and sent through the host;
#   - the GPU example (examples/gpu_matmul.cpp) on the cuda backend;
#   - the GPU-labelled host-backend tests of the runtime and the GPU worker;
#   - `swarm bench --filter gpu`, each figure beside its bare-CUDA floor;
#   - compute-sanitizer's memcheck over the device tests that run in one process.
# Without a GPU it prints what it would run and exits 0.
#
#   scripts/gpu_check.sh [--bin DIR] [--out DIR] [--limit SECONDS]
#       DIR holds the built programs (default build/bin); libraries in DIR/../lib are used.
#   scripts/gpu_check.sh --pack DIR
#       Copies the programs the checks need, stripped, and the shared libraries they use
#       that a bare machine may lack into DIR/bin and DIR/lib: a build to carry to a GPU
#       machine that has the CUDA driver but none of Swarm's packages.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin
out=${OUT:-$root/build/gpu_check}
limit=240
pack=""
programs=(cuda_device_tests example_gpu_matmul swarm runtime_tests actors_tests)

while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --pack) pack=$2; shift 2 ;;
    *) echo "gpu_check.sh: unknown argument '$1' (see the head of $0)" >&2; exit 2 ;;
  esac
done

if [ -n "$pack" ]; then
  mkdir -p "$pack/bin" "$pack/lib"
  for p in "${programs[@]}"; do
    [ -x "$bin/$p" ] || { echo "gpu_check.sh: $bin/$p is not built (build with nvcc found)" >&2; exit 1; }
    strip -o "$pack/bin/$p" "$bin/$p"
  done
  # Every library but the C runtime's own (the C++ runtime goes too: the machine's may be older).
  for p in "${programs[@]}"; do ldd "$bin/$p"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$pack/lib/"; done
  cp "$0" "$pack/gpu_check.sh"
  du -sh "$pack"
  exit 0
fi

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "gpu_check: no GPU here (nvidia-smi finds none); on a GPU machine this runs, each within ${limit} s:"
  echo "  $bin/cuda_device_tests, one case at a time (the list: cuda_device_tests -ltc)"
  echo "  $bin/example_gpu_matmul"
  echo "  $bin/runtime_tests -sf='*gpu*' and $bin/actors_tests -sf='*gpu*'"
  echo "  $bin/swarm bench --filter gpu --json $out/bench_gpu.json"
  echo "  compute-sanitizer --tool memcheck $bin/cuda_device_tests (the in-process cases)"
  exit 0
fi

mkdir -p "$out"
[ -d "$bin/../lib" ] && export LD_LIBRARY_PATH="$(cd "$bin/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary=$out/summary.txt
: >"$summary"
failed=0

# check NAME LOG COMMAND...: runs it bounded; one line: PASS, SKIP (exit 77) or FAIL.
check() {
  local name=$1 log=$2
  shift 2
  local t0=$SECONDS rc
  timeout --kill-after=10 "$limit" "$@" >"$out/$log" 2>&1
  rc=$?
  local verdict=PASS
  if [ $rc -eq 77 ]; then verdict=SKIP
  elif [ $rc -ne 0 ]; then verdict=FAIL; failed=$((failed + 1)); fi
  [ $rc -eq 124 ] && verdict="FAIL (timed out after ${limit} s)"
  printf '%-4s %4ds  %s\n' "$verdict" $((SECONDS - t0)) "$name" | tee -a "$summary"
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && tail -n 25 "$out/$log" | sed 's/^/    | /'
  return 0
}

nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode --format=csv,noheader |
  sed 's/^/device: /' | tee -a "$summary"

i=0
while IFS= read -r case_name; do
  i=$((i + 1))
  # doctest's filters split on commas: match them with a wildcard instead.
  check "cuda device test: $case_name" "cuda_case_$i.log" \
    "$bin/cuda_device_tests" "--test-case=${case_name//,/*}"
done < <("$bin/cuda_device_tests" --list-test-cases --no-intro=true 2>/dev/null |
         grep -v '^\[doctest\]' | grep -v '^=*$' | sed '/^$/d')
check "example gpu_matmul on the cuda backend" example_gpu_matmul.log "$bin/example_gpu_matmul"
check "runtime GPU tests (host backend)" runtime_gpu.log "$bin/runtime_tests" '--source-file=*gpu*'
check "GPU worker and slot tests (host backend)" actors_gpu.log "$bin/actors_tests" '--source-file=*gpu*'
check "swarm bench --filter gpu" bench_gpu.log "$bin/swarm" bench --filter gpu --json "$out/bench_gpu.json"
grep -E 'gpu|cuda' "$out/bench_gpu.log" | sed 's/^/  /' | tee -a "$summary"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$sanitizer" ]; then
  # The deliberate fault and refused launches apart (memcheck reports them, as it should),
  # the node processes (it does not follow them), and the overlap of two tasks' streams
  # (memcheck runs one kernel at a time).
  check "compute-sanitizer memcheck of the in-process device tests" memcheck.log \
    "$sanitizer" --tool memcheck --error-exitcode 9 "$bin/cuda_device_tests" \
    '--test-case-exclude=*illegal-address*,*node process*,*refuses*,*left unchecked*,*slow kernel*'
else
  echo "SKIP    0s  compute-sanitizer memcheck: no compute-sanitizer here" | tee -a "$summary"
fi

echo "gpu_check: $failed check(s) failed; logs in $out" | tee -a "$summary"
[ $failed -eq 0 ]
