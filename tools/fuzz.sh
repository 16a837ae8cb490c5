#!/usr/bin/env bash
# fuzz.sh — builds the libFuzzer harness for the ONNX importer with clang,
# ASan and UBSan, seeds a corpus with real models, and fuzzes for a while.
#   tools/fuzz.sh [SECONDS]     (default 600)
# Crashing inputs are left in build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
secs=${1:-600}
CC=clang cmake -S . -B build-fuzz -DXF_FUZZ=ON -DXF_SANITIZE=ON -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target fuzz_import
corpus=build-fuzz/corpus
mkdir -p "$corpus" build-fuzz/crashes
# Seeds: small backend-test models (a few KB each) and the modelzoo's smallest.
if [ -d /usr/share/libonnx-testdata/data/node ]; then
  # (head closes the pipe early: find's SIGPIPE is expected, not a failure)
  { find /usr/share/libonnx-testdata/data/node -name model.onnx -size -8k | head -400 |
    while read -r f; do cp "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-16)"; done; } || true
fi
ASAN_OPTIONS=detect_leaks=1 build-fuzz/tests/fuzz/fuzz_import "$corpus" \
  -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix=build-fuzz/crashes/ -print_final_stats=1
