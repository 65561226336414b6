"""`GET /dashboard` server time with a full store.

`.venv/bin/python benchmarks/bench_dashboard.py [--deliveries 10000] [--runs 1000] [--rounds 30]
[--keep DIR]`

Fills a SQLite state folder through the stores' own write paths: `--deliveries` recorded
`pull_request` deliveries (a real recorded payload, its number varied; nine in ten claimed and
finished), `--runs` device runs over 4 devices and 3 repositories (each completed, 6 ops with
results per run, so 6,000 results for 1,000 runs) and 40 labeled PRs. Then times the page in
process (Flask's test client: the view, the queries, the template; no socket), for the first
page, a deep page of deliveries, and the runs filtered by device and repository. `--keep DIR`
leaves the filled state folder there (the screenshot in docs/maintainers.md was taken of one).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flagbot.bot.dashboard.store import DeviceRun, KernelResult  # noqa: E402
from flagbot.bot.dashboard.store_sqlite import SqliteDashStore  # noqa: E402
from flagbot.bot.entry.web import create_app  # noqa: E402
from flagbot.bot.feed.log import LabeledPR  # noqa: E402
from flagbot.bot.feed.log_sqlite import SqliteLabelLog  # noqa: E402
from flagbot.bot.settings import Settings  # noqa: E402
from flagbot.bot.store.sqlite import SqliteLedger  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEVICES = ("a_x100", "b_y200", "c_z300", "nvidia")
REPOS = ("flagos/FlagGems", "flagos/FlagScale", "vendor/FlagGems-fork")
OPS = (("mm", "override"), ("softmax", "override"), ("rms_norm", "override"),
       ("layer_norm", "override"), ("fused_rope", "new"), ("topk_softmax", "new"))
TOKEN = "bench-token"


def fill(state: Path, deliveries: int, runs: int) -> None:
    rng = random.Random(7)
    payload = json.loads((ROOT / "tests/data/webhooks/pull_request.opened.json").read_text())
    ledger = SqliteLedger(state / "ledger.db")
    start = time.time() - deliveries * 5.0
    for i in range(deliveries):
        payload["number"] = payload["pull_request"]["number"] = 1 + i // 4
        ledger.record(delivery_id=f"bench-{i:06d}", event="pull_request", action="synchronize",
                      repo=REPOS[i % 3], payload=json.dumps(payload).encode(), wanted=True)
        if i % 10:
            ledger.claim(f"bench-{i:06d}", "bench", 60.0)
            ledger.finish(f"bench-{i:06d}", "bench", "{}")
    ledger._conn().execute("update deliveries set received_at = ? + cast(substr(id, 7) as "
                           "integer) * 5.0", (start,))  # spread over time, as a real log is
    store = SqliteDashStore(state / "dashboard.db")
    for i in range(runs):
        device, repo, pr = DEVICES[i % 4], REPOS[i % 3], 1 + i // 4
        sha = f"{rng.getrandbits(160):040x}"
        request = f"{pr}-{sha}-{i:08x}-{device}"
        at = start + i * 50.0
        store.run_started(DeviceRun(request, repo, pr, sha, device, "queued", None, at))
        store.run_moved(request, status="in_progress", at=at + 30, run_id=1000 + i,
                        url=f"https://github.com/{repo}/actions/runs/{1000 + i}")
        conclusion = "failure" if rng.random() < 0.15 else "success"
        store.run_moved(request, status="completed", at=at + 400, conclusion=conclusion)
        drift = 1.0 + 0.2 * ((i // 4) % 25) / 25
        store.add_results([KernelResult(
            repo, pr, sha, device, op, kind, "pass",
            round(rng.uniform(1.2, 1.6) * drift, 3) if kind == "override" else None,
            round(rng.uniform(0.8, 1.1) * drift, 3) if kind == "new" else None,
            1.0 if rng.random() > 0.05 else 0.96, at + 400) for op, kind in OPS])
    log = SqliteLabelLog(state / "feed.db")
    for n in range(40):
        log.labeled(LabeledPR(REPOS[n % 3], 100 + n, "module: PrivateUse1", f"Adapt op {n}",
                              f"https://github.com/{REPOS[n % 3]}/pull/{100 + n}", ("a.py",),
                              labeled_at=start + n))


def timed(client: object, path: str, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        reply = client.get(path, headers={"Authorization": f"Bearer {TOKEN}"})  # type: ignore[attr-defined]
        times.append((time.perf_counter() - began) * 1000)
        assert reply.status_code == 200, reply.status_code
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory()
    state = args.keep or Path(tmp.name) / "state"
    began = time.perf_counter()
    fill(state, args.deliveries, args.runs)
    print(f"filled {state} in {time.perf_counter() - began:.1f} s "
          f"({args.deliveries} deliveries, {args.runs} runs); load {os.getloadavg()[0]:.2f}")
    settings = Settings(state_dir=state, dashboard_token=TOKEN,
                        startup_warned=True)
    client = create_app(settings).test_client()
    for label, path in (("first page", "/dashboard"),
                        ("deliveries page 100", "/dashboard?page=100"),
                        ("runs of a_x100 in flagos/FlagGems", "/dashboard?device=a_x100&repo=flagos/FlagGems"),
                        ("runs page 20", "/dashboard?runs_page=20")):
        timed(client, path, 2)  # warm: templates compiled, connections open
        times = sorted(timed(client, path, args.rounds))
        print(f"{label:36s} median {statistics.median(times):6.1f} ms  "
              f"p95 {times[int(len(times) * 0.95) - 1]:6.1f} ms  max {times[-1]:6.1f} ms")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
