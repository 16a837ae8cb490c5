#!/usr/bin/env bash
# check_includes.sh — fails when a file includes another directory's private
# header, so every module (and every room of agent/) is used only through its
# one public header. CI runs it from tools/test.sh before the build.
#
#   tools/check_includes.sh [ROOT]    # ROOT: source tree (default: this one)
#
# The rule, for every #include "PATH" in every .c and .h file under ROOT
# (build trees, named build*, and hidden directories are skipped):
#  - PATH is resolved as the compiler does for a quoted include: first next
#    to the including file, then from ROOT (the source root is on the include
#    path); a PATH found in neither (a generated file, a system header in
#    quotes) is not checked;
#  - a header in the including file's own directory is always allowed: that
#    is where a module's or a room's private headers are used;
#  - a header in another directory D is allowed only when it is D's public
#    header: the one named after D, D/<basename of D>.h (ir/ir.h,
#    costmodel/costmodel.h, agent/rewrite/rewrite.h, ...). The rule names
#    no module, so a new one (modelzoo/, tools/cli/) is covered as soon
#    as it exists.
# <angle> includes are system and library headers: not checked. Shared
# helpers of tests/ and bench/ (tests/testutil.h, bench/agent_runner.h) sit
# next to their users and need no exception. The only exceptions are the
# pairs in `allowed` below, each with its reason.
# Each violation is printed as FILE:LINE: includes private header PATH, and
# the script exits 1 when there is any (0 otherwise).
set -euo pipefail

root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
root=$(cd "$root" && pwd)

# "FILE HEADER" pairs allowed although HEADER is private:
#  - the ir suite tests the private sgemm kernel directly (packing edge
#    cases no public operator reaches one by one).
allowed=(
    "tests/test_ops_conv.c ir/sgemm.h"
)
is_allowed() {
    local pair
    for pair in "${allowed[@]}"; do [ "$pair" = "$1" ] && return 0; done
    return 1
}

status=0
while IFS= read -r -d '' file; do
    rel=${file#"$root"/}
    dir=.
    [[ $rel == */* ]] && dir=${rel%/*}
    # line number and quoted path of each #include "..." (spaces allowed after #)
    while IFS=: read -r line path; do
        [ -n "$path" ] || continue
        if [ -f "$root/$dir/$path" ]; then
            target="$dir/$path"
        elif [ -f "$root/$path" ]; then
            target=$path
        else
            continue
        fi
        case "/$target/" in
        */./* | */../*) target=$(realpath -m --relative-to="$root" "$root/$target") ;;
        esac
        tdir=.
        [[ $target == */* ]] && tdir=${target%/*}
        [ "$tdir" = "$dir" ] && continue
        [ "${target##*/}" = "${tdir##*/}.h" ] && continue
        is_allowed "$rel $target" && continue
        echo "$rel:$line: includes private header $path (only $tdir/${tdir##*/}.h is public)"
        status=1
    done < <(awk '/^[ \t]*#[ \t]*include[ \t]*"/ {
                    sub(/^[^"]*"/, ""); sub(/".*$/, ""); print FNR ":" $0 }' "$file")
done < <(find "$root" \( -name 'build*' -o -name '.*' \) -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)

if [ "$status" -ne 0 ]; then
    echo "check_includes: a file includes another directory's private header (see above)" >&2
fi
exit "$status"
