#!/usr/bin/env bash
# check_links.sh — fails when a page of the documentation points at a page or
# a section that does not exist, so moving text between docs/ pages (and into
# docs/log/) cannot leave a dangling reference. tools/test.sh runs it before
# the build; the check_links test proves it fails on planted broken links.
#
#   tools/check_links.sh [ROOT]    # ROOT: source tree (default: this one)
#
# What is checked:
#  - every Markdown link [text](TARGET) in README.md and docs/**/*.md whose
#    TARGET is not a URL (http:, https:, mailto:): the path, relative to the
#    page, must exist (a file or a directory), and a #anchor must be the slug
#    of a heading of the page it names (GitHub's rule: lower case, spaces to
#    hyphens, punctuation other than - and _ dropped);
#  - every mention of a page as docs/NAME.md (with or without a directory
#    under docs/) in those pages and in the .c, .h, .sh and CMake files of the
#    tree: the page must exist, relative to ROOT.
# Build trees (build*) and hidden directories are skipped. Each broken link is
# printed as FILE:LINE: broken link TARGET (why), and the script exits 1 when
# there is any (0 otherwise).
set -euo pipefail

root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
root=$(cd "$root" && pwd)

# The heading slugs of Markdown file $1, one a line.
slugs() {
    grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//; s/ +#*$//' |
        tr '[:upper:]' '[:lower:]' |
        sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}

status=0
report() { echo "$1: broken link $2 ($3)"; status=1; }

pages=()
[ -f "$root/README.md" ] && pages+=("$root/README.md")
if [ -d "$root/docs" ]; then
    while IFS= read -r -d '' f; do pages+=("$f"); done \
        < <(find "$root/docs" -name '.?*' -prune -o -type f -name '*.md' -print0 | sort -z)
fi

for page in "${pages[@]}"; do
    rel=${page#"$root"/}
    dir=$(dirname "$page")
    # LINE:TARGET of each [text](TARGET); fenced code and code spans are left
    # out first (line numbers kept).
    while IFS=: read -r line target; do
        [ -n "$target" ] || continue
        case "$target" in http:* | https:* | mailto:*) continue ;; esac
        path=${target%%#*}
        anchor=
        [[ $target == *#* ]] && anchor=${target#*#}
        file=$page
        if [ -n "$path" ]; then
            file="$dir/$path"
            if [ ! -e "$file" ]; then
                report "$rel:$line" "$target" "no such file"
                continue
            fi
        fi
        if [ -n "$anchor" ]; then
            if [ -d "$file" ] || ! slugs "$file" | grep -qxF -- "$anchor"; then
                report "$rel:$line" "$target" "no such heading"
            fi
        fi
    done < <(awk '/^ *```/ { fence = !fence; print ""; next } { print fence ? "" : $0 }' "$page" |
             sed -E 's/`[^`]*`//g' |
             grep -noE '\]\([^)( ,]+\)' | sed -E 's/^([0-9]+):\]\((.*)\)$/\1:\2/')
done

# docs/NAME.md mentioned by name, in the pages and in the sources.
while IFS=: read -r file line mention; do
    [ -e "$root/$mention" ] || report "${file#"$root"/}:$line" "$mention" "no such page"
done < <(find "$root" \( -name 'build*' -o -name '.?*' \) -prune -o -type f \
             \( -name '*.md' -o -name '*.c' -o -name '*.h' -o -name '*.sh' \
                -o -name 'CMakeLists.txt' \) -print0 |
         xargs -0 grep -noE '(^|[^a-zA-Z0-9_./-])docs/[a-z0-9_/-]+\.md' /dev/null |
         sed -E 's/^([^:]+):([0-9]+):.*(docs\/[a-zA-Z0-9_/-]+\.md)$/\1:\2:\3/')

exit $status
