"""Committed expectations: a small CSV of expected per-case times beside a vendor's backend.

One file per device (`expected-<device>.csv`, say), rows `op,dtype,case,latency_us,margin`:
the candidate's device time (kernels/timing.py; launch-inclusive times depend on the host's
load and clocks, so they drift more between runs than a committed file can allow) and the
relative noise margin. `--expected FILE` fails a case outside value +- margin in either
direction: slower is a REGRESSION, faster an UNEXPECTED WIN (an improvement nobody wrote
down hides the next regression, so the file must be regenerated on purpose).
`--write-expected FILE` writes the regenerated file: values rounded to three significant
digits, a row whose old value is still within a third of its margin left unchanged (so
regenerating does not churn the file on noise). Lines starting with `#` are comments.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

Key = tuple[str, str, str]  # op, dtype, case
HEADER = ["op", "dtype", "case", "latency_us", "margin"]
DEFAULT_MARGIN = 0.15
REGRESSION, UNEXPECTED_WIN, WITHIN, MISSING = "REGRESSION", "UNEXPECTED WIN", "ok", "no expectation"


class ExpectedError(ValueError):
    """The expectations file cannot be read (usage error, exit 2); says line and problem."""


def read(path: Path) -> dict[Key, tuple[float, float]]:
    """(value, margin) per (op, dtype, case)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExpectedError(f"{path}: cannot read: {exc.strerror or exc}") from None
    out: dict[Key, tuple[float, float]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        row = next(csv.reader([line]))
        if row == HEADER:
            continue
        if len(row) != len(HEADER):
            raise ExpectedError(f"{path}: line {n}: expected {','.join(HEADER)}, got {row}")
        try:
            value, margin = float(row[3]), float(row[4])
        except ValueError:
            raise ExpectedError(f"{path}: line {n}: latency_us and margin must be numbers") from None
        if not (value > 0 and math.isfinite(value) and 0 < margin < 1):
            raise ExpectedError(f"{path}: line {n}: latency_us must be > 0, margin in (0, 1)")
        out[(row[0], row[1], row[2])] = (value, margin)
    return out


def measured(entries: Iterable[dict[str, Any]]) -> dict[Key, float]:
    """The candidate's device time per case of every timed op of a report."""
    out: dict[Key, float] = {}
    for entry in entries:
        for case in entry.get("performance", {}).get("cases", []):
            times = case.get("latency_us")
            if times and times.get("candidate"):
                out[(entry["op"], case["dtype"], case["case"])] = float(times["candidate"])
    return out


def judge(value: float, expected: tuple[float, float]) -> str:
    """REGRESSION, UNEXPECTED WIN or ok for one measured time."""
    want, margin = expected
    if value > want * (1 + margin):
        return REGRESSION
    if value < want * (1 - margin):
        return UNEXPECTED_WIN
    return WITHIN


def rounded(value: float) -> float:
    """Three significant digits."""
    return float(f"{value:.3g}")


def regenerate(now: dict[Key, float], old: dict[Key, tuple[float, float]],
               margin: float = DEFAULT_MARGIN) -> dict[Key, tuple[float, float]]:
    """New expectations: rounded measurements, old values kept within a third of the margin."""
    out: dict[Key, tuple[float, float]] = {}
    for key, value in sorted(now.items()):
        if key in old:
            want, keep = old[key]
            if abs(value - want) <= want * keep / 3:
                out[key] = (want, keep)
                continue
            out[key] = (rounded(value), keep)
        else:
            out[key] = (rounded(value), margin)
    return out


def render(rows: dict[Key, tuple[float, float]], device: str | None) -> str:
    """The CSV text, with a comment naming the device it was measured on."""
    buf = io.StringIO()
    buf.write(f"# flagbot kernels expected times (microseconds) on {device or 'unknown device'}\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(HEADER)
    for (op, dtype, case), (value, margin) in sorted(rows.items()):
        writer.writerow([op, dtype, case, f"{value:g}", f"{margin:g}"])
    return buf.getvalue()


def apply(entries: list[dict[str, Any]], expected: dict[Key, tuple[float, float]]) -> int:
    """Judge every timed case against `expected`; an op with a case outside its band fails.
    Each op gets `expectations` (per case); returns how many ops failed."""
    now = measured(entries)
    failed = 0
    for entry in entries:
        results = []
        for key, value in now.items():
            if key[0] != entry["op"]:
                continue
            want = expected.get(key)
            status = judge(value, want) if want else MISSING
            results.append({"dtype": key[1], "case": key[2], "latency_us": round(value, 3),
                            "expected_us": want[0] if want else None,
                            "margin": want[1] if want else None, "status": status})
        if not results:
            continue
        entry["expectations"] = results
        bad = [r for r in results if r["status"] in (REGRESSION, UNEXPECTED_WIN)]
        if bad:
            r = bad[0]
            text = (f"{r['status']}: {r['dtype']} {r['case']} {r['latency_us']:g} us, expected "
                    f"{r['expected_us']:g} us +-{r['margin']:.0%}"
                    + (f" ({len(bad) - 1} more case(s) outside)" if len(bad) > 1 else "")
                    + ("; if the change is intended, regenerate the file with --write-expected"
                       if r["status"] == UNEXPECTED_WIN else ""))
            old = entry["verdict"]
            failing = old["status"] in ("fail", "error")
            entry["verdict"] = {**old, "status": old["status"] if failing else "fail",
                                "reason": f"{old['reason']}; {text}" if failing else text}
        failed += bool(bad)
    return failed
