#!/usr/bin/env bash
# quickstart.sh — installs what is missing, builds rlflow, and runs the main
# job end to end on models it generates itself (no download needed):
#   modelzoo writes a BERT encoder and a ResNet-18 with random weights,
#   xfonnx prints each model's operator summary, then exports it again and
#   checks that the exported model has the same canonical graph and computes
#   the same outputs in the reference interpreter; xfergen writes the
#   candidate rules of the default vocabulary (TASO's operators with the
#   layout and indexing ones: reshape views, slices; 3 operators) into an
#   SQLite rules database, xferverify proves them with Z3 (a few minutes on
#   2 cores),
#   xferdb summarises them, xfcost times the BERT model, and rlflow-agent
#   optimises it with the proved rules (TASO search), checks the optimised
#   model numerically, times its candidates against the input in ONNX Runtime
#   (installed by setup.sh; without it the cost model decides) and writes
#   the fastest, or the input when none is faster beyond the noise.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)"

out=build/quickstart
mkdir -p "$out"
bin=build/tools

echo "== modelzoo: writing models =="
"$bin/modelzoo" bert --layers 2 --hidden 128 --seq 32 -o "$out/bert.onnx"
"$bin/modelzoo" resnet18 -o "$out/resnet18.onnx"

for m in bert resnet18; do
  echo
  echo "== xfonnx info $m =="
  "$bin/xfonnx" info "$out/$m.onnx"
  echo
  echo "== xfonnx roundtrip $m =="
  "$bin/xfonnx" roundtrip "$out/$m.onnx" -o "$out/$m.roundtrip.onnx"
done

echo
echo "== xfergen: candidate rules over the default vocabulary, up to 3 operators =="
rm -f "$out/rules.db" "$out/rules.db-wal" "$out/rules.db-shm"
"$bin/xfergen" --max-ops 3 -o "$out/rules.db" --quiet
"$bin/xferdb" stats "$out/rules.db"
"$bin/xferdb" list "$out/rules.db" --ops matmul,concat --max-size 3 --limit 5

echo
echo "== xferverify: proving the candidate rules with Z3 =="
"$bin/xferverify" -j "$(nproc 2>/dev/null || echo 2)" "$out/rules.db" 2>&1 | tail -4
"$bin/xferdb" stats "$out/rules.db" | head -12

echo
echo "== xfcost: per-operator costs and end-to-end latency of the BERT model (oneDNN) =="
"$bin/xfcost" "$out/bert.onnx" --backend onednn --cache "$out/costs.db"
echo
echo "== rlflow-agent: optimising the BERT model with the proved rules (TASO search) =="
"$bin/rlflow-agent" --rules "$out/rules.db" "$out/bert.onnx" -o "$out/bert.opt.onnx" \
  --search taso --budget 200 --cache "$out/costs.db" -q --target ort --threads 1
echo
echo "quickstart: done (models, rules.db, costs.db and bert.opt.onnx in $out)"
