#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo on an embedded local cluster.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The demo needs the `swarm` tool alone: the tests are not built.
SWARM_BUILD_TARGETS=swarm_cli "$root/scripts/build.sh"
# With no arguments: a local cluster of three node processes on 127.0.0.1.
if [ $# -eq 0 ]; then set -- --nodes 3; fi
exec "${SWARM_BUILD_DIR:-$root/build}/bin/swarm" demo "$@"
