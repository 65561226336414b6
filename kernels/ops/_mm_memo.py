"""mm's picked configuration remembered per operand geometry.

Picking walks mm's shape rules in Python on every call: 20-63 us a call on this project's
2-core VM (263x642x2843 fp16 63, 1024x1024x1000 bf16 43, 13x2441x256 bf16 38, 728x1x16384
fp32 20), and on the H200 machine's host an eager loop of mm calls that picked their
configuration ran 80-111 us a call where the same loop given it ran 61 (1024x1024x1000 bf16;
263x642x2843 fp16 177 against 147, 13x2441x256 bf16 102 against 78; 2026-11-27). Looking the
answer up costs 2-3 us on the VM. Products of a few microseconds are launched about as fast
as the host gets through this path, so their launch-inclusive time pays it on every call.

Fenced: the key holds everything the rules read from the operands (shapes, strides, dtype);
what they read besides (module constants) does not change within a process, except in tests,
which `clear()` the memo. At most MAX_ENTRIES geometries are kept; past that, new ones are
picked on every call: a process that sees endless shapes pays the plain cost, never memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import torch

MAX_ENTRIES = 4096

Picked = TypeVar("Picked")
_memo: dict[tuple[Any, ...], Any] = {}


def picked(a: torch.Tensor, b: torch.Tensor,
           pick: Callable[[torch.Tensor, torch.Tensor], Picked]) -> Picked:
    """pick(a, b), remembered for operands of a @ b with these shapes, strides and dtype."""
    key = (a.shape, a.stride(), a.dtype, b.shape, b.stride(), b.dtype)
    found: Picked | None = _memo.get(key)
    if found is None:
        found = pick(a, b)
        if len(_memo) < MAX_ENTRIES:
            _memo[key] = found
    return found


def clear() -> None:
    """Forget every remembered pick (tests that change the rules' constants)."""
    _memo.clear()
