#!/usr/bin/env bash
# Configures and builds Swarm into build/ (Release unless SWARM_BUILD_TYPE says otherwise).
# Extra CMake arguments may be passed, e.g. -DSWARM_SANITIZE=address. SWARM_BUILD_TARGETS
# (space-separated) builds only those targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
build_dir=${SWARM_BUILD_DIR:-$root/build}
werror=OFF
[ -n "${CI:-}" ] && werror=ON
# The Python driver is built for the python3 on the PATH (its packages: install_deps.sh).
python=()
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null); then
  python=(-DPython_EXECUTABLE="$py")
fi
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE="${SWARM_BUILD_TYPE:-Release}" \
  -DSWARM_WERROR="$werror" "${python[@]}" "$@" >/dev/null
targets=()
for t in ${SWARM_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
