#!/usr/bin/env bash
# pipeline4.sh — issue 28's acceptance figures for the rule pipeline at four
# operators, in one command: `xfergen --max-ops N` (wall, CPU, peak RSS,
# database size, rules by size), then `xferverify` on a copy of it (wall, CPU
# of it and its workers, peak RSS, rules by status, the unknown share of what
# reached the solver), and the rules of issue 28's families (xferdb families)
# against a 3-operator database: how many the larger database adds per family
# and status. Prints the load average before and after each stage: figures
# taken under load say so, and CPU (user + system) is the figure to compare.
#
#   bench/pipeline4.sh [--max-ops N] [-j N] [--out DIR] [--db DB] [--base DB3]
#                      [--verify-max-s S] [--no-verify]
#
#   --max-ops N       operators of the generated rules (default 4)
#   -j N              threads of xfergen, workers of xferverify (default 2)
#   --out DIR         where the databases and logs go (default /tmp/rlflow-pipeline4)
#   --db DB           verify (a copy of) DB instead of generating one; its
#                     generation figures are not printed
#   --base DB3        the verified 3-operator database to compare families with
#                     (default: generate and verify one, `xfergen --max-ops 3`)
#   --verify-max-s S  stop xferverify after S seconds (SIGTERM: it stores what it
#                     decided and exits) and print the rate and a projection
#   --no-verify       generation figures only
#
# Stopped by a signal (Ctrl-C, SIGTERM to it or to its process group), it prints
# the figures of the stage under way (wall by its own clock) and exits 1.
#
# Needs build/tools (xfergen, xferverify, xferdb) and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/tools
ops=4 jobs=2 out=/tmp/rlflow-pipeline4 db="" base="" vmax=0 verify=1
usage() {
  sed -n '11,12p' "$0" | sed 's/^# *//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --max-ops) ops="${2:?}"; shift 2 ;;
    -j) jobs="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    --db) db="${2:?}"; shift 2 ;;
    --base) base="${2:?}"; shift 2 ;;
    --verify-max-s) vmax="${2:?}"; shift 2 ;;
    --no-verify) verify=0; shift ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "pipeline4.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
for t in xfergen xferverify xferdb; do
  [ -x "$bin/$t" ] || { echo "pipeline4.sh: $bin/$t is missing (build first)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "pipeline4.sh: /usr/bin/time is missing (Debian's time)" >&2; exit 2; }
mkdir -p "$out"
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }

# A signal (Ctrl-C, SIGTERM to the script or its process group) stops the
# stage under way; its figures are still printed, then the script exits.
stopped=0
trap 'stopped=1' INT TERM
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }

# time_figures LOG WALL: wall, CPU and peak RSS from /usr/bin/time -v's report
# (its CPU includes the children a process waited for: xferverify's workers).
# The wall is the script's own clock (WALL seconds): /usr/bin/time writes no
# report when it is stopped with the command (a signal to the process group),
# and then CPU and peak RSS are not known.
time_figures() {
  awk -F': ' -v w="$2" '
    /Command terminated by signal/ { sig = $0; sub(/.*signal /, "", sig) }
    /Elapsed \(wall clock\)/ { have = 1 }
    /User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident set size/ { m = $2 }
    END { printf "wall %.1f s (%d min %02d s), ", w, int(w / 60), int(w) % 60
      if (have) printf "CPU %.1f s (user %.1f + system %.1f), peak RSS %d KB (%.2f GiB)", u + s, u, s, m, m / 1048576
      else printf "CPU and peak RSS not known (/usr/bin/time was stopped too)"
      if (sig != "") printf "; killed by signal %s", sig
      printf "\n" }' "$1"
}

# status_counts DB: "proved N refuted N ..." from xferdb stats.
status_counts() {
  "$bin/xferdb" stats "$1" | awk '/^by status:/ { on = 1; next } /^by / { on = 0 }
    on && NF == 2 { printf "%s %s ", $1, $2 } END { print "" }'
}

# by_size DB: rules per size from xferdb stats.
by_size() {
  "$bin/xferdb" stats "$1" | awk '/^by size/ { on = 1; next } /^by / { on = 0 }
    on && NF == 2 { printf "size %s: %s  ", $1, $2 } END { print "" }'
}

# verdicts DB: the statuses and the unknown share of what reached the solver.
verdicts() {
  status_counts "$1" | awk '{ for (i = 1; i < NF; i += 2) c[$i] = $(i + 1) }
    END { s = c["proved"] + c["refuted"] + c["unknown"]; d = s + c["derived"]
      printf "  proved %d, derived %d, refuted %d, unknown %d, candidate %d, pruned %d\n",
             c["proved"], c["derived"], c["refuted"], c["unknown"], c["candidate"], c["pruned"]
      if (s > 0) printf "  unknown share: %.2f%% of the %d rules that reached the solver (goal <= 5%%), %.2f%% of all %d decided\n",
                        100 * c["unknown"] / s, s, 100 * c["unknown"] / d, d }'
}

