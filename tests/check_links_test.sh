#!/usr/bin/env bash
# check_links_test.sh — CTest case for tools/check_links.sh: the source tree
# passes; a copy of its pages with a link to a missing page, a link to a
# missing section and a source comment naming a missing page fails, naming
# each file and line; the same copy with the links mended passes.
#   tests/check_links_test.sh SOURCE_ROOT
set -euo pipefail
src=$(cd "$1" && pwd)
check="$src/tools/check_links.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

"$check" "$src" > "$tmp/clean.out" 2>&1 || { cat "$tmp/clean.out"; fail "clean tree rejected"; }

copy="$tmp/tree"
mkdir -p "$copy/ir"
cp -r "$src/README.md" "$src/docs" "$copy/"
page=docs/design.md
n=$(($(wc -l < "$copy/$page") + 1))
{ echo "See [the gone page](gone.md)."
  echo "See [a gone section](verify.md#no-such-section)."
  echo 'A link in code is no link: `[x](nowhere.md)`.'; } >> "$copy/$page"
missing=docs/gone   # written without its suffix, so this file names no page
echo "/* see $missing.md */" > "$copy/ir/planted.c"
if "$check" "$copy" > "$tmp/planted.out" 2>&1; then
    fail "planted broken links not reported"
fi
grep -qx "$page:$n: broken link gone.md (no such file)" "$tmp/planted.out" ||
    { cat "$tmp/planted.out"; fail "missing page not reported at $page:$n"; }
grep -qx "$page:$((n + 1)): broken link verify.md#no-such-section (no such heading)" "$tmp/planted.out" ||
    { cat "$tmp/planted.out"; fail "missing section not reported at $page:$((n + 1))"; }
grep -qx "ir/planted.c:1: broken link $missing.md (no such page)" "$tmp/planted.out" ||
    { cat "$tmp/planted.out"; fail "missing page named in a source not reported"; }
[ "$(grep -c 'broken link' "$tmp/planted.out")" -eq 3 ] ||
    { cat "$tmp/planted.out"; fail "more than the three planted links reported"; }

# Mended: the page exists, the section is a real heading, the comment names a page.
sed -i 's|(gone.md)|(verify.md)|; s|verify.md#no-such-section|verify.md#bounded-element-wise-check|' "$copy/$page"
echo '/* see docs/verify.md */' > "$copy/ir/planted.c"
"$check" "$copy" > "$tmp/mended.out" 2>&1 || { cat "$tmp/mended.out"; fail "mended links rejected"; }
echo "check_links: clean tree passes, planted links to a missing page, section and source mention caught"
