from __future__ import annotations

from flagbot.bot.github.identity import GitHubApp
from flagbot.bot.github.pacing import WriteBucket
from flagbot.bot.settings import Settings


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_burst_goes_out_at_once_then_one_write_per_spacing() -> None:
    clock = FakeClock()
    bucket = WriteBucket(3, 1.0, clock=clock, sleep=clock.sleep)
    waits = [bucket.acquire() for _ in range(5)]
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert waits[3:] == [1.0, 1.0]


def test_idle_time_refills_the_bucket_up_to_the_burst() -> None:
    clock = FakeClock()
    bucket = WriteBucket(2, 0.5, clock=clock, sleep=clock.sleep)
    for _ in range(2):
        bucket.acquire()
    clock.now += 60
    assert [bucket.acquire() for _ in range(3)] == [0.0, 0.0, 0.5]


def test_zero_spacing_never_waits() -> None:
    clock = FakeClock()
    bucket = WriteBucket(1, 0.0, clock=clock, sleep=clock.sleep)
    assert sum(bucket.acquire() for _ in range(50)) == 0.0


def test_one_bucket_per_installation_in_each_app_object() -> None:
    app = GitHubApp(Settings(write_burst=10, write_spacing_s=1.0))
    a = app.bucket(1)
    assert app.bucket(1) is a and app.bucket(2) is not a
    assert (a.burst, a.spacing_s) == (10, 1.0)
    assert GitHubApp(app.settings).bucket(1) is not a  # nothing is shared through the module
