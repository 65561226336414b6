"""`--plot DIR`: one PNG per timed op, time against shape, so a vendor sees where along the
shapes its kernel falls off. One panel per dtype; lines for the vendor's op, the baseline, torch
native and, when comparing, the op at the base revision. Times are the gated ones (launch-
inclusive for short kernels, kernels/perf.py), log scale. matplotlib (kernels extra) draws
off-screen (Agg), so runners need no display."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

STYLE = {"candidate": ("vendor (head)", "-o"), "base": ("vendor (base)", "--s"),
         "native": ("torch native", ":^")}


def _times(case: dict[str, Any]) -> dict[str, float]:
    times = case.get("launch_us") if case.get("gated_on") == "launch" else case.get("latency_us")
    return dict(times or {})


def plot_op(op: dict[str, Any], path: Path) -> bool:
    """Draw `op`'s timed cases to `path`; False when it has none."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    cases = op.get("performance", {}).get("cases", [])
    if not cases:
        return False
    dtypes = sorted({c["dtype"] for c in cases})
    fig, axes = plt.subplots(1, len(dtypes), figsize=(5 * len(dtypes), 4), squeeze=False)
    for ax, dtype in zip(axes[0], dtypes, strict=True):
        rows = [c for c in cases if c["dtype"] == dtype]
        labels = sorted({k for c in rows for k in _times(c)})
        for label in labels:
            name, style = STYLE.get(label, (f"baseline ({label})", "-.d"))
            ys = [_times(c).get(label, float("nan")) for c in rows]
            ax.plot(range(len(rows)), ys, style, label=name)
        ax.set_xticks(range(len(rows)), [c["case"] for c in rows], rotation=30, ha="right",
                      fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("us per call, the gated time (lower is faster)", fontsize=8)
        ax.set_title(f"{op['op']} {dtype}")
        ax.legend(fontsize=7)
    fig.suptitle(f"{op['op']}: {op['verdict']['status']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def plot_report(doc: dict[str, Any], folder: Path) -> list[str]:
    """One `<op>.png` per timed op of the report under `folder`; the file names written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for op in doc["ops"]:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", str(op["op"])) + ".png"
        if plot_op(op, folder / name):
            written.append(name)
    return written
