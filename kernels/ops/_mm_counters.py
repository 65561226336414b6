"""Per-tile arrival counters for mm's split-K launches, kept between calls.

A split product's programs count themselves done on their output tile's counter, and the
last one sums the parts (`_mm_common.store_tile`), which also sets the counter back to zero:
a buffer left at zeros by every launch can serve the next one without being cleared, which
would cost a launch of its own. Launches on one stream run one after another, so each
(device, stream) has its own buffer; launches on different streams may overlap and must not
share one.

Bounded: past MAX_STREAMS streams a call gets a fresh zeroed buffer (correct, one fill more).
"""

from __future__ import annotations

from typing import Any

import torch

MAX_STREAMS = 64

_buffers: dict[tuple[Any, ...], torch.Tensor] = {}


def _stream_key(device: torch.device) -> tuple[Any, ...]:
    module = getattr(torch, device.type, None)
    current = getattr(module, "current_stream", None)
    if device.type == "cpu" or current is None:
        return (device,)
    return (device, current(device))


def tile_counters(device: torch.device, tiles: int) -> torch.Tensor:
    """At least `tiles` int32 counters, all zero, for a launch on `device`'s current stream."""
    key = _stream_key(device)
    found = _buffers.get(key)
    if found is not None and found.numel() >= tiles:
        return found
    fresh = torch.zeros(max(tiles, 2 * found.numel() if found is not None else 0, 1024),
                        dtype=torch.int32, device=device)
    if found is not None or len(_buffers) < MAX_STREAMS:
        _buffers[key] = fresh
    return fresh


def clear() -> None:
    """Drop every kept buffer (tests)."""
    _buffers.clear()
