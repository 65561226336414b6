"""Time the bot's pushes: delivery to pushed branch for `/unpatch` and for patch regeneration.

    .venv/bin/python benchmarks/bench_acts.py [--runs 5] [--files 150] [--gap 5] [--spacing 1.0]

Starts the GitHub emulator, the real webhook app and the real worker (2 threads, production
write pacing). Each run builds a fresh repository whose default branch holds `--files` source
files and a vendor branch changing all of them in 3 commits (a `--files`-file patch made by
`flagbot patch`), then measures from just before the signed POST to the moment the branch
appears in the emulator's bare repository:

- unpatch: PR adding the stored patch; comment `/unpatch A_X100 <base8>` -> `unpatch/A_X100/<base8>`
  (cold: first build; warm: the same command again, answered from the remembered build)
- regenerate: PR of the vendor commits labelled `device: A_X100`; `opened` -> the bot's commit
  on the PR branch.

Each run is a new repository, so every cold number includes the first fetch of the clone cache.
Writes are paced as in production (bursts of 10 per installation, then one per `--spacing`
seconds); `--gap` between runs lets the bucket refill, as between real pull requests.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testing.bot_e2e import app_settings, post_delivery, serving, wait_until  # noqa: E402
from testing.github_emulator import Emulator, gitstore  # noqa: E402
from testing.github_emulator.state import EmuRepo  # noqa: E402


def upstream(files: int) -> dict[str, str | bytes]:
    """The default branch: `files` small modules plus a README."""
    out: dict[str, str | bytes] = {"README.md": "upstream\n"}
    for i in range(files):
        out[f"src/pkg{i % 10}/mod{i}.py"] = "".join(f"line_{j} = {j}\n" for j in range(40))
    return out


def vendor_commits(emu: Emulator, repo: EmuRepo, files: int, branch: str) -> str:
    """Three vendor commits changing every module once; returns the head."""
    head = ""
    for part in range(3):
        changed = {f"src/pkg{i % 10}/mod{i}.py":
                   "".join(f"line_{j} = {j * 2 if j % 7 == 0 else j}\n" for j in range(40)) + f"# {part}\n"
                   for i in range(files) if i % 3 == part}
        head = emu.push_commit(repo, branch=branch, files=changed, message=f"[A_X100] part {part}\n")
    return head


def make_patch(repo: EmuRepo, work: Path, head_branch: str) -> tuple[str, bytes]:
    """`flagbot patch` of the vendor branch over main, in a clone; (path, bytes)."""
    from flagbot.hooks.patch_cmd import main as patch_main

    subprocess.run(["git", "clone", "-q", "--branch", head_branch, repo.clone_url, str(work)], check=True)
    base = gitstore.rev_parse(repo.bare_path, "refs/heads/main") or ""
    with contextlib.redirect_stdout(io.StringIO()):
        assert patch_main(["--device-type", "A_X100", "--base-commit-id", base], cwd=str(work)) == 0
    rel = f"hardwares/A_X100/{base[:8]}/{base[:8]}.patch"
    return rel, (work / rel).read_bytes()


def one_run(emu: Emulator, url: str, tmp: Path, files: int, i: int) -> dict[str, float]:
    repo = emu.create_repo(f"flagos/bench{i}", files=upstream(files))
    base = gitstore.rev_parse(repo.bare_path, "refs/heads/main") or ""
    vendor_commits(emu, repo, files, "vendor")
    rel, data = make_patch(repo, tmp / f"work{i}", "vendor")
    assert data.count(b"\ndiff --git ") == files, data.count(b"\ndiff --git ")
    emu.push_commit(repo, branch="add-patch", files={rel: data}, base="main")
    emu.open_pull(repo, head="add-patch")
    out = {}
    ref = f"refs/heads/unpatch/A_X100/{base[:8]}"
    for kind in ("unpatch cold", "unpatch warm"):
        old = gitstore.rev_parse(repo.bare_path, ref)
        payload = emu.payload(event="issue_comment", action="created", repo=repo, number=1,
                              sender="bob", body=f"/unpatch A_X100 {base[:8]}")
        sent = post_delivery(url, "issue_comment", payload)
        if old is None:
            wait_until(lambda: gitstore.rev_parse(repo.bare_path, ref) is not None, timeout=120)
            out[kind] = time.time() - sent
        else:  # the branch is already right: the reply to this comment is the event
            marker = f'"comment":{payload["comment"]["id"]},'
            wait_until(lambda m=marker: any(m in c["body"] for c in emu.comments(repo, 1)),
                       timeout=120)
            out[kind] = time.time() - sent
    emu.open_pull(repo, head="vendor")
    emu.label_issue(repo, 2, "device: A_X100")
    head = gitstore.rev_parse(repo.bare_path, "refs/heads/vendor")
    sent = post_delivery(url, "pull_request", emu.payload(event="pull_request", action="opened",
                                                           repo=repo, number=2))
    wait_until(lambda: gitstore.rev_parse(repo.bare_path, "refs/heads/vendor") != head, timeout=120)
    out["regenerate"] = time.time() - sent
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=150)
    parser.add_argument("--gap", type=float, default=5.0,
                        help="seconds between runs (lets the write bucket refill, as in bench_bot_e2e)")
    parser.add_argument("--spacing", type=float, default=1.0, help="write spacing (production: 1 s)")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench-acts-") as tmp_name:
        tmp = Path(tmp_name)
        with Emulator(tmp / "gh") as emu:
            settings = app_settings(emu, tmp / "state", write_spacing_s=args.spacing, write_burst=10)
            results: dict[str, list[float]] = {}
            with serving(settings) as url:
                for i in range(args.runs):
                    if i:
                        time.sleep(args.gap)
                    for kind, seconds in one_run(emu, url, tmp, args.files, i).items():
                        results.setdefault(kind, []).append(seconds)
                        print(f"run {i + 1} {kind}: {seconds:.2f} s", flush=True)
    print(f"\n{args.files}-file patch, {args.runs} runs (delivery POST -> branch pushed / answered)")
    for kind, values in results.items():
        print(f"  {kind:<13} median {statistics.median(values):.2f} s  max {max(values):.2f} s")
    worst = max(max(v) for v in results.values())
    print("target < 2 s:", "PASS" if worst < 2.0 else "FAIL")
    return 0 if worst < 2.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
