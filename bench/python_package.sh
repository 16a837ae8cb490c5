#!/usr/bin/env bash
# python_package.sh — the Python package's acceptance figures (docs/python.md),
# printed: the time of `pip install .` offline into a fresh virtual environment
# from a fresh clone of this repository's HEAD (the libraries, the extension and
# the default rules database all built; or, with --reuse BUILD, reusing a built
# tree), then rlflow.optimize on a model with the default rules: its time,
# onnx.checker's verdict, the report, and max |d| against the input in ONNX
# Runtime. The load average is printed before and after: figures taken on a
# busy machine say so.
#
#   bench/python_package.sh [--reuse BUILD_DIR] [--model MODEL.onnx] [--keep DIR]
#
# MODEL defaults to ../shared/models/bert_small/model.onnx. Scratch goes to a
# temporary directory, removed at the end unless --keep DIR names where to
# put it instead.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
reuse="" model="$src/../shared/models/bert_small/model.onnx" keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reuse) reuse=$(cd "$2" && pwd); shift 2 ;;
    --model) model=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "python_package.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -f "$model" ] || { echo "python_package.sh: no model $model (--model)" >&2; exit 2; }
if [ -n "$keep" ]; then
  rm -rf "$keep"; mkdir -p "$keep"; work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fi

echo "machine:        $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (before)"
git clone -q "$src" "$work/clone"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
start=$(date +%s%N)
if [ -n "$reuse" ]; then
  RLFLOW_BUILD_DIR="$reuse" "$work/venv/bin/pip" install -q --no-build-isolation --no-index \
    "$work/clone" > "$work/pip.log" 2>&1 || { cat "$work/pip.log"; exit 1; }
  how="reusing $reuse"
else
  "$work/venv/bin/pip" install -q --no-build-isolation --no-index "$work/clone" \
    > "$work/pip.log" 2>&1 || { cat "$work/pip.log"; exit 1; }
  how="fresh clone: libraries, extension and default rules built"
fi
end=$(date +%s%N)
echo "pip install:    $(((end - start) / 1000000)) ms ($how)"

cd "$work"
# The fresh clone has no .deps: ONNX Runtime from this tree's set-up, unless given.
ort="$src/.deps/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
if [ -z "${RLFLOW_ORT_LIB:-}" ] && [ -f "$ort" ]; then export RLFLOW_ORT_LIB="$ort"; fi
XDG_CACHE_HOME="$work/cache" "$work/venv/bin/python" - "$model" <<'EOF'
import sys, time
import onnx
import rlflow
model = sys.argv[1]
t0 = time.time()
r = rlflow.optimize_with_report(model)
t1 = time.time()
print("optimize:       %.1f s (rlflow.optimize_with_report(%r), defaults)" % (t1 - t0, model))
onnx.checker.check_model(r.model, full_check=True)
print("checker:        onnx.checker.check_model(full_check=True) passed")
print(r.report.summary())
try:
    d = rlflow.compare_in_ort(model, r.model)
    print("ONNX Runtime:   max |d| %.3g, max rel %.3g (%s)" % (d["max_abs"], d["max_rel"],
                                                              d["runtime"]))
except rlflow.Error as e:
    print("ONNX Runtime:   not compared: %s" % e)
EOF
echo "machine:        load average $(cut -d' ' -f1-3 /proc/loadavg) (after)"
