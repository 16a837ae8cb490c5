#!/usr/bin/env bash
# check_alloc.sh — fails when a library module calls the C library's
# allocator directly instead of the ir allocation hook (xf_malloc, xf_calloc,
# xf_realloc, xf_free, xf_strdup, xf_aligned_alloc; see ir/ir.h), or passes
# one as a function pointer (`..., free)`). Only the hook itself,
# ir/alloc.c, may. tools/, tests/ and bench/ are not library code and are
# not checked. Calls through struct members (be->free(...)) and the
# libraries' own pairs (sqlite3_free, protobuf-c's free_unpacked) do not
# match.
#   tools/check_alloc.sh [repo-root]     (default: this script's repository)
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"
# Library modules: every top-level directory with a CMakeLists.txt except
# the programs, tests and benches (so a new module is checked as soon as it
# exists).
mods=""
for m in */; do
  m=${m%/}
  case "$m" in tools | tests | bench | docs | build*) continue ;; esac
  [ -f "$m/CMakeLists.txt" ] && mods="$mods $m"
done
[ -n "$mods" ] || { echo "check_alloc: no library module under $root" >&2; exit 2; }
# shellcheck disable=SC2086
hits=$(grep -rnE --include='*.c' --include='*.h' \
  -e '(^|[^[:alnum:]_.>])(malloc|calloc|realloc|free|strdup|strndup|posix_memalign|aligned_alloc)[[:space:]]*\(' \
  -e '[(,=][[:space:]]*(malloc|calloc|realloc|free)[[:space:]]*[,;)]' \
  $mods | grep -v '^ir/alloc\.c:' || true)
if [ -n "$hits" ]; then
  echo "$hits"
  echo "check_alloc: raw allocation calls in library code; use the ir hook (xf_malloc, xf_free, ...)" >&2
  exit 1
fi
echo "check_alloc: no raw allocation call in$mods"
