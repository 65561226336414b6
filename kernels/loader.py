"""Load a backend folder by path, the way FlagGems does, and pair each of its ops with a spec.

What FlagGems takes from a `_<vendor>` folder, and so what is checked:
- the functions of `ops/` and `fused/` (every function the module holds, whatever `__all__`
  says; `__all__ = ["*"]` and imports behind a Triton version check included), then those of
  the architecture folder `ARCH_MAP` picks for this device (`--arch` forces one), which win
  over a vendor function of the same name;
- each function by its Python name: the aten names FlagGems' operator table (`_FULL_CONFIG`)
  gives that name are the operators it replaces (kernels/flaggems_names.py);
- minus the vendor's unused-op list (`CUSTOMIZED_UNUSED_OPS`): those are reported disabled.
The older form, `ops.get_specific_ops()` returning `(aten_name, function[, Autograd.x])`
tuples, names the aten operator directly. Before any of its code runs, the folder must hold
FlagGems' required files and loadable tune files (kernels/flaggems_layout.py,
kernels/tune_configs.py): the conditions `flagbot check-backend` reports as errors.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flagbot.kernels.backend_modules import BadArch, ImportProblem, Modules, import_backend
from flagbot.kernels.baseline import FLAGGEMS_OPS
from flagbot.kernels.flaggems_layout import missing_files
from flagbot.kernels.flaggems_names import function_table, package_from_option, package_of
from flagbot.kernels.registry import OPS, lookup
from flagbot.kernels.spec import OpSpec
from flagbot.kernels.tune_configs import TuneConfigError, load_backend_tunes

DISABLED, NOT_CHECKED = "disabled", "not checked"


class BackendMissing(Exception):
    """The backend path is not a folder with an __init__.py (a usage error, exit 2)."""


class BackendLoadError(Exception):
    """The backend's own code failed to import or to list its ops."""


@dataclass
class BackendOp:
    """One op a backend provides: its spec (None if unknown), how it is called, and why it is
    listed without being gated (`skip_status` disabled / not checked), if so."""

    name: str
    func: Callable[..., Any] | None
    spec: OpSpec | None
    aten: str | None = None
    autograd: str | None = None
    error: str | None = None
    function: str | None = None  # the backend's Python name for it
    source: str | None = None  # ops, fused, <arch>/ops or get_specific_ops
    skip_status: str | None = None
    skip: str | None = None
    raw: Callable[..., Any] | None = None  # the backend's own function (func may wrap it)

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
    arch: str | None = None
    arch_note: str | None = None
    flaggems: Path | None = None  # the FlagGems package the backend belongs to or imports
    operator_table: str | None = None  # where function names were mapped to aten names
    # functions FlagGems would take but registers for no aten operator
    not_operators: list[dict[str, str]] = field(default_factory=list)


def _generic_names() -> dict[str, OpSpec]:
    names = {name: spec for name, spec in OPS.items()}
    for spec in OPS.values():
        if spec.generic is not None:
            names.setdefault(spec.generic.__name__, spec)
    return names


def _aten_specs() -> dict[str, tuple[OpSpec, Callable[[Any], Any]]]:
    """aten name -> (spec, wrapper to the spec's calling convention)."""
    table: dict[str, tuple[OpSpec, Callable[[Any], Any]]] = {}
    for spec in OPS.values():
        for aten in spec.aten:
            table[aten] = (spec, lambda fn: fn)
    for name, (aten, adapt) in FLAGGEMS_OPS.items():
        if name in OPS:
            table.setdefault(aten, (OPS[name], adapt))
    return table


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


def _specific_ops(ops: Any) -> list[BackendOp]:
    result: list[BackendOp] = []
    seen: set[str] = set()
    for entry in ops.get_specific_ops():
        aten, func = str(entry[0]), entry[1]
        autograd = getattr(entry[2], "name", str(entry[2])) if len(entry) > 2 else None
        spec = lookup(aten)
        op = BackendOp(name=spec.name if spec else aten, func=func, spec=spec, aten=aten,
                       autograd=autograd, function=getattr(func, "__name__", None),
                       source="get_specific_ops", raw=func)
        if spec is None:
            op.error = (f"unknown op {aten!r}: kernels/registry.py has no spec for it; add "
                        "kernels/ops/<op>.py and one line in OPS to check it")
        elif spec.name in seen:
            op.error = f"{aten!r}: a second entry for op {spec.name!r}"
        seen.add(op.name)
        result.append(op)
    return result


def _functions(modules: Modules) -> dict[str, tuple[Callable[..., Any], str]]:
    """name -> (function, source) as FlagGems collects them: vendor ops, fused, then the arch's
    ops, a later one replacing an earlier one of the same name."""
    sources = [("ops", modules.ops), ("fused", modules.fused),
               (f"{modules.arch}/ops", modules.arch_ops)]
    found: dict[str, tuple[Callable[..., Any], str]] = {}
    for source, module in sources:
        if module is None or hasattr(module, "get_specific_ops"):
            continue
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            found[name] = (fn, source)
    return found


def _listed_but_absent(modules: Modules) -> list[BackendOp]:
    result = []
    for source, module in (("ops", modules.ops), ("fused", modules.fused),
                           (f"{modules.arch}/ops", modules.arch_ops)):
        listed = getattr(module, "__all__", None) if module is not None else None
        for name in listed or ():
            if name != "*" and not inspect.isfunction(getattr(module, name, None)):
                result.append(BackendOp(name=name, func=None, spec=None, function=name,
                                        source=source, error=f"{name!r} is listed in "
                                        f"{source}/__init__.py __all__ but is not a function"))
    return result


