"""`kernels validate` and `kernels filter`: timing data in, findings and a selection out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flagbot.kernels.cli import main
from flagbot.kernels.intake.perfdata import validate
from flagbot.kernels.intake.select import criterion, judge, select
from tests.kernels.generated_ops import write_json

ROOT = Path(__file__).resolve().parents[2]


def cfg(shape: list[int], dtype: str = "float32", **times: Any) -> dict[str, Any]:
    return {"shape": shape, "dtype": dtype, **times}


def data(**ops: list[dict[str, Any]]) -> dict[str, Any]:
    return {op: {"configs": configs} for op, configs in ops.items()}


@pytest.fixture()
def files(tmp_path: Path) -> Any:
    def write(your: Any, flaggems: Any = None) -> tuple[Path, Path | None]:
        y = write_json(tmp_path / "your.json", your) if not isinstance(your, str) else \
            tmp_path / "your.json"
        if isinstance(your, str):
            y.write_text(your)
        f = write_json(tmp_path / "fg.json", flaggems) if flaggems is not None else None
        return y, f

    return write


def test_one_file_with_inline_baselines_validates(files: Any) -> None:
    your, _ = files(data(gelu=[cfg([256, 256], your_time=0.5, cuda_time=1.0, flaggems_time=0.7)]))
    result = validate(your)
    assert result.ok and result.warnings == [] and result.matched == {"gelu": 1}
    assert result.ops["gelu"][0].flaggems_time == 0.7


def test_two_files_are_matched_by_exact_shape_and_dtype(files: Any) -> None:
    your, fg = files(data(gelu=[cfg([256], your_time=0.5), cfg([512], your_time=1.0),
                                cfg([256], "float16", your_time=0.3, cuda_time=0.4)]),
                     data(gelu=[cfg([256], flaggems_time=0.8), cfg([512], flaggems_time=1.5),
                                cfg([256], "bfloat16", flaggems_time=0.3)]))
    result = validate(your, fg)
    assert result.ok and result.matched == {"gelu": 2}
    assert result.ops["gelu"][1].flaggems_time == 1.5
    text = "\n".join(result.warnings)
    assert "gelu shape [256] float16: no flaggems_time" in text
    assert "gelu shape [256] bfloat16: in --flaggems-data only" in text


def test_mismatched_shapes_are_an_error_naming_both_sides(files: Any) -> None:
    your, fg = files(data(gelu=[cfg([256, 256], your_time=0.5, cuda_time=1.0)]),
                     data(gelu=[cfg([256, 255], flaggems_time=0.8)]))
    (error,) = validate(your, fg).errors
    assert error.startswith("gelu: no config matches --flaggems-data by exact (shape, dtype)")
    assert "[256, 256]" in error and "[256, 255]" in error


@pytest.mark.parametrize("times, message", [
    ({"your_time": -0.5, "cuda_time": 1.0}, "gelu config 0: your_time is -0.5: times must be "
                                            "positive milliseconds"),
    ({"your_time": 0, "cuda_time": 1.0}, "your_time is 0"),
    ({"your_time": "fast", "cuda_time": 1.0}, "your_time must be a number of milliseconds"),
    ({"your_time": True, "cuda_time": 1.0}, "your_time must be a number of milliseconds"),
    ({"cuda_time": 1.0}, "gelu shape [8] float32: your_time is missing"),
    ({"your_time": 1.0}, "gelu shape [8] float32: no baseline"),
], ids=["negative", "zero", "string", "bool", "missing-yours", "missing-baseline"])
def test_bad_and_missing_times_are_errors(files: Any, times: dict[str, Any],
                                          message: str) -> None:
    your, _ = files(data(gelu=[cfg([8], **times)]))
    errors = validate(your).errors
    assert len(errors) == 1 and message in errors[0], errors


def test_duplicated_operators_and_configs_are_errors(files: Any) -> None:
    text = ('{"gelu": {"configs": [{"shape": [8], "dtype": "float32", "your_time": 1, '
            '"cuda_time": 1}]}, "gelu": {"configs": []}, "aten::neg": {"configs": []}, '
            '"neg": {"configs": []}}')
    your, _ = files(text)
    errors = "\n".join(validate(your).errors)
    assert "key 'gelu' appears twice in one object" in errors
    assert "operator 'neg' is listed twice (as 'neg' too)" in errors
    twice = data(gelu=[cfg([8], your_time=1, cuda_time=1), cfg([8], "fp32", your_time=2,
                                                                cuda_time=1)])
    your, _ = files(twice)
    assert validate(your).errors == [
        f"{your}: gelu config 1: shape [8] float32 is listed twice for gelu"]


def test_implausible_units_are_warned(files: Any) -> None:
    your, _ = files(data(gelu=[cfg([8], your_time=0.00001, cuda_time=50000.0)]))
    result = validate(your)
    assert result.ok and len(result.warnings) == 3
    assert "are these seconds?" in result.warnings[0]
    assert "mixed units?" in result.warnings[2]


def test_bad_shape_and_dtype_are_errors(files: Any) -> None:
    your, _ = files(data(gelu=[cfg([8, 0], your_time=1, cuda_time=1),
                               cfg([8], "float8", your_time=1, cuda_time=1)]))
    errors = validate(your).errors
    assert "shape must be a list of positive integers" in errors[0]
    assert "dtype 'float8' is not one of" in errors[1]


def _ops(**speeds: list[tuple[float, float]]) -> Any:
    from flagbot.kernels.intake.perfdata import Config, Validation

    return Validation(ops={op: [Config((8 * (i + 1),), "float32", your_time=y, cuda_time=b,
                                       flaggems_time=b) for i, (y, b) in enumerate(pairs)]
                           for op, pairs in speeds.items()})


@pytest.mark.parametrize("batch, your, base, selected", [
    (1, 1.0, 1.3, True), (1, 1.0, 1.2999, False),
    (2, 1.25, 1.0, True), (2, 1.2501, 1.0, False),
], ids=["b1-on-threshold", "b1-just-below", "b2-on-threshold", "b2-just-above"])
def test_operators_exactly_on_the_threshold_are_selected(batch: int, your: float, base: float,
                                                         selected: bool) -> None:
    entry, reason = judge("gelu", _ops(gelu=[(your, base)]).ops["gelu"], criterion(batch))
    assert (entry is not None) == selected, reason


def test_decision_is_the_geometric_mean_never_the_best_config() -> None:
    # one config 2x faster, two at 1.0x: the best config would pass, the operator does not
    entry, reason = judge("mul", _ops(mul=[(1.0, 2.0), (1.0, 1.0), (1.0, 1.0)]).ops["mul"],
                          criterion(1))
    assert entry is None and reason == "avg_speedup_vs_flaggems 1.2599 < 1.3 over 3 configs"


def test_a_config_below_the_floor_rejects_the_operator() -> None:
    ops = _ops(gelu=[(1.0, 4.0), (1.0, 0.9)]).ops["gelu"]
    entry, reason = judge("gelu", ops, criterion(1))
    assert entry is None and "runs at 0.900x the baseline's speed, below the floor 1.0" in reason
    assert judge("gelu", ops, criterion(1, min_config_speed=0.5))[0] is not None


def test_selection_document_has_the_queried_fields() -> None:
    doc = select(_ops(gelu=[(1.0, 1.0)], neg=[(2.0, 1.0)]), criterion(2))
    assert doc["total_operators"] == 1 and doc["total_configs"] == 1
    assert doc["threshold"] == 1.25 and "geomean(your_time / cuda_time) <= 1.25" in \
        doc["criterion"]
    assert doc["operators"]["gelu"]["avg_relative_to_cuda"] == 1.0
    assert doc["operators"]["gelu"]["configs"][0]["relative_to_cuda"] == 1.0
    assert doc["rejected"] == {"neg": "avg_relative_to_cuda 2.0000 > 1.25 over 1 configs"}


def test_batch_one_without_flaggems_times_says_try_batch_two(files: Any) -> None:
    your, _ = files(data(neg=[cfg([8], your_time=1.0, cuda_time=1.0)]))
    doc = select(validate(your), criterion(1))
    assert doc["rejected"]["neg"].endswith("(is it a new operator? try --batch 2)")


def test_cli_validate_and_filter_exit_codes(files: Any, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    good = data(gelu=[cfg([8], your_time=1.0, cuda_time=1.1)],
                neg=[cfg([8], your_time=2.0, cuda_time=1.0)])
    your, _ = files(good)
    assert main(["validate", "--your-data", str(your)]) == 0
    assert "2 operators, 2 configs" in capsys.readouterr().out
    out = tmp_path / "sel" / "selected.json"
    assert main(["filter", "--your-data", str(your), "--batch", "2", "--output", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert list(doc["operators"]) == ["gelu"] and "neg" in doc["rejected"]
    assert "selected 1 of 2 operators" in capsys.readouterr().out
    your, _ = files(data(gelu=[cfg([8], your_time=-1.0, cuda_time=1.1)]))
    out.unlink()
    assert main(["filter", "--your-data", str(your), "--batch", "2", "--output", str(out)]) == 1
    assert not out.exists() and "your_time is -1.0" in capsys.readouterr().err


@pytest.mark.parametrize("argv, code", [
    (["validate", "--your-data", "nowhere.json"], 2),
    (["validate"], 2),
    (["filter", "--your-data", "x.json", "--output", "o.json"], 2),
    (["filter", "--your-data", "x.json", "--batch", "3", "--output", "o.json"], 2),
], ids=["missing-file", "no-data", "no-batch", "bad-batch"])
def test_cli_usage_errors_exit_two(argv: list[str], code: int, tmp_path: Path) -> None:
    assert main(argv, cwd=str(tmp_path)) == code


def test_a_file_that_is_not_json_fails_the_check(files: Any,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    your, _ = files("{not json")
    assert main(["validate", "--your-data", str(your)]) == 1
    assert "not JSON: Expecting property name" in capsys.readouterr().err


def test_validate_and_filter_never_import_torch(files: Any, tmp_path: Path) -> None:
    your, fg = files(data(gelu=[cfg([8], your_time=1.0, cuda_time=1.1)]),
                     data(gelu=[cfg([8], flaggems_time=1.5)]))
    # A poisoned `torch` entry makes any `import torch` raise ImportError.
    code = ("import sys; sys.modules['torch'] = None; sys.modules['triton'] = None\n"
            "from flagbot.kernels.cli import main\n"
            f"a = main(['validate', '--your-data', {str(your)!r}, '--flaggems-data', {str(fg)!r}])\n"
            f"b = main(['filter', '--your-data', {str(your)!r}, '--flaggems-data', {str(fg)!r}, "
            f"'--batch', '1', '--output', {str(tmp_path / 'o.json')!r}])\n"
            "raise SystemExit(10 * a + b)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((tmp_path / "o.json").read_text())["operators"]["gelu"][
        "avg_speedup_vs_flaggems"] == 1.5
