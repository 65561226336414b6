"""`flagbot setup`: the manifest flow against the emulator, credentials stored 0600."""

from __future__ import annotations

import html
import json
import re
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from flagbot.bot.admin import register
from flagbot.hooks import cli
from testing.github_emulator import Emulator
from tests.bot.core_support import free_port, wait_for

HOOK = "https://bot.example.com/webhook"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, emu: Emulator, tmp_path: Path) -> Path:
    """GITHUB_API_URL at the emulator, the state dir in tmp; returns the state dir."""
    for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_API_URL", emu.url)
    monkeypatch.setenv("FLAGBOT_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def run_setup(*extra: str) -> tuple[threading.Thread, list[int], str]:
    """Start `flagbot setup` in a thread; returns it, its exit code box and the local URL."""
    port = free_port()
    box: list[int] = []
    args = ["setup", "--webhook-url", HOOK, "--port", str(port), "--timeout", "30", *extra]
    thread = threading.Thread(target=lambda: box.append(cli.main(args)), daemon=True)
    thread.start()
    local = f"http://127.0.0.1:{port}"
    wait_for(lambda: _answers(local), 10, "the setup page")
    return thread, box, local


def _answers(url: str) -> bool:
    try:
        return requests.get(url + "/", timeout=2).status_code == 200
    except requests.ConnectionError:
        return False


def browser_posts_manifest(local: str) -> tuple[requests.Response, dict[str, Any]]:
    """What a browser does with the setup page: post its form to GitHub, follow the redirect."""
    page = requests.get(local + "/", timeout=5).text
    action = html.unescape(re.search(r"action='([^']+)'", page).group(1))
    manifest = html.unescape(re.search(r"name='manifest' value='([^']+)'", page).group(1))
    reply = requests.post(action, data={"manifest": manifest}, timeout=10)
    return reply, json.loads(manifest)


def test_setup_registers_the_app_and_stores_its_credentials_0600(env: Path, emu: Emulator) -> None:
    thread, box, local = run_setup("--name", "flagbot-test")
    reply, manifest = browser_posts_manifest(local)
    thread.join(20)
    assert box == [0] and "registered" in reply.text
    assert manifest["hook_attributes"]["url"] == HOOK and manifest["url"] == "https://bot.example.com"
    template = yaml.safe_load(register.MANIFEST.read_text())
    assert manifest["default_permissions"] == template["default_permissions"]
    assert manifest["default_events"] == template["default_events"]
    [app] = emu.state.registered_apps
    folder = env / "github-app"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("private-key.pem", "app.json", "flagbot.env"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    assert (folder / "private-key.pem").read_text() == app["pem"]
    assert json.loads((folder / "app.json").read_text())["id"] == app["id"]
    assert app["name"] == "flagbot-test"
    lines = (folder / "flagbot.env").read_text().splitlines()
    assert f"GITHUB_APP_ID={app['id']}" in lines
    assert f"GITHUB_WEBHOOK_SECRET={app['webhook_secret']}" in lines
    assert f"GITHUB_API_URL={emu.url}" in lines


def test_a_redirect_with_another_state_is_ignored(env: Path, emu: Emulator) -> None:
    thread, box, local = run_setup()
    page = requests.get(f"{local}/callback?code=x&state=forged", timeout=5).text
    assert "does not belong" in page and not (env / "github-app").exists()
    browser_posts_manifest(local)
    thread.join(20)
    assert box == [0]


def test_a_code_converts_once(emu: Emulator) -> None:
    reply = requests.post(emu.url + "/settings/apps/new", data={"manifest": json.dumps(
        {"url": "https://x.example", "hook_attributes": {"url": HOOK}})}, timeout=5)
    code = reply.json()["code"]
    assert register.convert(emu.url, code)["pem"].startswith("-----BEGIN")
    with pytest.raises(cli.FlagbotError, match="refused"):
        register.convert(emu.url, code)


def test_setup_refuses_to_overwrite_stored_credentials(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (env / "github-app").mkdir(parents=True)
    (env / "github-app" / "private-key.pem").write_text("old")
    assert cli.main(["setup", "--webhook-url", HOOK]) == 2
    assert "--force" in capsys.readouterr().err


def test_setup_needs_an_http_webhook_url(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["setup", "--webhook-url", "bot.example.com"]) == 2
    assert "not an http(s) URL" in capsys.readouterr().err


@pytest.mark.parametrize(("api", "web"), [
    ("https://api.github.com", "https://github.com"),
    ("https://ghe.example.com/api/v3", "https://ghe.example.com"),
    ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),
])
def test_web_url_follows_the_api_url(api: str, web: str) -> None:
    assert register.web_url(api) == web


def test_the_page_answers_only_its_own_host(env: Path, emu: Emulator) -> None:
    # DNS rebinding: a hostile page whose name resolves to 127.0.0.1 sends its own Host header
    thread, box, local = run_setup()
    port = local.rsplit(":", 1)[1]
    for path in ("/", "/callback?code=0123456789abcdef0123&state=x"):
        reply = requests.get(local + path, headers={"Host": f"evil.example:{port}"}, timeout=5)
        assert reply.status_code == 421 and "state=" not in reply.text
    assert requests.get(f"http://localhost:{port}/", timeout=5).status_code == 200
    assert not (env / "github-app").exists()
    browser_posts_manifest(local)
    thread.join(20)
    assert box == [0]


@pytest.mark.parametrize("code", ["../../user", "abc?x=1", "a" * 7, "abcd/efgh1234", ""])
def test_a_code_that_is_not_githubs_never_reaches_the_api(emu: Emulator, code: str) -> None:
    before = len(emu.calls)
    with pytest.raises(cli.FlagbotError, match="not a GitHub manifest code"):
        register.convert(emu.url, code)
    assert len(emu.calls) == before
