"""Committed expectations: REGRESSION and UNEXPECTED WIN outside the margin, a regenerated file
that keeps values within a third of their margin, and the CLI round trip on a stand-in device."""

from __future__ import annotations

from pathlib import Path

import pytest

from flagbot.kernels import expected

KEY = ("softmax", "float16", "4096x4096")


def _entry(us: float, gated_on: str = "device") -> dict:
    case = {"dtype": "float16", "case": "4096x4096", "gated_on": gated_on,
            "latency_us": {"candidate": us}, "launch_us": {"candidate": us * 2}}
    return {"op": "softmax", "performance": {"status": "measured", "cases": [case]},
            "verdict": {"status": "pass", "reason": "accurate", "value": None}}


@pytest.mark.parametrize(("value", "status"), [(10.0, "ok"), (11.4, "ok"), (11.6, "REGRESSION"),
                                               (8.4, "UNEXPECTED WIN"), (8.6, "ok")])
def test_judge_fails_outside_the_margin_either_way(value: float, status: str) -> None:
    assert expected.judge(value, (10.0, 0.15)) == status


def test_apply_fails_the_op_and_says_how_to_regenerate() -> None:
    entries = [_entry(7.0)]
    assert expected.apply(entries, {KEY: (10.0, 0.15)}) == 1
    verdict = entries[0]["verdict"]
    assert verdict["status"] == "fail"
    assert verdict["reason"].startswith("UNEXPECTED WIN: float16 4096x4096 7 us, expected 10 us")
    assert "--write-expected" in verdict["reason"]


def test_device_time_is_what_is_compared_even_when_the_gate_used_launch_time() -> None:
    assert expected.measured([_entry(5.0, "launch")]) == {KEY: 5.0}


def test_regenerate_rounds_and_keeps_values_within_a_third_of_the_margin() -> None:
    old = {KEY: (10.0, 0.15), ("mm", "float16", "a"): (100.0, 0.15)}
    new = expected.regenerate({KEY: 10.4, ("mm", "float16", "a"): 123.456,
                               ("mm", "float32", "b"): 1.23456}, old)
    assert new == {KEY: (10.0, 0.15), ("mm", "float16", "a"): (123.0, 0.15),
                   ("mm", "float32", "b"): (1.23, expected.DEFAULT_MARGIN)}


def test_file_round_trip(tmp_path: Path) -> None:
    rows = {KEY: (10.0, 0.15)}
    path = tmp_path / "expected-h100.csv"
    path.write_text(expected.render(rows, "NVIDIA H100"))
    assert path.read_text().startswith("# flagbot kernels expected times (microseconds) on NVIDIA")
    assert expected.read(path) == rows


@pytest.mark.parametrize("line", ["softmax,float16,x,abc,0.1", "softmax,float16,x,1",
                                  "softmax,float16,x,-1,0.1", "softmax,float16,x,1,1.5"])
def test_bad_rows_are_named(tmp_path: Path, line: str) -> None:
    path = tmp_path / "e.csv"
    path.write_text("op,dtype,case,latency_us,margin\n" + line + "\n")
    with pytest.raises(expected.ExpectedError, match="line 2"):
        expected.read(path)


def test_cli_rejects_a_missing_expectations_file(planted_dir: Path, tmp_path: Path) -> None:
    from flagbot.kernels.cli import main

    assert main(["check", "--backend", str(planted_dir / "_planted"), "--expected",
                 str(tmp_path / "none.csv")]) == 2


def test_cli_write_expected_without_timings_is_an_error(planted_dir: Path,
                                                        tmp_path: Path) -> None:
    from flagbot.kernels.cli import main

    out = tmp_path / "e.csv"
    code = main(["check", "--backend", str(planted_dir / "_exported"), "--shapes", "ci",
                 "--seeds", "1", "--device", "cpu", "--write-expected", str(out)])
    assert code == 2 and not out.exists()
