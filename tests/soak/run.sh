#!/usr/bin/env bash
# The soak check: a head and a worker node on 127.0.0.1 run puts and frees, tasks, actor
# calls, 200 KiB remote results and spawned-and-dropped remote actors, printing both RSS
# every sample; exits non-zero when either grew past the limit after warm-up.
# Usage: tests/soak/run.sh [--seconds N (600)] [--sample-seconds S (10)] [--max-growth-mib M (16)]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SWARM_SOAK_BIN:-${SWARM_BUILD_DIR:-$root/build}/bin/swarm_soak}
if [[ ! -x $bin ]]; then
  "$root/scripts/build.sh" >&2
fi
seconds=600
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ ${args[i]} == --seconds ]] && seconds=${args[i + 1]}
done
exec timeout --kill-after=5 $((seconds + 60)) "$bin" run "$@"
