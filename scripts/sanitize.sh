#!/usr/bin/env bash
# Builds Swarm with a sanitizer and runs the tests that must be clean under it.
#   scripts/sanitize.sh address   address+undefined, into build-asan/: the whole suite
#                                 but the bench smoke runs; any report fails the run
#   scripts/sanitize.sh thread    thread, into build-tsan/: the tests of the framework's
#                                 own concurrent parts (Debian's CAF is not instrumented,
#                                 so hand-offs through CAF mailboxes would be reported)
# Extra arguments go to ctest (e.g. -R NAME).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:-}
shift || true
case $kind in
  address)
    # The dashboard's test loads its page in headless Chromium, as in scripts/test.sh.
    "$root/scripts/install_deps.sh" chromium
    export SWARM_BUILD_DIR=${SWARM_BUILD_DIR:-$root/build-asan}
    SWARM_BUILD_TYPE=${SWARM_BUILD_TYPE:-RelWithDebInfo} "$root/scripts/build.sh" \
      -DSWARM_SANITIZE=address
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
    cd "$SWARM_BUILD_DIR"
    ctest --output-on-failure -j "$(nproc)" -LE bench --timeout 600 "$@"
    ;;
  thread)
    export SWARM_BUILD_DIR=${SWARM_BUILD_DIR:-$root/build-tsan}
    SWARM_BUILD_TYPE=${SWARM_BUILD_TYPE:-RelWithDebInfo} "$root/scripts/build.sh" \
      -DSWARM_SANITIZE=thread
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
    bin=$SWARM_BUILD_DIR/bin
    "$bin/framework_tests" -tc="*slot*,*callbacks*,*k of n*,*pool*,*stream channel*"
    "$bin/actors_tests" -tc="concurrent*,tasks pushed*,*host device*,*host kernel*"
    # All of them: the endpoint's two I/O threads and its senders share no CAF mailbox.
    "$bin/transport_tests"
    ;;
  *)
    echo "usage: scripts/sanitize.sh address|thread [ctest arguments]" >&2
    exit 2
    ;;
esac
