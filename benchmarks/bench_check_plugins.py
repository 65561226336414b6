"""Time `flagbot check-plugins` per repository, interpreter start included (target: <= 0.5 s).

    .venv/bin/python benchmarks/bench_check_plugins.py [REPO ...] [--repeat 7]

REPO: checkouts of vllm-plugin-FL, sglang-plugin-FL, Megatron-LM-FL (default: the extracts in
testing/resources/plugins/). For each: the median wall time of a cold
`python -m flagbot.hooks.check_plugins` in the repository (a new interpreter each run, as
pre-commit and CI start it), the median of an in-process `check_plugins(["."])` (the bot's
path), and the findings. Prints the load average, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from flagbot.hooks.findings import ERROR, WARNING
from flagbot.hooks.plugins.check import check_plugins

EXTRACTS = Path(__file__).resolve().parents[1] / "testing" / "resources" / "plugins"
TARGET_S = 0.5


def cold(repo: Path, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "flagbot.hooks.check_plugins", "--no-strict"],
                              cwd=repo, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{repo}: exit {proc.returncode}\n{proc.stderr.decode()}")
    return times


def warm(repo: Path, repeat: int) -> tuple[list[float], int, int]:
    times = []
    findings = []
    for _ in range(repeat):
        start = time.perf_counter()
        findings = check_plugins(["."], base=repo)
        times.append(time.perf_counter() - start)
    return (times, sum(f.severity == ERROR for f in findings),
            sum(f.severity == WARNING for f in findings))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repos", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    repos = args.repos or sorted(p for p in EXTRACTS.iterdir() if p.is_dir())
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} CPU(s)")
    print(f"{'repository':<40} {'cold CLI median (min-max)':>28} {'in-process':>11}  findings")
    worst = 0.0
    for repo in repos:
        runs = cold(repo, args.repeat)
        times, errors, warnings = warm(repo, args.repeat)
        median = statistics.median(runs)
        worst = max(worst, median)
        print(f"{str(repo)[-40:]:<40} {median:8.3f} s ({min(runs):.3f}-{max(runs):.3f})"
              f"{statistics.median(times):10.3f} s  {errors} error(s), {warnings} warning(s)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"worst median {worst:.3f} s: target <= {TARGET_S} s {'met' if worst <= TARGET_S else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
