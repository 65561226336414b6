"""The check's report: a versioned, self-describing JSON document and a compact Markdown table.

Schema: docs/kernels-report-schema.md. Bump SCHEMA_VERSION on any change a reader must know of.
"""

from __future__ import annotations

import datetime
import json
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy
import torch
import triton

from flagbot.kernels import __version__
from flagbot.kernels.backend_utils import interpreted
from flagbot.kernels.check import CheckOptions, CheckResult
from flagbot.kernels.device import Device, metadata
from flagbot.kernels.loader import Backend

SCHEMA = "flagbot.kernels.report"
# 3: device type and how it was chosen, launch-inclusive times, yardsticks, health, compare,
# expectations, plots, per-op seconds.
SCHEMA_VERSION = 3


def environment(device: Device | None = None) -> dict[str, Any]:
    """Versions, interpreter mode and the device (null on the CPU)."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "numpy": numpy.__version__,
        "platform": platform.platform(),
        "interpreter": interpreted(),
        "device": metadata(device) if device is not None else None,
    }


def backend_info(backend: Backend | None, path: str, error: str | None) -> dict[str, Any]:
    """The report's `backend` object."""
    if backend is None:
        return {"path": path, "form": None, "vendor_name": None, "device_name": None,
                "unused_ops": [], "arch": None, "arch_note": None, "flaggems": None,
                "operator_table": None, "not_operators": [], "error": error}
    return {"path": str(backend.path), "form": backend.form, "vendor_name": backend.vendor_name,
            "device_name": backend.device_name, "unused_ops": backend.unused_ops,
            "arch": backend.arch, "arch_note": backend.arch_note,
            "flaggems": None if backend.flaggems is None else str(backend.flaggems),
            "operator_table": backend.operator_table, "not_operators": backend.not_operators,
            "error": error}


def build(argv: Sequence[str], options: CheckOptions, backend: dict[str, Any],
          ops: list[dict[str, Any]], exit_code: int,
          baseline: dict[str, Any] | None = None, device: Device | None = None,
          result: CheckResult | None = None) -> dict[str, Any]:
    """The whole JSON document; `baseline` is what overrides were gated against."""
    counts: dict[str, int] = {}
    for op in ops:
        counts[op["verdict"]["status"]] = counts.get(op["verdict"]["status"], 0) + 1
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "flagbot kernels", "version": __version__},
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": list(argv),
        "environment": environment(device),
        "options": {
            "shapes": options.shapes,
            "ops": options.ops,
            "dtypes": None if options.dtypes is None else
            [str(d).removeprefix("torch.") for d in options.dtypes],
            "seeds": list(options.seeds),
            "thresholds": dict(options.thresholds.__dict__),
            "near_fails": options.near_fails,
            "baseline": options.baseline,
            "device": options.device,
            "runtime_graphs": options.runtime_graphs,
            "wait_s": options.wait_s,
        },
        "health": result.health if result else None,
        "yardsticks": result.yardsticks if result else None,
        "compare": None,
        "baseline": baseline,
        "backend": backend,
        "ops": ops,
        "summary": {"verdicts": counts, "exit_code": exit_code},
    }


def write_json(report: dict[str, Any], path: Path) -> None:
    """Write the report (parents created); indent for humans, sorted for stable diffs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _worst_error(op: dict[str, Any]) -> float | None:
    errs = [c["max_rel_err"] for c in op["accuracy"]["cases"] if c.get("max_rel_err") is not None]
    return float(max(errs)) if errs else None


def _speed_cell(op: dict[str, Any]) -> str:
    perf = op["performance"]
    if perf["status"] != "measured":
        return str(perf["status"])
    value = op["verdict"]["value"]
    vs = f"vs {op.get('baseline') or 'generic'}" if op["kind"] == "override" else "vs native"
    return f"{value['median']:.2f}x {vs}" if value else "-"


def _op_cell(op: dict[str, Any]) -> str:
    """`mm`, or `mm (hopper/ops)` for an op from an architecture folder."""
    source = op.get("source") or ""
    return f"{op['op']} ({source})" if "/" in source else str(op["op"])


def _baseline_text(baseline: dict[str, Any] | None) -> str:
    if not baseline:
        return ""
    return f", overrides gated against {baseline['name']} {baseline['version']}"


def _compare_cell(op: dict[str, Any]) -> str:
    cmp = op.get("compare")
    if not cmp:
        return "-"
    value = cmp.get("value")
    return f"{value['median']:.2f}x ({cmp['status']})" if value else str(cmp["status"])


def _copy_cell(op: dict[str, Any]) -> str:
    from flagbot.kernels.perf import copy_fractions

    fractions = copy_fractions(op["performance"])
    return f"{min(fractions):.0%}-{max(fractions):.0%}" if fractions else "-"


def markdown(report: dict[str, Any]) -> str:
    """A compact table for a PR comment: one row per op, then one line per failing reason."""
    env, dev = report["environment"], report["environment"]["device"]
    where = dev["name"] if dev else "CPU (Triton interpreter; performance not measured)"
    b = report["backend"]
    cmp = report.get("compare")
    head = "| op | kind | accuracy | max rel err | speed | of copy bw |"
    if cmp and cmp.get("sha"):
        head += f" vs `{cmp['ref']}` |"
    lines = [
        f"**flagbot kernels check** `{b['path']}` ({b.get('vendor_name') or '?'}) on {where}",
        f"torch {env['torch']}, triton {env['triton']}, shapes `{report['options']['shapes']}`,"
        f" exit {report['summary']['exit_code']}{_baseline_text(report.get('baseline'))}",
        "",
        head + " verdict |",
        "|" + " --- |" * (head.count("|")),
    ]
    for op in report["ops"]:
        acc = op["accuracy"]
        n_ok = sum(c["ok"] for c in acc["cases"])
        ran = f"{n_ok}/{len(acc['cases'])}" if acc["cases"] else "-"
        extra = f" {_compare_cell(op)} |" if cmp and cmp.get("sha") else ""
        lines.append(f"| {_op_cell(op)} | {op['kind']} | {ran} | "
                     f"{_fmt(_worst_error(op), '.1e')} | {_speed_cell(op)} | {_copy_cell(op)} |"
                     f"{extra} **{op['verdict']['status']}** |")
    notes = [f"- `{op['op']}`: {op['verdict']['reason']}" for op in report["ops"]
             if op["verdict"]["status"] not in ("pass", "unmeasured", "not checked")
             or "slower on" in op["verdict"]["reason"]]
    unchecked = [f"{op['op']} ({op['aten']})" for op in report["ops"]
                 if op["verdict"]["status"] == "not checked"]
    if unchecked:
        notes.append(f"- not checked (no input maker in kernels/registry.py yet): "
                     f"{', '.join(unchecked)}")
    others = [f"{f['function']} ({f['source']})" for f in b.get("not_operators") or ()]
    if others:
        notes.append(f"- functions FlagGems registers for no aten operator (not checked): "
                     f"{', '.join(others)}")
    if b.get("error"):
        notes.insert(0, f"- backend: {b['error']}")
    health = report.get("health") or {}
    if health.get("busy"):
        notes.insert(0, f"- **device busy**: {health['busy']}; performance not measured")
    if cmp and cmp.get("error"):
        notes.insert(0, f"- --compare-to {cmp['ref']}: {cmp['error']}")
    if b.get("arch") or b.get("arch_note"):
        notes.insert(0, f"- architecture folder: {b.get('arch') or b.get('arch_note')}")
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"
