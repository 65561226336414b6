"""Gate logic on recorded timings (an H100 run in data/) and on planted numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flagbot.kernels.gates import (
    ERROR,
    FAIL,
    NEAR,
    PASS,
    UNMEASURED,
    Ratio,
    Thresholds,
    Verdict,
    combine,
    exit_code,
    op_verdict,
)

RECORDED = json.loads((Path(__file__).parent / "data" / "recorded_h100.json").read_text())
T = Thresholds()


def _recorded(op: str) -> tuple[str, list[Ratio]]:
    entry = RECORDED["ops"][op]
    key = "vs_generic" if entry["kind"] == "override" else "vs_native"
    return entry["kind"], [Ratio(**c[key]) for c in entry["cases"]]


@pytest.mark.parametrize(("op", "status"), [("softmax", PASS), ("mm", PASS),
                                            ("rms_norm", FAIL), ("log_softmax", PASS)])
def test_recorded_h100_timings_give_the_recorded_verdicts(op: str, status: str) -> None:
    kind, ratios = _recorded(op)
    assert op_verdict(kind, 27, 0, [], ratios, T).status == status


def test_planted_slow_path_is_rejected() -> None:
    # A candidate that takes the slow path: 1.6x slower than the generic kernel on every case.
    slow = [Ratio(median=1 / 1.6, low=0.6, high=0.65)] * 3
    verdict = op_verdict("override", 9, 0, [], slow, T)
    assert verdict.status == FAIL and "< 1.30" in verdict.reason


def test_speedup_near_the_threshold_says_so_instead_of_flipping() -> None:
    ratios = [Ratio(median=1.29, low=1.25, high=1.33)]
    verdict = op_verdict("override", 3, 0, [], ratios, T)
    assert verdict.status == NEAR and "within the measured spread" in verdict.reason


def test_min_spread_widens_a_too_narrow_band() -> None:
    r = combine([Ratio(median=1.31, low=1.31, high=1.31)], min_spread=0.02)
    assert r.low < 1.30 < r.high


def test_new_op_is_gated_against_native_fraction() -> None:
    ok = [Ratio(median=0.9, low=0.88, high=0.92)]
    slow = [Ratio(median=0.5, low=0.48, high=0.52)]
    assert op_verdict("new", 3, 0, [], ok, T).status == PASS
    assert op_verdict("new", 3, 0, [], slow, T).status == FAIL


def test_thresholds_are_configurable() -> None:
    ratios = [Ratio(median=1.18, low=1.15, high=1.21)]
    assert op_verdict("override", 3, 0, [], ratios, Thresholds(1.10, 0.8, 0.02)).status == PASS


def test_inaccurate_op_fails_whatever_its_speed() -> None:
    fast = [Ratio(median=3.0, low=2.9, high=3.1)]
    verdict = op_verdict("override", 10, 2, [], fast, T)
    assert verdict.status == FAIL and verdict.reason.startswith("inaccurate: 2 of 10")


def test_without_timings_an_accurate_op_is_unmeasured_never_a_number() -> None:
    verdict = op_verdict("override", 4, 0, [], None, T)
    assert verdict.status == UNMEASURED and verdict.value is None


@pytest.mark.parametrize(("kind", "errors", "problem"), [
    ("override", ["RuntimeError: boom"], None),
    ("unknown", [], "unknown op 'x'"),
    ("override", [], "the backend does not provide 'add'"),
], ids=["raising-kernel", "unknown-op", "absent-op"])
def test_problems_are_errors(kind: str, errors: list[str], problem: str | None) -> None:
    assert op_verdict(kind, 0, 0, errors, None, T, problem).status == ERROR


def test_exit_code_is_one_for_fail_or_error_and_near_only_when_strict() -> None:
    near = Verdict(NEAR, "")
    assert exit_code([Verdict(PASS, ""), Verdict(UNMEASURED, "")]) == 0
    assert exit_code([Verdict(PASS, ""), Verdict(FAIL, "")]) == 1
    assert exit_code([Verdict(ERROR, "")]) == 1
    assert exit_code([near]) == 0 and exit_code([near], near_fails=True) == 1


def test_recorded_verdicts_match_the_fixture() -> None:
    for op, entry in RECORDED["ops"].items():
        kind, ratios = _recorded(op)
        assert op_verdict(kind, 27, 0, [], ratios, T).status == entry["verdict"], op


def test_a_passing_override_still_names_the_cases_it_made_slower() -> None:
    kind, ratios = _recorded("mm")  # fp32 4096^3: the autotuned tiles lose to the generic ones
    reason = op_verdict(kind, 27, 0, [], ratios, T).reason
    assert "slower on 1 of 9 cases (worst 0.69x)" in reason


def test_copy_bandwidth_floor_fails_only_below_it() -> None:
    from flagbot.kernels import gates

    assert gates.floor_verdict([0.5, 0.8], None) is None  # off by default
    assert gates.floor_verdict([0.5, 0.8], 0.6) is None  # geometric mean 0.63
    v = gates.floor_verdict([0.2, 0.8], 0.6)  # geometric mean 0.40
    assert v is not None and v.status == "fail" and "40% of the device's copy bandwidth" in v.reason
    assert gates.floor_verdict([], 0.6) is None  # no memory-bound case: nothing to judge
