"""Import a backend folder's modules: its package, `ops`, `fused` and the architecture folder.

Two ways, chosen by where the folder is:
- inside a FlagGems tree (`flag_gems/runtime/backend/_<vendor>`, or any folder when a FlagGems
  tree is given): under the names FlagGems itself gives them, `_<vendor>`, `_<vendor>.ops` and
  the architecture folder as a top-level `<arch>`, with FlagGems' `backend_utils`. FlagGems'
  code generators (`pointwise_dynamic`) re-import a kernel's module by its `__module__`, so
  any other name breaks them. Modules FlagGems already imported are reused as they are.
- anywhere else: under a unique name per load, so two backends (or one loaded twice) never
  share modules, with the harness's `backend_utils`.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from flagbot.kernels import backend_utils
from flagbot.kernels.flaggems_layout import ARCH_MAP_NAME, arch_candidates

_COUNTER = itertools.count()


class ImportProblem(Exception):
    """The backend's own code raised while importing (the message names module and error)."""


class BadArch(ImportProblem):
    """`--arch` names no entry of the backend's ARCH_MAP (a usage error)."""


@dataclass
class Modules:
    """What was imported: the package, `ops` (required), `fused` and the arch's `ops`."""

    package: ModuleType
    ops: ModuleType
    fused: ModuleType | None
    arch: str | None
    arch_ops: ModuleType | None
    arch_note: str | None
    names: str  # "flaggems" or "unique": how the modules were named


def exec_module_at(name: str, path: Path, *, package: bool = False) -> ModuleType:
    """Import the file (or package folder) at `path` as module `name`; nothing left on failure."""
    init = path / "__init__.py" if package else path
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(path)] if package else None)
    if spec is None or spec.loader is None:
        raise ImportProblem(f"{init}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:  # the module exists but something it imports does not
            raise
        return None


@contextmanager
def _path_first(folder: Path) -> Iterator[None]:
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        try:
            sys.path.remove(str(folder))
        except ValueError:
            pass


@contextmanager
def _backend_utils(flaggems_folder: Path | None) -> Iterator[None]:
    """`backend_utils` as the backend's code will import it: FlagGems' own file in a FlagGems
    tree, the harness's module elsewhere. The harness's is what stays registered after."""
    before = sys.modules.get("backend_utils")
    if flaggems_folder is not None and (flaggems_folder / "backend_utils.py").is_file():
        sys.modules.pop("backend_utils", None)
        try:
            with _path_first(flaggems_folder):
                yield
        finally:
            sys.modules["backend_utils"] = before or backend_utils
        return
    sys.modules.setdefault("backend_utils", backend_utils)
    yield


def _same_file(module: ModuleType | None, folder: Path) -> bool:
    file = getattr(module, "__file__", None)
    return file is not None and Path(file).resolve().parent == folder.resolve()


def arch_key(module: ModuleType, forced: str | None) -> tuple[str | None, str | None]:
    """(architecture folder FlagGems would pick on this device, note when none is picked).

    `forced` (`--arch`) is an ARCH_MAP key or a folder name. Otherwise FlagGems' rule: the
    `ARCH` environment variable (first character of its last `_` part: `sm_90` -> `9`), else
    the device's compute capability major.
    """
    arch_map = getattr(module, ARCH_MAP_NAME, None)
    if not isinstance(arch_map, dict) or not arch_map:
        return None, None
    if forced:
        if forced in arch_map.values():
            return forced, None
        if forced in arch_map:
            return str(arch_map[forced]), None
        raise BadArch(f"--arch {forced}: not in the backend's ARCH_MAP "
                            f"({', '.join(f'{k} -> {v}' for k, v in arch_map.items())})")
    env = os.environ.get("ARCH", "")
    key = env.split("_")[-1][:1] if env else _capability_major(module)
    if key is None:
        return None, ("no device to read the compute capability from: no architecture folder "
                      f"selected (pass --arch, one of {', '.join(map(str, arch_map.values()))})")
    if key not in arch_map:
        return None, f"ARCH_MAP has no entry for architecture {key!r}: vendor ops only"
    return str(arch_map[key]), None


def _capability_major(module: ModuleType) -> str | None:
    import torch

    device = getattr(getattr(module, "vendor_info", None), "device_name", "cuda") or "cuda"
    backend = getattr(torch, str(device), None)
    try:
        if backend is None or not backend.is_available():
            return None
        return str(backend.get_device_properties(0).major)
    except Exception:  # a vendor device module without the CUDA-style queries
        return None


def _arch_folder(folder: Path, arch: str | None) -> Path | None:
    if arch is None:
        return None
    found = [p for p in arch_candidates(folder) if p.name == arch]
    if not found:
        raise ImportProblem(f"{folder}: ARCH_MAP names {arch!r}, but there is no such folder")
    return found[0]


def import_flaggems_style(folder: Path, forced_arch: str | None) -> Modules:
    """Import under FlagGems' own module names (reusing what FlagGems already imported)."""
    name = folder.name
    existing = sys.modules.get(name)
    if existing is not None and not _same_file(existing, folder):
        raise ImportProblem(f"another folder is already imported as {name!r} "
                            f"({getattr(existing, '__file__', '?')}); check one per process")
    with _backend_utils(folder.parent), _path_first(folder.parent):
        package = existing or importlib.import_module(name)
        ops = importlib.import_module(f"{name}.ops")
        fused = _optional(f"{name}.fused")
    arch, note = arch_key(package, forced_arch)
    arch_dir = _arch_folder(folder, arch)
    arch_ops = None
    if arch_dir is not None:
        loaded = sys.modules.get(arch_dir.name)
        if loaded is not None and not _same_file(loaded, arch_dir):
            raise ImportProblem(f"another folder is already imported as {arch_dir.name!r}")
        with _backend_utils(folder.parent), _path_first(folder):
            importlib.import_module(arch_dir.name)
            arch_ops = _optional(f"{arch_dir.name}.ops")
    return Modules(package, ops, fused, arch, arch_ops, note, "flaggems")


def import_unique(folder: Path, forced_arch: str | None) -> Modules:
    """Import under a fresh package name, arch folders as its sub-packages."""
    slug = re.sub(r"\W", "_", folder.name)
    name = f"flagbot_backend_{next(_COUNTER)}_{slug}"
    with _backend_utils(None):
        package = exec_module_at(name, folder, package=True)
        ops = importlib.import_module(f"{name}.ops")
        fused = _optional(f"{name}.fused")
        arch, note = arch_key(package, forced_arch)
        arch_dir = _arch_folder(folder, arch)
        arch_ops = None
        if arch_dir is not None:
            importlib.import_module(f"{name}.{arch_dir.name}")
            arch_ops = _optional(f"{name}.{arch_dir.name}.ops")
    return Modules(package, ops, fused, arch, arch_ops, note, "unique")


def import_backend(folder: Path, flaggems: Path | None, forced_arch: str | None) -> Modules:
    """The backend's modules; `flaggems` is the FlagGems package it belongs to (or None).

    With a FlagGems package, that package's parent is on `sys.path` while the backend imports
    (its kernels import `flag_gems.utils` and the like) unless `flag_gems` is already imported.
    """
    if flaggems is None:
        return import_unique(folder, forced_arch)
    in_tree = folder.parent.parent.parent == flaggems
    how = import_flaggems_style if in_tree else import_unique
    if "flag_gems" in sys.modules:
        return how(folder, forced_arch)
    # Once imported, `flag_gems` and its submodules resolve through sys.modules: the path
    # entry is needed only while the backend's modules import.
    with _path_first(flaggems.parent):
        return how(folder, forced_arch)
