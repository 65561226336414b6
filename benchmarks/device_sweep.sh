#!/usr/bin/env bash
# Long bench_kernels.py sweeps on a lent GPU machine whose commands are cut after minutes:
#   benchmarks/device_sweep.sh start [BENCH ARGS...]  install, start the sweep detached, wait
#   benchmarks/device_sweep.sh ab PATCH... [AB ARGS...]  the same for benchmarks/ab_rows.py
#                                                      (each patch a head timed beside one base;
#                                                      its JSON files come back as ab.tgz:
#                                                      `ab_rows.py --again` on them)
#   benchmarks/device_sweep.sh wait                    wait again for the same sweep
# Each call waits up to $WAIT seconds (default 540), then copies the sweep's JSON, Markdown and
# log so far to $OUT (default ./out; the per-stage results as parts.tgz); the sweep itself runs
# on until it ends. Wheels, when present, are in .whl/ (flag_gems 5.0.2 and its missing
# dependencies). A parts.tgz from an earlier machine, placed in .dev-sweep/, is unpacked first:
# pass `--resume` to measure only the rows it lacks (benchmarks/sweep_forget.py drops the rows
# a later change of the kernels launches differently, so that they are measured again).
# Each call sends back Triton's compile cache as triton-cache.tgz (benchmarks/triton_cache.py,
# up to $CACHE_MB MB of binaries, else the tool's default of 40); one placed in .dev-sweep/ is
# unpacked before anything compiles, so a fresh machine's warm-up compiles only what changed.
set -u
OUT=${OUT:-out}; W=${SWEEP_DIR:-/tmp/bench-sweep}; WAIT=${WAIT:-540}
mkdir -p "$OUT"
if [ "${1:-}" = start ] || [ "${1:-}" = ab ]; then
  mode=$1; shift
  # A machine still held from an earlier call may still be running a sweep: starting another
  # would time two sweeps on one device and delete the files the first one is writing.
  if [ -f "$W/pid" ] && kill -0 "$(cat "$W/pid")" 2>/dev/null; then
    echo "a sweep is still running here (pid $(cat "$W/pid")): call '$0 wait'," \
      "or stop it (kill -- -$(cat "$W/pid")) before starting another" >&2
    exit 2
  fi
  if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl || exit 2
  fi
  python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . || exit 2
  # a cache that does not unpack costs only the compile time it would have saved
  [ -f .dev-sweep/triton-cache.tgz ] && python3 benchmarks/triton_cache.py unpack \
    .dev-sweep/triton-cache.tgz
  rm -rf "$W"; mkdir -p "$W"
  [ -f .dev-sweep/parts.tgz ] && tar xzf .dev-sweep/parts.tgz -C "$W"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
    --format=csv,noheader > "$W/card.txt" 2>&1
  if [ "$mode" = ab ]; then
    PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 setsid nohup \
      python3 benchmarks/ab_rows.py --out "$W/ab" "$@" > "$W/sweep.log" 2>&1 < /dev/null &
  else
    PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 setsid nohup \
      python3 benchmarks/bench_kernels.py "$@" --json "$W/sweep.json" --parts "$W/sweep.parts" \
      --markdown "$W/sweep.md" > "$W/sweep.log" 2>&1 < /dev/null &
  fi
  echo $! > "$W/pid"
elif [ "${1:-}" != wait ]; then
  echo "usage: $0 start [BENCH ARGS...] | ab PATCH [AB ARGS...] | wait" >&2; exit 2
fi
[ -f "$W/pid" ] || { echo "no sweep started on this machine" >&2; exit 2; }
end=$((SECONDS + WAIT))
while kill -0 "$(cat "$W/pid")" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 5; done
cp "$W"/card.txt "$W"/sweep.* "$OUT"/ 2>/dev/null
# ab's rounds go back as one file (a lent machine returns only a few files a call), without
# the patched trees' copies (ab/head/, or ab/head1/, ab/head2/, ... for several patches)
[ -d "$W/ab" ] && tar czf "$OUT/ab.tgz" -C "$W" --exclude=ab/head --exclude='ab/head[0-9]' \
  --exclude='ab/head[0-9][0-9]' ab
tar czf "$OUT/parts.tgz" -C "$W" --exclude='*.log' --exclude='*.db' sweep.parts 2>/dev/null
python3 benchmarks/triton_cache.py pack "$OUT/triton-cache.tgz" ${CACHE_MB:+--max-mb "$CACHE_MB"}
if kill -0 "$(cat "$W/pid")" 2>/dev/null; then echo "sweep still running"; else echo "sweep ended"; fi
grep -E "^bench_kernels|^ab_rows|^\| |^\[time|^\[warm|^below|Traceback|Error" "$W/sweep.log" | tail -40
