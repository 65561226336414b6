"""check-routing: every rule on the routing corpus, include handling and the backend set."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flagbot.hooks import check_routing as cr
from flagbot.hooks.findings import ERROR

CORPUS = Path(__file__).resolve().parents[2] / "testing" / "resources" / "routing"
BACKENDS = "--backends=flaggems,native,torch,acme"
# rule -> (file, line) where testing/resources/routing/broken.conf's chain triggers it
EXPECTED = {
    "routing-include-missing": ("broken.conf", 2),
    "routing-aten-name": ("broken.conf", 5),
    "routing-unknown-backend": ("broken.conf", 6),
    "routing-duplicate-op": ("broken.conf", 7),
    "routing-syntax": ("broken.conf", 8),
    "routing-include-cycle": ("loop_b.conf", 1),
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
    (tmp_path / "backends.conf").write_text("add.Tensor = torch\nadd.Tensor = flaggems\n")
    assert cr.main(["backends.conf"], cwd=str(tmp_path)) == 0


def test_vendor_folders_are_known_backends(tmp_path: Path) -> None:
    (tmp_path / "backends" / "_acme").mkdir(parents=True)
    (tmp_path / "backends.conf").write_text("mm = acme\nbmm = other\n")
    findings = cr.check_routing(tmp_path, ["backends.conf"])
    assert [(f.line, f.rule) for f in findings] == [(2, "routing-unknown-backend")]


def test_file_included_twice_is_reported_once(tmp_path: Path) -> None:
    shutil.copy(CORPUS / "common.conf", tmp_path / "common.conf")
    (tmp_path / "a.conf").write_text("include common.conf\ninclude b.conf\nrelu = quantum\n")
    (tmp_path / "b.conf").write_text("include common.conf\n")
    findings = cr.check_routing(tmp_path, ["a.conf", "b.conf"], backends=["flaggems", "native"])
    assert [(f.path, f.line) for f in findings] == [("a.conf", 3)]
