#!/usr/bin/env bash
# One device-machine session of `flagbot kernels check` (run from the repository root on a GPU
# host; results in benchmarks/RESULTS.md). Wheels, when given, are in .whl/ (flag_gems 5.0.2).
# Writes logs and reports under $OUT (default ./out). Each step is bounded by `timeout`.
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"
W=/tmp/kdev-session; rm -rf $W; mkdir -p $W  # everything here; bundled into $OUT at the end
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
K="python3 -m flagbot.kernels"
step() {  # step NAME SECONDS CMD...: run, log, record wall time and exit code
  local name=$1 limit=$2; shift 2
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" > "$W/$name.log" 2>&1; local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  printf '%-20s rc=%-3s %4d.%01d s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000 / 100)) | tee -a "$OUT/steps.txt"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$OUT/card.txt"
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' | tee -a "$OUT/card.txt"

# 0. why the import pipeline's module fixture finds no index on a GPU (its output, uncaptured)
python3 - > "$W/import-debug.log" 2>&1 <<'PY'
import json, tempfile
from pathlib import Path
from flagbot.kernels.cli import main
from tests.kernels.generated_ops import LAX_TEST, payload, selection, write_json
work = Path(tempfile.mkdtemp())
p = work / "payloads"
write_json(p / "abs.json", payload("abs"))
write_json(p / "neg.json", payload("neg", expr="x", test=LAX_TEST.format(name="neg")))
write_json(work / "selected.json", selection(2, "abs", "neg"))
code = main(["import", "--input", "selected.json", "--batch", "2", "--payloads", "payloads",
             "--dest", "tree/experimental"], cwd=str(work))
print("exit", code, sorted(str(x.relative_to(work)) for x in work.rglob("*")))
PY
tail -30 "$W/import-debug.log"

# 1. the kernel test suite, in parallel (failures listed, not stopped at)
step tests 130 python3 -m pytest tests/kernels -q -n 8 -p no:cacheprovider --timeout 120 -rfE
grep -E "^(FAILED|ERROR)|passed|failed" "$W/tests.log" | tail -30

# 2. FlagGems 5.0.2's own _nvidia, all dtypes, ci shapes: the speed target (< 3 min on an H100),
#    then a compare run of the same folder against its own commit (< twice that)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  G=/tmp/site/flag_gems/runtime/backend/_nvidia
  PYTHONPATH=$PYTHONPATH:/tmp/site step gems-ci 150 $K check --backend $G --shapes ci --json "$W/gems-ci.json"
  git -C /tmp/site/flag_gems init -q && git -C /tmp/site/flag_gems add -A && git -C /tmp/site/flag_gems -c user.name=t -c user.email=t@t commit -qm wheel
  PYTHONPATH=$PYTHONPATH:/tmp/site step gems-ci-compare 150 $K check --backend $G --shapes ci --compare-to HEAD --json "$W/gems-ci-compare.json"
fi

# 3. a compare run: a commit that makes softmax ~30 % slower, against its parent
R=/tmp/cmp; rm -rf $R; mkdir -p $R/backends; cp -r backends/_nvidia $R/backends/
git -C $R init -q -b main && git -C $R add -A && git -C $R -c user.name=t -c user.email=t@t commit -qm base
cat >> $R/backends/_nvidia/ops/softmax.py <<'PY'


_fast_softmax = softmax


def softmax(x, dim=-1, dtype=None):
    out = _fast_softmax(x, dim, dtype)
    x.reshape(-1)[: x.numel() * 3 // 10].clone()  # planted: ~30 % more memory traffic
    return out
PY
git -C $R -c user.name=t -c user.email=t@t commit -qam "slow softmax"
step compare 60 $K check --backend $R/backends/_nvidia --ops softmax,rms_norm,log_softmax --dtypes fp16 --seeds 1 --compare-to HEAD~1 --json "$W/compare.json" --plot "$W/plots"

# 4. expectations round trip: write, re-check (pass), perturb (fail)
E="--backend backends/_nvidia --ops softmax,log_softmax --dtypes fp16 --seeds 1"
step expect-write 30 $K check $E --write-expected "$W/expected.csv"
step expect-recheck 30 $K check $E --expected "$W/expected.csv" --json "$W/expect-recheck.json"
awk -F, 'BEGIN{OFS=","} /^softmax,/{$4=$4*0.6} {print}' "$W/expected.csv" > $W/perturbed.csv
step expect-perturbed 30 $K check $E --expected $W/perturbed.csv

# 5. the device-neutral path on CUDA, our backend, full shapes, all dtypes (mm's are slow)
step nvidia-full 60 $K check --backend backends/_nvidia --ops softmax,rms_norm,log_softmax --seeds 1 --json "$W/nvidia-full.json"

cat "$OUT/steps.txt"
for f in compare expect-recheck expect-perturbed gems-ci gems-ci-compare; do echo "== $f"; grep -v "^ *\[\|done (" "$W/$f.log" 2>/dev/null | head -40; done
(cd /tmp && tar czf "$OUT/session.tgz" kdev-session)
