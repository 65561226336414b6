"""Integer arithmetic for planning launches on the host: ceiling division, next power of two,
rows per program.

`triton.cdiv` and `triton.next_power_of_2` are Triton constexpr functions (callable inside
kernels too), and each call from Python goes through their wrapper: 1.9 us a call against
0.1 us for the plain expression (Triton 3.9, CPython 3.11, this project's 2-core VM,
2026-11-26; `python benchmarks/bench_host_plan.py`). One split-K mm called them 19 times (about
35 us of host time a call), one split GEMV 14 times; launch-inclusive timings of short products
pay that. Same results for every int (tests/kernels/test_host_helpers.py).
"""

from __future__ import annotations


def cdiv(x: int, y: int) -> int:
    """x / y rounded up (y > 0)."""
    return (x + (y - 1)) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n; 0 for n <= 0, as Triton's."""
    if n <= 0:
        return 0
    return 1 << (n - 1).bit_length()


def fewer_rows(rows: int, count: int, programs: int, least: int = 1) -> int:
    """`rows` per program (a power of two), halved down to `least` while `count` rows would
    make fewer than `programs` programs."""
    while rows > least and cdiv(count, rows) < programs:
        rows //= 2
    return rows
