#!/usr/bin/env bash
# What membership costs an idle cluster of N real node processes on 127.0.0.1: the time
# until all joined, the head's CPU (cores, from /proc) and its control-lane bytes out per
# second over S seconds (node tables and everything else the head sends; from its metrics),
# and those bytes per node; the sockets the head and a median worker hold (from /proc,
# listening ones included), and the connections refused before authentication (from the
# logs).
#   bench/membership_traffic.sh [--nodes N] [--seconds S] [--swarm PATH]
# Prints one line of key=value. Each node runs `swarm start` with 1 CPU and a 32 MiB store.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nodes=16 seconds=10 swarm=$root/build/bin/swarm
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --swarm) swarm=$2; shift 2 ;;
    *) echo "usage: $0 [--nodes N] [--seconds S] [--swarm PATH]" >&2; exit 2 ;;
  esac
done
((nodes >= 2 && nodes <= 200)) || { echo "--nodes must be 2..200" >&2; exit 2; }
dir=$(mktemp -d /tmp/swarm-membership-XXXXXX)
pids=()
cleanup() {
  "$swarm" stop --config "$dir/cluster.toml" >/dev/null 2>&1 || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
# Below the ephemeral range (32768 up), where outgoing connections could take a port.
base=$((20000 + RANDOM % 10000))
{
  printf '[cluster]\nname = "membership"\nsecret = "%s"\n' "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  printf '[limits]\nobject_store = "32MiB"\n'
  for ((i = 0; i < nodes; i++)); do
    role=worker name=w$i
    ((i == 0)) && role=head name=head
    printf '[[node]]\nname = "%s"\naddress = "127.0.0.1"\nport = %d\nrole = "%s"\ncpus = 1\n' \
      "$name" $((base + i)) "$role"
  done
} >"$dir/cluster.toml"
start=$(date +%s.%N)
"$swarm" start --config "$dir/cluster.toml" --node head --no-dashboard --wait "$nodes" \
  --wait-timeout 120 >"$dir/head.out" 2>"$dir/head.log" &
pids+=($!)
for ((i = 1; i < nodes; i++)); do
  "$swarm" start --config "$dir/cluster.toml" --node w$i --no-dashboard --no-metrics \
    >/dev/null 2>"$dir/w$i.log" &
  pids+=($!)
done
for _ in $(seq 1 1200); do
  grep -q ready "$dir/head.out" 2>/dev/null && break
  sleep 0.1
done
grep -q ready "$dir/head.out" || { echo "the cluster did not form: $(tail -3 "$dir/head.log")" >&2; exit 1; }
joined=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
sent() {
  curl -s "http://127.0.0.1:$((base + 1000))/metrics" |
    awk '/^swarm_bytes_sent_total/ && /lane="control"/ {print $NF}'
}
# The head's CPU time so far, in clock ticks (user + system).
ticks() { awk '{print $14 + $15}' "/proc/${pids[0]}/stat"; }
sleep 2 # the joins' tables go out
before=$(sent) cpu_before=$(ticks)
sleep "$seconds"
after=$(sent) cpu_after=$(ticks)
sockets() { find "/proc/$1/fd" -lname 'socket:*' 2>/dev/null | wc -l; }
head_sockets=$(sockets "${pids[0]}")
worker_sockets=$(for p in "${pids[@]:1}"; do sockets "$p"; done | sort -n |
  awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
refused=$(cat "$dir"/*.log | grep -c "before authentication" || true)
awk -v n="$nodes" -v j="$joined" -v a="$before" -v b="$after" -v s="$seconds" \
    -v c0="$cpu_before" -v c1="$cpu_after" -v hz="$(getconf CLK_TCK)" \
    -v hs="$head_sockets" -v ws="$worker_sockets" -v r="$refused" 'BEGIN {
  printf "nodes=%d join_s=%.2f head_idle_cpu_cores=%.3f head_control_bytes_per_s=%.0f " \
         "per_node_bytes_per_s=%.0f head_sockets=%d worker_sockets_median=%d " \
         "refused_before_authentication=%d\n",
         n, j, (c1 - c0) / hz / s, (b - a) / s, (b - a) / s / (n - 1), hs, ws, r
}'
