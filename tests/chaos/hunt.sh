#!/usr/bin/env bash
# Hunts a rare hang of the chaos check: runs the quick check for each seed given, beside
# two busy loops (the load CI puts on it), and when the driver reports that nothing
# finished for 15 s, writes the backtraces of all its threads (the head runs in the
# driver's process) to chaos-hang-SEED.txt in the current folder. Needs gdb.
# Usage: tests/chaos/hunt.sh SEED...
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SWARM_CHAOS_BIN:-${SWARM_BUILD_DIR:-$root/build}/bin/swarm_chaos}
command -v gdb > /dev/null || { echo "hunt.sh: needs gdb" >&2; exit 2; }
[[ -x $bin ]] || { echo "hunt.sh: no $bin (build first)" >&2; exit 2; }
hogs=()
for _ in 1 2; do
  timeout 3600 sh -c 'while :; do :; done' &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2> /dev/null' EXIT
for seed in "$@"; do
  log=$(mktemp /tmp/swarm-chaos-hunt-XXXXXX)
  "$bin" run --quick --seed "$seed" > "$log" 2>&1 &
  pid=$!
  verdict=passed
  for _ in $(seq 1 140); do # 70 s at most
    sleep 0.5
    kill -0 "$pid" 2> /dev/null || break
    if grep -q "nothing finished for 15 s" "$log"; then
      gdb -p "$pid" -batch -ex "thread apply all bt" > "chaos-hang-$seed.txt" 2>&1
      cat "$log" >> "chaos-hang-$seed.txt"
      verdict="hung: chaos-hang-$seed.txt"
      break
    fi
  done
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  rc=$?
  [[ $verdict == passed && $rc != 0 ]] && verdict="failed (exit $rc): $log"
  echo "seed $seed: $verdict"
  [[ $verdict == passed ]] && rm -f "$log"
done
