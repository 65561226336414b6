"""Integer arithmetic for planning launches on the host: ceiling division, next power of two,
rows per program, broadcast shapes and strides.

`triton.cdiv` and `triton.next_power_of_2` are Triton constexpr functions (callable inside
kernels too), and each call from Python goes through their wrapper: 1.9 us a call against
0.1 us for the plain expression (Triton 3.9, CPython 3.11, this project's 2-core VM,
2026-11-26; `python benchmarks/bench_host_plan.py`). One split-K mm called them 19 times (about
35 us of host time a call), one split GEMV 14 times; launch-inclusive timings of short products
pay that. Same results for every int (tests/kernels/test_host_helpers.py).
"""

from __future__ import annotations

from collections.abc import Sequence


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


def broadcast_shape(*shapes: Sequence[int]) -> tuple[int, ...]:
    """torch.broadcast_shapes for concrete sizes, as plain Python. Torch's goes through its
    symbolic-shape reference (10-13 us a call, and its first call imports sympy: 0.3 s), once
    before every elementwise launch; this takes 0.5-1.7 us. RuntimeError where they do not
    broadcast, as torch's."""
    first = tuple(shapes[0])
    if all(len(s) == len(first) and tuple(s) == first for s in shapes[1:]):
        return first
    out = [1] * max(len(s) for s in shapes)
    for s in shapes:
        for i, n in enumerate(s, len(out) - len(s)):
            if n == out[i] or n == 1:
                continue
            if out[i] != 1:
                raise RuntimeError(
                    f"shapes {', '.join(str(list(x)) for x in shapes)} do not broadcast: size "
                    f"{n} against {out[i]} at dim {i} (each size must match or be 1)")
            out[i] = n
    return tuple(out)


def broadcast_strides(shape: Sequence[int], strides: Sequence[int],
                      to: Sequence[int]) -> tuple[int, ...]:
    """The strides of a tensor of `shape`/`strides` expanded to `to` (0 where it is
    broadcast), without building the expanded view: `t.expand(to).stride()` on every dim of
    more than one element (a dim of one element is never stepped along, whatever its
    stride)."""
    lead = len(to) - len(shape)
    return (0,) * lead + tuple(0 if n == 1 and m != 1 else s
                               for n, m, s in zip(shape, to[lead:], strides, strict=True))
