"""The downstream feed against hostile text and heavy readers, on a real `flagbot serve`."""

from __future__ import annotations

import sqlite3
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from flagbot.bot.feed.atom import atom, xml_text
from flagbot.bot.feed.log import Closing, LabeledPR
from flagbot.bot.feed.log_sqlite import SqliteLabelLog
from flagbot.bot.settings import Settings
from tests.bot.core_support import make_settings
from tests.bot.test_cli import Served
from tests.bot.test_slow_clients import signed_latency

ATOM = "{http://www.w3.org/2005/Atom}"
HOSTILE = "fix \x01\x08 bell\x07 and \ufffe\uffff nul-free"


def merged(log: SqliteLabelLog, number: int, title: str = "t", paths: tuple[str, ...] = ("a.py",),
           repo: str = "octo/flagos", label: str = "vendor: a_x100") -> None:
    log.labeled(LabeledPR(repo, number, label, title, f"https://github.com/{repo}/pull/{number}",
                          paths, labeled_at=1000.0 + number))
    log.closed(Closing(repo, number, title, f"https://github.com/{repo}/pull/{number}", True,
                       2000.0 + number, "ab" * 20, (label,)))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Served, Settings]]:
    settings = make_settings(tmp_path / "state")
    srv = Served(settings, "--no-worker")
    yield srv, settings
    srv.stop()


def test_control_characters_in_a_title_or_path_leave_the_feed_well_formed(served) -> None:
    srv, settings = served
    log = SqliteLabelLog(settings.feed_path)
    merged(log, 1, title=HOSTILE, paths=(f"backends/_a_x100/{HOSTILE}.py",))
    merged(log, 2, title="plain")
    reply = requests.get(f"{srv.url}/feeds/vendor: a_x100.atom", timeout=10)
    assert reply.status_code == 200
    doc = ET.fromstring(reply.content)  # raises on ill-formed XML
    titles = [e.findtext(f"{ATOM}title") for e in doc.iter(f"{ATOM}entry")]
    assert len(titles) == 2 and titles[0] == "octo/flagos#2: plain"
    assert titles[1].startswith("octo/flagos#1: fix") and "\x01" not in titles[1]


def test_xml_text_keeps_what_xml_allows() -> None:
    kept = "tab\tnewline\n ü 中 \U0001f600"
    assert xml_text(kept) == kept
    assert xml_text("\x00\x1f\ufffe\uffff") == "\ufffd" * 4
    entry = LabeledPR("o/r", 1, "l", "\x0c", "u", ("\x1b[31m",), state="merged", merged_at=1.0)
    ET.fromstring(atom("l\x01", [entry], self_url="http://x/\x02"))


def big_log(path: Path, rows: int) -> None:
    """`rows` merged PRs under one label, written in one transaction."""
    SqliteLabelLog(path)  # schema
    conn = sqlite3.connect(path)
    conn.executemany(
        "insert into labeled (repo, number, label, title, url, paths, state, labeled_at, "
        "merged_at, closed_at, merge_commit, unlabeled_at) values (?,?,?,?,?,?,?,?,?,?,?,null)",
        ((f"org{i % 50}/repo", i, "module: privateuse1", f"PR {i}",
          f"https://github.com/org{i % 50}/repo/pull/{i}", '["a.py"]', "merged", float(i),
          float(i) + 1, float(i) + 1, "ab" * 20) for i in range(rows)))
    conn.commit()
    conn.close()


@pytest.mark.slow
def test_ingest_answers_within_a_second_while_32_clients_read_a_200k_row_feed(served) -> None:
    srv, settings = served
    big_log(settings.feed_path, 200_000)
    stop = threading.Event()
    codes: list[int] = []

    def reader(i: int) -> None:
        with requests.Session() as session:
            while not stop.is_set():
                try:
                    r = session.get(f"{srv.url}/feeds/module: PrivateUse1.atom",
                                    params={"limit": 500, "repo": f"org{i % 50}/repo"},
                                    timeout=30)
                except requests.ConnectionError:
                    codes.append(-1)
                    continue
                codes.append(r.status_code)

    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(32)]
    for t in threads:
        t.start()
    try:
        time.sleep(1.0)
        latencies = signed_latency(srv.url, 10)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert max(latencies) < 1.0, latencies
    print({c: codes.count(c) for c in set(codes)})
    assert 200 in codes and set(codes) <= {200, 503, -1}
    first = requests.get(f"{srv.url}/feeds/module: PrivateUse1.atom", params={"limit": 3},
                         timeout=10)
    numbers = [e.findtext(f"{ATOM}title") for e in ET.fromstring(first.content).iter(f"{ATOM}entry")]
    assert numbers == ["org49/repo#199999: PR 199999", "org48/repo#199998: PR 199998",
                       "org47/repo#199997: PR 199997"]
