"""How many programs of one compiled kernel a device runs at once: the grid of a persistent
kernel, whose programs each loop over many pieces of work. Fewer leave multiprocessors idle;
more queue behind the first ones and finish last.

Fenced: used only by mm's persistent kernels (the descriptor one in _mm_tma, on targets with
tensor descriptors, and the pointer kernel's one-step fp32 one in mm). A kernel's first launch runs one program per multiprocessor (always correct: the
programs loop over whatever work is left) and hands back the compiled kernel, whose registers,
shared memory and warps say how many fit on a multiprocessor; later launches of that kernel
use that count. Where Triton reports none of it (another backend, the CPU interpreter), one per
multiprocessor stays.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any

import torch
import triton

from flagbot.kernels.backend_utils import interpreted

# The CPU interpreter runs programs one after another: a few programs, each taking several
# pieces of work, exercise the loop that a device's persistent programs run.
INTERPRETED_PROCESSORS = 4
# Hopper and data-centre Blackwell (Triton does not report it); registers or shared memory
# bind first for mm's tiles, so a part with fewer threads a multiprocessor gets the same count
THREADS_PER_PROCESSOR = 2048
MAX_KERNELS = 256  # kernels remembered per process; past that, one program a multiprocessor

_per_processor: dict[tuple[torch.device, Hashable], int] = {}


@functools.cache
def _properties(index: int) -> dict[str, Any]:
    if interpreted():
        return {"multiprocessor_count": INTERPRETED_PROCESSORS}
    try:
        return dict(triton.runtime.driver.active.utils.get_device_properties(index))
    except Exception:  # a backend without this query: a few programs, still correct
        return {"multiprocessor_count": INTERPRETED_PROCESSORS}


def multiprocessors(device: torch.device) -> int:
    return int(_properties(device.index or 0).get("multiprocessor_count")
               or INTERPRETED_PROCESSORS)


def programs(device: torch.device, kernel: Hashable) -> int:
    """The grid for `kernel` (a key naming one compiled kernel) on `device`: as many programs
    as run at once once `learn` has seen it compiled, else one per multiprocessor."""
    return multiprocessors(device) * _per_processor.get((device, kernel), 1)


def learn(device: torch.device, kernel: Hashable, compiled: Any) -> None:
    """Remember how many programs of `compiled` (what a launch returned) fit on one of
    `device`'s multiprocessors."""
    if (device, kernel) in _per_processor or len(_per_processor) >= MAX_KERNELS:
        return
    _per_processor[(device, kernel)] = per_processor(compiled, _properties(device.index or 0))


def per_processor(compiled: Any, properties: dict[str, Any]) -> int:
    """Programs of `compiled` one multiprocessor holds at once, bounded by its registers,
    shared memory and threads; 1 where the compiled kernel or the device does not say."""
    try:
        threads = int(compiled.metadata.num_warps) * 32
        registers = int(compiled.n_regs)
        shared = int(compiled.metadata.shared)
        by_registers = int(properties["max_num_regs"]) // max(1, -(-registers // 8) * 8 * threads)
        by_shared = int(properties["max_shared_mem"]) // shared if shared else THREADS_PER_PROCESSOR
    except (AttributeError, KeyError, TypeError, ValueError):
        return 1
    return max(1, min(by_registers, by_shared, THREADS_PER_PROCESSOR // threads))


def clear() -> None:
    """Forget what was learnt (tests)."""
    _per_processor.clear()
