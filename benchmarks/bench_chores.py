"""The worker's chores: a reconciliation round over a long delivery log, and a drift check.

`.venv/bin/python benchmarks/bench_chores.py [--entries 1000] [--commits 300]`

1. Reconciliation: the emulator's delivery log holds `--entries` deliveries the ledger already
   has (the common case: nothing missed); one round reads them all back (pages of 100) and
   decides each. Then the same with every delivery missing (nothing listens), capped at 50.
Writes are unpaced here (`FLAGBOT_WRITE_SPACING_S=0`): with the default pacing, asking for 50
redeliveries takes the pacing's 40 s, by design.
2. Drift: a repository whose default branch gained `--commits` commits, one of them (in the
   middle) conflicting with one of 20 stored patches; `check_drift` applies all 20 onto the head
   and bisects the branch for the conflicting commit.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flagbot.bot.chores.reconcile import GitHubDeliveryLog, Reconciler  # noqa: E402
from flagbot.bot.store.chores import open_chores  # noqa: E402
from flagbot.bot.store.factory import open_ledger  # noqa: E402
from flagbot.hooks.patch_cmd import main as patch_main  # noqa: E402
from flagbot.hooks.patches.drift import check_drift  # noqa: E402
from testing.bot_e2e import SECRET, app_settings  # noqa: E402
from testing.github_emulator import Emulator  # noqa: E402


def reconcile_round(tmp: Path, entries: int) -> tuple[float, float]:
    with Emulator(tmp / "gh") as emu:
        settings = app_settings(emu, tmp / "state", reconcile_max=50)
        ledger = open_ledger(settings)
        emu.set_webhook("http://127.0.0.1:9/webhook", SECRET)  # discard port: nothing listens
        for i in range(entries):
            sent = emu.deliver("issue_comment", {"action": "created", "n": i})
            ledger.record(delivery_id=sent["guid"], event="issue_comment", action="created",
                          repo=None, payload=b"{}", wanted=False)
        rec = Reconciler(settings, ledger, open_chores(settings), GitHubDeliveryLog(settings))
        started = time.perf_counter()
        known = rec.round(force=True)
        all_known = time.perf_counter() - started
        assert known is not None and not known.asked
        for i in range(entries):
            emu.deliver("issue_comment", {"action": "created", "n": -i})
        started = time.perf_counter()
        missing = rec.round(force=True)
        capped = time.perf_counter() - started
        assert missing is not None and len(missing.asked) == 50
        return all_known, capped


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=B", "-c", "user.email=b@x", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout.strip()


def drift_repo(tmp: Path, commits: int) -> tuple[Path, str]:
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for i in range(20):
        (repo / f"src/m{i}.py").parent.mkdir(parents=True, exist_ok=True)
        (repo / f"src/m{i}.py").write_text("".join(f"line {j}\n" for j in range(200)))
    (repo / "hardwares").mkdir()
    (repo / "hardwares/.keep").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    patches = {}
    for i in range(20):
        device = f"D_X{i}"
        git(repo, "checkout", "-q", "-b", device, base)
        (repo / f"src/m{i}.py").write_text("".join(f"line {j}{' v' if j % 50 == 5 else ''}\n"
                                                   for j in range(200)))
        git(repo, "commit", "-qam", device)
        with contextlib.redirect_stdout(io.StringIO()):
            assert patch_main(["--device-type", device, "--base-commit-id", base],
                              cwd=str(repo)) == 0
        rel = f"hardwares/{device}/{base[:8]}/{base[:8]}.patch"
        patches[rel] = (repo / rel).read_bytes()
        (repo / rel).unlink()
        git(repo, "checkout", "-q", "main")
    for rel, data in patches.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "store patches")
    for c in range(commits):
        if c == commits // 2:
            (repo / "src/m3.py").write_text("".join(f"line {j}{' up' if j == 5 else ''}\n"
                                                    for j in range(200)))
        else:
            (repo / "NEWS").write_text(f"{c}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"c{c}")
    return repo, git(repo, "rev-parse", "HEAD")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--entries", type=int, default=1000)
    p.add_argument("--commits", type=int, default=300)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-chores-") as name:
        tmp = Path(name)
        known, capped = reconcile_round(tmp, args.entries)
        print(f"reconcile round, {args.entries} known entries: {known:.2f} s")
        print(f"reconcile round, {2 * args.entries} entries, {args.entries} missing, 50 asked: "
              f"{capped:.2f} s")
        repo, head = drift_repo(tmp, args.commits)
        started = time.perf_counter()
        report = check_drift(repo, head)
        took = time.perf_counter() - started
        assert report.drifted_devices() == ["D_X3"] and report.drifted[0].since
        print(f"drift check, 20 patches, {args.commits} commits to bisect: {took:.2f} s")


if __name__ == "__main__":
    main()
