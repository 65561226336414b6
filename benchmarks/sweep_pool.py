"""Speed for bench_kernels.py's long sweeps, fenced off from its plain one-process flow.

Three random sweeps of 200 shapes per op are 6,600 rows. On an H100 (2026-11-26) a row cost
1.5-2 s in one process, almost none of it timing: Triton compiled new specialisations of the
generic and FlagGems kernels, and FlagGems' autotuner benchmarked every config of its tuned ops
(mm, softmax, log_softmax, rms_norm, sum, mean) at every new shape for 25 + 100 ms each. The
measured split per row is in each row's `phase_s` (benchmarks/RESULTS.md has the numbers).
Three levers, each optional:

- `--warm-workers N`: before anything is timed, N processes call every row's candidates once,
  in parallel on the device(s). Compilation fills Triton's on-disk cache, so the timing pass
  loads kernels instead of compiling them. FlagGems' tuning results of that pass are written to
  a scratch database and thrown away: tuning under contention would pick wrong configs, so the
  timing pass tunes again on an otherwise idle device.
- `--flaggems-tune-ms W,R`: FlagGems' autotuner warms up W ms and measures R ms per config
  (its default is 25,100). The pick is still the fastest config over R ms of calls; the report
  records the budget used.
- `--devices all|D0,D1,...`: one timing process per device, rows dealt round-robin within each
  list (so each device gets every op alike), merged in row order afterwards. Ratios are taken
  within one process on one device, so devices never mix within a ratio.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--devices", help="time on several devices at once: `all`, or a comma list "
                                     "(cuda:0,cuda:1); one process each, results merged")
    p.add_argument("--warm-workers", type=int, default=0,
                   help="processes that compile every row's kernels before timing starts")
    p.add_argument("--flaggems-tune-ms",
                   help="W,R: FlagGems' autotuner warm-up and measuring ms per config "
                        "(default: FlagGems' own)")
    p.add_argument("--parts", help="folder for the per-device results and logs (default: "
                                   "beside --json, else a temporary folder)")
    p.add_argument("--warm-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--warm-skip", help=argparse.SUPPRESS)  # keys already measured (JSON list)


def check_options(args: argparse.Namespace) -> None:
    if args.flaggems_tune_ms is not None:
        parse_budget(args.flaggems_tune_ms)
    if args.warm_workers < 0:
        raise ValueError("--warm-workers: 0 or more")
    if (args.devices or args.warm_workers) and args.shard:
        raise ValueError("--shard is for one process; --devices and --warm-workers start them")


def wanted(args: argparse.Namespace) -> bool:
    """The parent of a pool: several devices or a warm-up pass asked for (children never are)."""
    return not args.warm_only and not args.shard and bool(args.devices or args.warm_workers)


def parse_budget(text: str) -> tuple[float, float]:
    parts = text.split(",")
    try:
        warmup, rep = (float(v) for v in parts)
    except ValueError:
        raise ValueError(f"--flaggems-tune-ms {text!r}: use W,R (milliseconds, e.g. 5,25)"
                         ) from None
    if warmup < 0 or rep <= 0:
        raise ValueError(f"--flaggems-tune-ms {text!r}: W >= 0 and R > 0")
    return warmup, rep


def flaggems_tuning(module: Any, budget: str | None) -> int:
    """Give each of FlagGems' autotuners the W,R budget; returns how many were changed."""
    if budget is None:
        return 0
    import triton
    import triton.testing

    warmup, rep = parse_budget(budget)

    def bench(kernel_call: Callable[[], Any], quantiles: Any) -> Any:
        return triton.testing.do_bench(kernel_call, warmup=warmup, rep=rep, quantiles=quantiles)

    changed = 0
    prefix = module.__name__ + "."
    for obj in gc.get_objects():
        if not issubclass(type(obj), triton.runtime.Autotuner):
            continue
        base = getattr(obj, "base_fn", None)
        if not str(getattr(base, "__module__", "")).startswith(prefix):
            continue
        # `do_bench` is a cached property reading `_do_bench` once: set both.
        obj._do_bench = bench
        obj.__dict__["do_bench"] = bench
        obj.num_warmups, obj.num_reps = warmup, rep
        changed += 1
    return changed


