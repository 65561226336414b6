"""Split-K products whose programs sum their own parts (the last to finish a tile sums it), the
rule that picks them, and the per-stream counters that let one launch do it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from flagbot.kernels.ops import _mm_counters
from flagbot.kernels.ops import mm as mm_module
from flagbot.kernels.ops.mm import MMConfig, mm, sums_in_kernel

from .closeness import assert_close, seeded_randn

# 64x128 outputs in 16x16 tiles: 32 tiles, the fewest the rule sums in the kernel
SMALL = MMConfig(16, 16, 16, 4, 2, split_k=5)


@pytest.fixture(autouse=True)
def fresh_counters() -> Iterator[None]:
    _mm_counters.clear()
    yield
    _mm_counters.clear()


def _launches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the partial-sum launches mm makes (its second launch, where there is one)."""
    seen: list[str] = []
    real = mm_module.sum_partials

    def counting(*args: object, **kwargs: object) -> None:
        seen.append("sum_partials")
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(mm_module, "sum_partials", counting)
    return seen


def test_fp32_split_sums_in_one_launch_and_leaves_the_counters_at_zero(
        device: torch.device, monkeypatch: pytest.MonkeyPatch) -> None:
    second = _launches(monkeypatch)
    a = seeded_randn(64, 150, dtype=torch.float32, device=device)
    b = seeded_randn(150, 128, dtype=torch.float32, seed=1, device=device)
    expected = a.double() @ b.double()
    first = mm(a, b, config=SMALL)
    assert_close("mm", first, expected, 150)
    assert second == []  # no second launch
    (buffer,) = _mm_counters._buffers.values()
    assert int(buffer.abs().sum()) == 0  # every tile's counter set back for the next launch
    # the same buffer serves the next launch, and the parts are summed in the same order
    again = mm(a, b, config=SMALL)
    assert torch.equal(again, first)
    assert list(_mm_counters._buffers.values())[0] is buffer
    # a transposed operand read in place takes the same path
    assert_close("mm", mm(a.t().contiguous().t(), b, config=SMALL), expected, 150)


def test_16_bit_and_narrow_grids_keep_the_second_launch(
        device: torch.device, monkeypatch: pytest.MonkeyPatch) -> None:
    second = _launches(monkeypatch)
    a = seeded_randn(64, 150, dtype=torch.float16, device=device)
    b = seeded_randn(150, 128, dtype=torch.float16, seed=1, device=device)
    assert_close("mm", mm(a, b, config=SMALL), a.double() @ b.double(), 150)
    assert second == ["sum_partials"]
    narrow = MMConfig(16, 32, 16, 4, 2, split_k=5)  # 16 tiles
    a32, b32 = a.float(), b.float()
    assert_close("mm", mm(a32, b32, config=narrow), a32.double() @ b32.double(), 150)
    assert second == ["sum_partials", "sum_partials"]
    assert _mm_counters._buffers == {}


def test_the_rule_sums_fp32_over_enough_tiles_with_small_parts() -> None:
    tile = MMConfig(32, 128, 32, 4, 4)
    assert sums_in_kernel(tile, torch.float16, 1, 1)  # one part: nothing to sum
    assert sums_in_kernel(tile, torch.float32, 240, 3)  # 367x2520x2342 fp32
    assert sums_in_kernel(tile, torch.float32, 128, 5)  # 2048x256x4363: 20480 elements a tile
    assert not sums_in_kernel(tile, torch.float32, 128, 6)  # parts past the bound
    assert not sums_in_kernel(tile, torch.float32, 30, 4)  # 457x129x700: too few tiles
    assert not sums_in_kernel(tile, torch.bfloat16, 240, 3)  # 16-bit: a second launch
    assert not sums_in_kernel(MMConfig(128, 64, 32, 4, 4), torch.float32, 144, 4)


def test_counters_are_kept_per_stream_never_replaced_and_stay_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = torch.device("cpu")
    kept = _mm_counters.tile_counters(cpu, 10)
    assert kept.dtype == torch.int32 and kept.numel() == _mm_counters.KEPT_COUNTERS
    assert int(kept.abs().sum()) == 0
    assert _mm_counters.tile_counters(cpu, 900) is kept
    # more counters than kept: a fresh zeroed buffer for the call; the kept one stays (a
    # captured graph may hold its address)
    more = _mm_counters.tile_counters(cpu, 5000)
    assert more is not kept and more.numel() == 5000 and int(more.abs().sum()) == 0
    assert _mm_counters.tile_counters(cpu, 10) is kept
    # a launch being captured into a graph never shares a buffer
    monkeypatch.setattr(_mm_counters, "_capturing", lambda device: True)
    captured = _mm_counters.tile_counters(cpu, 10)
    assert captured is not kept and int(captured.abs().sum()) == 0
    monkeypatch.setattr(_mm_counters, "_capturing", lambda device: False)
    # streams: each (device, stream) has its own buffer; past MAX_STREAMS a fresh zeroed
    # buffer a call, none kept
    streams = iter(range(1000))
    monkeypatch.setattr(_mm_counters, "_stream_key", lambda device: (device, next(streams)))
    monkeypatch.setattr(_mm_counters, "MAX_STREAMS", 3)
    _mm_counters.clear()
    first = [_mm_counters.tile_counters(cpu, 8) for _ in range(3)]
    assert len({id(t) for t in first}) == 3 and len(_mm_counters._buffers) == 3
    extra = _mm_counters.tile_counters(cpu, 8)
    assert int(extra.abs().sum()) == 0 and len(_mm_counters._buffers) == 3


def test_the_stream_key_and_capture_query_go_through_the_devices_own_module(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Vendor:  # a vendor's torch module (torch.npu, torch.xpu, ...), not torch.cuda
        capturing = False

        @staticmethod
        def current_stream(device: torch.device) -> str:
            return f"stream of {device}"

        @classmethod
        def is_current_stream_capturing(cls) -> bool:
            return cls.capturing

    monkeypatch.setattr(torch, "xpu", Vendor)
    xpu = torch.device("xpu", 1)
    assert _mm_counters._stream_key(xpu) == (xpu, "stream of xpu:1")
    assert not _mm_counters._capturing(xpu)
    Vendor.capturing = True
    assert _mm_counters._capturing(xpu)
    cpu = torch.device("cpu")
    assert _mm_counters._stream_key(cpu) == (cpu,) and not _mm_counters._capturing(cpu)
