#!/usr/bin/env bash
# fuzz.sh — builds a libFuzzer harness with clang, ASan and UBSan, seeds its
# corpus with real inputs, and fuzzes for a while.
#   tools/fuzz.sh [SECONDS] [TARGET]     (default 600 seconds, target import)
# Targets (tests/fuzz/):
#   import         the ONNX importer; seeds: small backend-test models
#   rulesdb_graph  the rules-database graph decoder; seeds: the graph blobs of
#                  a rules database made by xfergen --vocab taso --max-ops 2
#   nested         the importer on deeply nested models, structure-aware: an
#                  input is (nesting kind, depth, innermost graph bytes) and
#                  the harness builds the model; seeds: If branches, Loop
#                  bodies and sequence types 1 to 5,000 deep
# Crashing inputs are left in build-fuzz/crashes/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
secs=${1:-600}
target=${2:-import}
case "$target" in
  import | rulesdb_graph) fuzz=$target ;;
  nested) fuzz=import_nested ;;
  *) echo "fuzz.sh: unknown target '$target' (import, rulesdb_graph or nested)" >&2; exit 2 ;;
esac
CC=clang cmake -S . -B build-fuzz -DXF_FUZZ=ON -DXF_SANITIZE=ON -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "fuzz_$fuzz"
corpus=build-fuzz/corpus/$target
crashes=build-fuzz/crashes/$target
mkdir -p "$corpus" "$crashes"
if [ "$target" = import ]; then
  # Seeds: small backend-test models (a few KB each) and the modelzoo's smallest.
  if [ -d /usr/share/libonnx-testdata/data/node ]; then
    # (head closes the pipe early: find's SIGPIPE is expected, not a failure)
    { find /usr/share/libonnx-testdata/data/node -name model.onnx -size -8k | head -400 |
      while read -r f; do cp "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-16)"; done; } || true
  fi
  max_len=65536
elif [ "$target" = nested ]; then
  # Seeds: kind (0 then, 1 else, 2 Loop body, 3 sequence type), depth (two
  # bytes, little-endian), then the innermost graph: a name, a node, nothing.
  for kind in 00 01 02 03; do
    for depth in 0100 0a00 6400 c700 c800 c900 8813; do
      for inner in "" 12016e 0a0e0a01611201621a0152220452656c75; do
        echo "$kind$depth$inner" | xxd -r -p > "$corpus/k$kind-d$depth-$inner"
      done
    done
  done
  max_len=4096
else
  # Seeds: every graph blob of a small real rules database, one file each.
  cmake --build build-fuzz -j "$(nproc)" --target xfergen
  db=build-fuzz/seed-rules.db
  rm -f "$db" "$db-wal" "$db-shm"
  ASAN_OPTIONS=detect_leaks=0 build-fuzz/tools/xfergen --vocab taso --max-ops 2 -o "$db" --quiet
  sqlite3 -readonly "$db" "SELECT id, hex(data) FROM graphs" |
    while IFS='|' read -r id hex; do echo "$hex" | xxd -r -p > "$corpus/graph$id"; done
  max_len=4096
fi
ASAN_OPTIONS=detect_leaks=1 "build-fuzz/tests/fuzz/fuzz_$fuzz" "$corpus" \
  -max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$crashes/" -print_final_stats=1
