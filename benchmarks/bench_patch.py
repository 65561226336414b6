"""Time `flagbot patch` and `flagbot unpatch` next to the git primitives they are made of.

    .venv/bin/python benchmarks/bench_patch.py [--rounds 5] [--dir .bench/patch] [--rebuild]

Builds once (cached under --dir) a repository of about 20,000 files and 200 MB of history
(`git fast-import`: one large base tree, then many commits each rewriting a few files), plus a
vendor branch of 3 commits touching about 150 files (edits, new files, deletions, a binary) that
give about 1.3 MB of patch. Then, interleaved A B A B with `sync` and a pause between runs:
  patch:   `flagbot patch` (generate + verify, a fresh process)  vs  `git format-patch` plus one
           temporary-index apply (`read-tree BASE` + `apply --cached`);
  unpatch: `flagbot unpatch` (previous build removed untimed)    vs  `git worktree add` + `git am`.
Peak RSS is the largest of the process and its git children (wait4). Flatness in history is
shown by patching the same change on an orphan copy of the tip (1 commit of history).
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES, FILE_BYTES, HISTORY, PER_COMMIT = 20_000, 5_000, 1_000, 20
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
       "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@flagbot.invalid",
       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@flagbot.invalid",
       "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, env=ENV, input=input, capture_output=True)
    if proc.returncode:
        raise SystemExit(f"git {args} failed: {proc.stderr.decode()}")
    return proc.stdout.decode().strip()


def text_blob(rng: random.Random, size: int) -> bytes:
    """Line-structured, poorly compressible text, like source mixed with data tables."""
    raw = base64.b64encode(rng.randbytes(size * 3 // 4))
    return b"\n".join(raw[i:i + 76] for i in range(0, len(raw), 76)) + b"\n"


def path_of(i: int) -> str:
    return f"pkg{i % 40:02d}/mod{i // 40 % 25:02d}/file{i:05d}.py"


def fast_import_stream(rng: random.Random) -> bytes:
    out = [b"commit refs/heads/main\nmark :1\ncommitter Bench <b@x> 1700000000 +0000\n"
           b"data 4\nbase\n"]
    for i in range(FILES):
        blob = text_blob(rng, FILE_BYTES)
        out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path_of(i).encode(), len(blob), blob))
    for c in range(HISTORY):
        out.append(b"commit refs/heads/main\nmark :%d\ncommitter Bench <b@x> %d +0000\n"
                   b"data 8\nhist %03d\nfrom :%d\n" % (c + 2, 1700000060 + 60 * c, c % 1000, c + 1))
        for i in rng.sample(range(FILES), PER_COMMIT):
            blob = text_blob(rng, FILE_BYTES)
            out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path_of(i).encode(), len(blob), blob))
    return b"".join(out)


def vendor_change(repo: Path, rng: random.Random) -> None:
    """3 commits, ~150 files: edits of half the lines, new files, deletions, one binary."""
    chosen = rng.sample(range(FILES), 130)
    steps = [chosen[:60], chosen[60:120], chosen[120:]]
    for n, batch in enumerate(steps):
        for i in batch:
            path = repo / path_of(i)
            if n == 2 and i in batch[:5]:
                path.unlink()
                continue
            lines = path.read_bytes().split(b"\n")
            for k in range(0, len(lines) - 1, 3):
                lines[k] = lines[k][::-1]
            path.write_bytes(b"\n".join(lines))
        if n == 1:
            for k in range(15):
                (repo / f"vendor/ops/kernel{k:02d}.py").parent.mkdir(parents=True, exist_ok=True)
                (repo / f"vendor/ops/kernel{k:02d}.py").write_bytes(text_blob(rng, 6000))
            (repo / "vendor/ops/blob.bin").write_bytes(rng.randbytes(20_000))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"[Vendor] adaptation step {n + 1}")


def build(cache: Path) -> Path:
    repo = cache / "repo"
    if (cache / "READY").is_file():
        return repo
    shutil.rmtree(cache, ignore_errors=True)
    repo.mkdir(parents=True)
    rng = random.Random(20261126)
    git(repo, "init", "-q", "-b", "main")
    t0 = time.perf_counter()
    git(repo, "fast-import", "--quiet", input=fast_import_stream(rng))
    git(repo, "repack", "-adf", "-q")  # fast-import packs are not what gc/clone leave behind
    git(repo, "reset", "-q", "--hard", "main")
    git(repo, "tag", "base")
    git(repo, "checkout", "-q", "-b", "vendor")
    vendor_change(repo, rng)
    tip_tree = git(repo, "rev-parse", "base^{tree}")
    orphan = git(repo, "commit-tree", tip_tree, "-m", "orphan base")
    git(repo, "tag", "orphan-base", orphan)
    git(repo, "checkout", "-q", "-b", "orphan-vendor", orphan)
    git(repo, "cherry-pick", "base..vendor")
    git(repo, "checkout", "-q", "vendor")
    git(repo, "commit-graph", "write", "--reachable")
    print(f"built {repo} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    (cache / "READY").write_text("ok\n")
    return repo


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int]:
    """(wall seconds, peak RSS in KiB of the process and its children) of one command."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env or ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{argv} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_maxrss


def settle(pause: float = 0.3) -> None:
    """Let writeback of the previous run finish (dropping caches needs root we do not have)."""
    os.sync()
    time.sleep(pause)


def flagbot(*args: str) -> list[str]:
    return [sys.executable, "-m", "flagbot.hooks.cli", *args]


def primitive_patch(repo: Path, base: str, cur: str) -> list[str]:
    script = (f"set -e; git format-patch -q --stdout --full-index --binary {base}..{cur} > "
              f"$T/p.mbox; GIT_INDEX_FILE=$T/idx git read-tree {base}; "
              f"GIT_INDEX_FILE=$T/idx git apply --cached $T/p.mbox")
    return ["sh", "-c", script]


