#!/usr/bin/env bash
# check_names_test.sh — CTest case for tools/check_names.sh: the libraries of
# this build pass; a copy of prune's library with three planted functions
# fails on the two that are neither public nor prefixed pr_ (one of them
# xf_-prefixed but in no public header) and passes the prefixed one.
#   tests/check_names_test.sh SOURCE_ROOT BUILD_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
check="$src/tools/check_names.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

"$check" "$build" "$src" > "$tmp/clean.out" 2>&1 || { cat "$tmp/clean.out"; fail "this build rejected"; }

mkdir -p "$tmp/build/prune"
cp "$build/prune/libxf_prune.a" "$tmp/build/prune/"
printf '%s\n' 'int prune_helper(void) { return 1; }' 'int xf_prune_secret(void) { return 2; }' \
    'int pr_shared(void) { return 3; }' > "$tmp/planted.c"
cc -c -o "$tmp/planted.o" "$tmp/planted.c"
ar rc "$tmp/build/prune/libxf_prune.a" "$tmp/planted.o"
if "$check" "$tmp/build" "$src" > "$tmp/planted.out" 2>&1; then
    fail "planted names not reported"
fi
for s in prune_helper xf_prune_secret; do
    grep -q "^prune/libxf_prune.a: $s (module prune" "$tmp/planted.out" ||
        { cat "$tmp/planted.out"; fail "$s not reported"; }
done
! grep -q "pr_shared" "$tmp/planted.out" || { cat "$tmp/planted.out"; fail "pr_shared reported"; }
[ "$(grep -c '^prune/libxf_prune.a: ' "$tmp/planted.out")" -eq 2 ] ||
    { cat "$tmp/planted.out"; fail "more than the planted names reported"; }
echo "check_names: this build passes, planted names caught"
