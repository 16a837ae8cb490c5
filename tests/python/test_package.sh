#!/usr/bin/env bash
# test_package.sh — the rlflow Python package end to end, as a user gets it
# (docs/python.md): a fresh virtual environment (/usr/bin/python3 -m venv
# --system-site-packages, for Debian's onnx), `pip install .` offline (no
# index, no build isolation) from the source tree, reusing this build tree
# (RLFLOW_BUILD_DIR: the libraries, the extension and the default rules
# database are built already, so the install takes seconds), then
# tests/python/check_package.py in that environment, from another directory
# so that the installed package is imported, not the source tree's.
#
#   test_package.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
#
# Exit status: 0 passed, 1 failed, 77 skipped (CTest's SKIP_RETURN_CODE):
# no venv module, no onnx module for /usr/bin/python3 — said on stdout.
set -euo pipefail
src=${1:?usage: test_package.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR}
build=${2:?}
scratch=${3:?}
py=/usr/bin/python3

if ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "SKIP python_package: $py has no venv/ensurepip module (apt-get install python3-venv)"
  exit 77
fi
if ! "$py" -c 'import onnx' 2>/dev/null; then
  echo "SKIP python_package: $py has no onnx module (apt-get install python3-onnx)"
  exit 77
fi

rm -rf "$scratch"
mkdir -p "$scratch"
"$py" -m venv --system-site-packages "$scratch/venv"
start=$(date +%s%N)
RLFLOW_BUILD_DIR="$build" RLFLOW_JOBS=2 "$scratch/venv/bin/pip" install -q --no-build-isolation \
  --no-index --no-deps "$src" > "$scratch/pip.log" 2>&1 || {
  cat "$scratch/pip.log"
  echo "FAIL python_package: pip install failed"
  exit 1
}
end=$(date +%s%N)
echo "pip install: $(((end - start) / 1000000)) ms (reusing $build)"

cd "$scratch"
export XDG_CACHE_HOME="$scratch/cache" # the default rules must come with the package
XF_SCRATCH="$scratch" XF_SHARED_DIR="${XF_SHARED_DIR:-$src/../shared}" \
  XF_BIN_DIR="$build/tools" "$scratch/venv/bin/python" "$src/tests/python/check_package.py"
