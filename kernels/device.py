"""The device a check runs on, reached only through its own torch module.

Vendor torch plugins mirror `torch.cuda`'s interface under their own name (`torch.npu`,
`torch.mlu`, `torch.musa`, `torch.xpu`, ...), so events, synchronisation, streams, memory
queries and graphs are taken from `getattr(torch, device.type)`, never from `torch.cuda` by
name: the same harness then times on any chip torch and Triton know. Which device: `--device`,
else the one FlagGems' runtime picked (`flag_gems.device`, when FlagGems is imported), else
torch's accelerator API, else the CPU (Triton's interpreter; nothing is timed there).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from flagbot.kernels.backend_utils import interpreted

# do_bench's cache-clearing buffer size: larger than any current GPU's L2 (H200: 60 MB).
FLUSH_BYTES = 256 * 1024 * 1024


class DeviceUnavailable(Exception):
    """The named device does not exist here (a usage or environment error, exit 2)."""


@dataclass
class Device:
    """A torch device and its module (`torch.cuda`, `torch.npu`, ...; None for the CPU)."""

    torch_device: torch.device
    module: Any | None
    chosen_by: str  # "--device", "FlagGems runtime", "torch.accelerator" or "no accelerator"
    flush_bytes: int = FLUSH_BYTES

    @property
    def type(self) -> str:
        return self.torch_device.type

    @property
    def timed(self) -> bool:
        """Timings mean something: a device with events, and compiled (not interpreted) kernels."""
        return self.module is not None and not interpreted()

    def synchronize(self) -> None:
        if self.module is not None:
            self.module.synchronize()

    def event(self) -> Any:
        assert self.module is not None
        return self.module.Event(enable_timing=True)

    def graph_api(self) -> tuple[Any, Any] | None:
        """(graph class, capture context) where the device module offers graphs, else None."""
        if self.module is None:
            return None
        cls = (getattr(self.module, "CUDAGraph", None)
               or getattr(self.module, f"{self.type.upper()}Graph", None))
        capture = getattr(self.module, "graph", None)
        return (cls, capture) if cls is not None and capture is not None else None

    def stall(self, cycles: int) -> bool:
        """Keep the device busy for `cycles` where the module can (torch.cuda's `_sleep`)."""
        sleep = getattr(self.module, "_sleep", None)
        if sleep is None:
            return False
        sleep(cycles)
        return True

    @contextmanager
    def side_stream(self) -> Iterator[None]:
        """Run the body on a fresh stream that waits for the current one (graph warm-up)."""
        assert self.module is not None
        stream = self.module.Stream()
        stream.wait_stream(self.module.current_stream())
        with self.module.stream(stream):
            yield
        self.module.current_stream().wait_stream(stream)

    def flush_buffer(self) -> torch.Tensor:
        """The buffer zeroed before each timed call so that every call starts with a cold L2."""
        return torch.empty(self.flush_bytes // 4, dtype=torch.int32, device=self.torch_device)

    def empty_cache(self) -> None:
        release = getattr(self.module, "empty_cache", None)
        if release is not None:
            release()

    def memory(self) -> tuple[int, int] | None:
        """(free, total) bytes on the device, where the module reports them."""
        query = getattr(self.module, "mem_get_info", None)
        if query is None:
            return None
        free, total = query(self.torch_device)
        return int(free), int(total)

    def other_processes(self) -> list[str] | None:
        """Other processes holding memory on the device, where the module lists them."""
        listing = getattr(self.module, "list_gpu_processes", None)
        if listing is None:
            return None
        try:
            text = str(listing(self.torch_device))
        except Exception:  # the listing needs a vendor management library; absent is unknown
            return None
        if "pynvml" in text or "not found" in text:  # no management library: unknown
            return None
        mine = str(os.getpid())
        found = [line.strip() for line in text.splitlines() if line.strip().startswith("process")]
        return [p for p in found if p.split()[1:2] != [mine]]


def default_device() -> tuple[torch.device, str]:
    """What FlagGems' runtime picked (when imported), else torch's accelerator, else the CPU."""
    gems = sys.modules.get("flag_gems")
    name = getattr(gems, "device", None)
    if isinstance(name, str) and name:
        return torch.device(name), "FlagGems runtime"
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and accelerator.is_available():
        found = accelerator.current_accelerator()
        if found is not None:
            return torch.device(found.type), "torch.accelerator"
    elif accelerator is None and torch.cuda.is_available():  # torch before 2.6
        return torch.device("cuda"), "torch.cuda"
    return torch.device("cpu"), "no accelerator"


def resolve(name: str | None = None) -> Device:
    """The Device for `--device NAME` (cuda, npu:1, ...) or the default one."""
    if name:
        try:
            dev, how = torch.device(name), "--device"
        except (RuntimeError, ValueError) as exc:
            raise DeviceUnavailable(f"--device {name}: not a torch device ({exc})") from None
    else:
        dev, how = default_device()
    if dev.type == "cpu":
        return Device(dev, None, how)
    module = getattr(torch, dev.type, None)
    available = getattr(module, "is_available", None)
    if module is None or available is None or not available():
        raise DeviceUnavailable(f"device {dev.type!r} is not available here (torch has no "
                                f"working torch.{dev.type}: is the vendor's torch plugin "
                                "installed and the device visible?); pass --device cpu to run "
                                "accuracy on Triton's CPU interpreter")
    if dev.index is None:
        dev = torch.device(dev.type, int(module.current_device()))
    else:
        module.set_device(dev.index)
    return Device(dev, module, how)


def _nvidia_smi(index: int) -> dict[str, str]:
    # Read-only query: clocks are recorded as found, never set (shared runners must not be
    # reconfigured, and a locked clock would not be what users' jobs see).
    fields = ["driver_version", "clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem",
              "temperature.gpu", "power.draw", "power.limit"]
    if shutil.which("nvidia-smi") is None:
        return {}
    try:
        out = subprocess.run(["nvidia-smi", f"--id={index}", f"--query-gpu={','.join(fields)}",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    values = [v.strip() for v in out.split(",")]
    return dict(zip(fields, values, strict=True)) if len(values) == len(fields) else {}


def metadata(device: Device) -> dict[str, Any] | None:
    """Name, type, capability, units, memory, L2, runtime versions, clocks; None on the CPU."""
    module = device.module
    if module is None:
        return None
    index = device.torch_device.index or 0
    props = module.get_device_properties(index) if hasattr(module, "get_device_properties") \
        else None
    name = getattr(props, "name", None)
    if name is None and hasattr(module, "get_device_name"):
        name = module.get_device_name(index)
    major, minor = getattr(props, "major", None), getattr(props, "minor", None)
    return {
        "name": str(name or device.type),
        "type": device.type,
        "index": index,
        "chosen_by": device.chosen_by,
        "capability": f"{major}.{minor}" if major is not None else None,
        "multiprocessors": getattr(props, "multi_processor_count", None),
        "memory_bytes": getattr(props, "total_memory", None),
        "l2_cache_bytes": getattr(props, "L2_cache_size", None),
        "cuda": torch.version.cuda if device.type == "cuda" else None,
        "graphs": device.graph_api() is not None,
        "nvidia_smi": _nvidia_smi(index) if device.type == "cuda" else {},
    }
