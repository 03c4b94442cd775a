#!/usr/bin/env bash
# The chaos check: a 4-node cluster on 127.0.0.1 runs at least 10,000 dependent tasks and
# stateful actors while worker nodes are killed and frozen; prints
#   chaos: kills=N lost=L wrong=W time_ratio=R gcs_stall_ms=S progress_stall_ms=P
# and exits non-zero unless lost=0 and wrong=0. --quick finishes within 50 s.
# Usage: tests/chaos/run.sh [--quick] [--seed N]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SWARM_CHAOS_BIN:-${SWARM_BUILD_DIR:-$root/build}/bin/swarm_chaos}
if [[ ! -x $bin ]]; then
  "$root/scripts/build.sh" >&2
fi
limit=600
for a in "$@"; do [[ $a == --quick ]] && limit=50; done
exec timeout --kill-after=5 "$limit" "$bin" run "$@"
