#!/usr/bin/env bash
# The README's deployment, run as written: two workers started with `swarm start` from
# examples/cluster.toml, the demo joining as the head, then `swarm status` and
# `swarm stop`. Every wait is bounded; the workers are killed by pid on any exit.
# Usage: deploy_smoke.sh path/to/swarm path/to/cluster.toml
set -u
swarm=$1
log=$(mktemp -d /tmp/swarm-deploy-XXXXXX)
cfg=$log/cluster.toml
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT
fail() {
  echo "deploy_smoke: $*" >&2
  tail -n 20 "$log"/*.log >&2
  exit 1
}

# The example with a secret of its own, as the README says; then checked.
sed "s/change-me-to-a-long-random-string/$(openssl rand -hex 32)/" "$2" >"$cfg"
"$swarm" check-config --config "$cfg" >"$log/check.log" 2>&1 ||
  fail "check-config refused the example with a fresh secret: $(cat "$log/check.log")"

"$swarm" start --config "$cfg" --node worker-1 >"$log/worker-1.log" 2>&1 & pids+=($!)
"$swarm" start --config "$cfg" --node worker-2 >"$log/worker-2.log" 2>&1 & pids+=($!)

# The head is the demo; status is asked while it runs.
"$swarm" demo --config "$cfg" --node head --tasks 2000 >"$log/head.log" 2>&1 &
head_pid=$!
pids+=($head_pid)
up=0
for _ in $(seq 1 100); do
  if "$swarm" status --config "$cfg" >"$log/status.log" 2>&1 &&
     [ "$(grep -c ' up ' "$log/status.log")" -eq 3 ]; then up=1; break; fi
  kill -0 $head_pid 2>/dev/null || break
  sleep 0.1
done
cat "$log/status.log"
timeout 120 tail --pid=$head_pid -f /dev/null || fail "the demo did not finish in 120 s"
wait $head_pid || fail "the demo failed"
grep -q "as node 'head'" "$log/head.log" || fail "the demo did not run as the head"
[ $up -eq 1 ] || echo "deploy_smoke: note: status never showed 3 nodes up while the demo ran"

# The head is gone; stop each worker directly.
"$swarm" stop --config "$cfg" --node worker-1 || fail "stop worker-1"
"$swarm" stop --config "$cfg" --node worker-2 || fail "stop worker-2"
for p in "${pids[@]:0:2}"; do
  timeout 10 tail --pid="$p" -f /dev/null || fail "worker $p did not stop in 10 s"
done
echo "deploy_smoke: ok"
