#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo on an embedded local cluster.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
exec "${SWARM_BUILD_DIR:-$root/build}/bin/swarm" demo "$@"
