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

# 1. the kernel test suite, in parallel (failures listed, not stopped at)
step tests 200 python3 -m pytest tests/kernels -q -n 8 -p no:cacheprovider --timeout 180 -rfE
grep -E "^(FAILED|ERROR)|passed|failed" "$W/tests.log" | tail -40

# 2. FlagGems 5.0.2's own _nvidia, all dtypes, ci shapes: the speed target (< 3 min on an H100)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  G=/tmp/site/flag_gems/runtime/backend/_nvidia
  PYTHONPATH=$PYTHONPATH:/tmp/site step gems-ci 170 $K check --wait-for-device 20 --backend $G --shapes ci --json "$W/gems-ci.json"
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
step compare 100 $K check --wait-for-device 20 --backend $R/backends/_nvidia --ops softmax,rms_norm,log_softmax --dtypes fp16 --seeds 1 --compare-to HEAD~1 --json "$W/compare.json" --plot "$W/plots"

# 4. expectations round trip: write, re-check (pass), perturb (fail)
E="--backend backends/_nvidia --ops softmax,rms_norm --dtypes fp16 --seeds 1"
step expect-write 40 $K check --wait-for-device 20 $E --write-expected "$W/expected.csv"
step expect-recheck 40 $K check --wait-for-device 20 $E --expected "$W/expected.csv" --json "$W/expect-recheck.json"
awk -F, 'BEGIN{OFS=","} /^softmax,/{$4=$4*0.6} {print}' "$W/expected.csv" > $W/perturbed.csv
step expect-perturbed 40 $K check --wait-for-device 20 $E --expected $W/perturbed.csv

# 5. the device-neutral path on CUDA, our backend, full shapes (vs the earlier timings)
step nvidia-full 90 $K check --wait-for-device 20 --backend backends/_nvidia --seeds 1 --json "$W/nvidia-full.json"

cat "$OUT/steps.txt"
for f in compare expect-recheck expect-perturbed nvidia-full gems-ci; do echo "== $f"; head -30 "$W/$f.log" 2>/dev/null | grep -v "^\[" ; done
(cd /tmp && tar czf "$OUT/session.tgz" kdev-session)
