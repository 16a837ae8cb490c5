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
# Second, the ladder: every library module (a top-level directory, or a room
# of agent/, or tools/cli/) has a level in `ladder` below, and a module may
# include only the public headers of modules on a lower level, so the
# dependencies point one way (docs/design.md draws it). tools/, tests/ and
# bench/ sit above every module. A module that is not in the ladder is
# reported, so a new directory gets its place before it gets users.
# Each violation is printed as FILE:LINE: includes private header PATH, or
# FILE:LINE: MODULE (level N) includes MODULE2 (level M), and the script
# exits 1 when there is any (0 otherwise).
set -euo pipefail

root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
root=$(cd "$root" && pwd)

# "FILE HEADER" pairs allowed although HEADER is private:
#  - the ir suite tests the private sgemm kernel directly (packing edge
#    cases no public operator reaches one by one);
#  - the bounded check's suite tests the private table of operator patterns
#    that workers hand back (a changed or cut entry, which no honest worker
#    sends, must be dropped).
allowed=(
    "tests/test_ops_conv.c ir/sgemm_internal.h"
    "tests/test_verify_bounded.c verify/patterns_internal.h"
)
is_allowed() {
    local pair
    for pair in "${allowed[@]}"; do [ "$pair" = "$1" ] && return 0; done
    return 1
}

# The module ladder, bottom up: a module includes only lower levels.
ladder=(
    "0 ir"
    "1 onnx cluster prune rulesdb costmodel modelzoo agent/nn tools/cli"
    "2 match target"
    "3 verify enumerate agent/rewrite"
    "4 derive agent/search"
    "5 agent/rl audit"
    "6 optimize"
    "7 python pages"
)
declare -A level=()
for row in "${ladder[@]}"; do
    read -r n mods <<<"$row"
    for m in $mods; do level[$m]=$n; done
done
# The module a path belongs to: agent/ROOM, tools/cli, or its top-level
# directory; "" for the tree's root, tools/, tests/ and bench/ (above all).
module_of() {
    local p=$1
    case $p in
    agent/*/*) p=${p#agent/}; echo "agent/${p%%/*}" ;;
    tools/cli/*) echo tools/cli ;;
    tools/* | tests/* | bench/*) echo "" ;;
    */*) echo "${p%%/*}" ;;
    *) echo "" ;;
    esac
}

status=0
while IFS= read -r -d '' file; do
    rel=${file#"$root"/}
    dir=.
    [[ $rel == */* ]] && dir=${rel%/*}
    mod=$(module_of "$rel")
    if [ -n "$mod" ] && [ -z "${level[$mod]+x}" ]; then
        echo "$rel: module $mod has no place in check_includes.sh's ladder"
        status=1
        mod=
    fi
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
        if [ -n "$mod" ]; then
            tmod=$(module_of "$target")
            if [ -n "$tmod" ] && [ "$tmod" != "$mod" ] && [ -n "${level[$tmod]+x}" ] &&
                [ "${level[$tmod]}" -ge "${level[$mod]}" ]; then
                echo "$rel:$line: $mod (level ${level[$mod]}) includes $tmod (level ${level[$tmod]}): a module includes only lower levels"
                status=1
            fi
        fi
        [ "$tdir" = "$dir" ] && continue
        [ "${target##*/}" = "${tdir##*/}.h" ] && continue
        is_allowed "$rel $target" && continue
        echo "$rel:$line: includes private header $path (only $tdir/${tdir##*/}.h is public)"
        status=1
    done < <(awk '/^[ \t]*#[ \t]*include[ \t]*"/ {
                    sub(/^[^"]*"/, ""); sub(/".*$/, ""); print FNR ":" $0 }' "$file")
done < <(find "$root" \( -name 'build*' -o -name '.*' \) -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)

if [ "$status" -ne 0 ]; then
    echo "check_includes: a file includes another directory's private header or a module on its level or above (see above)" >&2
fi
exit "$status"
