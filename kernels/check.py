"""`kernels check`: accuracy, then (on a GPU) timing, then the gate, for each op of a backend."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from flagbot.kernels import gates, timing
from flagbot.kernels.accuracy import AccuracyCase, check_op, dtype_name
from flagbot.kernels.backend_utils import interpreted
from flagbot.kernels.baseline import Baseline, resolve
from flagbot.kernels.loader import Backend, BackendOp
from flagbot.kernels.registry import lookup
from flagbot.kernels.spec import Case, OpSpec

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


def select(backend: Backend, wanted: Sequence[str] | None) -> list[BackendOp]:
    """The backend's ops, or those named in `wanted` (unknown or absent names become errors)."""
    if not wanted:
        return list(backend.ops)
    chosen: list[BackendOp] = []
    for name in wanted:
        match = [op for op in backend.ops if name in (op.name, op.aten)]
        if match:
            chosen.extend(match)
            continue
        spec = lookup(name)
        reason = (f"the backend does not provide {name!r}" if spec else
                  f"unknown op {name!r}: not in kernels/registry.py")
        chosen.append(BackendOp(name=name, func=None, spec=spec, error=reason))
    return chosen


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


def check_backend_op(op: BackendOp, options: CheckOptions, device: torch.device,
                     measure: bool, baseline: Baseline | None = None) -> dict[str, Any]:
    """The report entry of one op: accuracy cases, performance cases, verdict.

    An override is timed against `baseline`'s op (FlagGems' or the generic kernel; default the
    generic kernel); a new op against torch native.
    """
    entry: dict[str, Any] = {"op": op.name, "aten": op.aten, "kind": op.kind,
                             "function": getattr(op.func, "__qualname__", None)}
    base: tuple[str, Callable[..., Any] | None] = ("generic", None)
    if op.spec is not None and op.kind == "override":
        base = (baseline or Baseline("generic", "", "generic")).for_spec(op.spec)
    entry["baseline"] = base[0] if base[1] is not None else None
    accuracy: list[AccuracyCase] = []
    perf: dict[str, Any] = {"status": "not measured", "reason": None, "cases": []}
    errors: list[str] = []
    skipped: list[str] = []
    if op.spec is not None and op.func is not None and not op.error:
        dtypes, skipped = dtypes_for(op.spec, options.dtypes)
        cases = op.spec.cases(options.shapes)
        accuracy = check_op(op.spec, op.func, cases, dtypes, device, options.seeds)
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
    ratios = _ratios(op.kind, perf) if perf["status"] == "measured" else None
    verdict = gates.op_verdict(op.kind, len(accuracy), failed, errors, ratios, options.thresholds,
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


def run_check(backend: Backend, options: CheckOptions,
              baseline: Baseline | None = None) -> tuple[list[dict[str, Any]], int]:
    """Check every selected op; (report entries, exit code). Never stops at a failing op.

    `baseline` defaults to resolving `options.baseline` (which may raise BaselineUnavailable).
    """
    measure = can_measure()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    base = baseline or resolve(options.baseline)
    entries = [check_backend_op(op, options, device, measure, base)
               for op in select(backend, options.ops)]
    verdicts = [gates.Verdict(e["verdict"]["status"], e["verdict"]["reason"]) for e in entries]
    return entries, gates.exit_code(verdicts, options.near_fails)
