"""Pure gate functions: accuracy results and recorded speedups in, a verdict with its reason out.

Override of a generic op: accurate and speedup vs the generic kernel >= override_min_speedup.
New op (no generic kernel): accurate and speed vs torch native >= new_op_min_fraction_of_native.
The per-case speedups combine by geometric mean (median, and the p20/p80 band), widened to at
least +-min_spread; a threshold inside that band gives `near` instead of a verdict that would
flip between runs. Thresholds and their meaning: docs/kernels.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

PASS, FAIL, NEAR, UNMEASURED, ERROR = "pass", "fail", "near", "unmeasured", "error"
# Listed, never run: the backend switched the op off, or the harness has no spec for it yet.
DISABLED, NOT_CHECKED = "disabled", "not checked"
FAILING = (FAIL, ERROR)


@dataclass(frozen=True)
class Thresholds:
    """Gate numbers; the names match `.github/flagbot.yml` `kernels:` keys."""

    override_min_speedup: float = 1.30
    new_op_min_fraction_of_native: float = 0.80
    min_spread: float = 0.02
    # Optional absolute floor: an op whose memory-bound cases reach less than this fraction
    # of the device's measured copy bandwidth (geometric mean) fails. None: off.
    min_fraction_of_copy: float | None = None
    # --compare-to: head slower than base by more than this (band clear of 1.0) regresses.
    compare_tolerance: float = 0.05


@dataclass(frozen=True)
class Ratio:
    """A speedup (or fraction of native) of one case: median and its p20..p80 band."""

    median: float
    low: float
    high: float


@dataclass(frozen=True)
class Verdict:
    """status is pass / fail / near / unmeasured / error; reason says why in one sentence."""

    status: str
    reason: str
    value: Ratio | None = None

    @property
    def failed(self) -> bool:
        """True for statuses that make `kernels check` exit 1."""
        return self.status in FAILING


def geomean(values: Sequence[float]) -> float:
    """Geometric mean of positive values."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


def combine(ratios: Sequence[Ratio], min_spread: float) -> Ratio:
    """Geometric means of the cases' medians and bands, band at least +-min_spread wide."""
    med = geomean([r.median for r in ratios])
    low = min(geomean([r.low for r in ratios]), med * (1 - min_spread))
    high = max(geomean([r.high for r in ratios]), med * (1 + min_spread))
    return Ratio(median=med, low=low, high=high)


def accuracy_verdict(total: int, failed: int, errors: Sequence[str]) -> Verdict | None:
    """A failing verdict when any accuracy case failed or raised; None when all passed."""
    if errors:
        return Verdict(ERROR, f"kernel raised: {errors[0]}")
    if total == 0:
        return Verdict(ERROR, "no accuracy case ran (no dtype or shape selected)")
    if failed:
        return Verdict(FAIL, f"inaccurate: {failed} of {total} cases outside tolerance")
    return None


def speed_verdict(kind: str, ratios: Sequence[Ratio] | None, t: Thresholds) -> Verdict:
    """The performance gate of an accurate op of `kind` (override/new)."""
    if ratios is None:
        return Verdict(UNMEASURED, "accurate; performance not measured (no GPU)")
    if not ratios:
        return Verdict(ERROR, "accurate, but no performance case could be timed")
    if kind == "override":
        threshold, what = t.override_min_speedup, "speedup vs generic"
    else:
        threshold, what = t.new_op_min_fraction_of_native, "speed vs torch native"
    r = combine(ratios, t.min_spread)
    text = f"{what} {r.median:.2f}x (band {r.low:.2f}-{r.high:.2f})"
    slower = [x.median for x in ratios if x.high < 1.0]
    # The gate judges the geometric mean; a case that got slower is still worth saying.
    note = (f"; slower on {len(slower)} of {len(ratios)} cases (worst {min(slower):.2f}x)"
            if slower else "")
    if r.low >= threshold:
        return Verdict(PASS, f"accurate; {text} >= {threshold:.2f}{note}", r)
    if r.high < threshold:
        return Verdict(FAIL, f"accurate; {text} < {threshold:.2f}{note}", r)
    return Verdict(NEAR, f"accurate; {text} is within the measured spread of the "
                         f"{threshold:.2f} threshold: not decidable on this machine{note}", r)


