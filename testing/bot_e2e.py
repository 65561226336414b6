"""End-to-end harness for the bot: emulator + the real app (Flask, threaded) + the real worker.

Used by tests/bot/test_e2e.py and benchmarks/bench_bot_e2e.py: a signed delivery goes over HTTP
to /webhook, is recorded and queued, the worker runs `flagbot.bot.dispatch.BotHandlers`, which talks
to the emulator through PyGithub. `big_pr` builds a pull request of 300 changed files (the end-to-end target: done within 2 s).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
from werkzeug.serving import make_server

from flagbot.bot.settings import Settings
from testing.github_emulator import Emulator
from testing.github_emulator.state import EmuRepo

SECRET = "e2e-secret"
RESOURCES = Path(__file__).resolve().parent / "resources"


def app_settings(emu: Emulator, state_dir: Path, **overrides: Any) -> Settings:
    """Settings for the App against `emu`, webhook secret set, worker driven by the harness."""
    base = Settings(app_id=emu.app_id, private_key=emu.private_key_pem, api_url=emu.url,
                    webhook_secret=SECRET, state_dir=state_dir, write_spacing_s=0.0)
    return base.with_overrides(**overrides)


@contextmanager
def serving(settings: Settings, threads: int = 2, port: int = 0) -> Iterator[str]:
    """The webhook app on a loopback port (`port`, else a free one) plus a worker with `threads`
    threads; yields the URL."""
    from flagbot.bot.dispatch import BotHandlers
    from flagbot.bot.entry.web import create_app
    from flagbot.bot.worker import Worker

    server = make_server("127.0.0.1", port, create_app(settings), threaded=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    worker = Worker(settings, BotHandlers(settings), threads=threads)
    worker.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        worker.stop()
        server.shutdown()
        thread.join()


def post_delivery(url: str, event: str, payload: dict[str, Any], delivery: str | None = None) -> float:
    """POST a signed delivery; returns the time.time() just before sending (asserts 202)."""
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": event,
               "X-GitHub-Delivery": delivery or str(uuid.uuid4()), "X-Hub-Signature-256": signature}
    sent = time.time()
    reply = requests.post(url + "/webhook", data=body, headers=headers, timeout=10)
    assert reply.status_code == 202, (reply.status_code, reply.text)
    return sent


def wait_until(check: Any, timeout: float = 30.0, what: str = "condition") -> Any:
    """Poll `check()` until truthy and return that; AssertionError on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def clean_backend(vendor: str = "_beta", root: str = "backends") -> dict[str, str | bytes]:
    """A clean vendor backend folder (from testing/resources) as `root`/`vendor`/..."""
    src = RESOURCES / "backends" / "clean" / "_beta"
    return {f"{root}/{vendor}/{p.relative_to(src).as_posix()}": p.read_bytes()
            for p in sorted(src.rglob("*")) if p.is_file()}


def vendor_patch(repo: EmuRepo, work: Path, device: str,
                 files: dict[str, str] | None = None) -> tuple[str, bytes]:
    """A real patch of `files` for `device` over the default branch, made by `flagbot patch`."""
    from flagbot.hooks.patch_cmd import main as patch_main

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=work, check=True, capture_output=True,
                              text=True).stdout.strip()

    subprocess.run(["git", "clone", "-q", repo.clone_url, str(work)], check=True)
    base = git("rev-parse", "HEAD")
    git("checkout", "-q", "-b", f"vendor-{device}")
    for path, text in (files or {"src/core.py": f"x = '{device}'\n"}).items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git("add", "-A")
    git("commit", "-qm", f"{device} adaptation")
    assert patch_main(["--device-type", device, "--base-commit-id", base], cwd=str(work)) == 0
    rel = f"hardwares/{device}/{base[:8]}/{base[:8]}.patch"
    return rel, (work / rel).read_bytes()


def big_pr_files(repo: EmuRepo, work: Path, total: int = 300) -> dict[str, str | bytes]:
    """`total` changed files: a real patch + hetero.txt, vendor folder edits, PrivateUse1 code, plain code."""
    rel, data = vendor_patch(repo, work, "A_X100")
    files: dict[str, str | bytes] = {rel: data, "hardwares/hetero.txt": f"{rel.split('/')[2]}: A_X100\n"}
    # a vendor folder the PR edits: comments appended to the clean _beta backend's Python files
    files.update({k: bytes(v) + b"# tuned for the e2e run\n" for k, v in clean_backend("_beta").items()
                  if k.endswith(".py")})
    files.update({f"torch/csrc/acc/part{i}.cpp": f"// {i}\n" for i in range(5)})
    files.update({f"hardwares/A_X100/docs/note{i}.md": f"{i}\n" for i in range(10)})
    i = 0
    while len(files) < total:
        files[f"src/pkg{i % 10}/mod{i}.py"] = f"value = {i}\n"
        i += 1
    return files


def base_files() -> dict[str, str | bytes]:
    """The default branch of the e2e repository."""
    # A_X100 and B_Y100 have folders already: the default branch knows them as devices
    return {"README.md": "FlagScale\n", "src/core.py": "x = 1\n", **clean_backend("_beta"),
            **{f"hardwares/{dev}/README.md": f"{dev}\n" for dev in ("A_X100", "B_Y100")}}


@contextmanager
def paced_bot(prefix: str, spacing: float) -> Iterator[tuple[Emulator, str, Path]]:
    """For benchmarks: an emulator and the served bot with GitHub write pacing (burst 10, then
    one write per `spacing` seconds), in a temporary folder; yields (emulator, URL, folder)."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp_name:
        tmp = Path(tmp_name)
        with Emulator(tmp / "gh") as emu:
            settings = app_settings(emu, tmp / "state", write_spacing_s=spacing, write_burst=10)
            with serving(settings) as url:
                yield emu, url, tmp
