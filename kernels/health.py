"""The device health gate: a timing taken while another job holds the device is a false verdict.

Before timing, free device memory and the other processes on the device are read (where the
device module reports them). A device with less than half its memory free, or with another
process holding a tenth of its memory or more, is busy (a smaller one, such as a test worker
beside this one, is recorded but does not count): the check waits, polling, up to a limit (FlagGems' CI waits the same
way for free memory), and if it stays busy the report says "device busy" instead of speeds.
"""

from __future__ import annotations

import re
import time
from typing import Any

from flagbot.kernels.device import Device

MIN_FREE_FRACTION = 0.5
OTHER_PROCESS_FRACTION = 0.1
POLL_S = 10.0


def read(device: Device) -> dict[str, Any]:
    """Free and total memory and other processes, each None where the device cannot tell."""
    memory = device.memory()
    return {"free_bytes": memory[0] if memory else None,
            "total_bytes": memory[1] if memory else None,
            "other_processes": device.other_processes()}


def busy_reason(state: dict[str, Any], min_free_fraction: float = MIN_FREE_FRACTION
                ) -> str | None:
    """Why the device counts as busy, or None when it is free (or cannot tell)."""
    free, total = state.get("free_bytes"), state.get("total_bytes")
    others = [p for p in state.get("other_processes") or []
              if not total or _megabytes(p) * 2**20 >= OTHER_PROCESS_FRACTION * total]
    if others:
        return f"{len(others)} other process(es) on the device ({others[0]})"
    if free is not None and total and free < min_free_fraction * total:
        return (f"only {free / 2**30:.1f} of {total / 2**30:.1f} GiB free "
                f"(needs {min_free_fraction:.0%})")
    return None


def _megabytes(line: str) -> float:
    """The memory a `process <pid> uses <n> MB GPU memory` line names (inf if it names none:
    an unreadable amount counts as large)."""
    match = re.search(r"uses\s+([0-9.]+)\s*MB", line)
    return float(match.group(1)) if match else float("inf")


def wait_until_free(device: Device, max_wait_s: float, poll_s: float = POLL_S
                    ) -> dict[str, Any]:
    """Poll until the device is free or `max_wait_s` passed; the last reading, how long it
    waited and `busy` (the reason, or None when the device was free)."""
    start = time.monotonic()
    while True:
        state = read(device)
        reason = busy_reason(state)
        waited = time.monotonic() - start
        if reason is None or waited >= max_wait_s:
            return {**state, "waited_s": round(waited, 1), "busy": reason}
        time.sleep(max(0.0, min(poll_s, max_wait_s - waited)))
