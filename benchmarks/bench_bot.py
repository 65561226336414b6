"""Ingest benchmark: `flagbot serve` (gunicorn, 2 workers) on loopback, signed deliveries.

Run:  .venv/bin/python benchmarks/bench_bot.py            (about 40 s; --help for the knobs)

The server runs as in production SQLite mode: `flagbot serve`'s own code (this file's `--serve`
runs it with the real app and no-op handlers), gunicorn plus the in-process
consumer, which drains the queue during the load; the state dir is on the
temporary folder's disk, as a real one would be. Phase 1 sends deliveries at a fixed rate (default 500/s for 10 s) and reports the ack latency
percentiles, measured from each request's planned send time (so a stall cannot hide queued-up
requests). Phase 2 fires a burst of 10,000 as fast as the clients go and then checks that every
one of them is in the ledger and the queue. The load comes from several processes, each with one
keep-alive `http.client` connection, so the generator is not the bottleneck. Exit 1 when a target
is missed (>= 500/s accepted, p99 <= 50 ms, nothing lost).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import http.client
import json
import multiprocessing
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-secret"


def pr_payload(number: int) -> dict[str, Any]:
    """A pull_request payload of realistic size (~12 KB, like GitHub's for a small PR)."""
    user = {"login": "alice", "id": 1, "type": "User", "site_admin": False,
            **{f"{k}_url": f"https://api.github.com/users/alice/{k}" for k in (
                "followers", "following", "gists", "starred", "subscriptions", "organizations",
                "repos", "events", "received_events")}}
    repo = {"id": 42, "name": "FlagGems", "full_name": "flagos/FlagGems", "private": False,
            "owner": user, "default_branch": "main",
            "clone_url": "https://github.com/flagos/FlagGems.git",
            **{f"{k}_url": f"https://api.github.com/repos/flagos/FlagGems/{k}" for k in (
                "forks", "keys", "collaborators", "teams", "hooks", "issue_events", "events",
                "assignees", "branches", "tags", "blobs", "git_tags", "git_refs", "trees",
                "statuses", "languages", "stargazers", "contributors", "subscribers",
                "subscription", "commits", "git_commits", "comments", "issue_comment",
                "contents", "compare", "merges", "archive", "downloads", "issues", "pulls",
                "milestones", "notifications", "labels", "releases", "deployments")}}
    side = {"label": "alice:feature", "ref": "feature", "sha": "a" * 40, "user": user,
            "repo": repo}
    pr = {"number": number, "state": "open", "title": "Add vendor backend", "user": user,
          "body": "Adds hardwares/A_X100 and its backend.\n" * 20, "head": side,
          "base": dict(side, ref="main", sha="b" * 40), "draft": False, "changed_files": 12}
    return {"action": "synchronize", "number": number, "pull_request": pr, "repository": repo,
            "sender": user, "installation": {"id": 7}}


class NoOpHandlers:
    """What serve's in-process worker runs: nothing, so the consumer's own cost is measured."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    def run(self, delivery_id: str, event: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {}


def make_app() -> Any:
    """What serve's gunicorn child serves: the real app (the deliveries are `synchronize`
    pull requests, which its interest filter wants)."""
    from flagbot.bot.entry.web import create_app
    from flagbot.bot.settings import Settings

    return create_app(Settings.from_env())


def serve(argv: list[str]) -> int:
    """`bench_bot.py --serve ARGS`: `flagbot serve ARGS` with the handlers above."""
    from flagbot.bot.entry import cli

    return cli.serve(cli.serve_parser().parse_args(argv), handlers=NoOpHandlers,
                     app="bench_bot:make_app()")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def client(port: int, prefix: str, count: int, start_at: float, interval: float | None,
           offset: float) -> tuple[list[float], int, float]:
    """One load process: `count` signed deliveries on one keep-alive connection.

    Returns (latencies in s, errors, end time). With `interval`, request i is planned at
    start_at + offset + i * interval and its latency counts from that plan.
    """
    bodies = []
    for i in range(count):
        raw = json.dumps(pr_payload(i)).encode()
        sig = "sha256=" + hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
        bodies.append((f"{prefix}-{i}", raw, sig))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    latencies, errors = [], 0
    while time.time() < start_at:
        time.sleep(0.001)
    for i, (delivery, raw, sig) in enumerate(bodies):
        planned = start_at + offset + i * interval if interval else time.time()
        if interval:
            pause = planned - time.time()
            if pause > 0:
                time.sleep(pause)
        headers = {"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
                   "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sig}
        for _attempt in range(3):
            try:
                conn.request("POST", "/webhook", body=raw, headers=headers)
                response = conn.getresponse()
                response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                # the server closed an idle keep-alive connection: reconnect and send again
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        else:
            errors += 1
            continue
        if response.status != 202:
            errors += 1
        latencies.append(time.time() - planned)
    conn.close()
    return latencies, errors, time.time()


def run_phase(port: int, name: str, total: int, clients: int, rate: float | None) -> dict[str, Any]:
    """Spread `total` deliveries over `clients` processes; gather latency and throughput."""
    per = total // clients
    start_at = time.time() + 2.0 + 0.00004 * total  # time for the clients to pre-sign bodies
    interval = clients / rate if rate else None
    jobs = [(port, f"{name}-{c}", per, start_at, interval, (c / rate) if rate else 0.0)
            for c in range(clients)]
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        results = pool.starmap(client, jobs)
    latencies = sorted(x for lat, _, _ in results for x in lat)
    errors = sum(e for _, e, _ in results)
    elapsed = max(end for _, _, end in results) - start_at
    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return {"phase": name, "sent": per * clients, "errors": errors,
            "accepted_per_s": round((len(latencies) - errors) / elapsed, 1),
            "p50_ms": round(pct(0.50), 2), "p99_ms": round(pct(0.99), 2),
            "max_ms": round(latencies[-1] * 1000, 2), "mean_ms":
            round(statistics.fmean(latencies) * 1000, 2)}


def tree_cpu_s(root: int) -> float:
    """CPU seconds (user + system) used so far by `root` and its live descendants (Linux /proc)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    family, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in family} - family
        family |= more
        grew = bool(more)
    return sum(times.get(pid, 0.0) for pid in family)


