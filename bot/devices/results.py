"""A run's outcome as its check run shows it: conclusion, title, table, annotations.

Everything taken from a report is untrusted (it came from a runner that executed PR code): ops
and reasons are shown in code spans, the backend is named by its path in the repository (the
runner's absolute path is replaced wherever it appears), and annotations point only at files
under the device's backend folder.
"""

from __future__ import annotations

import re

from flagbot.bot.devices.plan import Device, Rules
from flagbot.bot.devices.report import OpResult, Report
from flagbot.bot.github import checkruns
from flagbot.bot.github.markdown import code
from flagbot.hooks.findings import ERROR, WARNING, Finding

# the failing ops of a run, hidden in its summary, so a later run can compare with it
FAILED_MARK = "<!-- flagbot-failed-ops: {ops} -->"
MARKED_OP = re.compile(r"[a-z0-9_]{1,64}")
MAX_MARKED = 400  # ops recorded (at most 26 000 characters of the 65 535 a summary may have)
FAILED_RE = re.compile(r"<!-- flagbot-failed-ops: ([a-z0-9_,]{0,26000}) -->")
ICONS = {"pass": "✅", "fail": "❌", "near": "➖", "unmeasured": "✅", "error": "❌",
         "disabled": "➖", "not checked": "➖"}
TOLERANCE = 1e-9


def scrub(text: str, report: Report, backend: str) -> str:
    """`text` with the runner's absolute backend path replaced by the repository path."""
    runner_path = report.backend_path.rstrip("/")
    return text.replace(runner_path, backend) if runner_path.startswith("/") else text


def speed(op_speedup: float | None, kind: str, performance: str) -> str:
    """The speed cell of one op."""
    if op_speedup is None:
        return performance
    return f"{op_speedup:.2f}x vs {'native' if kind == 'new' else 'baseline'}"


def head_vs_base(op: OpResult) -> str:
    """The head-vs-base cell: speed ratio and outcome (`0.77x regression`)."""
    if op.compare is None:
        return "-"
    icon = "❌ " if op.compare == "regression" else ""
    return icon + (f"{op.vs_base:.2f}x {op.compare}" if op.vs_base is not None else op.compare)


def threshold_problem(report: Report, rule: Rules) -> str | None:
    """Why the report's gates are not the configured ones, or None when they are."""
    want = {"override_min_speedup": rule.min_speedup,
            "new_op_min_fraction_of_native": rule.min_native_fraction}
    wrong = [f"{k} {report.thresholds.get(k)} (configured {v})" for k, v in want.items()
             if abs(report.thresholds.get(k, -1.0) - v) > TOLERANCE]
    return "the report used other thresholds: " + ", ".join(wrong) if wrong else None


