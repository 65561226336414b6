"""Seeded random shapes for the generic ops: the shapes a fixed list never names.

`draw(op, count, seed)` gives the same cases for the same seed on every machine (Python's own
`random.Random`, no device involved). The distribution leans towards what real models and
adversaries use: prime sizes and sizes one off a power of two (no vector-width divisibility),
vocabulary-length rows, very long rows with few rows and very short rows with many, skinny and
fat products with K from 1 to 16k, GEMV, every reduction dim, broadcasting. Sizes are capped so
one case moves at most a few hundred MB and a product stays under ~2^37 multiply-adds: a sweep
of 200 cases per op runs in minutes on one GPU.

Layouts (transposed or sliced inputs) and dtypes are drawn by `draw_rows` for the benchmark; the
harness (`flagbot kernels check --shapes random`) uses the cases with its own dtypes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from flagbot.kernels.case import Case, numel

DEFAULT_COUNT = 200
MAX_ELEMENTS = 1 << 26  # per input tensor: 256 MB in fp32
MIN_ELEMENTS = 1 << 12  # below this every op is its launch alone
MAX_MACS = 1 << 37  # m * n * k of one product (~0.2 ms of a Hopper GPU in 16-bit)
# Row lengths of real vocabularies (GPT-2, Llama 2/3, Qwen, Gemma, Mistral, GPT-4o...).
VOCABS = (32000, 32064, 32768, 49152, 50257, 50304, 65024, 100277, 128256, 151936, 152064,
          200064, 256000)
_PRIMES_CACHE: dict[int, int] = {}

UNARY = frozenset({"gelu", "silu", "exp", "sqrt", "rsqrt"})
BINARY = frozenset({"add", "mul", "sub", "div"})
ROWS = frozenset({"softmax", "log_softmax"})
NORMS = frozenset({"layer_norm", "rms_norm"})
REDUCTIONS = frozenset({"sum", "mean"})
SUPPORTED = UNARY | BINARY | ROWS | NORMS | REDUCTIONS | {"mm"}


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    f = 3
    while f * f <= n:
        if n % f == 0:
            return False
        f += 2
    return True


def _prime_near(n: int) -> int:
    """The smallest prime >= n (n is at most a few million here: trial division is enough)."""
    if n not in _PRIMES_CACHE:
        p = max(2, n)
        while not _is_prime(p):
            p += 1
        _PRIMES_CACHE[n] = p
    return _PRIMES_CACHE[n]


def size(rng: random.Random, lo: int, hi: int) -> int:
    """One dimension in [lo, hi], log-uniform, then shaped like real or hostile sizes: a prime,
    a power of two plus or minus one, a power of two, a multiple of 8, or as drawn."""
    lo, hi = max(1, lo), max(1, lo, hi)
    base = int(round(2 ** rng.uniform(lo.bit_length() - 1, hi.bit_length())))
    base = min(max(base, lo), hi)
    kind = rng.random()
    if kind < 0.25:
        value = _prime_near(base)
    elif kind < 0.45:
        value = (1 << max(0, base.bit_length() - 1)) + rng.choice((-1, 1))
    elif kind < 0.60:
        value = 1 << max(0, base.bit_length() - 1)
    elif kind < 0.75:
        value = max(8, base // 8 * 8)
    else:
        value = base
    return min(max(value, lo), hi)


def _fit(shape: list[int], limit: int) -> list[int]:
    """Shrink the largest dims (halving) until the shape holds at most `limit` elements."""
    while numel(tuple(shape)) > limit:
        i = max(range(len(shape)), key=lambda j: shape[j])
        shape[i] = max(1, shape[i] // 2 + (shape[i] % 2 and shape[i] > 2))
    return shape


def _grow(shape: list[int]) -> list[int]:
    """Scale the first dim up until the shape holds at least MIN_ELEMENTS."""
    if numel(tuple(shape)) < MIN_ELEMENTS:
        rest = max(1, numel(tuple(shape[1:])))
        shape[0] = -(-MIN_ELEMENTS // rest)
    return shape


def _elementwise_shape(rng: random.Random) -> list[int]:
    rank = rng.choice((1, 1, 2, 2, 3))
    if rank == 1:
        return [size(rng, MIN_ELEMENTS, MAX_ELEMENTS)]
    return _fit(_grow([size(rng, 1, 16384) for _ in range(rank)]), MAX_ELEMENTS)


def _row_length(rng: random.Random) -> tuple[int, int]:
    """(row length, largest row count): short, medium, vocabulary, or very long rows."""
    kind = rng.random()
    if kind < 0.2:
        n = size(rng, 2, 256)
    elif kind < 0.55:
        n = size(rng, 257, 16384)
    elif kind < 0.85:
        n = rng.choice(VOCABS) if rng.random() < 0.6 else size(rng, 16385, 262144)
    else:  # very long rows, few of them
        return size(rng, 262145, 1 << 22), 16
    return n, MAX_ELEMENTS // n


def _rows_case(rng: random.Random, op: str) -> Case:
    n, max_rows = _row_length(rng)
    m = size(rng, max(1, MIN_ELEMENTS // n), min(max_rows, 1 << 18))
    if op in NORMS or rng.random() < 0.7:
        if rng.random() < 0.2:  # a leading batch dim
            b = size(rng, 2, 64)
            return Case(tuple(_fit([b, max(1, m // b), n], MAX_ELEMENTS)))
        return Case((m, n))
    # softmax over an earlier dim: over dim 0 of a matrix, or the middle dim of three
    if rng.random() < 0.5:
        shape = _fit(_grow([size(rng, 2, 16384), size(rng, 1, 16384)]), MAX_ELEMENTS)
        return Case(tuple(shape), {"dim": 0})
    shape = _fit(_grow([size(rng, 1, 256), size(rng, 2, 4096), size(rng, 1, 1024)]),
                 MAX_ELEMENTS)
    return Case(tuple(shape), {"dim": 1})


def _reduction_case(rng: random.Random) -> Case:
    rank = rng.choice((2, 2, 2, 3))
    if rank == 2 and rng.random() < 0.25:  # few very long lines, or very many short ones
        shape = [size(rng, 1, 64), size(rng, 100_000, MAX_ELEMENTS)]
        if rng.random() < 0.5:
            shape.reverse()
    else:
        shape = _grow([size(rng, 1, 16384) for _ in range(rank)])
    shape = _fit(shape, MAX_ELEMENTS)
    return Case(tuple(shape), {"dim": rng.randrange(rank)})


def _mm_case(rng: random.Random) -> Case:
    kind = rng.random()
    if kind < 0.15:  # GEMV: one row (or one column) against a matrix
        m, n, k = 1, size(rng, 256, 32768), size(rng, 256, 16384)
        if rng.random() < 0.3:
            m, n = n, 1
    elif kind < 0.40:  # skinny: a decode batch or a few tokens
        m, n, k = size(rng, 2, 128), size(rng, 256, 32768), size(rng, 64, 16384)
    elif kind < 0.55:  # medium K around a thousand, odd everything
        m, n, k = size(rng, 129, 8192), size(rng, 129, 8192), size(rng, 700, 1500)
    elif kind < 0.70:  # small K (1 to 64): an outer product or a thin projection
        m, n, k = size(rng, 64, 16384), size(rng, 64, 16384), size(rng, 1, 64)
    else:  # squares and fat products, K up to 16k
        m, n, k = size(rng, 256, 8192), size(rng, 256, 8192), size(rng, 256, 16384)
    while m * n * k > MAX_MACS or m * k > MAX_ELEMENTS or k * n > MAX_ELEMENTS:
        if k >= max(m, n) and k > 1:
            k = max(1, k // 2)
        elif m >= n:
            m = max(1, m // 2)
        else:
            n = max(1, n // 2)
    return Case((m, n, k))


def draw_case(rng: random.Random, op: str) -> Case:
    """One random case of `op` (an op of SUPPORTED)."""
    if op in UNARY:
        shape = _elementwise_shape(rng)
        if op == "gelu" and rng.random() < 0.3:
            return Case(tuple(shape), {"approximate": "tanh"})
        return Case(tuple(shape))
    if op in BINARY:
        shape = _elementwise_shape(rng)
        if len(shape) > 1 and rng.random() < 0.3:
            return Case(tuple(shape), {"broadcast": rng.randrange(1, len(shape))})
        return Case(tuple(shape))
    if op in ROWS or op in NORMS:
        return _rows_case(rng, op)
    if op in REDUCTIONS:
        return _reduction_case(rng)
    if op == "mm":
        return _mm_case(rng)
    raise KeyError(f"no random shapes for {op!r}; ops with them: {', '.join(sorted(SUPPORTED))}")


def _op_seed(seed: int, op: str) -> int:
    # Each op draws from its own stream, so adding an op never changes another op's shapes.
    return int(seed * 1_000_003 + sum(ord(c) * 31 ** i for i, c in enumerate(op)) % 1_000_003)


def draw(op: str, count: int, seed: int) -> tuple[Case, ...]:
    """`count` random cases of `op`, the same for the same seed."""
    rng = random.Random(_op_seed(seed, op))
    return tuple(draw_case(rng, op) for _ in range(count))


@dataclass(frozen=True)
class RandomRow:
    """A case with the dtype and input layout the benchmark uses it in."""

    case: Case
    dtype: torch.dtype
    layout: str


def draw_rows(op: str, count: int, seed: int) -> list[RandomRow]:
    """Cases of `draw` with a dtype (16-bit twice as often as fp32) and a layout: mostly
    contiguous, else transposed (`t`) or a slice of wider rows (`slice`) for 2-D and wider."""
    rng = random.Random(_op_seed(seed, op) ^ 0x5EED)
    out = []
    for case in draw(op, count, seed):
        dtype = rng.choice((torch.float32, torch.float16, torch.bfloat16))
        layout = "contiguous"
        if len(case.shape) >= 2 and rng.random() < 0.25:
            layout = rng.choice(("t", "slice"))
        out.append(RandomRow(case, dtype, layout))
    return out


def parse_spec(text: str) -> int:
    """The case count of a `random` or `random:N` --shapes value."""
    if text == "random":
        return DEFAULT_COUNT
    head, _, count = text.partition(":")
    if head != "random" or not count.isdigit() or int(count) < 1:
        raise ValueError(f"--shapes {text!r}: use ci, full, auto, random or random:N (N >= 1)")
    return int(count)


def new_seed() -> int:
    """A fresh seed (printed with the results so a run can be repeated)."""
    return int(random.SystemRandom().randrange(1, 1 << 31))
