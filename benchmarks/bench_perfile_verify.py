"""`flagbot verify` over a FlagScale checkout in the per-file layout.

    .venv/bin/python benchmarks/bench_perfile_verify.py PATH/TO/FlagScale [--rounds 5] [--span 100]

Three cases, each the real CLI (`python -m flagbot.hooks.cli verify`, interpreter start
included), medians of `--rounds`:

1. the checkout as it is (FlagScale's own folders: the FlagScale-backend ones are applied, the
   submodule and encrypted ones only read and counted, since their sources and keys are absent);
2. plus one synthetic per-file folder of every file `git diff HEAD~SPAN HEAD` changes (real
   FlagScale changes, split per file as FlagScale's tool splits them; ~480 for SPAN=100 on
   flagos-ai 16a2dd5b), all applied at HEAD~SPAN: the "~500 plain per-file patches" case;
3. case 2 with one patch broken, so the folder's batch fails and the broken file is found by
   halving it.

The checkout is never changed: cases 2 and 3 run in a copy made under /tmp.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEVICE = "Bench_X1"


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def timed(repo: Path, rounds: int) -> tuple[float, str]:
    """Median seconds of `flagbot verify` in `repo`, and its last summary line."""
    times, last = [], ""
    for _ in range(rounds):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "flagbot.hooks.cli", "-C", str(repo), "verify"],
                              capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr
    return statistics.median(times), last


def synthetic_folder(tree: Path, span: int) -> int:
    """Write hardware/Bench_X1/FlagScale/ from `git diff HEAD~span HEAD`; returns the file count."""
    base = git(tree, "rev-parse", f"HEAD~{span}").decode().strip()
    diff = git(tree, "-c", "diff.renameLimit=5000", "diff", "--binary", base, "HEAD", "--",
               ".", ":(exclude)hardware")
    folder = tree / "hardware" / DEVICE / "FlagScale"
    count = 0
    for chunk in re.split(rb"(?=^diff --git a/)", diff.rstrip(b"\n"), flags=re.M):
        if not chunk.startswith(b"diff --git a/"):
            continue
        path = chunk.split(b"\n", 1)[0].split(b" b/", 1)[1].decode()
        dest = folder / f"{path}.patch"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(chunk + b"\n")
        count += 1
    (folder / "diff.yaml").write_text(f"commit: {base}\ndevice_type: {DEVICE}\ntask:\n- train\n")
    return count


def break_one(tree: Path) -> None:
    """Change one context line of the synthetic folder's first modifying patch."""
    for patch in sorted((tree / "hardware" / DEVICE).rglob("*.patch")):
        lines = patch.read_bytes().split(b"\n")
        if b"new file mode" in lines[1] or b"deleted file" in lines[1]:
            continue
        at = next((i for i, line in enumerate(lines) if line.startswith(b"@@ ")), None)
        ctx = next((i for i in range(at + 1, len(lines)) if lines[i].startswith(b" ")), None) \
            if at is not None else None
        if ctx is not None:
            lines[ctx] = b" # bench: changed context" + lines[ctx][1:]
            patch.write_bytes(b"\n".join(lines))
            return


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--span", type=int, default=100)
    args = parser.parse_args()
    repo = args.checkout.resolve()
    print(f"load average before: {os.getloadavg()}")
    seconds, line = timed(repo, args.rounds)
    print(f"1. checkout as is: {seconds:.2f} s  ({line})")
    tmp = Path(tempfile.mkdtemp(prefix="bench-perfile-"))
    tree = tmp / "tree"
    try:
        shutil.copytree(repo, tree, symlinks=True)
        count = synthetic_folder(tree, args.span)
        seconds, line = timed(tree, args.rounds)
        print(f"2. + {count} applied per-file patches: {seconds:.2f} s  ({line})")
        break_one(tree)
        seconds, line = timed(tree, args.rounds)
        print(f"3. + one broken (found by halving the batch): {seconds:.2f} s  ({line})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
