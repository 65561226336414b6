"""A wrong `FLAGBOT_REDIS_URL` is one line and exit 2 in every command that needs Redis."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bot.core_support import ROOT, free_port

PAYLOAD = str(ROOT / "examples/replay/pull_request.opened.json")
# replay acts on GitHub (no --dry-run) under the repository lock, kept in Redis in this mode
COMMANDS = [["worker"], ["labeled", "--label", "x"], ["replay", PAYLOAD, "--event", "pull_request"],
            ["reconcile"], ["drift", "--repo", "o/r"]]


def run_flagbot(args: list[str], redis_url: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FLAGBOT_"))}
    env.update(FLAGBOT_REDIS_URL=redis_url, FLAGBOT_STATE_DIR=str(tmp_path / "state"),
               GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY="not used: Redis is checked first")
    return subprocess.run([sys.executable, "-m", "flagbot.hooks.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_no_redis_at_the_url_is_one_line_and_exit_2(args: list[str], tmp_path: Path) -> None:
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"  # nothing listens there
    done = run_flagbot(args, url, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"redis://127.0.0.1:{url.rsplit(':', 1)[1]}: no Redis answers" in done.stderr
    assert "hunter2" not in done.stderr  # the password never appears


@pytest.mark.parametrize("url", ["localhost:6379", "redis://host:notaport/0", "redis://[::1"])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_malformed_url_is_one_line_and_exit_2(args: list[str], url: str, tmp_path: Path) -> None:
    done = run_flagbot(args, url, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "not a Redis URL" in done.stderr, done.stderr