def warm(dev: Any, fg: dict[str, Callable[..., Any]], rows: list[tuple[str, Any]],
         inputs: Callable[[Any, Any], tuple[tuple[Any, ...], dict[str, Any]]]) -> int:
    """Call each row's generic op and FlagGems' op once (compile, fill the caches); no timing.
    A failure is counted, not fatal: the timing pass reports it for its row."""
    failed, began = 0, time.perf_counter()
    for n, (key, row) in enumerate(rows, 1):
        try:
            _first_calls(dev, fg, row, inputs)
        except Exception as exc:  # noqa: BLE001 - counted and reported below
            failed += 1
            print(f"warm: {key} {row.op} {row.case.id}: {type(exc).__name__}: {exc}"[:300],
                  file=sys.stderr, flush=True)
        if n % 100 == 0:
            print(f"warm: {n}/{len(rows)} rows, {time.perf_counter() - began:.0f} s",
                  file=sys.stderr, flush=True)
        dev.empty_cache()  # the row's inputs are gone with _first_calls' frame
    return 1 if failed else 0


def _first_calls(dev: Any, fg: dict[str, Callable[..., Any]], row: Any,
                 inputs: Callable[[Any, Any], tuple[tuple[Any, ...], dict[str, Any]]]) -> None:
    from flagbot.kernels.registry import OPS

    args, kwargs = inputs(row, dev)
    spec = OPS[row.op]
    assert spec.generic is not None
    spec.generic(*args, **kwargs)
    if row.op in fg:
        try:
            fg[row.op](*args, **kwargs)
        except Exception:  # noqa: BLE001 - FlagGems refusing a shape is its row's result
            pass
    dev.synchronize()


def key_index(key: str) -> int:
    return int(key.rsplit(":", 1)[1])


def in_shard(key: str, shard: tuple[int, int]) -> bool:
    """Rows are dealt round-robin within each list, so every shard gets every op alike."""
    return key_index(key) % shard[1] == shard[0]


def parse_shard(text: str | None) -> tuple[int, int]:
    if not text:
        return 0, 1
    i, _, n = text.partition("/")
    if not (i.isdigit() and n.isdigit()) or not 0 <= int(i) < int(n):
        raise ValueError(f"--shard {text!r}: use I/N with 0 <= I < N")
    return int(i), int(n)


def reshard(parts: Path, name: str, count: int) -> None:
    """Deal a stage's saved rows afresh over `count` part files where an earlier run wrote
    them for another number of devices. Each timing process resumes from its own file alone:
    without this, a sweep resumed on a machine of more devices measured again, and merged
    twice, the rows the earlier layout had given to files the new processes do not read. A
    stage complete before stays complete; the earlier files are kept beside, as `.dealt`."""
    found = sorted(parts.glob(f"{name}-part-*.json"))
    results = [read_result(p) for p in found]
    shards = [parse_shard(r.get("shard")) for r in results]
    if all(n == count for _, n in shards):
        return
    old_count = shards[0][1]
    complete = (all(r.get("complete") for r in results)
                and sorted(shards) == [(i, old_count) for i in range(old_count)])
    rows = [row for r in results for row in r["rows"]]
    sweeps: dict[int, dict[str, Any]] = {}
    for r in results:
        for sweep in r["random"]:
            sweeps.setdefault(sweep["seed"], {**sweep, "rows": []})["rows"] += sweep["rows"]
    meta = {k: v for k, v in results[0].items()
            if k not in ("rows", "random", "shard", "complete")}
    for path in found:
        path.rename(path.with_name(path.name + ".dealt"))
    for i in range(count):
        write_json(parts / f"{name}-part-{i}.json", {
            **meta, "shard": f"{i}/{count}", "complete": complete,
            "rows": _dealt(rows, (i, count)),
            "random": [{**s, "rows": _dealt(s["rows"], (i, count))} for s in sweeps.values()]})
    print(f"bench_kernels: {name}: {len(found)} part file(s) of {old_count} device(s) dealt "
          f"afresh over {count}", file=sys.stderr, flush=True)


def _dealt(rows: list[dict[str, Any]], shard: tuple[int, int]) -> list[dict[str, Any]]:
    return sorted((r for r in rows if in_shard(r["key"], shard)), key=lambda r: key_index(r["key"]))


