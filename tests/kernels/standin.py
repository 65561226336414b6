"""A stand-in device module for CPU tests: torch.cuda's interface as vendor plugins mirror it
(torch.npu, torch.mlu, ...), recording every call; events read the host clock."""

from __future__ import annotations

import time
from typing import Any

import pytest
import torch

from flagbot.kernels.device import Device, default_device

# Stand-in tests run interpreted kernels on CPU tensors: skipped wherever the harness itself
# would pick an accelerator (a GPU, NPU, MLU, ...), not only where torch.cuda sees one.
cpu_only = pytest.mark.skipif(default_device()[0].type != "cpu",
                              reason="stand-in tests run interpreted kernels on CPU tensors")

# Everything the harness could reach for on torch.cuda by name instead of the device's module.
CUDA_ONLY = ("synchronize", "Event", "Stream", "current_stream", "stream", "graph", "CUDAGraph",
             "_sleep", "empty_cache", "mem_get_info", "get_device_properties", "current_device",
             "set_device", "list_gpu_processes", "get_device_name", "is_available")


class StandInEvent:
    def __init__(self, module: StandInModule) -> None:
        self.module, self.at = module, None

    def record(self) -> None:
        self.module.calls.append("Event.record")
        self.at = time.perf_counter()

    def elapsed_time(self, end: StandInEvent) -> float:
        self.module.calls.append("Event.elapsed_time")
        assert self.at is not None and end.at is not None, "elapsed_time of an unrecorded event"
        return (end.at - self.at) * 1000.0


class StandInModule:
    """A device module with events, sync and memory queries, but no graphs and no `_sleep`."""

    def __init__(self, free: int = 60 << 30, total: int = 80 << 30,
                 others: list[tuple[str, int]] | None = None) -> None:
        self.calls: list[str] = []
        self.free, self.total, self.others = free, total, others or []

    def is_available(self) -> bool:
        return True

    def current_device(self) -> int:
        return 0

    def synchronize(self) -> None:
        self.calls.append("synchronize")

    def Event(self, enable_timing: bool = False) -> StandInEvent:  # noqa: N802 - torch's name
        self.calls.append("Event")
        assert enable_timing, "timing events must be created with enable_timing=True"
        return StandInEvent(self)

    def empty_cache(self) -> None:
        self.calls.append("empty_cache")

    def mem_get_info(self, device: Any = None) -> tuple[int, int]:
        self.calls.append("mem_get_info")
        return self.free, self.total

    def list_gpu_processes(self, device: Any = None) -> str:
        self.calls.append("list_gpu_processes")
        lines = ["GPU:0"] + [f"process {pid:>10} uses {mb:12.3f} MB GPU memory"
                             for pid, mb in self.others]
        return "\n".join(lines)

    def get_device_name(self, index: int = 0) -> str:
        return "stand-in accelerator"


class StandInDevice(Device):
    """The stand-in times even though kernels run on Triton's interpreter (CPU tensors)."""

    @property
    def timed(self) -> bool:
        return True


def standin_device(module: StandInModule | None = None) -> StandInDevice:
    return StandInDevice(torch.device("cpu"), module or StandInModule(), "test",
                         flush_bytes=1 << 16)


def forbid_cuda(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every CUDA-only entry point raise; returns the names that were called anyway."""
    called: list[str] = []
    for name in CUDA_ONLY:
        def refuse(*args: Any, _name: str = name, **kwargs: Any) -> Any:
            called.append(_name)
            raise AssertionError(f"torch.cuda.{_name} called: the harness must use the "
                                 "device's own module")
        monkeypatch.setattr(torch.cuda, name, refuse, raising=False)
    return called


@pytest.fixture()
def fast_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Few rounds: interpreted kernels take milliseconds per call."""
    from flagbot.kernels import timing

    monkeypatch.setattr(timing, "MIN_ROUNDS", 2)
    monkeypatch.setattr(timing, "MAX_ROUNDS", 2)
    monkeypatch.setattr(timing, "MIN_LAUNCH_ROUNDS", 2)
    monkeypatch.setattr(timing, "WARMUP_CALLS", 1)
