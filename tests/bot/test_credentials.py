"""Credentials the App cannot act with fail a delivery at once: retrying cannot fix them."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from flagbot.bot.store.sqlite import SqliteLedger
from testing.bot_e2e import app_settings, base_files, post_delivery, serving, wait_until


def _settled(state: Path, delivery: str) -> object:
    row = SqliteLedger(state / "ledger.db").get(delivery)
    return row if row is not None and row.status in ("done", "failed") else None


def _another_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _deliver_once(emu, tmp_path: Path, **overrides: object) -> object:
    repo = emu.create_repo("flagos/FlagScale", files=base_files())
    emu.push_commit(repo, branch="feature", files={"hardwares/A_X100/x.md": "x\n"})
    emu.open_pull(repo, head="feature")
    settings = app_settings(emu, tmp_path / "state", **overrides)
    with serving(settings) as url:
        post_delivery(url, "pull_request",
                      emu.payload(event="pull_request", action="opened", repo=repo, number=1),
                      delivery="cred-1")
        return wait_until(lambda: _settled(settings.state_dir, "cred-1"), what="settled")


def test_a_missing_private_key_fails_the_delivery_without_retries(emu, tmp_path) -> None:
    row = _deliver_once(emu, tmp_path, private_key=None)
    assert (row.status, row.attempts) == ("failed", 1)
    assert "GITHUB_PRIVATE_KEY" in row.error


def test_a_key_github_refuses_fails_the_delivery_without_retries(emu, tmp_path) -> None:
    row = _deliver_once(emu, tmp_path, private_key=_another_key())
    assert (row.status, row.attempts) == ("failed", 1), row.error
    assert "AppCredentialsError" in row.error and "401" in row.error