def write_json(path: Path, result: dict[str, Any]) -> None:
    """Write through a temporary file, so a run killed mid-write keeps the last whole file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def device_names(spec: str) -> list[str]:
    """`all` (every device of the default accelerator) or an explicit comma list."""
    if spec != "all":
        return [d.strip() for d in spec.split(",") if d.strip()]
    from flagbot.kernels.device import resolve

    dev = resolve()
    count = getattr(dev.module, "device_count", None)
    if dev.module is None or count is None:
        raise ValueError(f"--devices all: {dev.torch_device} has no devices to count")
    return [f"{dev.type}:{i}" for i in range(int(count()))]


def child_args(args: argparse.Namespace, shapes: str, seeds: list[int]) -> list[str]:
    """The row selection of this run (`shapes`: fixed, random:N or both), for a child to plan
    the very same rows."""
    out = ["--shapes", shapes]
    if seeds:
        out += ["--seed", ",".join(map(str, seeds))]
    for name in ("ops", "cases", "rows", "reps"):
        value = getattr(args, name)
        if value is not None:
            out += [f"--{name}", str(value)]
    if args.no_flaggems:
        out.append("--no-flaggems")
    if args.gc != "on":
        out += ["--gc", args.gc]
    return out


def stages(args: argparse.Namespace, seeds: list[int]) -> list[tuple[str, list[str]]]:
    """(name, child selection) per stage: the fixed sweep, then each random sweep. Each stage is
    warmed, then timed, before the next starts: a run cut short keeps whole sweeps, and each
    warm-up pass compiles only what earlier stages did not."""
    out = []
    if "fixed" in args.kinds:
        out.append(("fixed", child_args(args, "fixed", [])))
    random_kind = next((k for k in args.kinds if k.startswith("random")), None)
    for seed in seeds if random_kind else []:
        out.append((f"seed-{seed}", child_args(args, random_kind or "random", [seed])))
    return out


def _spawn(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, str(HERE.with_name("bench_kernels.py")), *argv],
                                stdout=out, stderr=subprocess.STDOUT, env=env)


def _wait(procs: list[tuple[str, subprocess.Popen[bytes], Path]], what: str) -> list[str]:
    """Wait for every child, echoing its progress lines; the names of those that failed."""
    seen = {name: 0 for name, _, _ in procs}
    failed: list[str] = []
    pending = list(procs)
    while pending:
        time.sleep(5)
        for name, proc, log in list(pending):
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
            for line in lines[seen[name]:]:
                if line.startswith(("bench_kernels:", "warm:", "Traceback")):
                    print(f"[{what} {name}] {line}", file=sys.stderr, flush=True)
            seen[name] = len(lines)
            if proc.poll() is not None:
                pending.remove((name, proc, log))
                if proc.returncode not in (0, 1):  # 1: measured, some row below target
                    failed.append(f"{name} (exit {proc.returncode}, log {log})")
    return failed


def run(args: argparse.Namespace, seeds: list[int],
        finish: Callable[[dict[str, Any]], str], verdict: Callable[[dict[str, Any]], int],
        disturbed: Callable[[dict[str, Any]], bool] = lambda row: False) -> int:
    """Per stage a warm-up pass, then one timing process per device; merge; the exit code.
    Resumed, a stage already complete is skipped, unless it holds rows that `disturbed` calls
    for another reading and that were not measured again yet (a rule made stricter after the
    stage ran): then only its timing pass runs, which measures just those rows."""
    try:
        devices = device_names(args.devices) if args.devices else [args.device or ""]
    except ValueError as exc:
        print(f"bench_kernels: {exc}", file=sys.stderr)
        return 2
    parts = Path(args.parts or (Path(args.json).with_suffix(".parts") if args.json
                                else tempfile.mkdtemp(prefix="bench-kernels-")))
    parts.mkdir(parents=True, exist_ok=True)
    if seeds:
        print(f"bench_kernels: random sweeps, seeds {','.join(map(str, seeds))}", flush=True)
    written: list[Path] = []
    bad: list[str] = []
    for name, selection in stages(args, seeds):
        outputs = [parts / f"{name}-part-{i}.json" for i in range(len(devices))]
        written += outputs
        if args.resume:
            reshard(parts, name, len(devices))
        if args.resume and all(_complete(p) for p in outputs):
            if any(_to_retime(p, disturbed) for p in outputs):
                bad += _time_stage(args, name, selection, devices, outputs, parts)
            continue
        if args.warm_workers:
            _warm_stage(args, name, selection, devices, parts, outputs)
        bad += _time_stage(args, name, selection, devices, outputs, parts)
    result = merge(written)
    if result is None:
        print(f"bench_kernels: no process wrote results (logs in {parts})", file=sys.stderr)
        return 2
    text = finish(result)
    print(text)
    if args.json:
        write_json(Path(args.json), result)
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
    if bad:
        print(f"bench_kernels: these processes failed, their rows are missing: {bad}",
              file=sys.stderr)
        return 2
    return verdict(result)


def _on(device: str) -> list[str]:
    return ["--device", device] if device else []


def read_result(path: Path) -> dict[str, Any]:
    """A bench_kernels result file, JSON or gzipped JSON (as kept under benchmarks/results)."""
    opener: Callable[..., Any] = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def all_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every row of a result, the fixed sweep's first, then each random sweep's."""
    return result["rows"] + [r for sweep in result.get("random", []) for r in sweep["rows"]]


