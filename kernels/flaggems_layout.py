"""The FlagGems vendor-backend layout, described once for the checker and the kernel harness.

`flagbot check-backend` (hooks/backend/) and `flagbot kernels check` (kernels/loader.py) both
read these names, so a backend one accepts the other loads. Standard library only: the
checker must not import torch, and the device side must not import the checker.

What FlagGems' runtime does with a `_<vendor>` folder (`flag_gems/runtime/backend/`):
- imports `_<vendor>` and reads `vendor_info` and `CUSTOMIZED_UNUSED_OPS` from it;
- imports `_<vendor>.heuristics_config_utils` and reads `HEURISTICS_CONFIGS`;
- loads `_<vendor>/tune_configs.yaml` with `yaml.safe_load` and turns every op's entries into
  `triton.Config`s at import (a broken entry fails `import flag_gems`);
- imports `_<vendor>.ops` and `_<vendor>.fused` when present;
- treats every sub-folder except `ops`, `fused` and `_*` as an architecture candidate; the one
  `ARCH_MAP[key]` names adds its own ops, `tune_configs.yaml` and heuristics, which win.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TUNE_FILE = "tune_configs.yaml"
HEURISTICS_FILE = "heuristics_config_utils.py"
HEURISTICS_NAME = "HEURISTICS_CONFIGS"
UNUSED_OPS_NAME = "CUSTOMIZED_UNUSED_OPS"
ARCH_MAP_NAME = "ARCH_MAP"
REQUIRED_FILES = ("__init__.py", HEURISTICS_FILE, TUNE_FILE, "ops/__init__.py")
NOT_ARCH = ("ops", "fused")  # with names starting with "_", never architecture folders

# tune_configs.yaml: op key -> list of entries. An explicit entry is META (constexpr name ->
# value) plus launch parameters; an entry carrying `gen` is a generator whose param_map names
# the lists (siblings of param_map), inline lists or integers to take every combination of.
META = "META"
GEN = "gen"
PARAM_MAP = "param_map"
# Launch parameters and the values FlagGems gives those an entry leaves out. num_ldmatrixes is
# Hygon's (its Triton fork takes it; FlagGems passes it only there).
LAUNCH_DEFAULTS: dict[str, Any] = {
    "num_warps": 4, "num_stages": 2, "num_ctas": 1, "maxnreg": None, "num_ldmatrixes": 0,
}
LAUNCH_KEYS = tuple(LAUNCH_DEFAULTS)
ENTRY_KEYS = (META, *LAUNCH_KEYS)
# Any other key of an entry or a param_map (a vendor compile option such as Ascend's
# `multibuffer`) is dropped by FlagGems' loader: legal, but it has no effect.


def missing_files(folder: Path) -> list[str]:
    """The REQUIRED_FILES that `folder` lacks."""
    return [rel for rel in REQUIRED_FILES if not (folder / rel).is_file()]


def arch_candidates(folder: Path) -> list[Path]:
    """Sub-folders FlagGems would take as architecture folders (ARCH_MAP picks one of them)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.is_dir() and p.name not in NOT_ARCH and not p.name.startswith(("_", ".")))


def tune_files(folder: Path) -> list[Path]:
    """The vendor's tune file (required, so listed even if missing) and each arch folder's."""
    arch = [p / TUNE_FILE for p in arch_candidates(folder) if (p / TUNE_FILE).is_file()]
    return [folder / TUNE_FILE, *arch]
