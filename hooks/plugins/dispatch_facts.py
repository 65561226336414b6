"""What a dispatch plugin (vllm-plugin-FL, sglang-plugin-FL) registers, read from its sources.

A plugin package `<pkg>/` keeps implementations in `dispatch/backends/<backend>/register_ops.py`
as `OpImpl(op_name=..., impl_id=..., kind=BackendImplKind.X, vendor=...)` calls and one routing
policy per platform in `dispatch/config/<platform>.yaml`. The two plugins differ in how a
platform is found and which vendor backends it loads; both are read from the package:

- vllm-plugin-FL (`VENDOR_DEVICE_MAP` in `<pkg>/utils.py`): the platform is the vendor name,
  a map key; only one vendor folder is registered, the first of (vendor name, device_name,
  device_type) that exists under `dispatch/backends/vendor/`.
- sglang-plugin-FL (no map): the platform is one of the strings `get_platform_name()` in
  `dispatch/config/utils.py` returns, and every vendor folder is registered (each impl decides
  at run time whether it is available).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.hooks.plugins.sources import (
    Sources,
    argument,
    assigned_dict,
    call_name,
    literal_str,
)

# BackendImplKind member -> the policy token that selects it (the plugins' TOKEN_PATTERNS)
KIND_TOKENS = {"DEFAULT": "flagos", "REFERENCE": "reference", "VENDOR": "vendor"}
# the value get_platform_name() returns when it finds nothing: no file is named after it
NO_PLATFORM = "unknown"


@dataclass(frozen=True)
class Impl:
    """One `OpImpl(...)`: op (None: not a literal), impl_id, token kind, vendor, backend folder."""

    op: str | None
    impl_id: str | None
    kind: str | None
    vendor: str | None
    backend: str  # folder under dispatch/backends (vendor ones: `vendor/<dir>`)
    path: Path
    line: int


@dataclass
class Dialect:
    """How one plugin reads its configs (the facts that differ between the two plugins)."""

    name: str
    config_env: str  # the variable that loads any file instead of the platform's
    keys: frozenset[str]  # top-level keys the plugin (or its tools) read
    split_string_tokens: bool  # `op: "a|b"` is two tokens (vLLM) or one (SGLang)
    comma_vendor_lists: bool  # allow/deny_vendors may be a comma string
    strict_default: bool
    one_vendor_folder: bool  # a platform registers its own vendor folder only (vLLM)
    bad_prefer: str  # what an unknown `prefer` does


VLLM = Dialect("vllm-plugin-FL", "VLLM_FL_CONFIG",
               frozenset({"prefer", "strict", "allow_vendors", "deny_vendors", "op_backends",
                          "flagos_blacklist", "oot_blacklist", "flagos_whitelist", "io_dump",
                          "action"}), split_string_tokens=True, comma_vendor_lists=True,
               strict_default=False, one_vendor_folder=True,
               bad_prefer="silently prefers flagos instead")
SGLANG = Dialect("sglang-plugin-FL", "SGLANG_FL_CONFIG",
                 frozenset({"prefer", "strict", "allow_vendors", "deny_vendors", "op_backends",
                            "flagos_blacklist", "oot_blacklist"}), split_string_tokens=False,
                 comma_vendor_lists=False, strict_default=True, one_vendor_folder=False,
                 bad_prefer="fails to load (ValueError), so the plugin does not start")


@dataclass
class DispatchPlugin:
    """Everything a config of this package is checked against."""

    package: Path
    dialect: Dialect
    impls: list[Impl] = field(default_factory=list)
    vendor_dirs: set[str] = field(default_factory=set)
    # platform (= config file stem) -> vendor folder it registers; None: all vendor folders
    platforms: dict[str, str | None] = field(default_factory=dict)
    # platform name -> (device_name, device_type), vLLM only: to suggest a file's right name
    devices: dict[str, tuple[str, str]] = field(default_factory=dict)
    oot_ops: frozenset[str] | None = None
    op_aliases: dict[str, str] = field(default_factory=dict)
    flagos_filtered: bool = False  # the flagos backend drops ops flagos_blacklist lists

    @property
    def config_dir(self) -> Path:
        return self.package / "dispatch" / "config"

    def ops(self) -> set[str]:
        return {i.op for i in self.impls if i.op is not None}

    def vendors(self) -> set[str]:
        return {i.vendor for i in self.impls if i.kind == "vendor" and i.vendor}

    def dynamic(self) -> bool:
        """Some OpImpl's op_name is not a literal: any op may be registered."""
        return any(i.op is None for i in self.impls)


def is_dispatch_package(pkg: Path) -> bool:
    return (pkg / "dispatch" / "config").is_dir() and (pkg / "dispatch" / "backends").is_dir()


