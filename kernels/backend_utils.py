"""What a backend in the FlagGems layout imports as `backend_utils` (the harness provides it).

FlagGems puts `backend_utils` on the path of the vendor folders it loads; backends written for
it say `from backend_utils import VendorDescriptor` (older trees: `Autograd, VendorInfoBase`).
The loader (kernels/loader.py) registers this module under that name. Beyond FlagGems' names
it offers `get_tuned_config`, which reads a backend's tune_configs.yaml into triton.Config
lists the way FlagGems' config loader does (kernels/tune_configs.py).
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import triton

from flagbot.kernels.tune_configs import (
    TuneConfigError,
    TuneProblem,
    expand,
    load_tune_file,
)

__all__ = ["Autograd", "TuneConfigError", "VendorDescriptor", "VendorInfoBase", "expand",
           "get_tuned_config", "interpreted", "load_tune_file"]


class Autograd(Enum):
    """Third element of get_specific_ops() tuples: register with autograd or not."""

    enable = True
    disable = False


@dataclass
class VendorInfoBase:
    """A backend's descriptor in the documented form (`vendor_info` in its __init__.py)."""

    vendor_name: str
    device_name: str
    device_query_cmd: str
    dispatch_key: str | None = None
    triton_extra_name: str | None = None
    forward_only: bool = False  # existed in FlagGems from 2025-04 to 2025-07


@dataclass
class VendorDescriptor:
    """A backend's descriptor in the current FlagGems form (`vendor_info` in its __init__.py)."""

    vendor_name: str
    device_name: str
    device_query_cmd: str
    dispatch_key: str | None = None
    triton_extra_name: str | None = None
    trademark: str | None = None
    fp64_enabled: bool = True
    bf16_enabled: bool = True
    int64_enabled: bool = True
    tle_enabled: bool = False


def interpreted() -> bool:
    """True under TRITON_INTERPRET=1, where autotuning cannot time anything."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _launch_kwargs() -> frozenset[str]:
    """The launch parameters this Triton's Config accepts (num_ldmatrixes: Hygon's fork only)."""
    return frozenset(inspect.signature(triton.Config).parameters)


def get_tuned_config(op: str, tune_file: str | Path) -> list[triton.Config]:
    """triton.Config list for `op` from `tune_file`; only the first under the interpreter.

    The CPU interpreter has no driver to time candidates with, so a multi-config autotune
    would fail at its first launch; CI therefore runs the first entry.
    """
    configs = load_tune_file(Path(tune_file))
    if op not in configs:
        raise TuneConfigError([(str(tune_file), TuneProblem(
            "tune-schema", 0, f"no entry for {op!r}; add one or drop the autotune"))])
    accepted = _launch_kwargs()
    result = [triton.Config(c["META"], **{k: v for k, v in c.items()
                                          if k != "META" and k in accepted})
              for c in configs[op]]
    return result[:1] if interpreted() else result
