"""`kernels check`: accuracy, then (on a GPU) timing, then the gate, for each op of a backend."""

from __future__ import annotations

import gc
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from flagbot.kernels import gates, timing
from flagbot.kernels.accuracy import AccuracyCase, check_op, dtype_name
from flagbot.kernels.backend_utils import interpreted
from flagbot.kernels.baseline import Baseline, resolve
from flagbot.kernels.loader import Backend, BackendOp
from flagbot.kernels.progress import BASE_WEIGHT, Progress
from flagbot.kernels.registry import lookup
from flagbot.kernels.spec import Case, OpSpec, numel

INTERPRETER_SKIP = "the CPU interpreter computes bf16 on raw bit patterns (tl.dot); GPU only"


@dataclass
class CheckOptions:
    """What to check and how strictly (CLI flags map one to one)."""

    shapes: str = "ci"
    ops: list[str] | None = None
    dtypes: list[torch.dtype] | None = None
    seeds: tuple[int, ...] = (0, 1, 2)
    thresholds: gates.Thresholds = field(default_factory=gates.Thresholds)
    near_fails: bool = False
    baseline: str = "auto"  # auto | flaggems | generic: what an override is gated against


def can_measure() -> bool:
    """Timing needs a CUDA device and compiled (not interpreted) kernels."""
    return torch.cuda.is_available() and not interpreted()


def provided(backend: Backend) -> str:
    """The ops a backend provides, for messages (`softmax, mm`)."""
    names = sorted({op.name for op in backend.ops if not op.error})
    return ", ".join(names) if names else "none"


def select(backend: Backend, wanted: Sequence[str] | None) -> list[BackendOp]:
    """The backend's ops, or those named in `wanted` (unknown or absent names become errors)."""
    if not wanted:
        return list(backend.ops)
    chosen: list[BackendOp] = []
    for name in wanted:
        match = [op for op in backend.ops if name in (op.name, op.aten, op.function)]
        if match:
            chosen.extend(match)
            continue
        spec = lookup(name)
        where = backend.path.name
        reason = (f"--ops {name}: {where} does not provide {name!r} (it provides "
                  f"{provided(backend)}); the generic {name} is the library's own, checked by "
                  "its tests: drop it from --ops, or add an override to the backend" if spec else
                  f"--ops {name}: unknown op {name!r}: kernels/registry.py has no spec by that "
                  f"name ({backend.path.name} provides {provided(backend)})")
        chosen.append(BackendOp(name=name, func=None, spec=spec, error=reason))
    return chosen


def accuracy_weight(op: BackendOp, options: CheckOptions) -> float:
    """The op's accuracy work in element-weighted units (see kernels/progress.py)."""
    if op.spec is None or op.func is None or op.error or op.skip_status:
        return 0.0
    dtypes, _ = dtypes_for(op.spec, options.dtypes)
    per_seed = sum(numel(c.shape) + BASE_WEIGHT for c in op.spec.cases(options.shapes))
    return float(per_seed * len(dtypes) * len(options.seeds))


def interpreter_estimate(ops: Sequence[BackendOp], options: CheckOptions) -> float:
    """Seconds the CPU interpreter will take for the accuracy cases of `ops`, roughly."""
    from flagbot.kernels.progress import INTERPRETER_ELEMENTS_PER_S

    return sum(accuracy_weight(op, options) for op in ops) / INTERPRETER_ELEMENTS_PER_S


def dtypes_for(spec: OpSpec, wanted: Sequence[torch.dtype] | None) -> tuple[list[torch.dtype],
                                                                          list[str]]:
    """(dtypes to run, skip notes) for an op on this machine."""
    allowed = [d for d in spec.dtypes if wanted is None or d in wanted]
    if not interpreted():
        return allowed, []
    run = [d for d in allowed if d in spec.interpreter_dtypes]
    return run, [f"{dtype_name(d)}: {INTERPRETER_SKIP}" for d in allowed if d not in run]


