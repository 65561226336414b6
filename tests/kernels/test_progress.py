"""Progress lines: per op, per slow case, with an estimate of the time left."""

from __future__ import annotations

import io

from flagbot.kernels.progress import Progress, duration


def test_estimate_follows_the_share_of_work_done() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = Progress(100.0, out, clock=lambda: now[0])
    now[0] = 10.0
    progress.case("mm", "float16 4096x4096x4096", 25.0)
    assert "mm float16 4096x4096x4096 done (25% of the run; about 30 s left)" in out.getvalue()


def test_quick_cases_are_not_reported_one_by_one() -> None:
    out = io.StringIO()
    progress = Progress(100.0, out, clock=lambda: 0.0)
    progress.case("add", "float32 1000", 1.0)
    assert out.getvalue() == ""


def test_listed_op_says_why_it_does_not_run() -> None:
    out = io.StringIO()
    Progress(1.0, out, clock=lambda: 0.0).op(1, 2, "add", 0, "disabled")
    assert out.getvalue() == "[1/2] add: disabled\n"


def test_duration_reads_naturally() -> None:
    assert (duration(45), duration(600), duration(7200)) == ("45 s", "10 min", "2.0 h")
