"""Structured logs: JSON lines with the delivery's fields, and no secret ever written."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from flagbot.bot.monitoring import logs
from testing.bot_e2e import SECRET, app_settings, base_files, post_delivery, serving, wait_until
from testing.github_emulator import Emulator

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1x2x3x4x5x6x7x8x9\nAbCdEfGhIjKlMnOp\n-----END RSA PRIVATE KEY-----\n"


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    """The root logger writing JSON lines into a buffer (restored afterwards)."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    stream = io.StringIO()
    yield stream
    for handler in list(root.handlers):
        if handler not in before:
            root.removeHandler(handler)
    root.setLevel(level)


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_secrets_and_token_shapes_are_redacted(captured: io.StringIO) -> None:
    logs.setup("debug", "json", ["webhook-secret-1", PEM], stream=captured)
    log = logging.getLogger("t")
    log.info("secret %s and key %s", "webhook-secret-1", PEM)
    log.info("token ghs_%s jwt eyJhbGciOi.eyJpc3MiOiI0MjQyIn0.c2lnbmF0dXJl", "A" * 36)
    log.info("clone https://x-access-token:%s@github.com/o/r.git", "ghs_" + "B" * 36)
    try:
        raise RuntimeError("failed with Authorization: token ghs_" + "C" * 36)
    except RuntimeError:
        log.exception("boom")
    text = captured.getvalue()
    for leaked in ("webhook-secret-1", "MIIEowIBAAKCAQEAx1x2x3x4x5x6x7x8x9", "ghs_", "eyJhbGciOi"):
        assert leaked not in text
    assert len(lines(captured)) == 4 and "[redacted]" in lines(captured)[3]["exception"]


def test_json_lines_carry_the_delivery_fields(captured: io.StringIO) -> None:
    logs.setup("info", "json", [], stream=captured)
    with logs.delivery_context("d-1", "pull_request", "o/r", 7):
        logging.getLogger("t").info("working", extra={"duration_s": 0.5})
    logging.getLogger("t").info("outside")
    inside, outside = lines(captured)
    assert inside["delivery"] == "d-1" and inside["repository"] == "o/r" and inside["pr"] == 7
    assert inside["duration_s"] == 0.5 and inside["level"] == "info" and inside["message"] == "working"
    assert "delivery" not in outside


def test_text_lines_name_the_delivery(captured: io.StringIO) -> None:
    logs.setup("info", "text", [], stream=captured)
    with logs.delivery_context("d-2", "pull_request", "o/r", 3):
        logging.getLogger("t").info("hello")
    assert "hello [delivery=d-2 event=pull_request repository=o/r pr=3]" in captured.getvalue()


def test_a_real_delivery_logs_its_fields_and_never_the_key_or_tokens(
        emu: Emulator, tmp_path: Path, captured: io.StringIO) -> None:
    settings = app_settings(emu, tmp_path / "state")
    logs.setup("debug", "json", [settings.webhook_secret, settings.private_key], stream=captured)
    repo = emu.create_repo("flagos/FlagScale", files=base_files())
    emu.push_commit(repo, branch="feature", files={"torch/csrc/acc/X.cpp": "// x\n"})
    emu.open_pull(repo, head="feature")
    with serving(settings) as url:
        post_delivery(url, "pull_request", emu.payload(event="pull_request", action="opened",
                                                       repo=repo, number=1), delivery="log-1")
        wait_until(lambda: any(line.get("outcome") == "done" for line in lines(captured)))
    text = captured.getvalue()
    assert emu.auth.issued_tokens(), "the delivery should have used an installation token"
    for token in emu.auth.issued_tokens():
        assert token not in text
    key_lines = [line for line in emu.private_key_pem.splitlines() if "PRIVATE KEY" not in line]
    assert not any(line in text for line in key_lines)
    assert SECRET not in text
    [done] = [line for line in lines(captured) if line.get("outcome") == "done"]
    assert (done["delivery"], done["repository"], done["pr"]) == ("log-1", "flagos/FlagScale", 1)
    assert done["duration_s"] > 0


def test_without_a_stream_records_go_to_stderr_as_it_is_when_they_are_written(
        captured: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> None:
    # stderr swapped after set-up (and the first one closed): records follow the swap and none
    # is lost to the closed stream
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr("sys.stderr", first)
    logs.setup("info", "text", [])
    logging.getLogger("t").info("before the swap")
    assert first.getvalue().rstrip().endswith("before the swap")
    monkeypatch.setattr("sys.stderr", second)
    first.close()
    logging.getLogger("t").info("after the swap")
    written = second.getvalue()
    assert written.rstrip().endswith("after the swap") and "before" not in written
    assert "Logging error" not in written  # what a handler bound to the closed stream reports
