#!/usr/bin/env bash
# setup.sh — installs the Debian packages rlflow needs to build and test,
# then ONNX Runtime for CPU (the target runtime, target/) from the npm
# registry into .deps/onnxruntime. Idempotent: packages already present are
# not touched, nothing runs apt when everything is installed, and npm runs
# only when the library is not there yet. Runs as root, or through sudo.
# ONNX Runtime is optional: when its install fails, this says what failed
# and goes on (rlflow builds and tests without it; its cases skip).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config      # toolchain
  protobuf-c-compiler libprotobuf-c-dev # ONNX protobuf (de)serialisation
  libonnx-dev                           # onnx.proto, compiled at build time
  check                                 # unit-test framework
  libsqlite3-dev                        # rules database, cost cache
  libz3-dev                             # xferverify: Z3 C API
  libopenmpi-dev                        # optional: mpirun -n N xferverify (verify/mpi.c)
  openmpi-bin                           # mpirun, for that and its tests
  libdnnl-dev                           # oneDNN: CPU operator timings (cost model)
  libonnx-testdata                      # ONNX backend tests (interpreter oracle)
  python3-onnx                          # onnx.checker for exported models (tests)
  python3-dev python3-venv              # the Python package: its C extension, and a
  python3-setuptools python3-wheel      #   virtual environment to pip install it into
  clang                                 # libFuzzer harness (tests/fuzz)
  chromium fonts-liberation graphviz    # xferdb report: headless page test, rule pictures
)
# npm fetches ONNX Runtime (below). A node that is already there (NodeSource's
# nodejs bundles npm and conflicts with Debian's npm package) is kept.
command -v node >/dev/null || PACKAGES+=(nodejs)
command -v npm >/dev/null || PACKAGES+=(npm)
ORT_VERSION=1.30.0
ORT_PREFIX=.deps/onnxruntime
case "$(uname -m)" in aarch64 | arm64) ORT_ARCH=arm64 ;; *) ORT_ARCH=x64 ;; esac
ORT_LIB=$ORT_PREFIX/node_modules/onnxruntime-node/bin/napi-v6/linux/$ORT_ARCH/libonnxruntime.so.1

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime: the onnxruntime-node package ships libonnxruntime.so.1;
# its install script (which fetches GPU binaries) is not run.
if [ -f "$ORT_LIB" ]; then
  echo "setup: onnxruntime $ORT_VERSION present ($ORT_LIB)"
elif ! command -v npm >/dev/null; then
  echo "setup: WARNING: npm not found, onnxruntime not installed; the target runtime is off" >&2
elif ONNXRUNTIME_NODE_INSTALL=skip npm install --ignore-scripts --no-audit --no-fund \
       --prefix "$ORT_PREFIX" "onnxruntime-node@$ORT_VERSION" && [ -f "$ORT_LIB" ]; then
  echo "setup: onnxruntime $ORT_VERSION installed ($ORT_LIB)"
else
  echo "setup: WARNING: installing onnxruntime-node@$ORT_VERSION with npm into $ORT_PREFIX failed" \
       "(or it has no $ORT_LIB); the target runtime is off until tools/setup.sh succeeds" >&2
fi