gen() { # gen OPS DB LOG
  rm -f "$2" "$2-wal" "$2-shm" "$2-journal"
  echo "== xfergen --max-ops $1 -j $jobs ($(load))"
  local t0 rc=0
  t0=$(now)
  /usr/bin/time -v "$bin/xfergen" --max-ops "$1" -o "$2" -j "$jobs" > "$3.out" 2> "$3" || rc=$?
  grep -E "^(graphs enumerated|fingerprints|candidates|rules kept) " "$3.out" | sed 's/^/  /' || true
  echo "  $(time_figures "$3" "$(since "$t0")") (goal at 4 operators: <= 10 min, <= 4 GB on 2 cores)"
  local size
  size=$(stat -c %s "$2" 2>/dev/null || echo 0)
  echo "  database $size bytes ($(( size / 1000000 )) MB); $(by_size "$2")"
  echo "  ($(load) at the end)"
  if [ "$rc" -ne 0 ] || [ "$stopped" -eq 1 ]; then
    echo "xfergen stopped (exit $rc)"; exit 1
  fi
}

ver() { # ver DB LOG [MAX_S]
  echo "== xferverify -j $jobs $(basename "$1") ($(load))"
  local rc=0 t0 wall left0
  left0=$(status_counts "$1" | awk '{ for (i = 1; i < NF; i += 2) if ($i == "candidate") print $(i + 1) }')
  t0=$(now)
  if [ "${3:-0}" -gt 0 ]; then
    /usr/bin/time -v timeout -s TERM "$3" "$bin/xferverify" "$1" -j "$jobs" > "$2.out" 2> "$2" || rc=$?
  else
    /usr/bin/time -v "$bin/xferverify" "$1" -j "$jobs" > "$2.out" 2> "$2" || rc=$?
  fi
  wall=$(since "$t0")
  grep -E "^size [0-9]+: [0-9]+ candidates" "$2" | sed 's/^/  /' || true
  grep -E "^xferverify: " "$2" | sed 's/^/  /' || true
  echo "  $(time_figures "$2" "$wall")"
  verdicts "$1"
  if [ "$rc" -ne 0 ]; then
    local left total
    left=$(status_counts "$1" | awk '{ for (i = 1; i < NF; i += 2) if ($i == "candidate") print $(i + 1) }')
    total=$("$bin/xferdb" stats "$1" | awk '/rules over/ { print $2 }')
    echo "  stopped (exit $rc) with ${left:-?} of $total candidates left; the last progress lines:"
    grep -E "(derive|solver|unknowns) \[" "$2" | tail -2 | sed 's/^/    /' || true
    awk -v left="${left:-0}" -v left0="${left0:-0}" -v w="$wall" '
      END { done = left0 - left; if (done > 0 && left > 0)
        printf "  rate %.1f rules/s over this run (%d candidates decided, derived or pruned); at that rate the rest takes about %.0f min more (a linear projection: size 4 costs more per rule than the smaller sizes)\n",
               done / w, done, left / (done / w) / 60 }' /dev/null
  fi
  echo "  ($(load) at the end)"
  if [ "$stopped" -eq 1 ]; then
    echo "stopped by a signal ($(load))"; exit 1
  fi
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(load)"
if [ -z "$db" ]; then
  db="$out/g$ops.db"
  gen "$ops" "$db" "$out/xfergen$ops.log"
else
  echo "== $db (given; generation not timed): $(by_size "$db")"
fi
[ "$verify" -eq 1 ] || exit 0

vdb="$out/v$ops.db"
rm -f "$vdb" "$vdb-wal" "$vdb-shm" "$vdb-journal"
cp "$db" "$vdb"
ver "$vdb" "$out/xferverify$ops.log" "$vmax"

if [ -z "$base" ]; then
  base="$out/v3.db"
  gen 3 "$base" "$out/xfergen3.log"
  ver "$base" "$out/xferverify3.log"
fi
echo "== issue 28's families: $(basename "$vdb") against $(basename "$base")"
"$bin/xferdb" families "$vdb" > "$out/families$ops.txt"
"$bin/xferdb" families "$base" > "$out/families3.txt"
awk -v ops="$ops" 'FNR == 1 { f++ } FNR <= 2 { next }
  { o = ($1 == "any") ? 3 : 1; name = (o == 3) ? "any new family" : $1 }
  f == 1 { p3[name] = $(o + 1); d3[name] = $(o + 2) }
  f == 2 { order[++n] = name; p4[name] = $(o + 1); d4[name] = $(o + 2); u4[name] = $(o + 3)
           r4[name] = $(o + 4); c4[name] = $(o + 5) }
  END {
    printf "  %-22s %8s %7s %7s %7s %9s   %s\n", "family (" ops " operators)", "proved", "derived",
           "unknown", "refuted", "candidate", "new against 3: proved+derived (proved, derived)"
    for (i = 1; i <= n; i++) { k = order[i]
      printf "  %-22s %8d %7d %7d %7d %9d   %+8d (%+d, %+d)\n", k, p4[k], d4[k], u4[k], r4[k], c4[k],
             p4[k] + d4[k] - p3[k] - d3[k], p4[k] - p3[k], d4[k] - d3[k] } }' \
  "$out/families3.txt" "$out/families$ops.txt"
echo "  (a rule can be in several families; the last row counts it once; the first proved and derived"
echo "   rule of each family: $out/families$ops.txt, to read with xferdb show and xferdb explain)"
echo "done ($(load))"
