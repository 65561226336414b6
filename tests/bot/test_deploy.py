"""The deployment examples in deploy/: systemd units and the container recipe stay runnable."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import requests

from flagbot.bot.entry import cli
from flagbot.bot.settings import Settings
from flagbot.hooks import cli as hooks_cli
from tests.bot.core_support import ROOT, free_port

DEPLOY = ROOT / "deploy"
UNITS = ["flagbot.service", "flagbot-worker.service"]
PARSERS = {"serve": cli.serve_parser, "worker": cli.worker_parser}


class Recording(dict[str, str]):
    """An environment that remembers every variable asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[str] = set()

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)


def settings_keys() -> set[str]:
    """Every environment variable `Settings.from_env` reads."""
    env = Recording()
    Settings.from_env(env)
    return env.asked


def unit(name: str) -> dict[str, dict[str, list[str]]]:
    """A unit file as section -> key -> values (systemd keys such as EnvironmentFile repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for line in (DEPLOY / name).read_text().splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif line and not line.startswith(("#", ";")):
            key, _, value = line.partition("=")
            current.setdefault(key.strip(), []).append(value.strip())
    return sections


def env_keys(text: str) -> set[str]:
    """KEY of every `KEY=value` line, commented-out examples included."""
    keys = set()
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if "=" in line and line.split("=", 1)[0].isupper():
            keys.add(line.split("=", 1)[0])
    return keys


@pytest.mark.parametrize("name", UNITS)
def test_unit_runs_an_installed_console_script_with_valid_options(name: str) -> None:
    service = unit(name)["Service"]
    [exec_start] = service["ExecStart"]
    argv = shlex.split(exec_start)
    scripts = (ROOT / "pyproject.toml").read_text().split("[project.scripts]")[1].split("\n[")[0]
    assert re.search(rf'^{re.escape(Path(argv[0]).name)} = "', scripts, re.M)
    assert argv[1] in hooks_cli.COMMANDS
    PARSERS[argv[1]]().parse_args(argv[2:])  # SystemExit on an unknown option


@pytest.mark.parametrize("name", UNITS)
def test_unit_environment_is_what_settings_read(name: str) -> None:
    service = unit(name)["Service"]
    assert env_keys("\n".join(service["Environment"])) <= settings_keys()
    assert "/var/lib/flagbot/github-app/flagbot.env" in service["EnvironmentFile"]
    assert service["StateDirectory"] == ["flagbot"] and service["KillSignal"] == ["SIGTERM"]


def test_env_file_example_and_setup_keys_are_settings() -> None:
    from flagbot.bot.admin.register import env_file

    written = env_file({"id": 1, "webhook_secret": "s"}, Path("/k.pem"), "http://127.0.0.1:1")
    assert env_keys(written) <= settings_keys()
    assert env_keys((DEPLOY / "flagbot.env.example").read_text()) <= settings_keys()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
@pytest.mark.parametrize("name", UNITS)
def test_systemd_accepts_the_unit(name: str, tmp_path: Path) -> None:
    flagbot = Path(sys.executable).with_name("flagbot")
    if not flagbot.exists():
        pytest.skip(f"{flagbot}: flagbot is not installed next to this interpreter")
    text = (DEPLOY / name).read_text().replace("/opt/flagbot/venv/bin/flagbot", str(flagbot))
    (tmp_path / name).write_text(text.replace("EnvironmentFile=/", "EnvironmentFile=-/"))
    found = subprocess.run(["systemd-analyze", "verify", str(tmp_path / name)],
                           capture_output=True, text=True, timeout=60)
    problems = [line for line in (found.stdout + found.stderr).splitlines() if name in line]
    assert problems == []


def container_runtime() -> str | None:
    """docker or podman, when one is installed and its daemon answers."""
    for tool in ("docker", "podman"):
        if shutil.which(tool) and subprocess.run([tool, "info"], capture_output=True,
                                                 timeout=30).returncode == 0:
            return tool
    return None


@pytest.mark.slow
def test_container_builds_serves_healthz_and_stops_on_sigterm() -> None:
    tool = container_runtime()
    if tool is None:
        pytest.skip("no container runtime: docker or podman must be on PATH with a running daemon")
    tag, name = f"flagbot-test:{uuid.uuid4().hex[:8]}", f"flagbot-test-{uuid.uuid4().hex[:8]}"
    subprocess.run([tool, "build", "-f", str(DEPLOY / "Dockerfile"), "-t", tag, str(ROOT)],
                   check=True, timeout=1200)
    port = free_port()
    try:
        subprocess.run([tool, "run", "-d", "--name", name, "-p", f"127.0.0.1:{port}:8000",
                        "-e", "GITHUB_WEBHOOK_SECRET=s", tag], check=True, timeout=120)
        deadline = time.monotonic() + 60
        while True:
            try:
                reply = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "the container never answered /healthz"
                time.sleep(0.5)
        assert reply.status_code == 200 and reply.json()["checks"]["ledger"] == "ok"
        subprocess.run([tool, "stop", "-t", "60", name], check=True, timeout=120)
        code = subprocess.run([tool, "inspect", "-f", "{{.State.ExitCode}}", name],
                              capture_output=True, text=True, check=True).stdout.strip()
        assert code == "0"
    finally:
        subprocess.run([tool, "rm", "-f", name], capture_output=True, timeout=120)
        subprocess.run([tool, "rmi", "-f", tag], capture_output=True, timeout=120,
                       env=dict(os.environ))
