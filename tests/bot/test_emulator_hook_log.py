"""The emulator's App webhook, delivery log and issue endpoints, against an extract of GitHub's
published REST description (tests/data/openapi/, from @octokit/openapi's api.github.com.json;
when that file is at $FLAGBOT_OPENAPI_JSON, the extract is checked against it too)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import requests
from github import Auth, Github, GithubIntegration

from testing.bot_e2e import SECRET, wait_until
from testing.github_emulator import Emulator
from testing.github_emulator.routes import TABLE
from tests.bot.core_support import ServerThread, free_port

SUBSET = Path(__file__).resolve().parents[1] / "data" / "openapi" / "webhook-deliveries-and-issues.json"
REPO = "flagos/FlagScale"


def subset() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(SUBSET.read_text())
    return data


def route(spec: dict[str, Any]) -> str:
    """The emulator's template for an OpenAPI path (`{issue_number}` is `{number}` there)."""
    return spec["path"].replace("{issue_number}", "{number}")


def test_every_extracted_operation_is_an_emulator_route() -> None:
    routes = {(m, t) for m, t, _, _ in TABLE}
    assert all((s["method"], route(s)) in routes for s in subset())


@pytest.mark.skipif(not os.environ.get("FLAGBOT_OPENAPI_JSON"), reason="set FLAGBOT_OPENAPI_JSON "
                    "to @octokit/openapi's generated/api.github.com.deref.json to compare")
def test_the_extract_matches_githubs_description() -> None:
    spec = json.loads(Path(os.environ["FLAGBOT_OPENAPI_JSON"]).read_text())
    for item in subset():
        op = spec["paths"][item["path"]][item["method"].lower()]
        assert op["operationId"] == item["operationId"]
        assert sorted(p["name"] for p in op.get("parameters", []) if p["in"] == "query") == item["query"]
        assert str(item["status"]) in op["responses"]


def jwt_client(emu: Emulator) -> Any:
    integration = GithubIntegration(auth=Auth.AppAuth(emu.app_id, emu.private_key_pem),
                                    base_url=emu.url)
    return integration.requester


def spec_of(method: str, path: str) -> dict[str, Any]:
    return next(s for s in subset() if (s["method"], s["path"]) == (method, path))


def test_deliveries_are_posted_signed_and_logged_with_githubs_fields(tmp_path: Path) -> None:
    received: list[tuple[str, str, bytes]] = []

    def app(environ: dict[str, Any], start: Any) -> list[bytes]:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        received.append((environ.get("HTTP_X_GITHUB_DELIVERY", ""),
                         environ.get("HTTP_X_HUB_SIGNATURE_256", ""), body))
        start("202 Accepted", [("Content-Type", "application/json")])
        return [b"{}"]

    with Emulator(tmp_path / "gh") as emu, ServerThread(app) as srv:
        repo = emu.create_repo(REPO, files={"README.md": "x\n"})
        emu.set_webhook(srv.url + "/webhook", SECRET)
        sent = emu.deliver("ping", emu.payload(event="ping"))
        dead = free_port()
        emu.set_webhook(f"http://127.0.0.1:{dead}/webhook", SECRET)
        lost = emu.deliver("pull_request", {"action": "closed", "repository": {"id": repo.id}})
        requester = jwt_client(emu)
        _, listed = requester.requestJsonAndCheck("GET", "/app/hook/deliveries")
        assert [d["guid"] for d in listed] == [lost["guid"], sent["guid"]]  # newest first
        for item in listed:
            assert set(spec_of("GET", "/app/hook/deliveries")["required"]) <= set(item)
        assert (listed[0]["status"], listed[0]["status_code"]) == ("failed to connect", 0)
        assert (listed[1]["status_code"], listed[0]["repository_id"]) == (202, repo.id)
        _, one = requester.requestJsonAndCheck("GET", f"/app/hook/deliveries/{listed[1]['id']}")
        assert set(spec_of("GET", "/app/hook/deliveries/{delivery_id}")["required"]) <= set(one)
        assert one["request"]["headers"]["X-GitHub-Delivery"] == sent["guid"]
        assert one["request"]["payload"]["zen"]

        emu.set_webhook(srv.url + "/webhook", SECRET)
        reply = requests.post(f"{emu.url}/app/hook/deliveries/{listed[0]['id']}/attempts",
                              headers={"Authorization": f"Bearer {requester.auth.token}"}, timeout=10)
        assert reply.status_code == 202
        emu.wait_deliveries()
        wait_until(lambda: len(received) == 2, 10, "the redelivery")
    guids = [guid for guid, _, _ in received]
    assert guids == [sent["guid"], lost["guid"]]  # the same guid as the lost delivery
    from testing.github_emulator import sign_body

    assert all(sig == sign_body(body, SECRET) for _, sig, body in received)
    redone = [d for d in emu.hook_deliveries() if d["guid"] == lost["guid"]]
    assert [(d["redelivery"], d["status_code"]) for d in redone] == [(False, 0), (True, 202)]


def test_the_delivery_log_pages_by_cursor_in_the_link_header(tmp_path: Path) -> None:
    with Emulator(tmp_path / "gh") as emu:
        emu.set_webhook(f"http://127.0.0.1:{free_port()}/webhook", SECRET)
        guids = [emu.deliver("ping", {"zen": str(i)})["guid"] for i in range(7)]
        requester = jwt_client(emu)
        seen, params = [], {"per_page": 3}
        while True:
            headers, page = requester.requestJsonAndCheck("GET", "/app/hook/deliveries",
                                                          parameters=params)
            seen += [d["guid"] for d in page]
            link = headers.get("link", "")
            if 'rel="next"' not in link:
                break
            cursor = link.split("cursor=")[1].split(">")[0].split("&")[0]
            params = {"per_page": 3, "cursor": cursor}
        assert seen == guids[::-1]
        _, failures = requester.requestJsonAndCheck("GET", "/app/hook/deliveries",
                                                    parameters={"status": "success"})
        assert failures == []


def test_delivery_log_needs_the_apps_jwt(tmp_path: Path) -> None:
    with Emulator(tmp_path / "gh") as emu:
        assert requests.get(f"{emu.url}/app/hook/deliveries", timeout=10).status_code == 401


def test_issues_are_created_updated_listed_by_label_and_closed(tmp_path: Path) -> None:
    with Emulator(tmp_path / "gh") as emu:
        emu.create_repo(REPO, files={"README.md": "x\n"})
        emu.open_issue(REPO, title="a person's issue")
        token = emu.auth.issue_token()[0]
        gh = Github(auth=Auth.Token(token), base_url=emu.url)
        repo = gh.get_repo(REPO)
        issue = repo.create_issue(title="flagbot: drift for A_X100", body="one", labels=["drift"])
        raw = repo.requester.requestJsonAndCheck("GET", f"{repo.url}/issues/{issue.number}")[1]
        assert set(spec_of("POST", "/repos/{owner}/{repo}/issues")["required"]) <= set(raw)
        assert (issue.user.login, [lab.name for lab in issue.labels]) == (emu.bot_login, ["drift"])
        listed = list(repo.get_issues(state="open", labels=["drift"]))
        assert [i.number for i in listed] == [issue.number]
        issue.edit(body="two")
        issue.edit(state="closed", state_reason="completed")
        assert repo.get_issue(issue.number).state == "closed"
        assert list(repo.get_issues(state="open", labels=["drift"])) == []
        assert [i.number for i in repo.get_issues(state="all")] == [issue.number, 1]
        assert repo.get_issue(issue.number).body == "two"
