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


def fields() -> dict[tuple[str, str], tuple[set[str], set[str]]]:
    """{(METHOD, path as described): (query parameters, body fields)} from the list."""
    out = {}
    for line in LISTED.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            op, query, body = line.split("\t")
            method, path = op.split(" ", 1)
            out[(method, path)] = ({q for q in query.removeprefix("query=").split(",") if q},
                                   {b for b in body.removeprefix("body=").split(",") if b})
    return out


def listed() -> dict[tuple[str, str], str]:
    return {(method, normalise(path)): path for method, path in fields()}


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
    listed_fields = fields()
    assert listed_fields[("POST", "/repos/{owner}/{repo}/git/refs")] == (set(), {"ref", "sha"})
    assert "force" in listed_fields[("PATCH", "/repos/{owner}/{repo}/git/refs/{ref}")][1]
    assert "event" in listed_fields[("GET", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs")][0]


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


def test_every_call_of_the_device_flow_is_a_described_operation_with_described_fields(emu, settings) -> None:
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
    described_fields = fields()
    # the most literal operation first: `/commits/{ref}/check-runs` before `/commits/{ref}`
    ordered = sorted(described_fields, key=lambda op: -len(re.sub(r"\{\w+\}", "", op[1])))
    patterns = [(m, as_regex(p), described_fields[(m, p)]) for (m, p) in ordered]
    calls = [c for c in emu.calls if not c.path.startswith("/_emu/")]
    assert any("/git/refs" in c.path for c in calls)
    stray = []
    for c in calls:
        found = [(query, body) for m, rx, (query, body) in patterns if m == c.method and rx.fullmatch(c.path)]
        if not found:
            stray.append(f"{c.method} {c.path}: no such operation")
            continue
        query, body = found[0]
        extra = set(c.query) - query | (set(c.json) - body if isinstance(c.json, dict) else set())
        if extra:
            stray.append(f"{c.method} {c.path}: undescribed {sorted(extra)}")
    assert stray == []
