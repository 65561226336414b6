"""Rebuild tests/data/webhooks/*.json: `.venv/bin/python -m testing.github_emulator.webhook_fixtures`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from testing.github_emulator.emulator import Emulator
from testing.github_emulator.state import EmuRepo

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "webhooks"
ALICE = ("Alice Chen", "alice@example.com")
BACKEND = "src/flag_gems/runtime/backend"


def _rewrite(emu: Emulator, repos: list[EmuRepo], obj: dict[str, Any]) -> str:
    # The payloads must read like github.com's: no local ports or file:// paths in them.
    text = json.dumps(obj, indent=2)
    for r in repos:
        text = text.replace(r.clone_url, f"https://github.com/{r.full_name}.git")
    for part in ("repos/", "users/", "app/"):
        text = text.replace(f"{emu.url}/{part}", f"https://api.github.com/{part}")
    text = text.replace(f"{emu.url}/avatars/", "https://avatars.githubusercontent.com/")
    text = text.replace(f"{emu.url}/", "https://github.com/")
    text = text.replace("http://127.0.0.1/webhook", "https://flagbot.example.org/webhook")
    if "127.0.0.1" in text or "file://" in text:
        raise ValueError("a local URL survived the rewrite; extend _rewrite")
    return text + "\n"


def build(emu: Emulator) -> dict[str, str]:
    """The payloads by file stem, for flagos/FlagGems and carol's fork."""
    repo = emu.create_repo("flagos/FlagGems", files={
        "README.md": "# FlagGems\n",
        f"{BACKEND}/_nvidia/__init__.py": "VENDOR = 'nvidia'\n",
        "src/flag_gems/ops/add.py": "def add(a, b):\n    return a + b\n",
        ".github/flagbot.yml": f"backends_root: {BACKEND}\n",
    })
    emu.push_commit(repo, branch="release-1.0", files={"CHANGELOG.md": "1.0\n"}, message="Release 1.0")
    emu.push_commit(repo, branch="a-x100-backend", message="Add A_X100 backend", author=ALICE, files={
        f"{BACKEND}/_a_x100/__init__.py": "VENDOR = 'a_x100'\n",
        f"{BACKEND}/_a_x100/heuristics_config_utils.py": "HEURISTICS = {}\n",
        "hardwares/A_X100/1a2b3c4d/1a2b3c4d.patch": "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n",
    })
    pr = emu.open_pull(repo, head="a-x100-backend", base="main", user="alice", title="Add the A_X100 backend",
                       body="Adds `_a_x100` with its heuristics and the vendor patch.")
    out = {"pull_request.opened": emu.payload(event="pull_request", action="opened", repo=repo, number=1,
                                              sender="alice")}
    emu.push_commit(repo, branch="a-x100-backend", message="Tune A_X100 heuristics", author=ALICE,
                    files={f"{BACKEND}/_a_x100/heuristics_config_utils.py": "HEURISTICS = {'add': 128}\n"})
    emu.update_pull_head(repo, 1)
    out["pull_request.synchronize"] = emu.payload(event="pull_request", action="synchronize", repo=repo, number=1,
                                                  sender="alice", before=pr["head"]["sha"])
    changes = emu.change_base(repo, 1, "release-1.0")
    out["pull_request.edited.base"] = emu.payload(event="pull_request", action="edited", repo=repo, number=1,
                                                  sender="alice", changes=changes)
    emu.change_base(repo, 1, "main")
    out["issue_comment.created"] = emu.payload(event="issue_comment", action="created", repo=repo, number=1,
                                               sender="bob", body="/unpatch A_X100 1a2b3c4d")
    fork = emu.fork_repo(repo, "carol/FlagGems")
    emu.push_commit(fork, branch="fix-typo", files={"README.md": "# FlagGems\n\nTriton kernels.\n"},
                    message="Fix README", author=("Carol", "carol@example.com"))
    emu.open_pull(repo, head="fix-typo", user="carol", title="README: describe the project", head_repo=fork)
    out["pull_request.opened.fork"] = emu.payload(event="pull_request", action="opened", repo=repo, number=2,
                                                  sender="carol")
    out["ping"] = emu.payload(event="ping", sender="flagos-admin")
    return {name: _rewrite(emu, [repo, fork], body) for name, body in out.items()}


def main() -> int:
    """Write every payload file; print their names."""
    with tempfile.TemporaryDirectory() as tmp, Emulator(Path(tmp), app_id="123456",
                                                        installation_id=45678901) as emu:
        for name, text in build(emu).items():
            (OUT / f"{name}.json").write_text(text)
            print(OUT / f"{name}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