def op_verdict(kind: str, total: int, failed: int, errors: Sequence[str],
               ratios: Sequence[Ratio] | None, t: Thresholds,
               problem: str | None = None) -> Verdict:
    """Problem (unknown/absent op) first, then accuracy, then speed: the op's one verdict."""
    if problem or kind == "unknown":
        return Verdict(ERROR, problem or "unknown op")
    return accuracy_verdict(total, failed, errors) or speed_verdict(kind, ratios, t)


def exit_code(verdicts: Sequence[Verdict], near_fails: bool = False) -> int:
    """1 if any op failed or errored (or is near the threshold, with near_fails); else 0."""
    bad = [v for v in verdicts if v.failed or (near_fails and v.status == NEAR)]
    return 1 if bad else 0


def floor_verdict(fractions: Sequence[float], floor: float | None) -> Verdict | None:
    """A failing verdict when the memory-bound cases' geometric-mean fraction of copy
    bandwidth is under `floor`; None when it is not, or no floor is set or applies."""
    usable = [f for f in fractions if f > 0]
    if floor is None or not usable:
        return None
    got = geomean(usable)
    if got >= floor:
        return None
    return Verdict(FAIL, f"reaches {got:.0%} of the device's copy bandwidth on its memory-bound "
                         f"cases, under the floor of {floor:.0%} (--min-fraction-of-copy)")


# Outcomes of comparing an op with the same op at the base revision (--compare-to).
REGRESSION, SAME, FASTER, SLOWER_WITHIN, NEW_AT_HEAD, NOT_COMPARED = (
    "regression", "same", "faster", "slower within noise", "new", "not compared")


def compare_verdict(head_accurate: bool, base_accurate: bool | None,
                    ratios: Sequence[Ratio] | None, t: Thresholds, ref: str) -> Verdict:
    """Head vs base of one op: `ratios` are base time / head time per case (below 1: slower).

    A regression is an op accurate at `ref` and inaccurate now, or slower than at `ref` by
    more than the tolerance over its whole noise band (the band's high end under 1 - tol).
    """
    if base_accurate is None:
        return Verdict(NEW_AT_HEAD, f"not at {ref}: nothing to compare with")
    if not head_accurate:
        if base_accurate:
            return Verdict(REGRESSION, f"regression: accurate at {ref}, inaccurate now")
        return Verdict(NOT_COMPARED, f"inaccurate at {ref} too")
    if ratios is None or not ratios:
        return Verdict(SAME if base_accurate else FASTER,
                       "accurate" + ("" if base_accurate else f" (inaccurate at {ref})")
                       + "; speed not compared (not timed)")
    r = combine(ratios, t.min_spread)
    text = f"{r.median:.2f}x the speed at {ref} (band {r.low:.2f}-{r.high:.2f})"
    worst = min(ratios, key=lambda x: x.median)
    # Beyond the band: even its optimistic end is slower than the tolerance allows. Identical
    # code timed on tiny shapes read 0.93x (band 0.91-1.00) on an H100: noise, not a change.
    if r.high < 1.0 - t.compare_tolerance:
        return Verdict(REGRESSION, f"regression: {text}, slower by more than "
                                   f"{t.compare_tolerance:.0%} (worst case {worst.median:.2f}x)",
                       r)
    if r.low > 1.0 + t.compare_tolerance:
        return Verdict(FASTER, text, r)
    return Verdict(SAME if r.median >= 1.0 - t.compare_tolerance else SLOWER_WITHIN, text, r)
