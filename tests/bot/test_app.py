"""POST /webhook and /healthz over real HTTP (werkzeug server in a thread), ledger + queue on disk."""

# ruff: noqa: F811  (fixtures imported from tests/bot/core_support.py, then used as arguments)

from __future__ import annotations

import http.client
import json
import logging
import socket
import uuid
from pathlib import Path

import requests

from flagbot.bot.entry.web import create_app
from flagbot.bot.settings import Settings
from flagbot.bot.store.factory import open_queue
from flagbot.bot.store.sqlite import SqliteLedger
from tests.bot.core_support import (  # noqa: F401  (fixtures)
    UNHANDLED,
    ServerThread,
    make_settings,
    payload,
    post,
    server,
    settings,
    sign,
)

VECTOR_SECRET, VECTOR_BODY = "It's a Secret to Everybody", b"Hello, World!"
VECTOR_SIG = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def ledger(settings: Settings) -> SqliteLedger:
    return SqliteLedger(settings.state_dir / "ledger.db")


def depth(settings: Settings) -> int:
    return open_queue(settings).depth()


def test_signed_delivery_is_recorded_queued_and_acknowledged(server, settings) -> None:
    r = post(server.url, payload(), delivery="d-1")
    assert r.status_code == 202 and r.json()["outcome"] == "queued"
    row = ledger(settings).get("d-1")
    assert row and row.status == "queued" and row.event == "pull_request"
    assert (row.action, row.repo, row.payload_json()["number"]) == ("opened", "octo/flagos", 1)
    assert depth(settings) == 1


def test_githubs_test_vector_passes_the_signature_check_over_http(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path, webhook_secret=VECTOR_SECRET))
    with ServerThread(app) as srv:
        headers = {"X-GitHub-Event": "push", "X-GitHub-Delivery": "v-1",
                   "X-Hub-Signature-256": VECTOR_SIG}
        r = requests.post(srv.url + "/webhook", data=VECTOR_BODY, headers=headers, timeout=5)
        assert r.status_code == 400 and "JSON" in r.json()["error"]  # past the signature: 400, not 401
        headers["X-Hub-Signature-256"] = VECTOR_SIG[:-1] + "f"
        r = requests.post(srv.url + "/webhook", data=VECTOR_BODY, headers=headers, timeout=5)
        assert r.status_code == 401


def test_bad_or_missing_signature_gets_401_and_records_nothing(server, settings) -> None:
    assert post(server.url, payload(), delivery="bad", secret="wrong").status_code == 401
    assert post(server.url, payload(), delivery="none", secret=None).status_code == 401
    assert ledger(settings).get("bad") is None and ledger(settings).get("none") is None
    assert depth(settings) == 0


def test_without_a_configured_secret_every_delivery_gets_401_naming_the_setting(tmp_path) -> None:
    app = create_app(Settings(state_dir=tmp_path))
    with ServerThread(app) as srv:
        r = post(srv.url, payload(), secret=SECRET_ANY)
        assert r.status_code == 401 and "GITHUB_WEBHOOK_SECRET" in r.json()["error"]
        health = requests.get(srv.url + "/healthz", timeout=5)
        assert health.status_code == 200
        assert "GITHUB_WEBHOOK_SECRET" in health.json()["checks"]["config"]


SECRET_ANY = "anything"


def test_previous_secret_is_accepted_during_rotation(tmp_path) -> None:
    settings = make_settings(tmp_path, webhook_secret="new", webhook_secret_previous="old")
    with ServerThread(create_app(settings)) as srv:
        assert post(srv.url, payload(), secret="old").status_code == 202
        assert post(srv.url, payload(), secret="new").status_code == 202
        assert post(srv.url, payload(), secret="oldest").status_code == 401


def test_missing_event_or_delivery_header_gets_400(server) -> None:
    assert post(server.url, payload(), headers={"X-GitHub-Event": ""}).status_code == 400
    assert post(server.url, payload(), headers={"X-GitHub-Delivery": ""}).status_code == 400
    assert post(server.url, payload(), delivery="../../etc").status_code == 400


def test_broken_json_or_a_non_object_gets_400(server, settings) -> None:
    assert post(server.url, b'{"action": "opened"', delivery="j1").status_code == 400
    assert post(server.url, b"[1, 2]", delivery="j2").status_code == 400
    assert ledger(settings).get("j1") is None


