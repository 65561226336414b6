"""Choose which generated operators to take in, from validated timing data (no torch).

Batch 1 (operators the library already has): speedup = flaggems_time / your_time; the
geometric mean over the operator's matched configs must be at least 1.30. Batch 2 (new
operators): relative time = your_time / cuda_time; the geometric mean must be at most 1.25
(80% of native speed). Either way no single config may fall below a floor on its speed
against the baseline (baseline time / your time), so a kernel fast on one shape and slow on
the rest is not taken on the strength of its best config.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from flagbot.kernels.intake.perfdata import Config, Validation

SCHEMA = "flagbot.kernels.selection/1"
# Comparisons allow for float rounding, so an operator exactly on the threshold passes.
EPS = 1e-9


@dataclass(frozen=True)
class Criterion:
    """One batch's rule: which baseline, which threshold, which per-config floor."""

    batch: int
    threshold: float
    min_config_speed: float

    @property
    def baseline(self) -> str:
        return "flaggems_time" if self.batch == 1 else "cuda_time"

    @property
    def figure(self) -> str:
        return "avg_speedup_vs_flaggems" if self.batch == 1 else "avg_relative_to_cuda"

    def describe(self) -> str:
        if self.batch == 1:
            return (f"geomean(flaggems_time / your_time) >= {self.threshold} and every config "
                    f">= {self.min_config_speed}x the existing kernel's speed")
        return (f"geomean(your_time / cuda_time) <= {self.threshold} and every config >= "
                f"{self.min_config_speed}x native speed")


DEFAULTS = {1: Criterion(1, 1.30, 1.0), 2: Criterion(2, 1.25, 0.5)}


def criterion(batch: int, threshold: float | None = None,
              min_config_speed: float | None = None) -> Criterion:
    """The batch's default rule with any of its numbers overridden."""
    base = DEFAULTS[batch]
    return Criterion(batch, base.threshold if threshold is None else threshold,
                     base.min_config_speed if min_config_speed is None else min_config_speed)


def geomean(values: list[float]) -> float:
    """Geometric mean of positive numbers."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


def judge(op: str, configs: list[Config], crit: Criterion) -> tuple[dict[str, Any] | None, str]:
    """(selection entry, "") when `op` meets `crit`, else (None, reason)."""
    usable = [c for c in configs if c.your_time and getattr(c, crit.baseline)]
    if not usable:
        hint = (" (is it a new operator? try --batch 2)" if crit.batch == 1 else
                " (is it one the library has? try --batch 1)")
        return None, f"no config has both your_time and {crit.baseline}{hint}"
    speeds = [getattr(c, crit.baseline) / c.your_time for c in usable]
    rows = []
    for config, speed in zip(usable, speeds, strict=True):
        row = config.to_json()
        row["speedup" if crit.batch == 1 else "relative_to_cuda"] = round(
            speed if crit.batch == 1 else 1.0 / speed, 4)
        rows.append(row)
    mean = geomean(speeds)
    figure = mean if crit.batch == 1 else 1.0 / mean
    slowest = min(range(len(usable)), key=speeds.__getitem__)
    if speeds[slowest] < crit.min_config_speed * (1 - EPS):
        return None, (f"{usable[slowest].label} runs at {speeds[slowest]:.3f}x the baseline's "
                      f"speed, below the floor {crit.min_config_speed}")
    passed = figure >= crit.threshold * (1 - EPS) if crit.batch == 1 else \
        figure <= crit.threshold * (1 + EPS)
    if not passed:
        sign = "<" if crit.batch == 1 else ">"
        return None, (f"{crit.figure} {figure:.4f} {sign} {crit.threshold} over "
                      f"{len(usable)} configs")
    entry = {crit.figure: round(figure, 4), "configs": rows}
    return entry, ""


def select(data: Validation, crit: Criterion) -> dict[str, Any]:
    """The selection document: selected operators with their configs, rejected with reasons."""
    operators: dict[str, Any] = {}
    rejected: dict[str, str] = {}
    for op in sorted(data.ops):
        entry, reason = judge(op, data.ops[op], crit)
        if entry is None:
            rejected[op] = reason
        else:
            operators[op] = entry
    return {
        "schema": SCHEMA,
        "batch": crit.batch,
        "total_operators": len(operators),
        "total_configs": sum(len(e["configs"]) for e in operators.values()),
        "threshold": crit.threshold,
        "min_config_speed": crit.min_config_speed,
        "criterion": crit.describe(),
        "operators": operators,
        "rejected": rejected,
    }
