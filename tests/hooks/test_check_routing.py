"""check-routing: every rule on the routing corpus, the plugin's parsing, backend set and kernels."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flagbot.hooks import check_routing as cr
from flagbot.hooks.findings import ERROR

RESOURCES = Path(__file__).resolve().parents[2] / "testing" / "resources"
CORPUS = RESOURCES / "routing"
PLUGIN = RESOURCES / "routing_plugin"  # extracted from PyTorch-Plugin-FL (see its README)
BACKENDS = "--backends=flaggems,native,torch,acme"
# rule -> (file, line) where testing/resources/routing/broken.conf's chain triggers it
EXPECTED = {
    "routing-include-missing": ("broken.conf", 2),
    "routing-aten-name": ("broken.conf", 5),
    "routing-unknown-backend": ("broken.conf", 6),
    "routing-duplicate-op": ("broken.conf", 7),
    "routing-syntax": ("broken.conf", 8),
    "routing-aten-release": ("broken.conf", 9),
    "routing-include-cycle": ("loop_b.conf", 1),
    "routing-include-depth": ("deep/d8.conf", 1),
    "routing-no-kernel": ("broken.conf", 11),
}


@pytest.fixture(scope="module")
def broken_findings() -> list[dict[str, object]]:
    findings = cr.check_routing(CORPUS, ["broken.conf"], backends=["flaggems", "native", "torch", "acme"])
    return [{"rule": f.rule, "path": f.path, "line": f.line, "severity": f.severity} for f in findings]


def test_every_rule_is_covered_by_the_corpus() -> None:
    assert sorted(EXPECTED) == sorted(cr.RULES)


@pytest.mark.parametrize("rule", sorted(EXPECTED))
def test_broken_routing_reports_rule_at_its_line(rule: str, broken_findings: list[dict[str, object]]) -> None:
    path, line = EXPECTED[rule]
    assert {"rule": rule, "path": path, "line": line, "severity": cr.RULES[rule][0]} in broken_findings


def test_clean_routing_with_include_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert cr.main(["clean.conf", BACKENDS], cwd=str(CORPUS)) == 0
    assert "0 error(s), 0 warning(s)" in capsys.readouterr().out


def test_broken_routing_exits_one_with_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cr.main(["broken.conf", BACKENDS, "--format", "json"], cwd=str(CORPUS)) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == sum(1 for s in cr.RULES.values() if s[0] == ERROR)


def test_duplicate_only_is_a_warning_and_exits_zero(tmp_path: Path) -> None:
    (tmp_path / "backends.conf").write_text("add.Tensor = cuda\nadd.Tensor = flaggems\n")
    assert cr.main(["backends.conf"], cwd=str(tmp_path)) == 0


def test_vendor_folders_are_known_backends(tmp_path: Path) -> None:
    (tmp_path / "backends" / "_acme").mkdir(parents=True)
    (tmp_path / "backends.conf").write_text("mm = acme\nbmm = other\n")
    findings = cr.check_routing(tmp_path, ["backends.conf"])
    assert [(f.line, f.rule) for f in findings] == [(2, "routing-unknown-backend")]


def findings_of(repo: Path, text: str, **kwargs: object) -> list[tuple[int, str]]:
    (repo / "backends.conf").write_text(text)
    return [(f.line, f.rule) for f in cr.check_routing(repo, ["backends.conf"], **kwargs)]  # type: ignore[arg-type]


def test_plugin_backends_are_known_by_default(tmp_path: Path) -> None:
    text = "".join(f"add.Tensor = {b}\n" for b in cr.plugin_backends())
    assert [rule for _, rule in findings_of(tmp_path, text)] == ["routing-duplicate-op"] * 9


def test_unknown_backend_says_it_would_run_on_flagos(tmp_path: Path) -> None:
    (tmp_path / "backends.conf").write_text("mm = native\n")
    [finding] = cr.check_routing(tmp_path, ["backends.conf"])
    assert finding.rule == "routing-unknown-backend" and "silently run mm on flagos" in finding.message


def test_config_routing_backends_extend_the_set(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "flagbot.yml").write_text("routing:\n  backends: [my_npu]\n")
    assert findings_of(tmp_path, "mm = my_npu\nbmm = cuda\n") == []


def test_bad_config_routing_backends_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "flagbot.yml").write_text("routing:\n  backends: [My-NPU]\n")
    (tmp_path / "backends.conf").write_text("mm = cuda\n")
    assert cr.main(["backends.conf"], cwd=str(tmp_path)) == 2


@pytest.mark.parametrize("text", ["mm cuda\n", "= cuda\n", "mm =\n", "includes x.conf\n"])
def test_lines_the_plugin_skips_are_warnings(tmp_path: Path, text: str) -> None:
    assert findings_of(tmp_path, text) == [(1, "routing-syntax")]


def test_comment_anywhere_and_first_equals_split_like_the_plugin(tmp_path: Path) -> None:
    text = "mm = cuda # routed = here\n# x = y\nbmm=flaggems#no space\n"
    assert findings_of(tmp_path, text) == []


def test_include_path_is_taken_literally(tmp_path: Path) -> None:
    (tmp_path / "common.conf").write_text("mm = cuda\n")
    [finding] = cr.check_routing(tmp_path, ["backends.conf"]) if findings_of(
        tmp_path, 'include "common.conf"\n') else []
    assert finding.rule == "routing-include-missing" and "drop the quotes" in finding.message
    assert findings_of(tmp_path, "include\tcommon.conf\n") == []


def test_aten_prefix_never_matches_in_the_plugin(tmp_path: Path) -> None:
    assert findings_of(tmp_path, "aten::mm = cuda\n") == [(1, "routing-aten-name")]


def test_unknown_op_suggests_by_base_name(tmp_path: Path) -> None:
    (tmp_path / "backends.conf").write_text("sillu.Tensor = cuda\n")
    [finding] = cr.check_routing(tmp_path, ["backends.conf"])
    assert "did you mean: silu, silu_" in finding.message


def test_named_tensor_op_is_a_warning_naming_its_releases(tmp_path: Path) -> None:
    (tmp_path / "backends.conf").write_text("empty.names = cuda\n")
    [finding] = cr.check_routing(tmp_path, ["backends.conf"])
    assert finding.rule == "routing-aten-release" and "only in torch 2.10, 2.11, 2.12" in finding.message


PLUGIN_FILES = ["torch_fl/configs/backends_cuda.conf", "torch_fl/configs/backends_tsingmicro.conf",
                "torch_fl/configs/backends_ascend_flagos_py.conf"]
NO_KERNEL = {("tsingmicro.conf", 2, "routing-no-kernel"), ("tsingmicro.conf", 3, "routing-no-kernel"),
             ("py.conf", 4, "routing-no-kernel")}


def test_plugin_extract_has_no_errors_and_the_upstream_warnings() -> None:
    # PyTorch-Plugin-FL 1adbc97 pins torch>=2.10,<2.11 (pyproject.toml): the named-tensor ops
    # of torch 2.10-2.12 exist in every release it builds against, so no release warning.
    found = {(f.path.rsplit("_", 1)[-1], f.line, f.rule) for f in cr.check_routing(PLUGIN, PLUGIN_FILES)}
    assert found == NO_KERNEL


def test_without_a_torch_pin_every_shipped_release_is_judged(tmp_path: Path) -> None:
    shutil.copytree(PLUGIN, tmp_path / "p")
    (tmp_path / "p/pyproject.toml").unlink()
    found = {(f.path.rsplit("_", 1)[-1], f.line, f.rule) for f in cr.check_routing(tmp_path / "p", PLUGIN_FILES)}
    assert found == NO_KERNEL | {("cuda.conf", 9, "routing-aten-release"),
                                 ("cuda.conf", 10, "routing-aten-release")}


@pytest.mark.parametrize("where,text", [
    ("pyproject.toml", '[build-system]\nrequires = ["torch>=2.10,<2.11"]\n'),
    ("setup.py", 'TORCH_PIN = "torch>=2.10,<2.11"\n'),
    ("requirements.txt", "numpy\ntorch==2.10.*  # the bindings' release\n"),
])
def test_an_op_newer_than_the_pinned_torch_is_named_with_the_pin(tmp_path: Path, where: str, text: str) -> None:
    (tmp_path / where).write_text(text)
    (tmp_path / "backends.conf").write_text("_foreach_clone = cuda\nempty.names = cuda\n")
    [finding] = cr.check_routing(tmp_path, ["backends.conf"])
    assert finding.rule == "routing-aten-release" and finding.line == 1
    assert f"not in 2.10, which the repository supports ({where}: torch" in finding.message


def test_torchvision_or_a_plugin_named_torch_something_is_no_torch_pin(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torchvision==0.25\ntorch_fl>=1\n")
    (tmp_path / "backends.conf").write_text("empty.names = cuda\n")
    [finding] = cr.check_routing(tmp_path, ["backends.conf"])
    assert "only in torch 2.10, 2.11, 2.12; with another" in finding.message


def test_kernels_are_not_read_with_no_kernels(tmp_path: Path) -> None:
    files = ["torch_fl/configs/backends_tsingmicro.conf"]
    assert cr.check_routing(PLUGIN, files, kernels=False) == []


def test_file_included_twice_is_reported_once(tmp_path: Path) -> None:
    shutil.copy(CORPUS / "common.conf", tmp_path / "common.conf")
    (tmp_path / "a.conf").write_text("include common.conf\ninclude b.conf\nrelu = quantum\n")
    (tmp_path / "b.conf").write_text("include common.conf\n")
    findings = cr.check_routing(tmp_path, ["a.conf", "b.conf"], backends=["flaggems", "native"])
    assert [(f.path, f.line) for f in findings] == [("a.conf", 3)]
