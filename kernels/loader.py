"""Load a backend folder by path (FlagGems layout) and pair each of its ops with a spec.

Two forms are accepted: `ops.get_specific_ops()` returning
`(aten_name, function[, Autograd.x])` tuples, or functions exported by `ops/__init__.py` whose
names are generic op names (`softmax`, or the generic function's name such as `sum_dim`).
Before any of its code runs, the folder must hold FlagGems' required files and tune files
that FlagGems can load (kernels/flaggems_layout.py, kernels/tune_configs.py): the same
conditions `flagbot check-backend` reports as errors.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import itertools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagbot.kernels import backend_utils
from flagbot.kernels.flaggems_layout import missing_files
from flagbot.kernels.registry import OPS, lookup
from flagbot.kernels.spec import OpSpec
from flagbot.kernels.tune_configs import TuneConfigError, load_backend_tunes

_COUNTER = itertools.count()


class BackendMissing(Exception):
    """The backend path is not a folder with an __init__.py (a usage error, exit 2)."""


class BackendLoadError(Exception):
    """The backend's own code failed to import or to list its ops."""


@dataclass
class BackendOp:
    """One op a backend provides: its spec (None if unknown) and kind (override/new/unknown)."""

    name: str
    func: Callable[..., Any] | None
    spec: OpSpec | None
    aten: str | None = None
    autograd: str | None = None
    error: str | None = None

    @property
    def kind(self) -> str:
        """`override` (the library has a kernel), `new` (spec without kernel) or `unknown`."""
        if self.spec is None:
            return "unknown"
        return "override" if self.spec.generic is not None else "new"


@dataclass
class Backend:
    """A loaded backend: descriptor fields, the form it used, its ops and unused-op list."""

    path: Path
    form: str
    vendor_name: str | None = None
    device_name: str | None = None
    ops: list[BackendOp] = field(default_factory=list)
    unused_ops: list[str] = field(default_factory=list)
    # tune file (relative path) -> op -> expanded configs, as FlagGems would build them
    tune_configs: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)


def _function_names() -> dict[str, OpSpec]:
    names = {name: spec for name, spec in OPS.items()}
    for spec in OPS.values():
        if spec.generic is not None:
            names.setdefault(spec.generic.__name__, spec)
    return names


def read_layout(path: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Check the folder's required files and load its tune files, before importing anything."""
    if not path.is_dir() or not (path / "__init__.py").is_file():
        raise BackendMissing(f"{path}: not a backend folder (no __init__.py); pass the "
                             "_<vendor> folder, e.g. --backend backends/_nvidia")
    missing = missing_files(path)
    if missing:
        raise BackendLoadError(f"{path}: missing {', '.join(missing)}; FlagGems needs them in "
                               "every vendor folder (copy them from backends/_template)")
    try:
        return load_backend_tunes(path)
    except TuneConfigError as exc:
        raise BackendLoadError(f"{path}: tune configs FlagGems cannot load: {exc}") from exc


def _import_package(path: Path) -> Any:
    init = path / "__init__.py"
    # FlagGems puts backend_utils on the path of the vendor folders; so do we.
    sys.modules.setdefault("backend_utils", backend_utils)
    slug = re.sub(r"\W", "_", path.name)
    name = f"flagbot_backend_{next(_COUNTER)}_{slug}"
    spec = importlib.util.spec_from_file_location(name, init,
                                                  submodule_search_locations=[str(path)])
    if spec is None or spec.loader is None:
        raise BackendLoadError(f"{init}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        ops = importlib.import_module(f"{name}.ops")
    except Exception as exc:
        raise BackendLoadError(f"{path}: importing the backend failed: "
                               f"{type(exc).__name__}: {exc}") from exc
    return module, ops


def _specific_ops(ops: Any) -> list[BackendOp]:
    result: list[BackendOp] = []
    seen: set[str] = set()
    for entry in ops.get_specific_ops():
        aten, func = str(entry[0]), entry[1]
        autograd = getattr(entry[2], "name", str(entry[2])) if len(entry) > 2 else None
        spec = lookup(aten)
        op = BackendOp(name=spec.name if spec else aten, func=func, spec=spec, aten=aten,
                       autograd=autograd)
        if spec is None:
            op.error = (f"unknown op {aten!r}: kernels/registry.py has no spec for it; add "
                        "kernels/ops/<op>.py and one line in OPS to check it")
        elif spec.name in seen:
            op.error = f"{aten!r}: a second entry for op {spec.name!r}"
        seen.add(op.name)
        result.append(op)
    return result


def _exported_functions(ops: Any) -> list[BackendOp]:
    known = _function_names()
    exported = getattr(ops, "__all__", None)
    members = dict(inspect.getmembers(ops, inspect.isfunction))
    names = list(exported) if exported is not None else sorted(n for n in members if n in known)
    result: list[BackendOp] = []
    for name in names:
        spec = known.get(name)
        op = BackendOp(name=spec.name if spec else name, func=members.get(name), spec=spec)
        if spec is None:
            op.error = (f"unknown op {name!r}: exported by ops/__init__.py but not a generic op "
                        f"name ({', '.join(OPS)})")
        elif op.func is None:
            op.error = f"{name!r} is listed in __all__ but is not a function"
        result.append(op)
    return result


def load_backend(path: str | Path) -> Backend:
    """Import the backend at `path` and list its ops; raises BackendMissing/BackendLoadError."""
    root = Path(path).resolve()
    tunes = read_layout(root)
    package, ops = _import_package(root)
    info = getattr(package, "vendor_info", None)
    form = "specific_ops" if hasattr(ops, "get_specific_ops") else "exported_functions"
    backend = Backend(path=root, form=form, vendor_name=getattr(info, "vendor_name", None),
                      device_name=getattr(info, "device_name", None), tune_configs=tunes)
    try:
        backend.ops = _specific_ops(ops) if form == "specific_ops" else _exported_functions(ops)
        unused = ops.get_unused_ops() if hasattr(ops, "get_unused_ops") else \
            getattr(package, "CUSTOMIZED_UNUSED_OPS", ())
        backend.unused_ops = [str(n) for n in unused]
    except Exception as exc:
        raise BackendLoadError(f"{root}: listing the backend's ops failed: "
                               f"{type(exc).__name__}: {exc}") from exc
    return backend
