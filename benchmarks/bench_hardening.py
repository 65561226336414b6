"""Hostile-input benchmark: the real `flagbot serve` (gunicorn + in-process worker, SQLite) on
loopback, talking to the GitHub emulator.

Run:  .venv/bin/python benchmarks/bench_hardening.py        (about a minute)

1. Slow-loris: the latency of signed deliveries while 64 connections stall (half stop inside
   their headers, half inside their bodies, eight of them keep trickling a byte), against the
   same server without them.
2. A hostile pull request (a 9 MB Python file in a vendor folder, a YAML alias bomb as its own
   .github/flagbot.yml, a 5,000-line hetero.txt, 61 device folders): the peak RSS of the
   serving processes (serve with its worker threads, gunicorn's master and workers) while it
   is processed, and of the check child that parses its files.
3. An innocent pull request of the same repository, delivered right after the hostile one:
   the time from its delivery to its row being done.

4. Hostile surfaces of the second round, each followed by an innocent delivery whose wait is
   measured, with the serving processes' peak RSS: `/unpatch` of a base whose stored patch is
   90 MiB (five such bases stored); a device-labelled PR whose change holds six 90 MiB files
   (regeneration); 150 slash-command comments from outsiders; and 32 clients reading the Atom
   feed of a 200,000-row label log while signed deliveries come in.

Exit 1 when a target is missed: a delivery answered within 1 s under slow-loris and under the
feed readers, serving processes under 300 MB each, the innocent PR done within 5 s.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flagbot.bot.store.sqlite import SqliteLedger  # noqa: E402
from testing.bot_e2e import base_files, clean_backend  # noqa: E402
from testing.github_emulator import Emulator  # noqa: E402

SECRET = "bench-secret"
STALLS = 64
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True))


def post(url: str, event: str, payload: dict[str, Any], delivery: str) -> float:
    body = json.dumps(payload).encode()
    sig = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    started = time.monotonic()
    r = requests.post(url + "/webhook", data=body, timeout=30, headers={
        "Content-Type": "application/json", "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": sig})
    r.raise_for_status()
    return time.monotonic() - started


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    """Child processes of every thread of `pid` (the worker threads start the fork server)."""
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []
    for task in tasks:
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class Sampler(threading.Thread):
    """Peak RSS per role: serve (with its worker threads), gunicorn, the check children."""

    def __init__(self, serve_pid: int) -> None:
        super().__init__(daemon=True)
        self.serve_pid = serve_pid
        self.peak: dict[str, float] = {"serve": 0.0, "gunicorn": 0.0, "check child": 0.0}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.02):
            self.peak["serve"] = max(self.peak["serve"], rss_mb(self.serve_pid))
            for child in children(self.serve_pid):
                line = cmdline(child)
                if "gunicorn" in line:
                    for pid in [child, *children(child)]:
                        self.peak["gunicorn"] = max(self.peak["gunicorn"], rss_mb(pid))
                elif "forkserver" in line:
                    for pid in children(child):
                        self.peak["check child"] = max(self.peak["check child"], rss_mb(pid))


def stall(port: int, kind: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    if kind % 2:
        sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: pull_re")
    else:
        sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{\"a\": ")
    return sock


def latencies(url: str, n: int) -> list[float]:
    return [post(url, "star", {"action": "created", "repository": {"full_name": "o/r"}},
                 str(uuid.uuid4())) for _ in range(n)]


def summary(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(len(xs) * 0.99))]
    return (f"median {statistics.median(xs) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
            f"max {xs[-1] * 1000:.1f} ms (n={len(xs)})")


def slow_loris(url: str, port: int) -> float:
    calm = latencies(url, 50)
    socks = [stall(port, i) for i in range(STALLS)]
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(0.5):
            for sock in socks[:8]:
                try:
                    sock.send(b"x")
                except OSError:
                    pass

    threading.Thread(target=trickle, daemon=True).start()
    time.sleep(0.5)
    loaded = latencies(url, 50)
    stop.set()
    for sock in socks:
        sock.close()
    print(f"slow-loris: without stalls {summary(calm)}")
    print(f"slow-loris: with {STALLS} stalled connections {summary(loaded)}")
    return max(loaded)


def hostile_files() -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        "backends/_beta/heuristics_config_utils.py": "x = 1\n" * 1_500_000,  # 9 MB
        ".github/flagbot.yml": BOMB + "hardwares: *i\n",
        "hardwares/hetero.txt": "".join(f"{i:08x}: A_X100\n" for i in range(1, 5001)),
    }
    files.update({f"hardwares/SPAM_X{i}/x.md": "x\n" for i in range(61)})
    return files


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-harden-") as tmp, Emulator(Path(tmp) / "gh") as emu:
        repo = emu.create_repo("flagos/FlagGems", files={**base_files(), **clean_backend()})
        emu.push_commit(repo, branch="hostile", files=hostile_files(), message="hostile")
        hostile = emu.open_pull(repo, head="hostile", base=repo.default_branch, user="mallory")
        emu.push_commit(repo, branch="innocent", files={"backends/_beta/ops/extra.py": "def extra():\n    return 1\n"},
                        message="innocent")
        innocent = emu.open_pull(repo, head="innocent", base=repo.default_branch, user="alice")
        port = free_port()
        state = Path(tmp) / "state"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FLAGBOT_"))}
        env.update(PYTHONPATH=str(ROOT), FLAGBOT_STATE_DIR=str(state), GITHUB_WEBHOOK_SECRET=SECRET,
                   GITHUB_APP_ID=emu.app_id, GITHUB_PRIVATE_KEY=emu.private_key_pem,
                   GITHUB_API_URL=emu.url)
        log = (Path(tmp) / "serve.log").open("w")
        proc = subprocess.Popen([sys.executable, "-m", "flagbot.hooks.cli", "serve", "--bind",
                                 f"127.0.0.1:{port}"], env=env, cwd=ROOT, stdout=log,
                                stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if requests.get(url + "/healthz", timeout=1).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    print((Path(tmp) / "serve.log").read_text())
                    return 2
                time.sleep(0.2)
            worst = slow_loris(url, port)
            sampler = Sampler(proc.pid)
            sampler.start()
            led = SqliteLedger(state / "ledger.db")
            started = time.monotonic()
            post(url, "pull_request", emu.payload(event="pull_request", action="opened", repo=repo,
                                                  number=hostile["number"]), "hostile")
            time.sleep(0.05)
            post(url, "pull_request", emu.payload(event="pull_request", action="opened", repo=repo,
                                                  number=innocent["number"]), "innocent")
            innocent_posted = time.monotonic()
            done: dict[str, float] = {}
            while len(done) < 2 and time.monotonic() - started < 300:
                for d in ("hostile", "innocent"):
                    row = led.get(d)
                    if d not in done and row is not None and row.status in ("done", "failed"):
                        done[d] = time.monotonic()
                        print(f"{d}: {row.status} after {done[d] - started:.2f} s"
                              + (f" ({row.error})" if row.error else ""))
                time.sleep(0.05)
            sampler.stop.set()
            sampler.join()
            waited = done.get("innocent", float("inf")) - innocent_posted
            print(f"innocent PR: done {waited:.2f} s after its delivery (posted 0.05 s after the hostile one)")
            print("peak RSS: " + ", ".join(f"{k} {v:.0f} MB" for k, v in sampler.peak.items()))
            runs = {r["name"]: r for r in emu.check_runs(repo, hostile["head"]["sha"])}
            for name, run in sorted(runs.items()):
                print(f"hostile {name}: {run['conclusion']}, {run['output']['title']}, "
                      f"{len(run['output']['annotations'])} annotations")
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    ok = worst < 1.0 and sampler.peak["serve"] < 300 and sampler.peak["gunicorn"] < 300 and waited < 5
    ok = second_round() and ok
    print("targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


HUGE = b"a 90 MiB stored file of plain text\n" * (90 * 1024 * 1024 // 35)


def wait_done(led: Any, delivery: str, limit_s: float = 300.0) -> float:
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        row = led.get(delivery)
        if row is not None and row.status in ("done", "failed"):
            return time.monotonic() - started
        time.sleep(0.05)
    return float("inf")


def innocent_wait(url: str, emu: Emulator, repo: Any, number: int, led: Any, tag: str) -> float:
    """Deliver the innocent PR again (synchronize) and return how long until it is done."""
    delivery = f"innocent-{tag}"
    post(url, "pull_request", emu.payload(event="pull_request", action="synchronize", repo=repo,
                                          number=number), delivery)
    return wait_done(led, delivery)


def second_round() -> bool:
    """Cases 3, 4, 7 and 8 of the second hardening round against a fresh `flagbot serve`."""
    from flagbot.bot.feed.log_sqlite import SqliteLabelLog

    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-harden2-") as tmp, Emulator(Path(tmp) / "gh") as emu:
        repo = emu.create_repo("flagos/FlagScale", files={**base_files(), **clean_backend()})
        emu.push_commit(repo, branch="huge-patches", message="huge stored patches", files={
            f"hardwares/A_X100/{b:08x}/{b:08x}.patch": HUGE for b in range(0x10, 0x15)})
        unpatch_pr = emu.open_pull(repo, head="huge-patches", base=repo.default_branch, user="mallory")
        emu.push_commit(repo, branch="huge-change", message="[A_X100] huge",
                        files={f"src/big{i}.txt": HUGE for i in range(6)})
        regen_pr = emu.open_pull(repo, head="huge-change", base=repo.default_branch, user="alice")
        emu.label_issue(repo, regen_pr["number"], "device: A_X100")
        emu.push_commit(repo, branch="innocent", message="innocent",
                        files={"backends/_beta/ops/extra.py": "def extra():\n    return 1\n"})
        innocent = emu.open_pull(repo, head="innocent", base=repo.default_branch, user="alice")
        with served(emu, Path(tmp)) as (url, proc, state):
            led = SqliteLedger(state / "ledger.db")
            post(url, "pull_request", emu.payload(event="pull_request", action="opened", repo=repo,
                                                  number=innocent["number"]), "innocent-0")
            wait_done(led, "innocent-0")
            cases = {
                "3 /unpatch of a 90 MiB stored patch": [("issue_comment", emu.payload(
                    event="issue_comment", action="created", repo=repo, number=unpatch_pr["number"],
                    sender="mallory", body="/unpatch A_X100 00000010"))],
                "4 regeneration of six 90 MiB files": [("pull_request", emu.payload(
                    event="pull_request", action="opened", repo=repo, number=regen_pr["number"]))],
                "7 150 comments from outsiders": [("issue_comment", emu.payload(
                    event="issue_comment", action="created", repo=repo, number=unpatch_pr["number"],
                    sender=f"outsider{i % 30}", body="/help")) for i in range(150)],
            }
            for name, deliveries in cases.items():
                sampler = Sampler(proc.pid)
                sampler.start()
                started = time.monotonic()
                for i, (event, payload) in enumerate(deliveries):
                    post(url, event, payload, f"{name[:1]}-{i}")
                waited = innocent_wait(url, emu, repo, innocent["number"], led, name[:1])
                last = wait_done(led, f"{name[:1]}-{len(deliveries) - 1}")
                sampler.stop.set()
                sampler.join()
                peak = max(sampler.peak["serve"], sampler.peak["gunicorn"])
                print(f"case {name}: innocent PR done {waited:.2f} s after its delivery; "
                      f"hostile work done {time.monotonic() - started:.1f} s after it began "
                      f"(last row {last:.1f} s); peak RSS serve {sampler.peak['serve']:.0f} MB, "
                      f"gunicorn {sampler.peak['gunicorn']:.0f} MB, check child "
                      f"{sampler.peak['check child']:.0f} MB")
                ok = ok and waited < 5 and peak < 300
            rows = 200_000
            SqliteLabelLog(state / "feed.db")
            import sqlite3

            conn = sqlite3.connect(state / "feed.db")
            conn.executemany(
                "insert or replace into labeled (repo, number, label, title, url, paths, state, "
                "labeled_at, merged_at, closed_at, merge_commit, unlabeled_at) "
                "values (?,?,?,?,?,?,?,?,?,?,?,null)",
                ((f"org{i % 50}/repo", i, "module: privateuse1", f"PR {i}", f"https://x/{i}",
                  '["a.py"]', "merged", float(i), i + 1.0, i + 1.0, "ab" * 20) for i in range(rows)))
            conn.commit()
            conn.close()
            stop = threading.Event()

            def reader(i: int) -> None:
                with requests.Session() as session:
                    while not stop.is_set():
                        try:
                            session.get(f"{url}/feeds/module: PrivateUse1.atom", timeout=30,
                                        params={"limit": 500, "repo": f"org{i % 50}/repo"})
                        except requests.RequestException:
                            pass

            threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(32)]
            for t in threads:
                t.start()
            time.sleep(1.0)
            acks = latencies(url, 20)
            stop.set()
            for t in threads:
                t.join(30)
            print(f"case 8 feed of {rows} rows, 32 readers: acks {summary(acks)}")
            ok = ok and max(acks) < 1.0
    return ok


class served:
    """`flagbot serve` with the in-process worker against the emulator, as in main()."""

    def __init__(self, emu: Emulator, tmp: Path) -> None:
        self.emu, self.tmp = emu, tmp

    def __enter__(self) -> tuple[str, subprocess.Popen[bytes], Path]:
        port = free_port()
        self.state = self.tmp / "state"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FLAGBOT_"))}
        env.update(FLAGBOT_STATE_DIR=str(self.state), GITHUB_WEBHOOK_SECRET=SECRET,
                   GITHUB_APP_ID=self.emu.app_id, GITHUB_PRIVATE_KEY=self.emu.private_key_pem,
                   GITHUB_API_URL=self.emu.url)
        self.log = (self.tmp / "serve.log").open("w")
        self.proc = subprocess.Popen([sys.executable, "-m", "flagbot.hooks.cli", "serve",
                                      "--bind", f"127.0.0.1:{port}"], env=env, cwd=self.tmp,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if requests.get(url + "/healthz", timeout=1).status_code == 200:
                    return url, self.proc, self.state
            except requests.RequestException:
                time.sleep(0.2)
        raise RuntimeError((self.tmp / "serve.log").read_text())

    def __exit__(self, *exc: object) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


if __name__ == "__main__":
    raise SystemExit(main())
