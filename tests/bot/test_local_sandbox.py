"""The local runner's walls, tried from inside as a hostile pull request would.

A backend whose import runs attack code is checked by a real "bot" process that holds secrets
in its environment; what the attack could see comes back only through the check's output,
which is exactly what would reach a public check run."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flagbot.bot.devices import isolation
from flagbot.kernels import bubblewrap
from tests.bot.commands_support import comment
from tests.bot.devices_support import ROOT, deliver_pr, device_repo, kernel_runs, open_device_pr

SECRET = "whsec-" + "k3y" * 8
KEY_LINE = "MIIEowIBAAKCAQEA" + "Z" * 40
REQUIRED = os.environ.get("FLAGBOT_REQUIRE_BWRAP") == "1"

needs_bwrap = pytest.mark.skipif(
    not REQUIRED and (shutil.which("bwrap") is None or bool(bubblewrap.probe(shutil.which("bwrap") or ""))),
    reason="bubblewrap is not usable here (.ci/run installs it and sets FLAGBOT_REQUIRE_BWRAP=1)")

ATTACK = """
import os, socket
seen = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        seen.append(pid)
        try:
            print("ENVIRON", pid, open(f"/proc/{pid}/environ", "rb").read())
        except OSError as exc:
            print("ENVIRON-DENIED", pid, type(exc).__name__)
print("PIDS", len(seen))
print("ENV", dict(os.environ))
for path in STATE_PATHS:
    try:
        print("STATE", path, open(path).read())
    except OSError as exc:
        print("STATE-DENIED", type(exc).__name__)
here = os.getcwd()
while here != "/":
    print("WALK", here, sorted(os.listdir(here))[:20])
    here = os.path.dirname(here)
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=2)
    print("NET-OPEN")
except OSError as exc:
    print("NET-DENIED", type(exc).__name__)
try:
    open(TREE_FILE, "a").write("pwned")
    print("TREE-WRITTEN")
except OSError as exc:
    print("TREE-DENIED", type(exc).__name__)
print("ECHO", SECRET_GUESS)
"""


def hostile_tree(tmp: Path, state: Path, port: int) -> Path:
    tree = tmp / "tree"
    shutil.copytree(ROOT / "backends/_template", tree / "backends/_evil")
    attack = (f"STATE_PATHS = {[str(state / 'ledger.db'), str(state / 'queue.db')]!r}\n"
              f"PORT = {port}\nTREE_FILE = 'backends/_evil/__init__.py'\n"
              f"SECRET_GUESS = {SECRET + ' ' + KEY_LINE!r}\n" + ATTACK)
    init = tree / "backends/_evil/__init__.py"
    init.write_text(init.read_text() + "\n" + attack, encoding="utf-8")
    return tree


def run_as_bot(tree: Path, state: Path, unsafe: bool = False) -> dict[str, object]:
    """A separate process holding the secrets in its environment runs the local check."""
    script = textwrap.dedent(f"""
        import json, os
        from pathlib import Path
        from flagbot.bot.devices import isolation, local
        secrets = isolation.secrets_of([os.environ["GITHUB_WEBHOOK_SECRET"],
                                        os.environ["GITHUB_PRIVATE_KEY"]])
        ran = local.run(Path({str(tree)!r}), "backends/_evil", ["softmax"], 1.3, 0.8, 240,
                        unsafe={unsafe!r}, secrets=secrets)
        print(json.dumps({{"tail": ran.tail, "code": ran.exit_code}}))
    """)
    env = dict(os.environ, GITHUB_WEBHOOK_SECRET=SECRET, TRITON_INTERPRET="1",
               GITHUB_PRIVATE_KEY=f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_LINE}\n-----END RSA PRIVATE KEY-----\n",
               FLAGBOT_STATE_DIR=str(state))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=300, cwd=state.parent)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def listener():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    yield sock.getsockname()[1]
    sock.close()


@needs_bwrap
@pytest.mark.slow
def test_pr_code_sees_no_secret_no_state_no_network_and_cannot_write_the_checkout(
        tmp_path: Path, listener: int) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "ledger.db").write_text("LEDGER-ROWS")
    tree = hostile_tree(tmp_path, state, listener)
    before = (tree / "backends/_evil/__init__.py").read_bytes()
    result = run_as_bot(tree, state)
    tail = str(result["tail"])
    assert "ENV " in tail and "PIDS" in tail, tail  # the attack ran
    assert SECRET not in tail and KEY_LINE not in tail
    assert "ECHO [redacted] [redacted]" in tail  # what it printed anyway is blanked out
    assert "LEDGER-ROWS" not in tail and "STATE-DENIED" in tail
    assert "NET-DENIED" in tail and "NET-OPEN" not in tail
    assert "TREE-DENIED" in tail and (tree / "backends/_evil/__init__.py").read_bytes() == before
    pids = int(tail.split("PIDS ")[1].split()[0])
    assert pids <= 3  # bwrap's init, the check, nothing of the host
    assert str(state) not in tail.replace(f"'{state / 'ledger.db'}'", "")
    assert "GITHUB_" not in tail.split("ENV ")[1].splitlines()[0]


def test_without_bwrap_nothing_runs_and_the_reason_says_what_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(isolation.SandboxUnavailable, match="apt-get install bubblewrap"):
        isolation.bwrap()


def test_a_local_device_refuses_an_outsider_even_after_ok_to_test(emu, settings) -> None:
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo, user="mallory", labels=("ci: cpu",),
                        files={"backends/_nvidia/ops/softmax.py": "x = 1\n"})
    deliver_pr(emu, settings, repo)
    comment(emu, settings, repo, "/ok-to-test", sender="maint")
    runs = kernel_runs(emu, repo, pr["head"]["sha"], device="cpu")
    assert all(r["conclusion"] != "success" and r["status"] == "completed" for r in runs)
    assert not any("accurate" in (r["output"]["title"] or "") for r in runs)


def test_without_a_sandbox_the_check_run_fails_with_the_reason(
        emu, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_git = tmp_path / "bin"  # a host where git is installed and bubblewrap is not
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(only_git))
    repo = device_repo(emu)
    pr = open_device_pr(emu, repo, labels=("ci: cpu",),
                        files={"backends/_nvidia/ops/softmax.py": "x = 1\n"})
    deliver_pr(emu, settings, repo)
    [check] = kernel_runs(emu, repo, pr["head"]["sha"], device="cpu")
    assert check["conclusion"] == "failure"
    assert check["output"]["title"] == "no sandbox for the local runner"
    assert "bubblewrap" in check["output"]["summary"]


def test_secrets_of_covers_every_line_of_a_key() -> None:
    found = isolation.secrets_of(["short", None, f"-----BEGIN-----\n{KEY_LINE}\nxx\n"])
    assert KEY_LINE in found and "short" not in found and "xx" not in found
    assert isolation.redact(f"a {KEY_LINE} b", found) == "a [redacted] b"
