#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (unit, integration, example,
# benchmark smoke runs). Pass -LE slow to skip the slow multi-process tests locally.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The dashboard's test loads its page in headless Chromium.
"$root/scripts/install_deps.sh" chromium
"$root/scripts/build.sh"
cd "${SWARM_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" "$@"
