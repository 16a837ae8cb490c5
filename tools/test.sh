#!/usr/bin/env bash
# test.sh — installs what is missing, builds rlflow with warnings as errors,
# runs the whole Check suite through CTest, then builds again with
# AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite once more.
# Exits non-zero on any build or test failure.
#   XF_SKIP_SANITIZE=1 tools/test.sh   # skip the sanitizer pass (local iteration)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh

tools/check_alloc.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (release, -Werror) =="
cmake -S . -B build -DXF_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
echo "== tests =="
(cd build && ctest --output-on-failure -j "$jobs")

if [ "${XF_SKIP_SANITIZE:-0}" != "1" ]; then
  echo "== build (AddressSanitizer + UBSan) =="
  cmake -S . -B build-asan -DXF_WERROR=ON -DXF_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-asan -j "$jobs"
  echo "== tests under sanitizers =="
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     XF_SANITIZED=1 ctest --output-on-failure -j "$jobs")
fi
echo "test.sh: all tests passed"
