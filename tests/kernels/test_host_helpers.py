"""The host-side integer helpers agree with Triton's own, which they replace on the launch path
(kernels/ops/_host.py says why), and the benchmark that measures them runs."""

from __future__ import annotations

import random

import pytest
import torch
import triton

from flagbot.kernels.ops import _mm_tma
from flagbot.kernels.ops._host import broadcast_shape, broadcast_strides, cdiv, next_power_of_2

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


def test_the_op_level_planning_benchmark_records_each_ops_launches(
        capsys: pytest.CaptureFixture[str]) -> None:
    from triton.runtime.jit import KernelInterface

    real = KernelInterface.__getitem__
    module = load_benchmark("bench_host_plan")
    assert module.main(["--ops", "--calls", "3"]) == 0
    assert KernelInterface.__getitem__ is real  # the recorder is gone again
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and "---" not in line and "kernels launched" not in line]
    assert len(rows) == len(module.OP_ROWS)
    launched = {(r[0][2:], r[1], r[3]): r[5].rstrip(" |") for r in rows}
    assert launched[("add", "2x151x513", "slice")] == "_strided_kernel"
    assert launched[("add", "1048576", "contiguous")] == "_flat_kernel"
    # 16-bit tiles go through descriptors where the target has them (the interpreter does)
    tiles = "_mm_tma_kernel" if _mm_tma.target_has_tma() else "_mm_kernel"
    assert launched[("mm", "384x223x2077", "contiguous")] == f"{tiles}, _sum_cols_kernel"
    assert all(float(r[4]) > 0 for r in rows)


def test_alignment_is_the_largest_power_of_two_up_to_16_dividing_every_value() -> None:
    from flagbot.kernels.ops._rows import alignment

    for a in range(0, 70):
        for b in range(0, 70):
            want = next(p for p in (16, 8, 4, 2, 1) if a % p == 0 and b % p == 0)
            assert alignment(a, b) == want, (a, b)
    assert alignment(5000) == 8 and alignment(1080, 4096) == 8 and alignment(8191) == 1
    assert alignment() == 16 and alignment(0) == 16 and alignment(-24) == 8


def _shapes(rng: random.Random) -> list[tuple[int, ...]]:
    """Two or three shapes that mostly broadcast: each dim of the result taken as is, as 1, as
    0 where the result has 0, left off at the front, or (now and then) changed so that it
    does not."""
    out = tuple(rng.choice([0, 1, 1, 2, 3, 5, 7]) for _ in range(rng.randint(0, 4)))
    shapes = []
    for _ in range(rng.randint(2, 3)):
        dims = [rng.choice([n, n, 1]) if n != 0 else rng.choice([0, 1]) for n in out]
        if dims and rng.random() < 0.15:
            dims[rng.randrange(len(dims))] = rng.choice([2, 4, 6])
        shapes.append(tuple(dims[rng.randint(0, len(dims)):] if rng.random() < 0.3 else dims))
    return shapes


def _torchs(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """torch.broadcast_shapes' answer, None where it refuses."""
    try:
        return tuple(torch.broadcast_shapes(*shapes))
    except RuntimeError:
        return None


def test_broadcast_shape_agrees_with_torch_including_refusals() -> None:
    rng = random.Random(20261127)
    refused = 0
    for _ in range(3000):
        shapes = _shapes(rng)
        want = _torchs(shapes)
        if want is None:
            refused += 1
            with pytest.raises(RuntimeError, match="do not broadcast"):
                broadcast_shape(*shapes)
        else:
            assert broadcast_shape(*shapes) == want, shapes
    assert 100 < refused < 2900  # both outcomes exercised
    assert broadcast_shape(torch.Size([3, 1]), (4,)) == (3, 4)


def test_broadcast_strides_are_the_expanded_views_strides() -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(500):
        shapes = _shapes(rng)
        to = _torchs(shapes)
        if to is None:
            continue
        for shape in shapes:
            base = torch.empty([n + 2 for n in shape]) if shape else torch.empty(())
            t = base[tuple(slice(0, n) for n in shape)]  # a view with padded strides
            if t.dim() >= 2 and rng.random() < 0.5:
                t = t.transpose(0, -1).contiguous().transpose(0, -1)
            mine, torchs = broadcast_strides(t.shape, t.stride(), to), t.expand(to).stride()
            assert [s for s, n in zip(mine, to, strict=True) if n != 1] == [
                s for s, n in zip(torchs, to, strict=True) if n != 1], (t.shape, t.stride(), to)
            checked += 1
    assert checked > 500


def _views(rng: random.Random) -> torch.Tensor:
    """A random view: a permutation of a tensor with size-1 dims, sliced, stepped or expanded."""
    shape = [rng.choice([1, 1, 2, 3, 5, 8]) for _ in range(rng.randint(0, 4))]
    t = torch.empty(shape)
    if shape:
        t = t.permute(rng.sample(range(len(shape)), len(shape)))
        d = rng.randrange(len(shape))
        kind = rng.choice(["whole", "slice", "step", "expand"])
        if kind == "slice" and t.shape[d] > 1:
            t = t.narrow(d, 1, t.shape[d] - 1)
        elif kind == "step" and t.shape[d] > 2:
            t = t[(slice(None),) * d + (slice(None, None, 2),)]
        elif kind == "expand":
            t = t.unsqueeze(d).expand(*t.shape[:d], 3, *t.shape[d:])
    return t


def _covers_one_run(t: torch.Tensor) -> bool:
    """By brute force: the offsets `t` addresses are numel() distinct consecutive ones."""
    span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
    offsets = torch.arange(span).as_strided(t.shape, t.stride()).flatten()
    return bool(offsets.unique().numel() == t.numel() == offsets.max() - offsets.min() + 1)


def test_layout_helpers_agree_with_brute_force() -> None:
    from flagbot.kernels.ops._layout import is_dense, storage_order

    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        t = _views(rng)
        dense = is_dense(t)
        assert dense == _covers_one_run(t), (t.shape, t.stride())
        seen[dense] += 1
        order = storage_order(t)
        assert sorted(order) == list(range(t.dim()))
        assert [t.stride(d) for d in order] == sorted(t.stride(), reverse=True)
        if dense:
            assert t.permute(order).is_contiguous(), (t.shape, t.stride(), order)
    assert min(seen.values()) > 300  # both answers were exercised
