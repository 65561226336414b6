"""The host-side integer helpers agree with Triton's own, which they replace on the launch path
(kernels/ops/_host.py says why), and the benchmark that measures them runs."""

from __future__ import annotations

import pytest
import triton

from flagbot.kernels.ops._host import cdiv, next_power_of_2

from .benchmarks_support import load_benchmark


def test_same_results_as_tritons_helpers() -> None:
    for n in [*range(-5, 5000), 2**20 + 1, 2**31 - 1, 2**31, 2**40 - 3, 2**62]:
        assert next_power_of_2(n) == triton.next_power_of_2(n), n
    for x in range(0, 600):
        for y in range(1, 70):
            assert cdiv(x, y) == triton.cdiv(x, y), (x, y)
    assert cdiv(2**40 + 1, 3) == triton.cdiv(2**40 + 1, 3)


def test_the_planning_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_benchmark("bench_host_plan")
    assert module.main(["--calls", "50"]) == 0
    table = capsys.readouterr().out
    assert "| _host.cdiv |" in table and "| mm_config 4096^3 fp16 |" in table


def test_alignment_is_the_largest_power_of_two_up_to_16_dividing_every_value() -> None:
    from flagbot.kernels.ops._rows import alignment

    for a in range(0, 70):
        for b in range(0, 70):
            want = next(p for p in (16, 8, 4, 2, 1) if a % p == 0 and b % p == 0)
            assert alignment(a, b) == want, (a, b)
    assert alignment(5000) == 8 and alignment(1080, 4096) == 8 and alignment(8191) == 1
    assert alignment() == 16 and alignment(0) == 16 and alignment(-24) == 8