def from_report(report: Report, device: Device, rule: Rules, run_url: str | None,
                inherited: frozenset[str] = frozenset(), base_sha: str = "") -> checkruns.CheckResult:
    """The check run for a valid report. Failing ops quarantined for the device, or `inherited`
    (they failed in the base branch's last run, on commit `base_sha`, too), are shown but do not
    fail it."""
    backend = device.backend
    quarantined = rule.quarantined(device.name)
    excused = {op.name: "quarantined" if op.name in quarantined else "inherited"
               for op in report.failed if op.name in quarantined or op.name in inherited}
    where = f"{code(report.device)}" if report.device else "CPU (Triton interpreter; speed not measured)"
    lines = [f"Kernel check of {code(backend)} on device {code(device.name)}: {where}, torch "
             f"{code(report.torch)}, triton {code(report.triton)}, shapes {code(report.shapes)}, "
             f"overrides gated against {code(report.baseline)} (speedup >= {rule.min_speedup:g}; "
             f"new ops >= {rule.min_native_fraction:g} of native).", ""]
    findings: list[Finding] = []
    problems: list[str] = []
    gate = threshold_problem(report, rule)
    if gate:
        problems.append(gate)
    if report.backend_error:
        problems.append("the backend did not load: " + code(scrub(report.backend_error, report, backend), 400))
    if report.busy:
        problems.append("device busy, speed not measured: " + code(report.busy, 300))
    base = f" vs base {code(report.compare_ref, 40)} |" if report.compare_ref else ""
    if report.ops:
        lines += ["| op | kind | accuracy | max rel err | speed |" + base + " verdict |",
                  "| --- | --- | --- | --- | --- |" + (" --- |" if base else "") + " --- |"]
    for op in report.ops:
        err = "-" if op.worst_rel_err is None else f"{op.worst_rel_err:.1e}"
        lines.append(f"| {code(op.name, 64)} | {op.kind} | {op.passed}/{op.cases} | {err} | "
                     f"{speed(op.speedup, op.kind, op.performance)} |"
                     + (f" {head_vs_base(op)} |" if base else "")
                     + f" {ICONS.get(op.verdict, '')} **{op.verdict}**"
                     + (f" ({excused[op.name]})" if op.name in excused else "") + " |")
    notes = [op for op in report.ops if op.verdict not in ("pass", "unmeasured", "disabled")]
    if notes:
        lines.append("")
    for op in notes:
        reason = scrub(op.reason, report, backend)
        lines.append(f"- {code(op.name, 64)}: {code(reason, 400)}")
        if op.verdict in ("fail", "error"):
            path, line = (f"{backend}/{op.source[0]}", op.source[1]) if op.source \
                else (f"{backend}/ops/__init__.py", 1)
            findings.append(Finding(path, line, WARNING if op.name in excused else ERROR,
                                    f"kernel-{op.verdict}", f"{op.name}: {reason}"[:1000]))
    if report.exit_code != 0 and not report.failed and not problems:
        problems.append(f"the check exited {report.exit_code}")
    if problems:
        lines += ["", *[f"- **{p}**" for p in problems]]
    if run_url:
        lines += ["", f"Logs and the full report: {run_url}"]
        if report.plots:
            lines.append(f"Plots (speed by shape, `plots/` in the run's artifact): "
                         f"{', '.join(code(p, 90) for p in report.plots[:40])}")
    if excused:
        lines += ["", *excuse_lines(excused, base_sha)]
    # first, so that clipping a long summary never drops it
    lines.insert(0, FAILED_MARK.format(ops=",".join(sorted(
        op.name for op in report.failed if MARKED_OP.fullmatch(op.name))[:MAX_MARKED])))
    new = [op for op in report.failed if op.name not in excused]
    failed = bool(new or problems)
    conclusion = "failure" if failed else "neutral" if "inherited" in excused.values() else "success"
    title = (f"{len(new)} of {len(report.ops)} op(s) failed"
             + (f" ({len(excused)} more excused)" if excused else "") if new
             else problems[0][:120] if problems
             else excused_title(excused) if excused
             else f"{len(report.ops)} op(s) accurate; speed not measured (CPU)" if report.device is None
             else f"{len(report.ops)} op(s) passed")
    return checkruns.CheckResult(device.check_name, conclusion, title, "\n".join(lines), "", findings)


def excused_title(excused: dict[str, str]) -> str:
    inherited = sum(1 for why in excused.values() if why == "inherited")
    quarantined = len(excused) - inherited
    parts = ([f"{inherited} op(s) fail on the base branch too (inherited)"] if inherited else []) \
        + ([f"{quarantined} quarantined op(s) failed"] if quarantined else [])
    return "; ".join(parts) + "; nothing new failed"


def excuse_lines(excused: dict[str, str], base: str) -> list[str]:
    """Why failing ops do not fail the check run."""
    out = []
    inherited = sorted(op for op, why in excused.items() if why == "inherited")
    quarantined = sorted(op for op, why in excused.items() if why == "quarantined")
    if inherited:
        where = f" (commit `{base[:12]}`)" if base else ""
        out.append(f"- **inherited**: {', '.join(code(o, 64) for o in inherited)} failed in this "
                   f"device's last completed run on the base branch{where} as well; this pull "
                   "request did not break them.")
    if quarantined:
        out.append(f"- **quarantined** on this device (`kernels.quarantine`): "
                   f"{', '.join(code(o, 64) for o in quarantined)}; they still run and are "
                   "reported, but do not fail the check.")
    return out


def failed_ops(summary: str) -> frozenset[str] | None:
    """The failing ops a completed kernels check run recorded (None: it recorded none)."""
    match = FAILED_RE.search(summary or "")
    if match is None:
        return None
    return frozenset(o for o in match.group(1).split(",") if o)


def without_report(device: Device, conclusion: str, title: str, why: str,
                   run_url: str | None) -> checkruns.CheckResult:
    """The check run when no usable report came back (`why` is the bot's own words)."""
    text = why + (f"\n\nLogs: {run_url}" if run_url else "")
    return checkruns.CheckResult(device.check_name, conclusion, title, text)
