#!/bin/bash
# verify_kills.sh — a verdict of xferverify is a function of the database and
# the options, not of where a run was killed: a run killed N times with
# SIGKILL (its whole process group: the workers too) and run again to the end
# stores the same statuses and validity domains as a clean run.
#
#   tools/verify_kills.sh [--db DB | --max-ops N] [--kills N] [-j N] [--timeout T]
#                         [--bin DIR] [--dir DIR]
#
# DB (default: `xfergen --max-ops N`, default vocabulary, N default 3) is
# copied twice. xferverify runs to the end on the first copy (the clean run)
# and its wall time W is measured; on the second it is started and killed
# after W/(kills+1) seconds, kills times, each start resuming the last, then
# run to the end. `xferdb diff` compares the two: rules whose status differs
# ("!") and rules of one status whose validity domain differs ("~").
# --timeout (default 120s) is long so that Z3's resource limit, not the
# clock, ends every query (a verdict the clock decides depends on the load).
# Prints the counts of both databases, the times and the differences; exit
# status 0 the same, 1 different, 2 trouble. The CTest suite runs it on a
# 2-operator database (tests/CMakeLists.txt); docs/derive.md has the figures
# of the whole 3-operator one.
set -u
bin="$(cd "$(dirname "$0")/.." && pwd)/build/tools"
db= max_ops=3 kills=10 jobs=2 timeout=120s dir=
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db="$2"; shift 2 ;;
    --max-ops) max_ops="$2"; shift 2 ;;
    --kills) kills="$2"; shift 2 ;;
    -j) jobs="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "verify_kills.sh: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
case "$kills" in ''|*[!0-9]*) echo "verify_kills.sh: --kills '$kills' is not a count" >&2; exit 2 ;; esac
for t in xferverify xferdb xfergen; do
  [ -x "$bin/$t" ] || { echo "verify_kills.sh: $bin/$t is missing (build first, or --bin DIR)" >&2; exit 2; }
done
own_dir=0
if [ -z "$dir" ]; then dir=$(mktemp -d); own_dir=1; fi
mkdir -p "$dir" || exit 2
cleanup() { [ $own_dir = 1 ] && rm -rf "$dir"; }
trap cleanup EXIT
if [ -z "$db" ]; then
  db="$dir/rules.db"
  "$bin/xfergen" --max-ops "$max_ops" -o "$db" >/dev/null 2>"$dir/xfergen.err" ||
    { echo "verify_kills.sh: xfergen failed:" >&2; cat "$dir/xfergen.err" >&2; exit 2; }
fi
cp "$db" "$dir/clean.db" && cp "$db" "$dir/killed.db" || exit 2
args=(-j "$jobs" --timeout "$timeout")

counts() { # the status counts of a database on one line
  "$bin/xferdb" stats "$1" 2>/dev/null | sed -n '/^by status:/,/^by size/p' | grep -v '^by' |
    awk '{printf "%s %s  ", $1, $2}'
}

t0=$(date +%s.%N)
"$bin/xferverify" "$dir/clean.db" "${args[@]}" >/dev/null 2>"$dir/clean.err"
rc=$?
t1=$(date +%s.%N)
[ $rc -le 1 ] || { echo "verify_kills.sh: the clean run failed ($rc):" >&2; tail -3 "$dir/clean.err" >&2; exit 2; }
wall=$(echo "$t1 - $t0" | bc)
step=$(echo "scale=2; $wall / ($kills + 1)" | bc)
echo "clean run: ${wall%.*} s wall ($(tail -1 "$dir/clean.err" | cut -c1-100))"

for i in $(seq 1 "$kills"); do
  setsid "$bin/xferverify" "$dir/killed.db" "${args[@]}" >/dev/null 2>"$dir/killed.$i.err" &
  pid=$!
  sleep "$step"
  kill -KILL -- "-$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  echo "kill $i after ${step} s: $(grep -c . "$dir/killed.$i.err") progress lines"
done
"$bin/xferverify" "$dir/killed.db" "${args[@]}" >/dev/null 2>"$dir/killed.last.err"
rc=$?
[ $rc -le 1 ] || { echo "verify_kills.sh: the last run failed ($rc):" >&2; tail -3 "$dir/killed.last.err" >&2; exit 2; }
t2=$(date +%s.%N)
echo "killed $kills times and run again: $(echo "$t2 - $t1" | bc | cut -d. -f1) s wall in all"

"$bin/xferdb" diff "$dir/clean.db" "$dir/killed.db" >"$dir/diff.txt" 2>&1
drc=$?
status=$(grep -c '^!' "$dir/diff.txt")
domains=$(grep -c '^~' "$dir/diff.txt")
echo "clean:  $(counts "$dir/clean.db")"
echo "killed: $(counts "$dir/killed.db")"
echo "rules with another status: $status; with another validity domain: $domains"
if [ $drc -ne 0 ] || [ "$status" -ne 0 ] || [ "$domains" -ne 0 ]; then
  grep -E '^[!~<>]' "$dir/diff.txt" | head -20
  echo "verify_kills.sh: the killed run ends elsewhere than the clean run"
  exit 1
fi
echo "verify_kills.sh: the same statuses and domains as a clean run"
exit 0