def primitive_unpatch(base: str, patch: Path, dest: Path) -> list[str]:
    return ["sh", "-c", f"set -e; git worktree add -q --detach {dest} {base}; "
                        f"git -C {dest} am -q --keep-cr {patch}"]


def interleave(rounds: int, a: Callable[[], tuple[float, int]],
               b: Callable[[], tuple[float, int]]) -> tuple[list[tuple[float, int]], ...]:
    ra: list[tuple[float, int]] = []
    rb: list[tuple[float, int]] = []
    for _ in range(rounds):
        for fn, sink in ((a, ra), (b, rb)):
            settle()
            sink.append(fn())
    return ra, rb


def med(rows: list[tuple[float, int]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in rows), max(r[1] for r in rows) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=ROOT / ".bench/patch")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rebuild:
        shutil.rmtree(args.dir, ignore_errors=True)
    if args.build_only:
        build(args.dir)
        return 0
    # built in a child process: a forked child inherits the parent's peak RSS, and the
    # generator holds 200 MB; the measuring process stays small
    subprocess.run([sys.executable, __file__, "--build-only", "--dir", str(args.dir)], check=True)
    repo = args.dir / "repo"
    base, cur = git(repo, "rev-parse", "base"), git(repo, "rev-parse", "vendor")
    tmp = args.dir / "tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    env = {**ENV, "T": str(tmp), "PYTHONPATH": str(ROOT)}
    pargs = ["-C", str(repo), "patch", "--device-type", "A_X100", "--base-commit-id", base,
             "--current-commit-id", cur]
    timed(flagbot(*pargs), ROOT, env)  # warm-up; also leaves the patch for unpatch
    patch = repo / f"hardwares/A_X100/{base[:8]}/{base[:8]}.patch"
    fp, prim = interleave(args.rounds, lambda: timed(flagbot(*pargs), ROOT, env),
                          lambda: timed(primitive_patch(repo, base, cur), repo, env))

    sys.path.insert(0, str(ROOT))
    from flagbot.hooks.patches import make

    def library() -> tuple[float, int]:
        t0 = time.perf_counter()
        make.make_patch(repo, ["A_X100"], base, cur)
        return time.perf_counter() - t0, 0

    lib, start = interleave(args.rounds, library, lambda: timed(flagbot("--version"), ROOT, env))
    ob, oc = git(repo, "rev-parse", "orphan-base"), git(repo, "rev-parse", "orphan-vendor")
    oargs = ["-C", str(repo), "patch", "--device-type", "B_Y100", "--base-commit-id", ob,
             "--current-commit-id", oc]
    deep, flat = interleave(args.rounds, lambda: timed(flagbot(*pargs), ROOT, env),
                            lambda: timed(flagbot(*oargs), ROOT, env))
    build_dir = repo / "build/A_X100/repo"
    wt = tmp / "wt"

    def ours() -> tuple[float, int]:
        shutil.rmtree(build_dir, ignore_errors=True)
        settle(1.5)
        return timed(flagbot("-C", str(repo), "unpatch", "--device-type", "A_X100",
                             "--commit-id", base[:8]), ROOT, env)

    def theirs() -> tuple[float, int]:
        subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=repo, env=ENV,
                       capture_output=True)
        shutil.rmtree(wt, ignore_errors=True)
        git(repo, "worktree", "prune")
        settle(1.5)
        return timed(primitive_unpatch(base, patch, wt), repo, env)

    fu, wu = interleave(args.rounds, ours, theirs)
    theirs()
    report(repo, patch, fp, prim, fu, wu, flat, deep)
    print(f"patch, in-process library call (no interpreter start): {med(lib)[0]:.3f} s; "
          f"`flagbot --version` (interpreter start + CLI import): {med(start)[0]:.3f} s")
    return 0


def report(repo: Path, patch: Path, fp: list[tuple[float, int]], prim: list[tuple[float, int]],
           fu: list[tuple[float, int]], wu: list[tuple[float, int]],
           flat: list[tuple[float, int]], deep: list[tuple[float, int]]) -> None:
    size = sum(p.stat().st_size for p in (repo / ".git/objects").rglob("*") if p.is_file())
    commits = git(repo, "rev-list", "--count", "base")
    files = git(repo, "ls-files").count("\n") + 1
    (tp, mp), (tq, mq), (tu, mu), (tw, mw), (tf, _), (td, _) = map(
        med, (fp, prim, fu, wu, flat, deep))
    print(f"repository: {files} files, {commits} commits, .git/objects {size / 1e6:.0f} MB; "
          f"patch {patch.stat().st_size / 1e6:.2f} MB, "
          f"{patch.read_bytes().count(b'diff --git ')} file diffs")
    print(f"patch   flagbot {tp:.3f} s (peak {mp:.0f} MB) | format-patch + temp-index apply "
          f"{tq:.3f} s (peak {mq:.0f} MB) | ratio {tp / tq:.2f}")
    print(f"patch, 1-commit history (flatness): {tf:.3f} s vs {td:.3f} s with {commits} commits"
          " (interleaved)")
    print(f"unpatch flagbot {tu:.3f} s (peak {mu:.0f} MB) | worktree add + am {tw:.3f} s "
          f"(peak {mw:.0f} MB) | ratio {tu / tw:.2f}")
    print(f"rounds: {len(fp)} interleaved; medians; raw patch {[round(r[0], 3) for r in fp]} "
          f"primitive {[round(r[0], 3) for r in prim]} unpatch {[round(r[0], 3) for r in fu]} "
          f"worktree+am {[round(r[0], 3) for r in wu]}")


if __name__ == "__main__":
    raise SystemExit(main())