def _perf_case(op: BackendOp, spec: OpSpec, case: Case, dtype: torch.dtype,
               device: torch.device, base: tuple[str, Callable[..., Any] | None]
               ) -> dict[str, Any]:
    gen = torch.Generator(device=device).manual_seed(0)
    args, kwargs = spec.make_inputs(case, dtype, device, gen)
    assert op.func is not None
    func: Callable[..., Any] = op.func
    fns: dict[str, Callable[[], Any]] = {"candidate": lambda: func(*args, **kwargs)}
    base_name, base_fn = base
    if base_fn is not None:
        fns[base_name] = lambda: base_fn(*args, **kwargs)
    fns["native"] = lambda: spec.reference(*args, **kwargs)
    m = timing.bench(fns)
    lat = {k: timing.summary(v) for k, v in m.samples.items()}
    moved, flops = spec.bytes_moved(case, dtype), spec.flops(case)
    vs_base = (timing.ratio_summary(m.samples[base_name], m.samples["candidate"])
               if base_fn is not None else None)
    entry: dict[str, Any] = {
        "dtype": dtype_name(dtype), "case": case.id, "mode": m.mode,
        "latency_us": {k: round(v["median"], 3) for k, v in lat.items()},
        "spread": {k: round(v["spread"], 4) for k, v in lat.items()},
        "gbps": {k: round(moved / (v["median"] * 1e-6) / 1e9, 1) for k, v in lat.items()},
        "tflops": {k: round(flops / (v["median"] * 1e-6) / 1e12, 2) for k, v in lat.items()},
        "vs_native": timing.ratio_summary(m.samples["native"], m.samples["candidate"]),
        "vs_generic": vs_base if base_name == "generic" else None,
        "vs_baseline": vs_base,
    }
    return entry


def _performance(op: BackendOp, spec: OpSpec, cases: Sequence[Case],
                 dtypes: Sequence[torch.dtype], device: torch.device,
                 base: tuple[str, Callable[..., Any] | None]) -> dict[str, Any]:
    out: dict[str, Any] = {"status": "measured", "reason": None, "cases": []}
    try:
        for dtype in dtypes:
            for case in cases:
                out["cases"].append(_perf_case(op, spec, case, dtype, device, base))
                gc.collect()
                torch.cuda.empty_cache()
    except Exception as exc:  # a kernel failing only under timing is still a per-op result
        out["status"], out["reason"] = "error", f"{type(exc).__name__}: {exc}"
    return out


def _ratios(kind: str, perf: dict[str, Any]) -> list[gates.Ratio]:
    key = "vs_baseline" if kind == "override" else "vs_native"
    return [gates.Ratio(**c[key]) for c in perf["cases"] if c.get(key)]


def _listed_only(entry: dict[str, Any], op: BackendOp) -> dict[str, Any]:
    """The entry of an op reported but never run: disabled, or no spec to check it with."""
    entry["accuracy"] = {"status": "not run", "skipped": [], "cases": []}
    entry["performance"] = {"status": "not measured", "reason": op.skip, "cases": []}
    entry["verdict"] = {"status": op.skip_status, "reason": op.skip, "value": None}
    return entry


