"""What judging against a base costs: the base tree written out and checked, then cached.

    .venv/bin/python benchmarks/bench_since.py --repo CHECKOUT [--ref HEAD~1] [--runs 5]

On a git checkout of a FlagGems-layout repository (the real one: `git clone` flagos-ai/FlagGems),
times `flagbot check-backend --all` on the working tree in process, `findings_at(REF)` cold (the
tree of REF written to a scratch work tree, then checked), the part of that spent writing the
tree, and the same call answered from a `FindingsCache` (what the bot pays for a second pull
request on the same base). Prints medians (min) in seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flagbot.hooks.check_vendor_backend import backend_root, check_backends  # noqa: E402
from flagbot.hooks.findings import Finding  # noqa: E402
from flagbot.hooks.patches.scratch import remove_tree, temp_dir_name  # noqa: E402
from flagbot.hooks.since import FindingsCache, findings_at, materialize  # noqa: E402


def timed(func: Callable[[], object], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--ref", default="HEAD~1")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    root = backend_root(repo, None)

    def check(tree: Path) -> list[Finding]:
        return check_backends(tree, None, root=root, jobs=1)

    def write_tree() -> None:
        dest = temp_dir_name("flagbot-bench-")
        try:
            dest.mkdir()
            materialize(repo, args.ref, dest)
        finally:
            remove_tree(dest)

    head = check(repo)
    with tempfile.TemporaryDirectory() as tmp:
        cache = FindingsCache(Path(tmp))
        findings_at(repo, args.ref, check, key="bench", cache=cache)  # fill it
        rows = {
            "check-backend --all, working tree, in process": timed(lambda: check(repo), args.runs),
            f"findings_at({args.ref}) cold: write the tree + check": timed(
                lambda: findings_at(repo, args.ref, check), args.runs),
            "  of which writing the tree (read-tree + checkout-index)": timed(write_tree, args.runs),
            f"findings_at({args.ref}) from the cache (same tree id)": timed(
                lambda: findings_at(repo, args.ref, check, key="bench", cache=cache), args.runs),
        }
    print(f"{repo.name}: {len(head)} findings at the working tree, root {root}")
    for what, (median, low) in rows.items():
        print(f"{what:60s} {median:.3f} s (min {low:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
