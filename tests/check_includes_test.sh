#!/usr/bin/env bash
# check_includes_test.sh — CTest case for tools/check_includes.sh: the clean
# source tree passes; a copy of it with one planted include of another
# directory's private header fails, naming the file and line; a copy with
# an include of that directory's public header instead passes; a module that
# includes a module on its level or above (the ladder) fails.
#   tests/check_includes_test.sh SOURCE_ROOT
set -euo pipefail
src=$(cd "$1" && pwd)
check="$src/tools/check_includes.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

"$check" "$src" > "$tmp/clean.out" 2>&1 || { cat "$tmp/clean.out"; fail "clean tree rejected"; }

# A copy of the sources (no build trees, no .git) with one planted include.
copy="$tmp/tree"
mkdir "$copy"
(cd "$src" && find . \( -name 'build*' -o -name '.?*' \) -prune -o -type f \
     \( -name '*.c' -o -name '*.h' \) -print0 | tar --null -T - -cf -) | tar -C "$copy" -xf -
victim=tests/test_agent_env.c
line=$(($(wc -l < "$copy/$victim") + 1))
echo '#include "agent/search/env_internal.h"' >> "$copy/$victim"
if "$check" "$copy" > "$tmp/planted.out" 2>&1; then
    fail "planted private include not reported"
fi
grep -q "^$victim:$line: includes private header agent/search/env_internal.h" "$tmp/planted.out" ||
    { cat "$tmp/planted.out"; fail "report does not name $victim:$line"; }
[ "$(grep -c 'includes private header' "$tmp/planted.out")" -eq 1 ] ||
    { cat "$tmp/planted.out"; fail "more than the planted violation reported"; }

# The same include through the room's public header is fine.
sed -i '$d' "$copy/$victim"
echo '#include "agent/search/search.h"' >> "$copy/$victim"
"$check" "$copy" > "$tmp/public.out" 2>&1 || { cat "$tmp/public.out"; fail "public header rejected"; }
sed -i '$d' "$copy/$victim"

# The ladder: the offline deriver may not include the online agent's search,
# nor the rewriter (match/) the deriver above it.
for pair in "derive/chain.c agent/search/search.h derive agent/search" \
            "match/apply.c derive/derive.h match derive"; do
    read -r up hdr mod tmod <<<"$pair"
    line=$(($(wc -l < "$copy/$up") + 1))
    echo "#include \"$hdr\"" >> "$copy/$up"
    if "$check" "$copy" > "$tmp/ladder.out" 2>&1; then
        fail "$mod including $tmod not reported"
    fi
    grep -q "^$up:$line: $mod (level [0-9]) includes $tmod (level [0-9])" "$tmp/ladder.out" ||
        { cat "$tmp/ladder.out"; fail "report does not name $up:$line"; }
    sed -i '$d' "$copy/$up"
done
echo "check_includes: clean tree passes, planted private include and ladder violations caught"
