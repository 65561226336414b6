"""The dashboard in a real headless Chromium: the bot is driven through the emulator by signed
deliveries (one PR, one device run with a report), then the page is rendered and read back."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from testing.bot_e2e import SECRET, app_settings, post_delivery, serving, wait_until
from testing.png import colour_counts
from tests.bot.devices_support import (
    device_repo,
    finish_run,
    kernel_runs,
    op,
    open_device_pr,
    report,
)

TOKEN = "dash-token-7f3a9c"
PAYLOAD_ONLY = "text-only-in-the-payload-body"


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("FLAGBOT_REQUIRE_CHROMIUM") == "1":
            pytest.fail("chromium is not on PATH but FLAGBOT_REQUIRE_CHROMIUM=1")
        pytest.skip("chromium not on PATH (apt-get install chromium; .ci/run installs it)")
    return found


def browse(url: str, out: Path, *extra: str) -> str:
    """Chromium's stdout for `url` with `extra` flags (a DOM dump, or nothing for a screenshot)."""
    argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--hide-scrollbars", f"--user-data-dir={out / 'profile'}",
            "--window-size=1280,1400", *extra, url]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.fixture
def driven(emu, tmp_path):
    """The server and worker after one PR and one finished device run; yields (url, pr, settings)."""
    chromium()
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo)
    settings = app_settings(emu, tmp_path / "state", dashboard_token=TOKEN)
    with serving(settings) as url:
        opened = emu.payload(event="pull_request", action="opened", repo=repo, number=1)
        opened["pull_request"]["body"] = PAYLOAD_ONLY
        post_delivery(url, "pull_request", opened)
        [run] = wait_until(lambda: emu.workflow_runs(repo), what="the dispatched run")
        doc = report([op("softmax", speedup=1.4),
                      op("rms_norm", "fail", source="ops/rms_norm.py", speedup=1.1)], exit_code=1)
        finish_run(emu, repo, run["id"], doc, conclusion="failure")
        post_delivery(url, "workflow_run",
                      emu.payload(event="workflow_run", action="completed", repo=repo, run_id=run["id"]))
        wait_until(lambda: kernel_runs(emu, repo, pr["head"]["sha"])[0]["status"] == "completed",
                   what="the kernels check run to complete")
        yield url, pr, settings


def test_the_page_renders_in_chromium_with_the_pr_the_device_and_charts(driven, tmp_path) -> None:
    url, pr, settings = driven
    dom = browse(f"{url}/dashboard?token={TOKEN}", tmp_path, "--dump-dom")
    assert "flagos/FlagGems" in dom and "#1" in dom
    assert re.search(r'<td class="device">a_x100</td>', dom)
    assert pr["head"]["sha"][:7] in dom and '<span class="state s-failure">failure</span>' in dom
    assert "<code>pull_request</code>" in dom and "<code>workflow_run</code>" in dom
    # both deliveries name the PR: the run's from the request in its title
    assert len(re.findall(r"<td>#1</td>", dom)) >= 3
    charts = re.findall(r'<svg class="chart".*?</svg>', dom, re.S)
    assert len(charts) >= 2 and all('class="mark"' in c for c in charts)
    assert "flagos/FlagGems#1 @ " + pr["head"]["sha"][:7] in charts[0]
    for secret in (TOKEN, SECRET, settings.private_key.splitlines()[1], PAYLOAD_ONLY):
        assert secret not in dom

    shot = tmp_path / "dashboard.png"
    browse(f"{url}/dashboard?token={TOKEN}", tmp_path, f"--screenshot={shot}")
    colours = colour_counts(shot)
    background, most = colours.most_common(1)[0]
    assert len(colours) > 20 and most < 0.95 * sum(colours.values()), "the screenshot is blank"
    if os.environ.get("FLAGBOT_DASHBOARD_SCREENSHOT"):
        shutil.copy(shot, os.environ["FLAGBOT_DASHBOARD_SCREENSHOT"])


def test_without_the_token_the_browser_gets_401_and_no_data(driven, tmp_path) -> None:
    url, _, _ = driven
    reply = requests.get(f"{url}/dashboard", timeout=10)
    assert reply.status_code == 401 and "FlagGems" not in reply.text
    dom = browse(f"{url}/dashboard?token=wrong", tmp_path, "--dump-dom")
    assert "401" in dom and "FlagGems" not in dom and "a_x100" not in dom
