#!/usr/bin/env bash
# Installs the Debian packages Swarm needs, and those named as arguments, only those
# missing (idempotent).
set -euo pipefail
pkgs=(g++ make cmake pkg-config libcaf-dev capnproto libcapnp-dev libhwloc-dev
      doctest-dev libbenchmark-dev libtomlplusplus-dev libssl-dev libcli11-dev
      libspdlog-dev prometheus-cpp-dev nlohmann-json3-dev libxxhash-dev openssl clang libclang-rt-14-dev python3-dev doxygen "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
# The Python driver's build and tests (nanobind, NumPy, pytest) come from PyPI, for the
# python3 on the PATH; without them the driver's tests are reported skipped.
if command -v python3 >/dev/null &&
   ! python3 -c "import nanobind, numpy, pytest" 2>/dev/null; then
  echo "installing for $(command -v python3): nanobind numpy pytest"
  python3 -m pip install --quiet --disable-pip-version-check nanobind numpy pytest 2>/dev/null ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
      nanobind numpy pytest ||
    echo "warning: nanobind, numpy or pytest could not be installed: the Python driver's tests will be skipped" >&2
fi
