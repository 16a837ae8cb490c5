#!/usr/bin/env bash
# dtypes.sh — issue 33's acceptance figures for models of other dtypes and
# after ONNX Runtime's own optimiser, from the shared models:
#   bert_small in float16 and vit_tiny in QDQ int8 (tests/models/
#   make_dtype_models.py), and bert_small and vit_tiny after ONNX Runtime's
#   offline optimisation (xfonnx ort-optimize, extended: com.microsoft
#   operators). Each is round-tripped (xfonnx roundtrip), optimised
#   (rlflow-agent --rules RULES --search SEARCH), compared with its input in
#   ONNX Runtime (xfonnx compare) and timed against it (xfonnx time
#   --threads 1); the ORT-optimised ones are also timed against the
#   original float32 model. Prints the load average first: timings taken
#   under load say so.
#
#   bench/dtypes.sh RULES.db [OUTDIR] [SEARCH]   (default OUTDIR /tmp/rlflow-dtypes, SEARCH taso)
#
# Needs build/tools, /usr/bin/python3 with onnx and numpy, ONNX Runtime
# (tools/setup.sh) and ../shared/models; exits 77 (skipped) without them.
set -euo pipefail
cd "$(dirname "$0")/.."
rules="${1:?usage: bench/dtypes.sh RULES.db [OUTDIR] [SEARCH]}"
out="${2:-/tmp/rlflow-dtypes}"
search="${3:-taso}"
bin=build/tools
models=../shared/models
make=tests/models/make_dtype_models.py
if [ ! -d "$models" ]; then echo "SKIP: $models is absent"; exit 77; fi
if ! /usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 has no onnx or numpy module"; exit 77
fi
mkdir -p "$out"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$make" fp16 "$models/bert_small/model.onnx" "$out/bert_small.fp16.onnx"
/usr/bin/python3 "$make" qdq "$models/vit_tiny/model.onnx" "$out/vit_tiny.qdq.onnx"
"$bin/xfonnx" ort-optimize "$models/bert_small/model.onnx" -o "$out/bert_small.ort.onnx" --threads 1
"$bin/xfonnx" ort-optimize "$models/vit_tiny/model.onnx" -o "$out/vit_tiny.ort.onnx" --threads 1
for m in bert_small.fp16 vit_tiny.qdq bert_small.ort vit_tiny.ort; do
  in="$out/$m.onnx"
  echo "== $m"
  "$bin/xfonnx" roundtrip "$in" -o "$out/$m.rt.onnx" | grep -E "round trip|numerical check|max abs err"
  /usr/bin/time -f "rlflow-agent: %e s wall, %M KiB peak RSS" \
    "$bin/rlflow-agent" --rules "$rules" "$in" -o "$out/$m.opt.onnx" --search "$search" \
    --no-latency -q 2>&1 | grep -E "^(model|result|cost|rules applied|max output err|made by|written|resources):|rlflow-agent:" || true
  "$bin/xfonnx" compare "$in" "$out/$m.opt.onnx" --threads 1 | tail -1
  "$bin/xfonnx" time "$in" "$out/$m.opt.onnx" --threads 1 | tail -4
done
echo "== after ONNX Runtime against the float32 original (ORT at level all on both)"
"$bin/xfonnx" time "$models/bert_small/model.onnx" "$out/bert_small.ort.onnx" "$out/bert_small.ort.opt.onnx" --threads 1 | tail -5
"$bin/xfonnx" time "$models/vit_tiny/model.onnx" "$out/vit_tiny.ort.onnx" "$out/vit_tiny.ort.opt.onnx" --threads 1 | tail -5
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