def _classify(name: str, fn: Callable[..., Any], source: str,
              table: dict[str, tuple[str, ...]], backend: Backend) -> BackendOp | None:
    atens = table.get(name, ())
    if not atens:
        spec = _generic_names().get(name)
        if spec is None:
            backend.not_operators.append({
                "function": name, "source": source,
                "reason": "FlagGems' operator table has no entry for this name: it is "
                          "reachable only as flag_gems." + name + ", never as an aten operator"})
            return None
        return BackendOp(name=spec.name, func=fn, spec=spec, function=name, source=source, raw=fn)
    specs = _aten_specs()
    for aten in atens:
        if aten in specs:
            spec, adapt = specs[aten]
            return BackendOp(name=spec.name, func=adapt(fn), spec=spec, aten=aten,
                             function=name, source=source, raw=fn)
    return BackendOp(name=name, func=fn, spec=None, aten=atens[0], function=name, source=source,
                     raw=fn, skip_status=NOT_CHECKED,
                     skip=f"not checked (no input maker): no spec for {', '.join(atens)} in "
                          "kernels/registry.py yet")


def _mark_disabled(op: BackendOp, unused: list[str]) -> None:
    names = {op.function, getattr(op.raw, "__name__", None), op.aten,
             (op.aten or "").split(".")[0]}
    hit = sorted(n for n in names if n and n in unused)
    if hit and not op.error:
        op.skip_status, op.skip = DISABLED, (
            f"disabled: the backend lists {hit[0]!r} among its unused ops "
            "(CUSTOMIZED_UNUSED_OPS), so FlagGems does not register it")


def _mark_unregistered(backend: Backend) -> None:
    """With FlagGems imported from the backend's own tree and running for this very vendor
    (its `vendor_name`, detected on this device), an op whose function FlagGems' operator table
    does not hold is not used here (FlagGems versions differ on whether a vendor folder's ops
    apply to NVIDIA, for one): reported, never gated."""
    module = sys.modules.get("flag_gems")
    table = getattr(module, "_FULL_CONFIG", None)
    file = getattr(module, "__file__", None)
    if table is None or file is None or backend.flaggems is None or \
            Path(file).resolve().parent != backend.flaggems.resolve() or \
            getattr(module, "vendor_name", None) != backend.vendor_name:
        return
    held = {id(item[1]) for item in table if len(item) > 1}
    version = getattr(module, "__version__", "?")
    for op in backend.ops:
        if op.raw is not None and not op.skip_status and not op.error and id(op.raw) not in held:
            op.skip_status, op.skip = DISABLED, (
                f"disabled: FlagGems {version} does not register this function on this device "
                f"(its operator table keeps its own {op.function})")


def _list_ops(backend: Backend, modules: Modules) -> None:
    table, backend.operator_table = function_table(backend.flaggems)
    ops: list[BackendOp] = []
    if hasattr(modules.ops, "get_specific_ops"):
        ops += _specific_ops(modules.ops)
    for name, (fn, source) in _functions(modules).items():
        op = _classify(name, fn, source, table, backend)
        if op is not None:
            ops.append(op)
    ops += _listed_but_absent(modules)
    unused = (modules.ops.get_unused_ops() if hasattr(modules.ops, "get_unused_ops") else
              getattr(modules.package, "CUSTOMIZED_UNUSED_OPS", ()))
    backend.unused_ops = [str(n) for n in unused]
    for op in ops:
        _mark_disabled(op, backend.unused_ops)
    backend.ops = ops
    _mark_unregistered(backend)


def load_backend(path: str | Path, *, arch: str | None = None,
                 flaggems: str | Path | None = None) -> Backend:
    """Import the backend at `path` and list its ops; raises BackendMissing/BackendLoadError.

    `arch` forces an architecture folder (an ARCH_MAP key or folder name); `flaggems` is a
    FlagGems checkout or package whose `flag_gems` the backend's code imports (default: the
    tree the folder sits in, if any).
    """
    root = Path(path).resolve()
    tunes = read_layout(root)
    package = package_of(root)
    if flaggems is not None:
        given = package_from_option(Path(flaggems).resolve())
        if given is None:
            raise BackendMissing(f"--flaggems {flaggems}: no flag_gems package there (pass a "
                                 "FlagGems checkout, its src/flag_gems, or site-packages)")
        package = package or given
    try:
        modules = import_backend(root, package, arch)
    except BadArch as exc:
        raise BackendMissing(str(exc)) from exc
    except ImportProblem as exc:
        raise BackendLoadError(f"{root}: {exc}") from exc
    except Exception as exc:
        raise BackendLoadError(f"{root}: importing the backend failed: "
                               f"{type(exc).__name__}: {exc}") from exc
    info = getattr(modules.package, "vendor_info", None)
    form = "specific_ops" if hasattr(modules.ops, "get_specific_ops") else "exported_functions"
    backend = Backend(path=root, form=form, vendor_name=getattr(info, "vendor_name", None),
                      device_name=getattr(info, "device_name", None), tune_configs=tunes,
                      arch=modules.arch, arch_note=modules.arch_note, flaggems=package)
    try:
        _list_ops(backend, modules)
    except Exception as exc:
        raise BackendLoadError(f"{root}: listing the backend's ops failed: "
                               f"{type(exc).__name__}: {exc}") from exc
    return backend
