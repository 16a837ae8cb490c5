#!/usr/bin/env bash
# test.sh — installs what is missing, checks that no file includes another
# directory's private header and that every link between documentation
# pages resolves, builds rlflow with warnings as errors,
# runs the whole Check suite through CTest, then builds again with
# AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite once more.
# Exits non-zero on any build or test failure. At the end it lists the
# cases the suites skipped (SKIP lines, tests/testutil.h) and their total.
#   XF_SKIP_SANITIZE=1 tools/test.sh   # skip the sanitizer pass (local iteration)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh

tools/check_alloc.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== include check ==" && tools/check_includes.sh
echo "== link check ==" && tools/check_links.sh

# Skips of the last CTest run in build directory $1: the SKIP lines and the
# totals of the suites' summary lines ("<suite>: N cases, P passed, F
# failed, S skipped (K ran without some check)").
skips() {
  local log="$1/Testing/Temporary/LastTest.log"
  [ -f "$log" ] || return 0
  grep -h '^SKIP ' "$log" | sort -u || true
  awk -v dir="$1" '
    /^[a-z0-9_]+: [0-9]+ cases, [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped/ {
      suites++
      s += $8
      if (match($0, /\([0-9]+ ran without/)) k += substr($0, RSTART + 1, RLENGTH - 13)
    }
    END {
      printf "%s: %d cases skipped, %d cases ran without some check (%d suites)\n",
             dir, s, k, suites
    }' "$log"
}

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
echo "== skips =="
skips build
if [ "${XF_SKIP_SANITIZE:-0}" != "1" ]; then skips build-asan; fi
echo "test.sh: all tests passed"
