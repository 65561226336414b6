"""The emulator serves only what GitHub's published REST description (`@octokit/openapi`,
api.github.com.json) has, so the bot cannot come to rely on an endpoint GitHub lacks.

testing/github_emulator/openapi_routes.txt is extracted from the description by
tools/openapi_routes.py (the description itself is over 10 MB and not kept here). With
FLAGBOT_OPENAPI_JSON naming that file, the route table is checked against it directly too.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from testing.github_emulator.openapi import NOT_REST, described, normalise
from testing.github_emulator.routes import TABLE
from tests.bot.devices_support import BACKEND, deliver_pr, deliver_run, device_repo, open_device_pr
from tests.bot.test_devices_ci import TAG_CONFIG, TAG_WORKFLOW

ROOT = Path(__file__).resolve().parents[2]
LISTED = ROOT / "testing/github_emulator/openapi_routes.txt"


def listed() -> dict[tuple[str, str], str]:
    out = {}
    for line in LISTED.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            method, path = line.split(" ", 1)
            out[(method, normalise(path))] = path
    return out


def served() -> list[tuple[str, str]]:
    return [(m, t) for m, t, _, _ in TABLE if t not in NOT_REST]


def test_every_route_is_a_described_operation_and_the_list_is_current() -> None:
    ops = listed()
    unknown = [f"{m} {t}" for m, t in served() if described(m, t, ops) is None]
    assert unknown == [], "routes GitHub's REST description lacks (or rerun tools/openapi_routes.py)"
    used = {(m, normalise(described(m, t, ops) or "")) for m, t in served()}
    assert set(ops) == used, "openapi_routes.txt lists operations no route serves: rerun the tool"


def test_exemptions_name_routes_that_exist() -> None:
    templates = {t for _, t, _, _ in TABLE}
    assert set(NOT_REST) <= templates and all(NOT_REST.values())


def test_a_route_missing_from_the_description_is_caught() -> None:
    ops = listed()
    assert described("GET", "/repos/{owner}/{repo}/git/tags/{sha}/children", ops) is None
    assert described("PUT", "/repos/{owner}/{repo}/git/refs/{ref+}", ops) is None  # wrong method
    assert described("GET", "/repos/{o}/{r}/actions/artifacts/{id}/zip", ops) is not None


@pytest.mark.skipif(not os.environ.get("FLAGBOT_OPENAPI_JSON"),
                    reason="FLAGBOT_OPENAPI_JSON does not name api.github.com.json")
def test_routes_against_the_full_description() -> None:
    doc = json.loads(Path(os.environ["FLAGBOT_OPENAPI_JSON"]).read_text(encoding="utf-8"))
    ops = {(m.upper(), normalise(p)): p for p, item in doc["paths"].items()
           for m in item if m in ("get", "post", "put", "patch", "delete")}
    assert [f"{m} {t}" for m, t in served() if described(m, t, ops) is None] == []


def as_regex(path: str) -> re.Pattern[str]:
    """A described path as a regex over request paths (ref, path and name may hold slashes)."""
    def repl(m: re.Match[str]) -> str:
        return ".+" if m.group(1) in ("ref", "path", "name") else "[^/]+"
    return re.compile(re.sub(r"\{(\w+)\}", repl, path))


def test_every_call_of_the_device_flow_is_a_described_operation(emu, settings) -> None:
    repo = device_repo(emu, TAG_CONFIG, extra={".github/workflows/device-check-tag.yml": TAG_WORKFLOW})
    pr = open_device_pr(emu, repo)
    deliver_pr(emu, settings, repo)
    [run] = emu.workflow_runs(repo)
    emu.set_workflow_run(repo, run["id"], "completed", "failure")
    deliver_run(emu, settings, repo, run["id"])  # no report: retried, the tag pushed again
    emu.push_commit(repo, branch="feature", files={BACKEND: "x = 2\n"})
    emu.update_pull_head(repo, 1)
    deliver_pr(emu, settings, repo, action="synchronize", delivery="d-2", before=pr["head"]["sha"])
    deliver_pr(emu, settings, repo, action="closed", delivery="d-3")
    patterns = [(m, as_regex(p)) for (m, _), p in listed().items()]
    calls = {(c.method, c.path) for c in emu.calls if not c.path.startswith("/_emu/")}
    assert any("/git/refs" in p for _, p in calls)
    stray = sorted(f"{m} {p}" for m, p in calls if not any(
        m == pm and rx.fullmatch(p) for pm, rx in patterns))
    assert stray == []
