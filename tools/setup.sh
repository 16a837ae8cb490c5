#!/usr/bin/env bash
# setup.sh — installs the Debian packages rlflow needs to build and test.
# Idempotent: packages already present are not touched, and nothing runs
# apt when everything is installed. Runs as root, or through sudo.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config      # toolchain
  protobuf-c-compiler libprotobuf-c-dev # ONNX protobuf (de)serialisation
  libonnx-dev                           # onnx.proto, compiled at build time
  check                                 # unit-test framework
  libsqlite3-dev                        # rules database, cost cache
  libz3-dev                             # xferverify: Z3 C API
  libdnnl-dev                           # oneDNN: CPU operator timings (cost model)
  libonnx-testdata                      # ONNX backend tests (interpreter oracle)
  python3-onnx                          # onnx.checker for exported models (tests)
  clang                                 # libFuzzer harness (tests/fuzz)
  chromium fonts-liberation graphviz    # xferdb report: headless page test, rule pictures
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
