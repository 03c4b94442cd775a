#!/usr/bin/env bash
# A project outside the tree against the install tree: `cmake --install` of this build
# into a fresh prefix, then examples/consumer configured with find_package(Swarm), built
# and run (an embedded node), the same program built by hand from `pkg-config swarm`, and
# the README's cluster recipe with the consumer's library built out of tree: two
# installed `swarm start --load libconsumer_code.so` workers, the consumer as the head.
# Every wait is bounded; the workers are killed by pid on any exit.
# All of it twice: for BUILD_DIR's library, and for libswarm.so from a second build of
# the library and the tool alone with SWARM_SHARED=ON (unless BUILD_DIR is that already;
# SWARM_CONSUMER_SHARED=0 skips it).
# Usage: consumer_smoke.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
src=$2
work_root=$(mktemp -d /tmp/swarm-consumer-XXXXXX)
work=$work_root
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work_root"
}
trap cleanup EXIT
fail() {
  echo "consumer_smoke: $*" >&2
  tail -n 20 "$work"/*.log >&2 2>/dev/null
  exit 1
}

# Installs the build in $1 into a fresh prefix and runs every check on it; $2 names it.
check_install() {
  local build=$1 kind=$2
  local work=$work_root/$kind
  mkdir -p "$work"
  echo "consumer_smoke: the $kind library"
  cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
    fail "cmake --install failed"
  for f in bin/swarm include/swarm/framework/swarm.hpp include/swarm/framework/version.hpp; do
    [ -e "$work/prefix/$f" ] || fail "the install tree has no $f"
  done
  config=$(find "$work/prefix" -name SwarmConfig.cmake) || true
  [ -n "$config" ] || fail "the install tree has no SwarmConfig.cmake"
  pc_dir=$(dirname "$(find "$work/prefix" -name swarm.pc)")

  cmake -S "$src/examples/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 || fail "configuring the consumer failed"
  cmake --build "$work/build" -j 2 >"$work/build.log" 2>&1 || fail "building the consumer failed"
  "$work/build/consumer" || fail "the consumer failed on an embedded node"
  # A shared build (SWARM_SHARED): the consumer and the tool run on the installed libswarm.so.
  shared=$(find "$work/prefix" -name 'libswarm.so*' | head -n 1)
  [ "$kind" = shared ] && [ -z "$shared" ] && fail "the shared build installed no libswarm.so"
  if [ -n "$shared" ]; then
    for exe in "$work/build/consumer" "$work/prefix/bin/swarm"; do
      ldd "$exe" | grep -q "libswarm.so.* => $work/prefix/" ||
        fail "$exe does not run on the installed $shared: $(ldd "$exe" | grep swarm)"
    done
    # What is not API is hidden: of the system actors' functions, only the few entry
    # points marked SWARM_EXPORT (a static build has about 800).
    internal=$(nm -DC --defined-only "$shared" | grep -cE " [TWV] swarm::actors::")
    [ "$internal" -lt 50 ] ||
      fail "libswarm.so exports $internal symbols of swarm::actors, which are not API"
  fi

  version=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --modversion swarm) || fail "pkg-config finds no swarm"
  "$work/prefix/bin/swarm" --version | grep -q "^swarm $version " ||
    fail "pkg-config says $version, the tool says $("$work/prefix/bin/swarm" --version)"
  # shellcheck disable=SC2046
  # The standard is the consumer's choice: the newest g++ knows, C++20 here.
  g++ -O1 -std=c++20 -I"$src/examples/consumer" $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags swarm) \
    "$src/examples/consumer/main.cpp" -o "$work/pc_consumer" \
    $(PKG_CONFIG_PATH="$pc_dir" pkg-config --libs swarm) >"$work/pkg-config.log" 2>&1 ||
    fail "building the consumer from pkg-config's flags failed"
  LD_LIBRARY_PATH="$(dirname "$pc_dir")" "$work/pc_consumer" || fail "the consumer built from pkg-config's flags failed"

  swarm=$work/prefix/bin/swarm
  cfg=$src/examples/consumer/cluster.toml
  lib=$work/build/libconsumer_code.so
  "$swarm" start --config "$cfg" --node worker-1 --load "$lib" >"$work/worker-1.log" 2>&1 & pids+=($!)
  "$swarm" start --config "$cfg" --node worker-2 --load "$lib" >"$work/worker-2.log" 2>&1 & pids+=($!)
  timeout 120 "$work/build/consumer" --config "$cfg" >"$work/head.log" 2>&1 ||
    fail "the consumer as the head of a cluster failed"
  grep -q "100 tasks and 10 actors ran on the workers" "$work/head.log" ||
    fail "the consumer did not run its work on the workers"
  grep "consumer:" "$work/head.log"
  # The workers go before the next install's take their ports.
  { for p in "${pids[@]}"; do kill -KILL "$p"; done; wait; } 2>/dev/null
  pids=()
}

if grep -q '^SWARM_SHARED:BOOL=ON' "$build/CMakeCache.txt"; then
  check_install "$build" shared
  exit 0
fi
check_install "$build" static
[ "${SWARM_CONSUMER_SHARED:-1}" = 0 ] && exit 0
# The same source as a shared library: the library and the tool only (no tests, no
# Python driver), of BUILD_DIR's build type.
type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")
cmake -S "$src" -B "$work_root/shared-build" -DSWARM_SHARED=ON -DSWARM_BUILD_TESTS=OFF \
  -DSWARM_PYTHON=OFF -DCMAKE_BUILD_TYPE="${type:-Release}" >"$work_root/shared-configure.log" 2>&1 ||
  { work=$work_root; fail "configuring a shared build failed"; }
cmake --build "$work_root/shared-build" --target swarm swarm_cli -j "$(nproc)" \
  >"$work_root/shared-build.log" 2>&1 || { work=$work_root; fail "the shared build failed"; }
check_install "$work_root/shared-build" shared