def test_form_encoded_payloads_are_accepted(server, settings) -> None:
    from urllib.parse import urlencode

    body = urlencode({"payload": json.dumps(payload())}).encode()
    r = post(server.url, body, delivery="form-1",
             headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 202 and ledger(settings).get("form-1") is not None


def test_over_25_mb_by_content_length_is_refused_before_the_body_is_read(server) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    conn.putrequest("POST", "/webhook")
    conn.putheader("Content-Length", str(25 * 1024 * 1024 + 1))
    conn.putheader("X-GitHub-Event", "push")
    conn.endheaders()  # no body is ever sent: a server that read it first would hang here
    response = conn.getresponse()
    assert response.status == 413 and b"limit" in response.read()


def test_streamed_body_over_the_limit_is_cut_off_with_413(tmp_path) -> None:
    settings = make_settings(tmp_path, max_body_bytes=100_000)
    with ServerThread(create_app(settings)) as srv:
        chunks = (b"x" * 10_000 for _ in range(50))  # a generator: chunked, no Content-Length
        r = requests.post(srv.url + "/webhook", data=chunks, timeout=10,
                          headers={"X-GitHub-Event": "push", "X-GitHub-Delivery": "big"})
        assert r.status_code == 413
        small = post(srv.url, payload(), delivery="small")
        assert small.status_code == 202


def test_ping_gets_200_and_is_not_queued(server, settings) -> None:
    r = post(server.url, {"zen": "Keep it logically awesome.", "hook_id": 1}, event="ping",
             delivery="p-1")
    assert r.status_code == 200 and r.json()["zen"] == "Keep it logically awesome."
    assert ledger(settings).get("p-1") is None and depth(settings) == 0


def test_unhandled_event_is_acknowledged_and_dropped(server, settings) -> None:
    r = post(server.url, payload(action="created"), event=UNHANDLED, delivery="s-1")
    assert r.status_code == 202 and r.json()["outcome"] == "dropped"
    assert ledger(settings).get("s-1").status == "dropped"
    assert depth(settings) == 0


def test_redelivery_of_a_done_delivery_is_not_run_again(server, settings) -> None:
    post(server.url, payload(), delivery="r-done")
    led = ledger(settings)
    led.claim("r-done", "w", 30)
    led.finish("r-done", "w", "{}")
    r = post(server.url, payload(), delivery="r-done")
    assert r.status_code == 202 and r.json()["outcome"] == "done_already"
    assert "not run again" in r.json()["note"]
    assert depth(settings) == 1  # only the first delivery's message


def test_redelivery_of_a_failed_delivery_is_queued_again(server, settings) -> None:
    post(server.url, payload(), delivery="r-failed")
    led = ledger(settings)
    led.claim("r-failed", "w", 30)
    led.fail("r-failed", "w", "boom", retry_at=None)
    r = post(server.url, payload(), delivery="r-failed")
    assert r.status_code == 202 and r.json()["outcome"] == "requeued"
    row = led.get("r-failed")
    assert row.status == "queued" and row.redeliveries == 1
    assert depth(settings) == 2


def test_redelivery_while_running_is_not_queued_twice(server, settings) -> None:
    post(server.url, payload(), delivery="r-run")
    ledger(settings).claim("r-run", "w", 30)
    r = post(server.url, payload(), delivery="r-run")
    assert r.json()["outcome"] == "running" and depth(settings) == 1


def test_healthz_reports_queue_and_ledger(server) -> None:
    r = requests.get(server.url + "/healthz", timeout=5)
    assert r.status_code == 200
    assert r.json()["checks"]["ledger"] == "ok" and r.json()["checks"]["queue"].startswith("ok")


def test_healthz_is_503_with_the_reason_when_the_state_dir_is_unusable(tmp_path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the state dir should be")
    with ServerThread(create_app(make_settings(blocker))) as srv:
        r = requests.get(srv.url + "/healthz", timeout=5)
        assert r.status_code == 503 and r.json()["status"] == "unhealthy"
        assert "not-a-dir" in r.json()["checks"]["ledger"] + r.json()["checks"]["queue"]
        assert post(srv.url, payload()).status_code == 503


def test_many_concurrent_deliveries_all_land_in_the_ledger(server, settings) -> None:
    from concurrent.futures import ThreadPoolExecutor

    ids = [f"c-{uuid.uuid4()}" for _ in range(60)]
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda i: post(server.url, payload(), delivery=i).status_code, ids))
    assert codes == [202] * len(ids)
    assert all(ledger(settings).get(i) is not None for i in ids)
    assert depth(settings) == len(ids)


def test_signature_helper_in_tests_is_independent_of_the_app() -> None:
    assert sign(VECTOR_BODY, VECTOR_SECRET) == VECTOR_SIG


def raw_post(url: str, body: bytes, headers: bytes) -> bytes:
    """POST /webhook over a plain socket, so header bytes go out exactly as given."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     b"Content-Type: application/json\r\nX-GitHub-Event: pull_request\r\n"
                     b"X-GitHub-Delivery: raw-1\r\n" + headers +
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    return got


def test_a_non_ascii_signature_header_is_a_401_with_one_log_line(server, caplog) -> None:
    body = json.dumps(payload()).encode()
    bad = ("sha256=" + "\u00e9" * 64).encode("latin-1")
    with caplog.at_level(logging.INFO):
        got = raw_post(server.url, body, b"X-Hub-Signature-256: " + bad + b"\r\n")
    assert got.startswith(b"HTTP/1.1 401"), got[:200]
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].exc_info is None, [r.getMessage() for r in lines]


def test_deeply_nested_signed_json_is_a_400_with_one_log_line(server, settings, caplog) -> None:
    body = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with caplog.at_level(logging.INFO):
        r = post(server.url, body, delivery="deep-1")
    assert r.status_code == 400 and ledger(settings).get("deep-1") is None
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].exc_info is None, [r.getMessage() for r in lines]


def test_a_form_encoded_delivery_is_stored_as_json_for_the_worker(server, settings) -> None:
    from urllib.parse import urlencode

    sent = payload(action="synchronize")
    body = urlencode({"payload": json.dumps(sent)}).encode()
    r = post(server.url, body, delivery="form-2",
             headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 202
    assert ledger(settings).get("form-2").payload_json() == sent
def test_an_unhandled_action_of_a_handled_event_is_named_as_such(tmp_path: Path) -> None:
    from tests.bot.core_support import make_settings, sign

    client = create_app(make_settings(tmp_path / "state")).test_client()  # the bot's own wants

    def deliver(event: str, action: str, delivery: str) -> dict[str, str]:
        raw = json.dumps({"action": action, "repository": {"full_name": "o/r"},
                          "installation": {"id": 1}}).encode()
        reply = client.post("/webhook", data=raw, headers={
            "Content-Type": "application/json", "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sign(raw)})
        assert reply.status_code == 202
        return reply.get_json()

    assigned = deliver("pull_request", "assigned", "d-1")
    assert assigned["outcome"] == "dropped"
    assert assigned["note"] == "the bot does not act on pull_request.assigned"
    assert deliver("star", "created", "d-2")["note"] == "no handler for this event"
