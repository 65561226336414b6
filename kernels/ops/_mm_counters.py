"""Per-tile arrival counters for mm's split-K launches that sum their parts in the kernel.

A split product's programs count themselves done on their output tile's counter, and the last
one sums the parts (`mm._store_tile`), which also sets the counter back to zero: a buffer left
at zeros by every launch can serve the next one without being cleared, which would cost a
launch of its own (what the second launch saved is measured in `mm.sums_in_kernel`).

Fenced: launches on one stream run one after another, so each (device, stream) keeps one
buffer, never replaced or freed while the process runs (a CUDA graph may hold its address);
launches on different streams may overlap and never share one. Everything else gets a fresh
zeroed buffer for the call (correct, one fill more): a launch needing more counters than its
stream's buffer holds, streams past MAX_STREAMS, and a launch being captured into a graph,
whose replays may run on any stream, concurrently with others.
"""

from __future__ import annotations

from typing import Any

import torch

MAX_STREAMS = 64
KEPT_COUNTERS = 1024  # split products have under two waves of tiles; forced configurations more

_buffers: dict[tuple[Any, ...], torch.Tensor] = {}


def _module(device: torch.device) -> Any:
    return None if device.type == "cpu" else getattr(torch, device.type, None)


def _capturing(device: torch.device) -> bool:
    query = getattr(_module(device), "is_current_stream_capturing", None)
    return bool(query()) if query is not None else False


def _stream_key(device: torch.device) -> tuple[Any, ...]:
    current = getattr(_module(device), "current_stream", None)
    return (device,) if current is None else (device, current(device))


def tile_counters(device: torch.device, tiles: int) -> torch.Tensor:
    """At least `tiles` int32 counters, all zero, for a launch on `device`'s current stream."""
    if not _capturing(device):
        key = _stream_key(device)
        found = _buffers.get(key)
        if found is None and len(_buffers) < MAX_STREAMS:
            found = _buffers[key] = torch.zeros(max(tiles, KEPT_COUNTERS), dtype=torch.int32,
                                                device=device)
        if found is not None and found.numel() >= tiles:
            return found
    return torch.zeros(tiles, dtype=torch.int32, device=device)


def clear() -> None:
    """Drop every kept buffer (tests)."""
    _buffers.clear()
