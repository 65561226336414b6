"""A kernels report that came back from a runner, read as untrusted data.

The runner executed a pull request's code, so its report may say anything: it is parsed as JSON
only (nothing in it is evaluated or imported), bounded in size and nesting, and checked field by
field against the schema (`flagbot.kernels.report`, version 1). What the bot keeps is a small,
typed `Report`; every string in it is cut to a length and later shown only inside code spans.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

SCHEMA = "flagbot.kernels.report"
# 2 added verdicts `disabled` and `not checked`; 3 the head-vs-base comparison, device health
# and plots (optional fields, read when present)
SCHEMA_VERSIONS = (1, 2, 3)
MAX_REPORT_BYTES = 4 * 1024 * 1024
MAX_OPS = 200
MAX_CASES = 20_000  # accuracy cases per op
MAX_TEXT = 500
OP_NAME_RE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
SOURCE_RE = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./-]{0,199}")
KINDS = ("override", "new", "unknown")
VERDICTS = ("pass", "fail", "near", "unmeasured", "error", "disabled", "not checked")
PERF = ("measured", "not measured", "error")
COMPARE = ("regression", "same", "faster", "slower within noise", "new", "not compared")
PLOT_RE = re.compile(r"[A-Za-z0-9_.-]{1,80}\.png")
MAX_PLOTS = MAX_OPS


class ReportError(ValueError):
    """The report is unusable; the message says which field and why (shown on the check run)."""


@dataclass(frozen=True)
class OpResult:
    """One op's outcome, as the check run shows it."""

    name: str
    kind: str
    verdict: str
    reason: str
    cases: int
    passed: int
    worst_rel_err: float | None
    speedup: float | None  # the combined ratio the gate judged (median), when measured
    performance: str
    source: tuple[str, int] | None  # file relative to the backend folder, line
    compare: str | None = None  # head vs base outcome (COMPARE), when compared
    vs_base: float | None = None  # head speed / base speed (median), when timed


@dataclass(frozen=True)
class Report:
    """What the bot uses of a report."""

    exit_code: int
    device: str | None  # the GPU's name; None on the CPU interpreter
    interpreter: bool
    torch: str
    triton: str
    shapes: str
    thresholds: dict[str, float]
    backend_path: str  # as the runner wrote it (absolute there)
    backend_error: str | None
    baseline: str
    ops: list[OpResult] = field(default_factory=list)
    compare_ref: str | None = None  # the base revision compared with, when it loaded
    busy: str | None = None  # why the device was too busy to time, when it was
    plots: tuple[str, ...] = ()  # PNG names in the artifact's plots/ folder

    @property
    def failed(self) -> list[OpResult]:
        """Ops whose verdict fails the check (`near` does not, as in the command's exit code)."""
        return [op for op in self.ops if op.verdict in ("fail", "error")]


