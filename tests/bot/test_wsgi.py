"""The web process stays small: the WSGI app answers POST /webhook without loading handler
code, reading the interest filter as data, through its one route."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from flagbot.bot import interest
from flagbot.bot.entry.web import create_app
from flagbot.bot.handlers.registry import ALL, HANDLERS, INTERNAL
from tests.bot.core_support import SECRET, make_settings, sign

MAX_FLAGBOT_MODULES = 30
WEBHOOKS = Path(__file__).resolve().parents[1] / "data" / "webhooks"

# In a fresh interpreter: build gunicorn's app, take one delivery, list what got imported.
PROBE = """
import json, sys
from flagbot.bot.entry import wsgi
client = wsgi.app.test_client()
body = json.dumps({"action": "opened", "repository": {"full_name": "o/r"},
                   "installation": {"id": 1}}).encode()
reply = client.post("/webhook", data=body, headers={
    "Content-Type": "application/json", "X-GitHub-Event": "pull_request",
    "X-GitHub-Delivery": "probe-1", "X-Hub-Signature-256": sys.argv[1]})
print(json.dumps({"status": reply.status_code, "modules": sorted(sys.modules)}))
"""


def loaded_by_the_web_process(tmp_path: Path) -> tuple[int, list[str]]:
    body = json.dumps({"action": "opened", "repository": {"full_name": "o/r"},
                       "installation": {"id": 1}}).encode()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FLAGBOT_"))}
    env.update(FLAGBOT_STATE_DIR=str(tmp_path / "state"), GITHUB_WEBHOOK_SECRET=SECRET)
    proc = subprocess.run([sys.executable, "-c", PROBE, sign(body)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return int(out["status"]), list(out["modules"])


def test_the_web_process_loads_at_most_30_flagbot_modules_and_no_handler(tmp_path: Path) -> None:
    status, modules = loaded_by_the_web_process(tmp_path)
    assert status == 202  # recorded and queued: the count includes the ledger and the queue
    ours = [m for m in modules if m == "flagbot" or m.startswith("flagbot.")]
    assert "flagbot.bot.ingest" in ours and "flagbot.bot.interest" in ours
    assert len(ours) <= MAX_FLAGBOT_MODULES, ours
    assert [m for m in ours if m.startswith(("flagbot.bot.handlers", "flagbot.bot.commands",
                                             "flagbot.bot.dispatch", "flagbot.hooks"))] == []
    # neither GitPython nor PyGithub: only the worker talks to git and GitHub
    assert {"git", "github"} & set(modules) == set()


def test_webhook_has_one_route_and_flask_has_no_view_for_it(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path / "state"))
    assert [r for r in app.url_map.iter_rules() if r.rule == "/webhook"] == []
    client = app.test_client()
    refused = client.post("/webhook", data=b"{}", headers={
        "Content-Type": "application/json", "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": "sha256=00"})
    assert refused.status_code == 401 and "X-Hub-Signature-256" in refused.get_json()["error"]
    other = client.get("/webhook")
    assert other.status_code == 405 and other.headers["Allow"] == "POST"
    assert client.get("/healthz").status_code in (200, 503)  # the rest is Flask's


def test_the_interest_data_names_exactly_the_handlers_events_and_actions() -> None:
    assert {e: set(acts) for e, acts in interest.INTEREST.items()} == \
        {e: set(h.actions) for e, h in HANDLERS.items()}
    assert not set(INTERNAL) & set(interest.INTEREST)  # follow-ups never come from a webhook
    assert len(ALL) == len(HANDLERS) + len(INTERNAL)  # one declaration per event


def payloads() -> list[tuple[str, dict[str, Any]]]:
    """Recorded deliveries plus every declared (event, action) with bot and person senders."""
    cases = [(p.name.split(".")[0], json.loads(p.read_text()))
             for p in sorted(WEBHOOKS.glob("*.json"))]
    people = [{"type": "User", "login": "alice"}, {"type": "Bot", "login": "flagbot[bot]"}]
    for (event, needs), who in itertools.product(interest.INTEREST.items(), people):
        for action in needs:
            cases.append((event, {"action": action, "sender": who, "changes": {"base": {}},
                                  "comment": {"user": who, "body": "/help"},
                                  "workflow_run": {"display_title": f"x [7-{'a' * 40}-b7358d07-cpu]"},
                                  "workflow_job": {"workflow_name": "device-check"}}))
    return cases


def test_ingest_never_drops_a_delivery_a_handler_wants() -> None:
    wanted_by_a_handler: set[str] = set()
    for event, payload in payloads():
        handler = HANDLERS.get(event)
        if handler is not None and handler.wants(payload):
            wanted_by_a_handler.add(event)
            assert interest.wanted(event, payload), (event, payload)
    assert wanted_by_a_handler == set(HANDLERS)  # every handler wanted some case


def test_the_interest_filter_drops_the_bots_own_echoes() -> None:
    bot = {"type": "Bot", "login": "flagbot[bot]"}
    assert not interest.wanted("pull_request", {"action": "labeled", "sender": bot})
    assert not interest.wanted("issue_comment", {"action": "created", "comment": {"user": bot}})
    assert not interest.wanted("pull_request", {"action": "edited", "changes": {"title": {}}})
    assert not interest.wanted("pull_request", {"action": "assigned"})
    assert not interest.wanted("star", {"action": "created"})
    assert interest.wanted("pull_request", {"action": "edited", "changes": {"base": {}}})
