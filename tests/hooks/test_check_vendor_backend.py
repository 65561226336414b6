"""check-backend: one broken backend per rule, clean backends in both forms, the CLI surface."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flagbot.hooks import check_vendor_backend as cvb
from flagbot.hooks.backend.rules import RULES
from flagbot.hooks.findings import ERROR
from testing.backend_corpus import BROKEN, CLEAN, broken_rules, build_case, build_clean


def test_every_rule_has_a_broken_backend() -> None:
    assert broken_rules() == sorted(RULES)


@pytest.mark.parametrize("rule", broken_rules())
def test_broken_backend_reports_its_rule(rule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, folder = build_case(rule, tmp_path)
    rc = cvb.main([folder, "--root", root, "--format", "json"], cwd=str(tmp_path))
    doc = json.loads(capsys.readouterr().out)
    assert rule in {f["rule"] for f in doc["findings"]}
    assert rc == (1 if RULES[rule][0] == ERROR else 0)


@pytest.mark.parametrize("context", [False, True], ids=["plain", "in-flaggems"])
def test_clean_backends_in_both_forms_pass(context: bool, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    root = build_clean(tmp_path, context=context)
    assert cvb.main(["--all", "--root", root], cwd=str(tmp_path)) == 0
    assert "2 vendor folder(s): 0 error(s), 0 warning(s)" in capsys.readouterr().out


def test_text_output_is_path_line_severity_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, folder = build_case("tune-schema", tmp_path)
    assert cvb.main(["--all", "--root", root], cwd=str(tmp_path)) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (f"{folder}/tune_configs.yaml:8: error: [tune-schema] add: num_warps must be "
                     "a power of two, got 6")


def test_yaml_duplicate_key_names_both_lines(tmp_path: Path) -> None:
    _, folder = build_case("yaml-duplicate-key", tmp_path)
    [dup] = [f for f in cvb.check_backends(tmp_path, [folder]) if f.rule == "yaml-duplicate-key"]
    assert dup.line == 9 and "num_warps (first at line 8)" in dup.message


def test_library_checks_all_folders_under_configured_root(tmp_path: Path) -> None:
    build_clean(tmp_path / "vendors")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/flagbot.yml").write_text("backends: vendors/backends\n")
    shutil.copytree(BROKEN / "all-duplicate" / "files", tmp_path / "vendors/backends/_acme",
                    dirs_exist_ok=True)
    findings = cvb.check_backends(tmp_path)
    assert {f.rule for f in findings} == {"all-duplicate"}
    assert all(f.path.startswith("vendors/backends/_acme/") for f in findings)


def test_files_outside_the_root_are_ignored(tmp_path: Path) -> None:
    build_clean(tmp_path)
    (tmp_path / "README.md").write_text("x")
    assert cvb.main(["README.md", "backends/_acme/ops/add.py"], cwd=str(tmp_path)) == 0


def test_unknown_folder_is_a_usage_error(tmp_path: Path) -> None:
    assert cvb.main(["--all", "--root", "nope"], cwd=str(tmp_path)) == 0
    with pytest.raises(Exception, match="no such vendor folder"):
        cvb.check_backends(tmp_path, ["backends/_missing"])


def test_a_misspelt_path_is_a_usage_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    build_clean(tmp_path)
    assert cvb.main(["backends/_acmee"], cwd=str(tmp_path)) == 2
    assert "no such file or folder: backends/_acmee" in capsys.readouterr().err


def test_nothing_staged_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_clean(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert cvb.main([], cwd=str(tmp_path)) == 0
    assert "nothing to check: no staged changes under backends/" in capsys.readouterr().out


def test_staged_mode_outside_git_is_a_usage_error(tmp_path: Path) -> None:
    assert cvb.main([], cwd=str(tmp_path)) == 2


def test_clean_check_never_imports_torch(tmp_path: Path) -> None:
    import subprocess

    code = ("import sys; from flagbot.hooks.check_vendor_backend import main; "
            f"rc = main(['--all', '--root', {str(CLEAN)!r}]); "
            "sys.exit(10 + rc if 'torch' in sys.modules else rc)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_unknown_aten_name_is_reported_without_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flagbot.hooks import aten_ops

    monkeypatch.setenv("FLAGBOT_NO_TORCH", "1")
    aten_ops.torch_ops.cache_clear()
    _, folder = build_case("aten-name", tmp_path)
    [finding] = [f for f in cvb.check_backends(tmp_path, [folder]) if f.rule == "aten-name"]
    assert "add.Tensor" in finding.message  # the suggestion comes from the shipped list
    aten_ops.torch_ops.cache_clear()


def test_shipped_aten_list_holds_every_name_of_the_installed_torch() -> None:
    from flagbot.hooks import aten_ops

    torch = pytest.importorskip("torch")
    live = aten_ops._schema_names(torch._C._jit_get_all_schemas())
    assert len(live) > 1000 and set(live) <= aten_ops.shipped_ops(), \
        "regenerate hooks/data/aten_ops.txt (hooks/data/README.md)"
    assert torch.__version__.rsplit(".", 1)[0] in aten_ops.shipped_releases()


def test_flagbot_command_runs_with_dash_c(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from flagbot.hooks import cli

    root, _ = build_case("descriptor-unknown-arg", tmp_path)
    assert cli.main(["-C", str(tmp_path), "check-backend", "--all", "--root", root]) == 1
    assert "[descriptor-unknown-arg] VendorDescriptor has no field 'fp32_enabled'" in capsys.readouterr().out


def test_parallel_jobs_give_the_same_findings(tmp_path: Path) -> None:
    build_clean(tmp_path)
    for rule in ("all-duplicate", "tune-schema", "heuristics-shape"):
        _, folder = build_case(rule, tmp_path / rule)
        shutil.move(tmp_path / rule / folder, tmp_path / "backends" / f"_{rule.replace('-', '_')}")
    serial = cvb.check_backends(tmp_path, None, jobs=1)
    assert serial == cvb.check_backends(tmp_path, None, jobs=2)
    assert {f.rule for f in serial} >= {"all-duplicate", "tune-schema", "heuristics-shape"}


@pytest.mark.parametrize("source,why", [
    ("x = " + "1+" * 300_000 + "1\n", "RecursionError"),
    ("x = " + "-" * 300_000 + "1\n", "MemoryError"),
])
def test_a_source_too_deep_for_the_parser_is_a_finding_not_a_crash(
        source: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = build_clean(tmp_path)
    (tmp_path / root / "_acme" / "heuristics_config_utils.py").write_text(source)
    assert cvb.main(["--all", "--root", root], cwd=str(tmp_path)) == 1
    out = capsys.readouterr()
    assert "heuristics_config_utils.py:1: error: [python-syntax] does not parse:" in out.out
    assert why in out.out and "Traceback" not in out.err


def test_an_oversized_file_is_not_read(tmp_path: Path) -> None:
    root = build_clean(tmp_path)
    big = tmp_path / root / "_acme" / "ops" / "add.py"
    big.write_text("x = 1\n" * 1_500_000)  # 9 MB: not parsed, reported
    [f] = [f for f in cvb.check_backends(tmp_path, [f"{root}/_acme"]) if f.rule == "file-too-large"]
    assert f.path == f"{root}/_acme/ops/add.py" and "9000000 bytes" in f.message
def test_parallel_jobs_with_context_give_the_same_findings(tmp_path: Path) -> None:
    root = build_clean(tmp_path, context=True)
    for rule in ("tune-key-unreferenced", "vendor-not-registered", "tune-schema"):
        _, folder = build_case(rule, tmp_path / rule)
        shutil.move(tmp_path / rule / folder, tmp_path / root / f"_{rule.replace('-', '_')}")
    serial = cvb.check_backends(tmp_path, None, root=root, jobs=1)
    assert serial == cvb.check_backends(tmp_path, None, root=root, jobs=2)
    assert {f.rule for f in serial} >= {"tune-key-unreferenced", "vendor-not-registered", "tune-schema"}


def test_expand_file_param_map_must_name_a_sibling_list(tmp_path: Path) -> None:
    build_clean(tmp_path)
    (tmp_path / "backends/_acme/gen2/mm_gen2_expand.yaml").write_text(
        "mm:\n  - config:\n    param_map:\n      META:\n        BLOCK_M: block_m\n"
        "      num_warps: warps\n    warps: [4, 8]\n  - strategy:\n      M: default\n")
    [found] = cvb.check_backends(tmp_path, ["backends/_acme"])
    assert (found.rule, found.line) == ("config-schema", 5) and "'block_m'" in found.message