def read_impls(sources: Sources, path: Path, backend: str) -> tuple[list[Impl], bool]:
    """The OpImpl calls of one register_ops.py, and whether it filters by use_flaggems_op."""
    tree = sources.module(path)
    if tree is None:
        return [], False
    out = []
    filtered = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "use_flaggems_op":
            filtered = True
        if not isinstance(node, ast.Call) or call_name(node) != "OpImpl":
            continue
        kind_node = argument(node, "kind", 2)
        kind = KIND_TOKENS.get(kind_node.attr) if isinstance(kind_node, ast.Attribute) else None
        out.append(Impl(literal_str(argument(node, "op_name", 0)),
                        literal_str(argument(node, "impl_id", 1)), kind,
                        literal_str(argument(node, "vendor", 4)), backend, path, node.lineno))
    return out, filtered


def read_vllm_platforms(sources: Sources, pkg: Path, plugin: DispatchPlugin) -> bool:
    """VENDOR_DEVICE_MAP of `<pkg>/utils.py` into plugin.platforms; False when absent."""
    tree = sources.module(pkg / "utils.py", quiet=True)
    table = assigned_dict(tree, "VENDOR_DEVICE_MAP") if tree is not None else None
    if table is None:
        return False
    for key, value in zip(table.keys, table.values, strict=True):
        name = literal_str(key)
        if name is None:
            continue
        fields: dict[str, str] = {}
        if isinstance(value, ast.Dict):
            for k, v in zip(value.keys, value.values, strict=True):
                if literal_str(k) is not None and literal_str(v) is not None:
                    fields[str(literal_str(k))] = str(literal_str(v))
        device_name, device_type = fields.get("device_name", ""), fields.get("device_type", "")
        plugin.devices[name] = (device_name, device_type)
        plugin.platforms[name] = next((c for c in (name, device_name, device_type)
                                       if c in plugin.vendor_dirs), None)
    return True


def read_sglang_platforms(sources: Sources, pkg: Path, plugin: DispatchPlugin) -> None:
    """The string literals get_platform_name() returns (each platform loads every vendor)."""
    tree = sources.module(pkg / "dispatch" / "config" / "utils.py", quiet=True)
    if tree is None:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "get_platform_name":
            for sub in ast.walk(node):
                value = literal_str(sub.value) if isinstance(sub, ast.Return) else None
                if value and value != NO_PLATFORM:
                    plugin.platforms[value] = None


def read_oot_ops(sources: Sources, pkg: Path) -> frozenset[str] | None:
    """Keys of OOT_OPS (`<pkg>/ops/custom_ops.py`), the ops oot_blacklist can name."""
    tree = sources.module(pkg / "ops" / "custom_ops.py", quiet=True)
    table = assigned_dict(tree, "OOT_OPS") if tree is not None else None
    if table is None or not all(literal_str(k) for k in table.keys):
        return None
    return frozenset(str(literal_str(k)) for k in table.keys)


def read_op_aliases(sources: Sources, pkg: Path) -> dict[str, str]:
    """`_CLASS_TO_OP` (class name -> op) in `<pkg>/__init__.py`: keys op_backends may use."""
    tree = sources.module(pkg / "__init__.py", quiet=True)
    table = assigned_dict(tree, "_CLASS_TO_OP") if tree is not None else None
    if table is None:
        return {}
    return {str(literal_str(k)): str(literal_str(v)) for k, v in zip(table.keys, table.values, strict=True)
            if literal_str(k) and literal_str(v)}


def read_plugin(sources: Sources, pkg: Path) -> DispatchPlugin:
    """All facts of the dispatch plugin in package folder `pkg`."""
    backends = pkg / "dispatch" / "backends"
    plugin = DispatchPlugin(pkg, VLLM)
    vendor_root = backends / "vendor"
    if vendor_root.is_dir():
        plugin.vendor_dirs = {d.name for d in vendor_root.iterdir()
                              if d.is_dir() and not d.name.startswith("_")}
    files = sorted(backends.glob("*/register_ops.py")) + sorted(backends.glob("vendor/*/register_ops.py"))
    for path in files:
        backend = path.parent.relative_to(backends).as_posix()
        impls, filtered = read_impls(sources, path, backend)
        plugin.impls += impls
        plugin.flagos_filtered |= filtered and any(i.kind == "flagos" for i in impls)
    if not read_vllm_platforms(sources, pkg, plugin):
        plugin.dialect = SGLANG
        read_sglang_platforms(sources, pkg, plugin)
        plugin.op_aliases = read_op_aliases(sources, pkg)
    else:
        plugin.oot_ops = read_oot_ops(sources, pkg)
    return plugin
