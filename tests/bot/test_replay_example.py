"""`examples/replay/` names commits that `python -m testing.example_pr DIR` builds, on any machine."""

from __future__ import annotations

import json
from pathlib import Path

from testing import example_pr

EXAMPLES = Path(__file__).resolve().parents[2] / "examples/replay"


def test_the_example_payloads_name_the_built_commits(tmp_path: Path) -> None:
    built = example_pr.build(tmp_path / "miniscale")
    pr = json.loads((EXAMPLES / "pull_request.opened.json").read_text(encoding="utf-8"))
    assert (pr["pull_request"]["base"]["sha"], pr["pull_request"]["head"]["sha"]) == (
        built.base, built.head)
    assert pr["pull_request"]["head"]["ref"] == example_pr.PR_BRANCH
    comment = json.loads((EXAMPLES / "issue_comment.created.json").read_text(encoding="utf-8"))
    assert comment["issue"]["number"] == pr["number"]
    assert comment["comment"]["body"] == f"/unpatch A_X100 {built.base[:8]}"
