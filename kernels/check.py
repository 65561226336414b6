"""`kernels check`: accuracy, then (on a GPU) timing, then the gate, for each op of a backend."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from flagbot.kernels import gates, health, perf
from flagbot.kernels.accuracy import AccuracyCase, check_op, dtype_name
from flagbot.kernels.backend_utils import interpreted
from flagbot.kernels.baseline import Baseline, resolve
from flagbot.kernels.device import Device
from flagbot.kernels.device import resolve as resolve_device
from flagbot.kernels.loader import Backend, BackendOp
from flagbot.kernels.progress import BASE_WEIGHT, Progress
from flagbot.kernels.registry import lookup
from flagbot.kernels.spec import Case, OpSpec, numel
from flagbot.kernels.yardsticks import Yardsticks

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
    device: str | None = None  # --device; None: the default device (kernels/device.py)
    # The vendor's runtime replays CUDA graphs, so launch overhead is not what users pay:
    # gate short kernels on device time, not launch-inclusive time.
    runtime_graphs: bool = False
    wait_s: float = 600.0  # how long a busy device is waited for before "device busy"


@dataclass
class CheckResult:
    """Report entries, exit code, the device used, its health reading and its yardsticks."""

    entries: list[dict[str, Any]]
    exit_code: int
    device: Device
    health: dict[str, Any] | None = None
    yardsticks: dict[str, Any] | None = None


def can_measure() -> bool:
    """Timing needs an accelerator and compiled (not interpreted) kernels."""
    try:
        return resolve_device(None).timed
    except Exception:  # noqa: BLE001 - a device that cannot be reached cannot time
        return False


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


def _listed_only(entry: dict[str, Any], op: BackendOp) -> dict[str, Any]:
    """The entry of an op reported but never run: disabled, or no spec to check it with."""
    entry["accuracy"] = {"status": "not run", "skipped": [], "cases": []}
    entry["performance"] = {"status": "not measured", "reason": op.skip, "cases": []}
    entry["verdict"] = {"status": op.skip_status, "reason": op.skip, "value": None}
    return entry


@dataclass
class Run:
    """What every op of one run shares: the device, whether and why not it is timed, the
    yardsticks, the op at the base revision (by name) and progress."""

    device: Device
    not_timed: str | None  # why performance is not measured, or None when it is
    yardsticks: Yardsticks | None = None
    base_ops: dict[str, BackendOp] | None = None  # --compare-to: the base's ops by name
    ref: str | None = None
    progress: Progress | None = None


class _Stopwatch:
    """Seconds spent inside a callable (synchronised: device work counts where it runs)."""

    def __init__(self, fn: Callable[..., Any], device: Device) -> None:
        self.fn, self.device, self.seconds = fn, device, 0.0
        self.first: float | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        out = self.fn(*args, **kwargs)
        self.device.synchronize()
        spent = time.perf_counter() - start
        self.seconds += spent
        self.first = spent if self.first is None else self.first
        return out


def _accuracy(op: BackendOp, func: Callable[..., Any], cases: Sequence[Case],
              dtypes: Sequence[torch.dtype], options: CheckOptions, run: Run
              ) -> list[AccuracyCase]:
    assert op.spec is not None
    done = None
    if run.progress is not None:
        report = run.progress

        def done(case: Case, dtype: torch.dtype, seeds: int) -> None:
            report.case(op.name, f"{dtype_name(dtype)} {case.id}",
                        (numel(case.shape) + BASE_WEIGHT) * seeds)

    return check_op(op.spec, func, cases, dtypes, run.device.torch_device, options.seeds, done)


def _base_accurate(base: BackendOp | None, cases: Sequence[Case], dtypes: Sequence[torch.dtype],
                   options: CheckOptions, run: Run) -> bool | None:
    """Whether the op at the base revision passes the same cases (None: no such op there)."""
    if base is None or base.func is None or base.spec is None or base.error:
        return None
    results = check_op(base.spec, base.func, cases, dtypes, run.device.torch_device,
                       options.seeds)
    return bool(results) and all(c.ok for c in results)


def _compare(entry: dict[str, Any], head_ok: bool, base: BackendOp | None,
             cases: Sequence[Case], dtypes: Sequence[torch.dtype], options: CheckOptions,
             run: Run) -> None:
    """Head vs base of one op into `entry["compare"]`; a regression fails the op."""
    assert run.ref is not None
    # The base's accuracy matters only when the head is inaccurate (is that new?).
    base_ok = (_base_accurate(base, cases, dtypes, options, run) if not head_ok else
               (None if base is None or base.func is None else True))
    measured = entry["performance"]["status"] == "measured"
    ratios = perf.base_ratios(entry["performance"]) if measured else None
    v = gates.compare_verdict(head_ok, base_ok, ratios, options.thresholds, run.ref)
    entry["compare"] = {"ref": run.ref, "status": v.status, "reason": v.reason,
                        "value": v.value.__dict__ if v.value else None}
    if v.status == gates.REGRESSION:
        old = entry["verdict"]
        reason = v.reason if old["status"] not in gates.FAILING else \
            f"{v.reason}; {old['reason']}"
        entry["verdict"] = {**old, "status": gates.FAIL, "reason": reason}


def check_backend_op(op: BackendOp, options: CheckOptions, run: Run,
                     baseline: Baseline | None = None) -> dict[str, Any]:
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
    result: dict[str, Any] = {"status": "not measured", "reason": None, "cases": []}
    errors: list[str] = []
    skipped: list[str] = []
    seconds: dict[str, float] = {}
    cases: Sequence[Case] = ()
    dtypes: list[torch.dtype] = []
    at_base = (run.base_ops or {}).get(op.name)
    if op.spec is not None and op.func is not None and not op.error:
        dtypes, skipped = dtypes_for(op.spec, options.dtypes)
        cases = op.spec.cases(options.shapes)
        watch = _Stopwatch(op.func, run.device)
        start = time.perf_counter()
        accuracy = _accuracy(op, watch, cases, dtypes, options, run)
        seconds["accuracy"] = time.perf_counter() - start
        seconds["accuracy_candidate_calls"] = watch.seconds
        seconds["accuracy_first_call"] = watch.first or 0.0
        errors += [c.error for c in accuracy if c.error and c.max_abs_err is None]
        failed = sum(not c.ok for c in accuracy)
        if run.not_timed:
            result["reason"] = run.not_timed
        elif failed == 0 and not errors:
            start = time.perf_counter()
            contenders = perf.Contenders(base, at_base.func if at_base and not at_base.error
                                         and not at_base.skip_status else None)
            result = perf.performance(op.func, op.spec, cases, dtypes, run.device, contenders,
                                      run.yardsticks, options.runtime_graphs)
            seconds["performance"] = time.perf_counter() - start
            if result["status"] == "error":
                errors.append(f"during timing: {result['reason']}")
    failed = sum(not c.ok for c in accuracy)
    ratios = perf.gate_ratios(kind, result) if result["status"] == "measured" else None
    verdict = gates.op_verdict(kind, len(accuracy), failed, errors, ratios, options.thresholds,
                               op.error)
    if verdict.status == gates.PASS and result["status"] == "measured":
        verdict = gates.floor_verdict(perf.copy_fractions(result),
                                      options.thresholds.min_fraction_of_copy) or verdict
    entry["accuracy"] = {"status": "pass" if accuracy and failed == 0 else
                         ("not run" if not accuracy else "fail"),
                         "skipped": skipped, "cases": [c.to_json() for c in accuracy]}
    entry["performance"] = result
    entry["seconds"] = {k: round(v, 3) for k, v in seconds.items()}
    reason = verdict.reason
    if entry["baseline"] and entry["baseline"] != "generic":
        # The gate's wording names the generic kernel; say which op was really the yardstick.
        reason = reason.replace("speedup vs generic", f"speedup vs {entry['baseline']}")
    entry["verdict"] = {"status": verdict.status, "reason": reason,
                        "value": verdict.value.__dict__ if verdict.value else None}
    if run.ref is not None and op.spec is not None and op.func is not None and not op.error:
        _compare(entry, bool(accuracy) and failed == 0 and not errors, at_base, cases, dtypes,
                 options, run)
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


def _not_timed(device: Device, options: CheckOptions) -> tuple[str | None, dict[str, Any] | None]:
    """(why performance is not measured or None, the health gate's reading)."""
    if not device.timed:
        return ("no accelerator: accuracy ran on Triton's CPU interpreter (TRITON_INTERPRET=1); "
                "timings there mean nothing"), None
    state = health.wait_until_free(device, options.wait_s)
    if state["busy"]:
        return (f"device busy: {state['busy']} after waiting {state['waited_s']:g} s; "
                "re-run when the device is free"), state
    return None, state


def _progress(report: Progress, index: int, total: int, op: BackendOp,
              options: CheckOptions) -> None:
    cases = 0
    if op.spec is not None and not op.skip_status and not op.error:
        cases = (len(op.spec.cases(options.shapes)) * len(options.seeds)
                 * len(dtypes_for(op.spec, options.dtypes)[0]))
    report.op(index, total, op.name, cases, op.skip_status or ("error" if op.error else None))


def run_check(backend: Backend, options: CheckOptions, baseline: Baseline | None = None,
              progress: bool = False, device: Device | None = None,
              base: Backend | None = None, ref: str | None = None) -> CheckResult:
    """Check every selected op; never stops at a failing op.

    `baseline` defaults to resolving `options.baseline` (which may raise BaselineUnavailable);
    `device` to `options.device` or the default device (kernels/device.py); `base` is the
    backend at revision `ref` to compare with; `progress` reports each op and slow cases on
    stderr.
    """
    dev = device or resolve_device(options.device)
    not_timed, state = _not_timed(dev, options)
    run = Run(dev, not_timed, None if not_timed else Yardsticks(dev),
              {op.name: op for op in base.ops} if base is not None else None, ref)
    chosen = select(backend, options.ops)
    gated_against = baseline or resolve(options.baseline)
    # Timing roughly doubles a case's work on a GPU; the estimate only needs proportions.
    if progress:
        run.progress = Progress(sum(accuracy_weight(op, options) for op in chosen))
    entries = []
    for index, op in enumerate(chosen, 1):
        if run.progress is not None:
            _progress(run.progress, index, len(chosen), op, options)
        entry = check_backend_op(op, options, run, gated_against)
        entry["location"] = location_of(op.raw or op.func, backend.path)
        entries.append(entry)
    verdicts = [gates.Verdict(e["verdict"]["status"], e["verdict"]["reason"]) for e in entries]
    code = gates.exit_code(verdicts, options.near_fails)
    busy = state["busy"] if state else None
    return CheckResult(entries, 2 if busy and code == 0 else code, dev, state,
                       run.yardsticks.to_json() if run.yardsticks else None)
