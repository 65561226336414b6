"""`ARCH_MAP` and arch sub-folders (`_nvidia/hopper/`): mapped folders exist, none unreached.

FlagGems lists every sub-directory except `ops`, `fused` and `_*` as a candidate arch, then picks
the one ARCH_MAP[key] names; arch ops replace vendor ops, arch tune/heuristics come first.
Arch tune files are checked with the vendor's (hooks/backend/check.py), reached or not.
"""

from __future__ import annotations

import ast
from pathlib import Path

from flagbot.hooks.backend.heuristics import check_heuristics
from flagbot.hooks.backend.ops import check_package
from flagbot.hooks.backend.pysrc import Module, assigned_value
from flagbot.hooks.backend.vendor import Vendor
from flagbot.kernels.flaggems_layout import (
    ARCH_MAP_NAME,
    HEURISTICS_FILE,
    NOT_ARCH,
    TUNE_FILE,
    arch_candidates,
)
from flagbot.kernels.flaggems_layout import (
    HEURISTICS_NAME as HEURISTICS,
)

# What makes a sub-folder an arch folder rather than a helper package (utils/, fla/, int8/).
ARCH_MARKERS = ("ops", TUNE_FILE, HEURISTICS_FILE)


def read_arch_map(v: Vendor, init: Module) -> dict[str, tuple[str, int]] | None:
    """ARCH_MAP as key -> (folder, line); None if absent or unreadable (reported)."""
    binding = init.bindings.get(ARCH_MAP_NAME)
    if binding is None:
        return None
    path = v.folder / "__init__.py"
    node = assigned_value(init, ARCH_MAP_NAME)
    if not isinstance(node, ast.Dict):
        v.add("arch-map-folder", path, binding.line, "ARCH_MAP must be a literal dict of "
              "arch key -> sub-folder name")
        return None
    out: dict[str, tuple[str, int]] = {}
    for key, value in zip(node.keys, node.values, strict=False):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)
                and isinstance(value, ast.Constant) and isinstance(value.value, str)):
            v.add("arch-map-folder", path, value.lineno, "ARCH_MAP entries must be string "
                  "literals (\"9\": \"hopper\")")
            continue
        out[key.value] = (value.value, value.lineno)
    return out


def arch_like_folders(folder: Path) -> list[Path]:
    """Sub-folders FlagGems would treat as arches and that carry arch content."""
    return [child for child in arch_candidates(folder)
            if any((child / marker).exists() for marker in ARCH_MARKERS)]


def check_arch(v: Vendor, init: Module) -> None:
    """Check ARCH_MAP and each reached arch folder's ops and heuristics."""
    arch_map = read_arch_map(v, init) or {}
    path = v.folder / "__init__.py"
    reached: set[str] = set()
    for key, (name, line) in arch_map.items():
        target = v.folder / name
        if name in NOT_ARCH or name.startswith("_") or not target.is_dir():
            v.add("arch-map-folder", path, line, f"ARCH_MAP[{key!r}] = {name!r} is not an arch "
                  f"sub-folder of {v.rel(v.folder)} (FlagGems skips ops, fused and _*)")
            continue
        reached.add(name)
    for arch in arch_like_folders(v.folder):
        if arch.name not in reached:
            v.add("arch-folder-unreached", arch, 0, f"{arch.name}/ looks like an arch folder but "
                  "no ARCH_MAP key selects it, so its ops and configs are never used")
            continue
        if (arch / "ops" / "__init__.py").is_file():
            v.arch_implemented[arch.name] = check_package(v, arch / "ops")
            v.implemented |= v.arch_implemented[arch.name]
        if (arch / HEURISTICS_FILE).is_file():
            # FlagGems takes `getattr(<arch package>, HEURISTICS_CONFIGS, None)` and falls back
            # to the vendor's dict: a file the package does not re-export is never read, so
            # only the missing export is reported, not the file's contents.
            arch_init = v.module(arch / "__init__.py")
            if arch_init is not None and (HEURISTICS in arch_init.bindings
                                          or "*" in arch_init.bindings):
                check_heuristics(v, arch / HEURISTICS_FILE)
            elif arch_init is not None:
                v.add("arch-heuristics-export", arch / "__init__.py", 0, f"{arch.name}/__init__.py "
                      f"does not re-export {HEURISTICS}, so FlagGems falls back to the vendor's "
                      f"and never reads {arch.name}/{HEURISTICS_FILE}; add `from "
                      f".heuristics_config_utils import {HEURISTICS}` to use it")