def check_backend_op(op: BackendOp, options: CheckOptions, device: torch.device,
                     measure: bool, baseline: Baseline | None = None,
                     progress: Progress | None = None) -> dict[str, Any]:
    """The report entry of one op: accuracy cases, performance cases, verdict.

    An op is an override when there is something it replaces: `baseline`'s op (FlagGems' or
    the generic kernel; default the generic kernel), timed and gated against it; otherwise a
    new op, gated against torch native.
    """
    base: tuple[str, Callable[..., Any] | None] = ("generic", None)
    if op.spec is not None:
        base = (baseline or Baseline("generic", "", "generic")).for_spec(op.spec)
    kind = "override" if op.spec is not None and base[1] is not None else op.kind
    entry: dict[str, Any] = {"op": op.name, "aten": op.aten, "kind": kind,
                             "function": getattr(op.raw or op.func, "__qualname__", None),
                             "source": op.source}
    entry["baseline"] = base[0] if base[1] is not None else None
    if op.skip_status:
        return _listed_only(entry, op)
    accuracy: list[AccuracyCase] = []
    perf: dict[str, Any] = {"status": "not measured", "reason": None, "cases": []}
    errors: list[str] = []
    skipped: list[str] = []
    if op.spec is not None and op.func is not None and not op.error:
        dtypes, skipped = dtypes_for(op.spec, options.dtypes)
        cases = op.spec.cases(options.shapes)
        done = None
        if progress is not None:
            report = progress

            def done(case: Case, dtype: torch.dtype, seeds: int) -> None:
                report.case(op.name, f"{dtype_name(dtype)} {case.id}",
                            (numel(case.shape) + BASE_WEIGHT) * seeds)

        accuracy = check_op(op.spec, op.func, cases, dtypes, device, options.seeds, done)
        errors += [c.error for c in accuracy if c.error and c.max_abs_err is None]
        failed = sum(not c.ok for c in accuracy)
        if not measure:
            perf["reason"] = ("no CUDA device: accuracy ran on Triton's CPU interpreter "
                              "(TRITON_INTERPRET=1); timings there mean nothing")
        elif failed == 0 and not errors:
            perf = _performance(op, op.spec, cases, dtypes, device, base)
            if perf["status"] == "error":
                errors.append(f"during timing: {perf['reason']}")
    failed = sum(not c.ok for c in accuracy)
    ratios = _ratios(kind, perf) if perf["status"] == "measured" else None
    verdict = gates.op_verdict(kind, len(accuracy), failed, errors, ratios, options.thresholds,
                               op.error)
    entry["accuracy"] = {"status": "pass" if accuracy and failed == 0 else
                         ("not run" if not accuracy else "fail"),
                         "skipped": skipped, "cases": [c.to_json() for c in accuracy]}
    entry["performance"] = perf
    reason = verdict.reason
    if entry["baseline"] and entry["baseline"] != "generic":
        # The gate's wording names the generic kernel; say which op was really the yardstick.
        reason = reason.replace("speedup vs generic", f"speedup vs {entry['baseline']}")
    entry["verdict"] = {"status": verdict.status, "reason": reason,
                        "value": verdict.value.__dict__ if verdict.value else None}
    return entry


def location_of(func: Callable[..., Any] | None, root: Path) -> dict[str, Any] | None:
    """Where the backend defines `func`: `{"path", "line"}` relative to the backend folder, or
    None when it is defined elsewhere (a generic op, a library) or cannot be found."""
    target = inspect.unwrap(func) if func is not None else None
    try:
        file = inspect.getsourcefile(target) if target is not None else None
        line = inspect.getsourcelines(target)[1] if file and target is not None else 0
    except (OSError, TypeError):
        return None
    if not file:
        return None
    try:
        rel = Path(file).resolve().relative_to(root.resolve())
    except ValueError:
        return None
    return {"path": rel.as_posix(), "line": max(int(line), 1)}


def run_check(backend: Backend, options: CheckOptions, baseline: Baseline | None = None,
              progress: bool = False) -> tuple[list[dict[str, Any]], int]:
    """Check every selected op; (report entries, exit code). Never stops at a failing op.

    `baseline` defaults to resolving `options.baseline` (which may raise BaselineUnavailable);
    `progress` reports each op and slow cases on stderr.
    """
    measure = can_measure()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    base = baseline or resolve(options.baseline)
    chosen = select(backend, options.ops)
    # Timing roughly doubles a case's work on a GPU; the estimate only needs proportions.
    report = Progress(sum(accuracy_weight(op, options) for op in chosen)) if progress else None
    entries = []
    for index, op in enumerate(chosen, 1):
        if report is not None:
            cases = 0
            if op.spec is not None and not op.skip_status and not op.error:
                cases = (len(op.spec.cases(options.shapes)) * len(options.seeds)
                         * len(dtypes_for(op.spec, options.dtypes)[0]))
            report.op(index, len(chosen), op.name, cases,
                      op.skip_status or ("error" if op.error else None))
        entry = check_backend_op(op, options, device, measure, base, report)
        entry["location"] = location_of(op.raw or op.func, backend.path)
        entries.append(entry)
    verdicts = [gates.Verdict(e["verdict"]["status"], e["verdict"]["reason"]) for e in entries]
    return entries, gates.exit_code(verdicts, options.near_fails)