def _get(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise ReportError(f"{where}{key}: missing")
    return obj[key]


def _text(obj: Any, key: str, where: str, *, optional: bool = False) -> str | None:
    value = obj.get(key) if isinstance(obj, dict) else None
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ReportError(f"{where}{key}: must be a string")
    return value[:MAX_TEXT]


def _number(value: Any, what: str, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ReportError(f"{what}: must be a finite number")
    return float(value)


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ReportError(f"{what}: must be one of {', '.join(allowed)}")
    return str(value)


def _source(value: Any, where: str) -> tuple[str, int] | None:
    if value is None:
        return None
    path, line = _get(value, "path", where + "location."), _get(value, "line", where + "location.")
    if not isinstance(path, str) or not SOURCE_RE.fullmatch(path) or ".." in path.split("/"):
        raise ReportError(f"{where}location.path: must be a relative path inside the backend")
    if isinstance(line, bool) or not isinstance(line, int) or not 1 <= line <= 10_000_000:
        raise ReportError(f"{where}location.line: must be a positive line number")
    return path, line


def _op(raw: Any, i: int) -> OpResult:
    where = f"ops[{i}]."
    name = _get(raw, "op", where)
    if not isinstance(name, str) or not OP_NAME_RE.fullmatch(name):
        raise ReportError(f"{where}op: must be an op name (letters, digits, `_.:-`, up to 64)")
    verdict = _get(raw, "verdict", where)
    accuracy = _get(raw, "accuracy", where)
    cases = _get(accuracy, "cases", where + "accuracy.")
    if not isinstance(cases, list) or len(cases) > MAX_CASES:
        raise ReportError(f"{where}accuracy.cases: must be a list of at most {MAX_CASES}")
    passed, errs = 0, []
    for j, case in enumerate(cases):
        ok = _get(case, "ok", f"{where}accuracy.cases[{j}].")
        if not isinstance(ok, bool):
            raise ReportError(f"{where}accuracy.cases[{j}].ok: must be true or false")
        passed += ok
        err = _number(case.get("max_rel_err"), f"{where}accuracy.cases[{j}].max_rel_err",
                      optional=True)
        if err is not None:
            errs.append(err)
    value = verdict.get("value") if isinstance(verdict, dict) else None
    speedup = _number(_get(value, "median", where + "verdict.value."), where + "verdict.value.median") \
        if value is not None else None
    perf = _get(raw, "performance", where)
    compare, vs_base = _compare(raw.get("compare"), where)
    return OpResult(
        name=name,
        kind=_choice(_get(raw, "kind", where), KINDS, where + "kind"),
        verdict=_choice(_get(verdict, "status", where + "verdict."), VERDICTS, where + "verdict.status"),
        reason=_text(verdict, "reason", where + "verdict.") or "",
        cases=len(cases), passed=passed, worst_rel_err=max(errs) if errs else None,
        speedup=speedup,
        performance=_choice(_get(perf, "status", where + "performance."), PERF,
                            where + "performance.status"),
        source=_source(raw.get("location"), where),
        compare=compare, vs_base=vs_base,
    )


def _compare(value: Any, where: str) -> tuple[str | None, float | None]:
    if value is None:
        return None, None
    status = _choice(_get(value, "status", where + "compare."), COMPARE, where + "compare.status")
    ratio = value.get("value") if isinstance(value, dict) else None
    median = _number(_get(ratio, "median", where + "compare.value."),
                     where + "compare.value.median") if ratio is not None else None
    return status, median


def _extras(doc: dict[str, Any]) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(compared ref, device-busy reason, plot names) of a version 3 report."""
    cmp = doc.get("compare")
    ref = _text(cmp, "ref", "compare.") if isinstance(cmp, dict) and cmp.get("sha") else None
    health = doc.get("health")
    busy = _text(health, "busy", "health.", optional=True) if isinstance(health, dict) else None
    plots = doc.get("plots") or []
    if not isinstance(plots, list) or len(plots) > MAX_PLOTS or \
            not all(isinstance(p, str) and PLOT_RE.fullmatch(p) for p in plots):
        raise ReportError(f"plots: must be a list of at most {MAX_PLOTS} `<name>.png` file names")
    return ref, busy, tuple(plots)


def parse_report(data: bytes) -> Report:
    """The `Report` in `data` (JSON bytes), or ReportError naming the first bad field."""
    if len(data) > MAX_REPORT_BYTES:
        raise ReportError(f"report.json is {len(data)} bytes, over the limit of {MAX_REPORT_BYTES}")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ReportError(f"report.json is not JSON: {str(exc)[:200]}") from None
    if not isinstance(doc, dict):
        raise ReportError("report.json: the top level must be an object")
    if doc.get("schema") != SCHEMA or doc.get("schema_version") not in SCHEMA_VERSIONS \
            or isinstance(doc.get("schema_version"), bool):
        raise ReportError(f"report.json: expected schema {SCHEMA} version 1 to 3, got "
                          f"{str(doc.get('schema'))[:60]!r} version {str(doc.get('schema_version'))[:10]}")
    env = _get(doc, "environment", "")
    device = _get(env, "device", "environment.")
    options = _get(doc, "options", "")
    thresholds = _get(options, "thresholds", "options.")
    backend = _get(doc, "backend", "")
    summary = _get(doc, "summary", "")
    exit_code = _get(summary, "exit_code", "summary.")
    if exit_code not in (0, 1, 2) or isinstance(exit_code, bool):
        raise ReportError("summary.exit_code: must be 0, 1 or 2")
    ops = _get(doc, "ops", "")
    if not isinstance(ops, list) or len(ops) > MAX_OPS:
        raise ReportError(f"ops: must be a list of at most {MAX_OPS}")
    interpreter = _get(env, "interpreter", "environment.")
    if not isinstance(interpreter, bool):
        raise ReportError("environment.interpreter: must be true or false")
    baseline = doc.get("baseline")
    ref, busy, plots = _extras(doc)
    return Report(
        exit_code=int(exit_code),
        device=_text(device, "name", "environment.device.") if device is not None else None,
        interpreter=interpreter,
        torch=_text(env, "torch", "environment.") or "",
        triton=_text(env, "triton", "environment.") or "",
        shapes=_text(options, "shapes", "options.") or "",
        thresholds={key: float(_number(_get(thresholds, key, "options.thresholds."),
                                       f"options.thresholds.{key}") or 0.0)
                    for key in ("override_min_speedup", "new_op_min_fraction_of_native")},
        backend_path=_text(backend, "path", "backend.") or "",
        backend_error=_text(backend, "error", "backend.", optional=True),
        baseline=(f"{_text(baseline, 'name', 'baseline.')} {_text(baseline, 'version', 'baseline.')}"
                  if isinstance(baseline, dict) else "generic"),
        ops=[_op(raw, i) for i, raw in enumerate(ops)],
        compare_ref=ref, busy=busy, plots=plots,
    )