def count_ledger(state_dir: Path, prefix: str) -> tuple[int, int]:
    """(ledger rows, queue messages) whose delivery id starts with `prefix`."""
    ledger = sqlite3.connect(state_dir / "ledger.db")
    rows = ledger.execute("select count(*) from deliveries where id like ?",
                          (prefix + "%",)).fetchone()[0]
    queue = sqlite3.connect(state_dir / "queue.db").execute("select count(*) from task").fetchone()[0]
    return int(rows), int(queue)


def start_server(state_dir: Path, port: int, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FLAGBOT_"))}
    path = [str(ROOT), str(ROOT / "benchmarks"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env.update(GITHUB_WEBHOOK_SECRET=SECRET, FLAGBOT_STATE_DIR=str(state_dir),
               PYTHONPATH=os.pathsep.join(path))
    cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_bot.py"), "--serve", "--bind",
           f"127.0.0.1:{port}", "--workers", str(args.workers), "--threads", str(args.threads),
           "--log-level", "warning", *(["--no-worker"] if args.no_worker else []),
           *(["--worker-class", args.worker_class] if args.worker_class else [])]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("bench_bot: flagbot serve did not answer /healthz within 30 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=500, help="paced phase rate (/s)")
    parser.add_argument("--seconds", type=float, default=10, help="paced phase length")
    parser.add_argument("--burst", type=int, default=10_000, help="burst size")
    parser.add_argument("--clients", type=int, default=4, help="load processes")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--worker-class", default=None,
                        help="gunicorn worker class for serve (default: serve's own default)")
    parser.add_argument("--no-worker", action="store_true",
                        help="ingest only: no consumer in serve (the queue just grows)")
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="bench_bot-") as tmp:
        state_dir = Path(tmp) / "state"
        server = start_server(state_dir, port, args)
        try:
            run_phase(port, "warmup", 200, args.clients, None)
            cpu0 = tree_cpu_s(server.pid)
            paced = run_phase(port, "paced", int(args.rate * args.seconds), args.clients, args.rate)
            cpu1 = tree_cpu_s(server.pid)
            burst = run_phase(port, "burst", args.burst, args.clients, None)
            cpu2 = tree_cpu_s(server.pid)
            paced["server_cpu_ms_per_delivery"] = round((cpu1 - cpu0) * 1000 / paced["sent"], 3)
            burst["server_cpu_ms_per_delivery"] = round((cpu2 - cpu1) * 1000 / burst["sent"], 3)
            rows, queued = count_ledger(state_dir, "burst-")
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
    burst.update(in_ledger=rows, queue_total=queued)
    for result in (paced, burst):
        print(json.dumps(result))
    lost = burst["sent"] - rows
    ok = (paced["accepted_per_s"] >= 0.98 * args.rate and paced["p99_ms"] <= 50 and not lost
          and not paced["errors"] and not burst["errors"] and burst["accepted_per_s"] >= 500)
    print(f"bench_bot: {'PASS' if ok else 'FAIL'} (paced {paced['accepted_per_s']}/s p99 "
          f"{paced['p99_ms']} ms; burst {burst['accepted_per_s']}/s p99 {burst['p99_ms']} ms; "
          f"{rows}/{burst['sent']} of the burst in the ledger)")
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        raise SystemExit(serve(sys.argv[2:]))
    raise SystemExit(main())
