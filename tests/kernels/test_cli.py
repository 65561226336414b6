"""`flagbot kernels check|import` end to end: exit codes, JSON report, Markdown table."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from flagbot.kernels.cli import main
from flagbot.kernels.report import SCHEMA, SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
# An accurate op is "unmeasured" on CPU; on a GPU it gets a real gate verdict.
ACCURATE = {"pass", "fail", "near"} if torch.cuda.is_available() else {"unmeasured"}


def _check(planted_dir: Path, tmp_path: Path, backend: str, *extra: str) -> tuple[int, Any, str]:
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    code = main(["check", "--backend", str(planted_dir / backend), "--seeds", "1", "--shapes",
                 "ci", "--json", str(out_json), "--markdown", str(out_md), *extra])
    report = json.loads(out_json.read_text()) if out_json.exists() else None
    return code, report, out_md.read_text() if out_md.exists() else ""


def _verdicts(report: Any) -> dict[str, str]:
    return {op["op"]: op["verdict"]["status"] for op in report["ops"]}


def test_planted_faults_are_reported_per_op_and_exit_one(planted_dir: Path,
                                                         tmp_path: Path) -> None:
    code, report, _ = _check(planted_dir, tmp_path, "_planted")
    verdicts = _verdicts(report)
    assert code == 1 and verdicts.pop("add") in ACCURATE
    assert verdicts == {"mul": "fail", "gelu": "error", "frobnicate.default": "error"}


def test_report_is_self_describing(planted_dir: Path, tmp_path: Path) -> None:
    _, report, _ = _check(planted_dir, tmp_path, "_planted", "--ops", "add")
    assert (report["schema"], report["schema_version"]) == (SCHEMA, SCHEMA_VERSION)
    assert report["tool"]["name"] == "flagbot kernels"
    env = report["environment"]
    assert env["torch"] and env["triton"] and "device" in env
    assert report["backend"]["vendor_name"] == "planted"
    assert report["options"]["thresholds"]["override_min_speedup"] == 1.30
    case = report["ops"][0]["accuracy"]["cases"][0]
    assert {"dtype", "case", "seed", "max_abs_err", "max_rel_err", "rtol", "atol"} <= set(case)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU behaviour")
def test_cpu_run_marks_performance_not_measured_and_has_no_numbers(planted_dir: Path,
                                                                   tmp_path: Path) -> None:
    code, report, table = _check(planted_dir, tmp_path, "_planted", "--ops", "add")
    perf = report["ops"][0]["performance"]
    assert code == 0 and perf["status"] == "not measured" and perf["cases"] == []
    assert "TRITON_INTERPRET" in perf["reason"] and report["environment"]["device"] is None
    assert "| add | override | 6/6 |" in table and "not measured" in table


def test_markdown_lists_reasons_of_failing_ops(planted_dir: Path, tmp_path: Path) -> None:
    _, _, table = _check(planted_dir, tmp_path, "_planted", "--ops", "mul,gelu")
    assert table.splitlines()[3] == ("| op | kind | accuracy | max rel err | speed | of copy bw |"
                                     " verdict |")
    assert "- `mul`: inaccurate:" in table and "- `gelu`: kernel raised: RuntimeError" in table


def test_unknown_and_absent_ops_do_not_stop_the_run(planted_dir: Path, tmp_path: Path) -> None:
    code, report, _ = _check(planted_dir, tmp_path, "_exported", "--ops",
                             "nosuch,mm,softmax", "--dtypes", "fp32")
    verdicts = _verdicts(report)
    assert code == 1 and verdicts.pop("softmax") in ACCURATE
    assert verdicts == {"nosuch": "error", "mm": "error"}


def test_exported_functions_backend_passes(planted_dir: Path, tmp_path: Path) -> None:
    code, report, _ = _check(planted_dir, tmp_path, "_exported", "--dtypes", "float32,fp16",
                             "--min-speedup", "0.01")  # accuracy is what this backend shows
    assert code == 0 and report["backend"]["form"] == "exported_functions"


def test_missing_backend_exits_two_and_still_writes_the_report(tmp_path: Path) -> None:
    code, report, _ = _check(tmp_path, tmp_path, "_nowhere")
    assert code == 2 and "not a backend folder" in report["backend"]["error"]


def test_backend_that_fails_to_import_exits_one(planted_dir: Path, tmp_path: Path) -> None:
    code, report, table = _check(planted_dir, tmp_path, "_broken")
    assert code == 1 and "ModuleNotFoundError" in report["backend"]["error"]
    assert "- backend:" in table


@pytest.mark.parametrize("argv", [["check", "--backend", "x", "--dtypes", "int8"],
                                  ["check", "--backend", "x", "--seeds", "0"],
                                  ["check"], [], ["frob"]],
                         ids=["bad-dtype", "zero-seeds", "no-backend", "no-command", "unknown"])
def test_usage_errors_exit_two(argv: list[str]) -> None:
    assert main(argv) == 2


def test_help_exits_zero() -> None:
    assert main(["check", "--help"]) == 0


def test_paths_are_relative_to_cwd(planted_dir: Path, tmp_path: Path) -> None:
    code = main(["check", "--backend", "_exported", "--ops", "softmax", "--seeds", "1",
                 "--shapes", "ci", "--min-speedup", "0.01", "--json", str(tmp_path / "r.json")],
                cwd=str(planted_dir))
    assert code == 0 and (tmp_path / "r.json").exists()


def test_import_copies_a_backend_and_never_overwrites(planted_dir: Path, tmp_path: Path) -> None:
    dest = tmp_path / "backends"
    assert main(["import", str(planted_dir / "_template_like"), "--dest", str(dest)]) == 2
    src = ROOT / "backends" / "_template"
    assert main(["import", str(src), "--dest", str(dest)]) == 0
    assert (dest / "_template" / "tune_configs.yaml").read_bytes() == \
        (src / "tune_configs.yaml").read_bytes()
    (dest / "_template" / "ops" / "local_edit.py").write_text("# vendor's work\n")
    assert main(["import", str(src), "--dest", str(dest)]) == 2
    assert (dest / "_template" / "ops" / "local_edit.py").exists()


def test_import_refuses_a_folder_without_the_flaggems_files(planted_dir: Path,
                                                            tmp_path: Path) -> None:
    source = tmp_path / "_exported"
    shutil.copytree(planted_dir / "_exported", source)
    (source / "heuristics_config_utils.py").unlink()
    assert main(["import", str(source), "--dest", str(tmp_path / "backends")]) == 2


def test_check_of_a_backend_whose_tune_file_flaggems_cannot_load_fails(
        planted_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "_exported"
    shutil.copytree(planted_dir / "_exported", source)
    (source / "tune_configs.yaml").write_text("softmax:\n  - META: {B: 1}\n    num_warps: 6\n")
    assert main(["check", "--backend", str(source), "--shapes", "ci"]) == 1
    assert "tune_configs.yaml:3: softmax: num_warps must be a power of two" in capsys.readouterr().err


def test_flagbot_command_table_points_here() -> None:
    from flagbot.hooks.cli import COMMANDS, load_command

    assert COMMANDS["kernels"][0] == "flagbot.kernels.cli:main" and load_command("kernels") is main


def test_python_dash_m_kernels_runs_without_install(planted_dir: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "kernels", "check", "--backend",
                           str(planted_dir / "_planted"), "--ops", "mul", "--seeds", "1",
                           "--shapes", "ci", "--dtypes", "fp32"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 1, proc.stderr
    assert "| mul | override | 0/2 |" in proc.stdout


def test_markdown_names_a_passing_op_that_made_cases_slower() -> None:
    from flagbot.kernels.report import markdown

    verdict = {"status": "pass", "reason": "accurate; ...; slower on 1 of 9 cases (worst 0.96x)",
               "value": {"median": 1.68, "low": 1.64, "high": 1.72}}
    report = {"environment": {"device": {"name": "GPU"}, "torch": "t", "triton": "tr"},
              "backend": {"path": "b", "vendor_name": "v", "error": None},
              "options": {"shapes": "full"}, "summary": {"exit_code": 0},
              "ops": [{"op": "mm", "kind": "override", "verdict": verdict,
                       "accuracy": {"cases": []}, "performance": {"status": "measured"}}]}
    text = markdown(report)
    assert "| mm | override | - | - | 1.68x vs generic | - | **pass** |" in text
    assert "- `mm`: accurate; ...; slower on 1 of 9 cases (worst 0.96x)" in text


def test_op_the_backend_lacks_names_what_it_provides(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code = main(["check", "--backend", str(ROOT / "backends" / "_nvidia"), "--ops", "add",
                 "--shapes", "ci", "--json", str(out)])
    [op] = json.loads(out.read_text())["ops"]
    assert code == 1 and "does not provide 'add'" in op["verdict"]["reason"]
    assert "it provides log_softmax, mm, rms_norm, softmax" in op["verdict"]["reason"]


def test_readme_kernels_example_passes(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    assert "flagbot kernels check --backend backends/_nvidia --ops softmax,mm" in readme
    out = tmp_path / "r.json"
    code = main(["check", "--backend", str(ROOT / "backends" / "_nvidia"), "--ops", "softmax,mm",
                 "--shapes", "ci", "--seeds", "1", "--dtypes", "fp32", "--json", str(out)])
    if not torch.cuda.is_available():
        assert code == 0
        return
    # On a GPU the speed gates judge these tiny shapes on launch-inclusive time, where the
    # override and the generic kernel are alike: the example runs, accurate, gated either way.
    report = json.loads(out.read_text())
    assert code in (0, 1) and all(op["accuracy"]["status"] == "pass" for op in report["ops"])
    assert {op["verdict"]["status"] for op in report["ops"]} <= {"pass", "fail", "near"}


def test_bad_backend_prints_the_error_and_no_table(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--backend", str(tmp_path / "_nope")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "not a backend folder" in captured.err


def test_progress_goes_to_stderr_per_op(planted_dir: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "--backend", str(planted_dir / "_planted"), "--ops", "add", "--seeds", "1",
          "--shapes", "ci"])
    assert "[1/1] add:" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU behaviour")
def test_slow_interpreter_run_is_announced(capsys: pytest.CaptureFixture[str]) -> None:
    from flagbot.kernels.check import CheckOptions
    from flagbot.kernels.cli import warn_if_slow
    from flagbot.kernels.loader import load_backend

    warn_if_slow(load_backend(ROOT / "backends" / "_nvidia"), CheckOptions(shapes="full"))
    assert "interpreter" in capsys.readouterr().err


def test_an_unknown_device_is_a_usage_error(planted_dir: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--backend", str(planted_dir / "_planted"), "--device", "warp-drive"])
    assert code == 2 and "--device warp-drive: not a torch device" in capsys.readouterr().err