def _part_rows(path: Path) -> list[dict[str, Any]]:
    return all_rows(read_result(path))


def _to_retime(path: Path, disturbed: Callable[[dict[str, Any]], bool]) -> bool:
    return any(disturbed(r) and not r.get("retimed") for r in _part_rows(path))


def _complete(path: Path) -> bool:
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("complete"))
    except (OSError, ValueError):
        return False


def measured_keys(outputs: list[Path]) -> list[str]:
    """Keys of the rows the stage's result files already hold (errors aside)."""
    return [r["key"] for path in outputs if path.exists() for r in _part_rows(path)
            if "error" not in r]


def _warm_stage(args: argparse.Namespace, name: str, selection: list[str], devices: list[str],
                parts: Path, outputs: list[Path]) -> None:
    began = time.perf_counter()
    procs = []
    skip: list[str] = []
    if args.resume:  # a resumed stage times only its missing rows: warm only those
        skip_file = parts / f"{name}-measured.json"
        skip_file.write_text(json.dumps(measured_keys(outputs)), encoding="utf-8")
        skip = ["--warm-skip", str(skip_file)]
    for k in range(args.warm_workers):
        # tuning results of a crowded device are worthless: a scratch database, thrown away
        env = dict(os.environ, FLAGGEMS_DB_URL=f"sqlite:///{parts}/warm-tuning-{k}.db")
        argv = [*selection, "--warm-only", "--shard", f"{k}/{args.warm_workers}",
                "--flaggems-tune-ms", "0,1", *skip, *_on(devices[k % len(devices)])]
        log = parts / f"{name}-warm-{k}.log"
        procs.append((str(k), _spawn(argv, log, env), log))
    failed = _wait(procs, f"warm {name}")
    print(f"bench_kernels: {name}: warm-up pass, {args.warm_workers} processes, "
          f"{time.perf_counter() - began:.0f} s" + (f"; failed: {failed}" if failed else ""),
          file=sys.stderr, flush=True)


def _time_stage(args: argparse.Namespace, name: str, selection: list[str], devices: list[str],
                outputs: list[Path], parts: Path) -> list[str]:
    began = time.perf_counter()
    procs = []
    for i, device in enumerate(devices):
        argv = [*selection, "--shard", f"{i}/{len(devices)}", "--json", str(outputs[i]),
                *_on(device)]
        if args.resume:
            argv.append("--resume")
        if args.flaggems_tune_ms:
            argv += ["--flaggems-tune-ms", args.flaggems_tune_ms]
        # one tuning database per process: several writers would lock each other out
        env = dict(os.environ, FLAGGEMS_DB_URL=f"sqlite:///{parts}/tuning-{i}.db")
        log = parts / f"{name}-part-{i}.log"
        procs.append((device or "default", _spawn(argv, log, env), log))
    failed = _wait(procs, f"time {name}")
    print(f"bench_kernels: {name}: timing pass, {len(devices)} process(es), "
          f"{time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
    return failed


def merge(paths: list[Path]) -> dict[str, Any] | None:
    """One result from the per-device parts: rows and sweeps joined (the caller orders them),
    each device's metadata and copy bandwidth kept; `incomplete` names the stages ("fixed",
    "seed-S") some part of which had not finished, so that a result saved from a run cut short
    is never resumed from as if it were whole (sweep_forget.py --from)."""
    found = [json.loads(p.read_text(encoding="utf-8")) for p in paths if p.exists()]
    if not found:
        return None
    result = {k: v for k, v in found[0].items()
              if k not in ("rows", "random", "shard", "complete")}
    # the same device appears once per stage; its clocks differ between them
    result["devices"] = list({(part["device"].get("name"), part["device"].get("index")):
                              part["device"] for part in found}.values())
    result["copy_gbps"] = min(part["copy_gbps"] for part in found)
    result["rows"] = [r for part in found for r in part["rows"]]
    sweeps: dict[int, dict[str, Any]] = {}
    for part in found:
        for sweep in part["random"]:
            into = sweeps.setdefault(sweep["seed"], {"seed": sweep["seed"],
                                                     "count": sweep["count"], "rows": []})
            into["rows"] += sweep["rows"]
    result["random"] = list(sweeps.values())
    result["incomplete"] = sorted({stage for part in found if not part.get("complete")
                                   for stage in _stages_of(part)})
    return result


def _stages_of(part: dict[str, Any]) -> list[str]:
    """The stages a part holds rows of: the fixed sweep's, each random sweep's."""
    return (["fixed"] if part["rows"] else []) + [f"seed-{s['seed']}" for s in part["random"]]
