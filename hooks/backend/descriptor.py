"""Rules on `_<vendor>/__init__.py`: the folder name, required files, the vendor descriptor."""

from __future__ import annotations

import ast
from pathlib import Path

from flagbot.hooks.backend.context import ALWAYS_TORCH_DETECTED, TORCH_DETECTED
from flagbot.hooks.backend.pysrc import Module
from flagbot.hooks.backend.vendor import FOLDER_RE, Vendor
from flagbot.kernels.flaggems_layout import missing_files

REQUIRED_ARGS = ("vendor_name", "device_name", "device_query_cmd")

# class -> field -> allowed literal types, in positional order (FlagGems backend_utils.py:
# VendorDescriptor today; VendorInfoBase in the documented form and older trees, whose
# `forward_only` existed 2025-04..2025-07).
_STR, _OPT_STR, _BOOL = (str,), (str, type(None)), (bool,)
DESCRIPTORS: dict[str, dict[str, tuple[type, ...]]] = {
    "VendorDescriptor": {
        "vendor_name": _STR, "device_name": _STR, "device_query_cmd": _STR,
        "dispatch_key": _OPT_STR, "triton_extra_name": _OPT_STR, "trademark": _OPT_STR,
        "fp64_enabled": _BOOL, "bf16_enabled": _BOOL, "int64_enabled": _BOOL, "tle_enabled": _BOOL,
    },
    "VendorInfoBase": {
        "vendor_name": _STR, "device_name": _STR, "device_query_cmd": _STR,
        "dispatch_key": _OPT_STR, "triton_extra_name": _OPT_STR, "forward_only": _BOOL,
    },
}


def lower_case_hint(name: str) -> str:
    """For `_A_X100`: the device-name rule's folder for that device (device names ignore case)."""
    lower = name.lower()
    if name != lower and FOLDER_RE.match(lower):
        return (f"; device names ignore case and a device's backend folder is its name in lower "
                f"case: rename it to {lower!r} (the folder of device {name[1:]})")
    return ""


def check_folder(v: Vendor) -> None:
    """The folder is `_<vendor>` and holds the files FlagGems' loader requires."""
    if not FOLDER_RE.match(v.folder.name):
        v.add("vendor-folder-name", v.folder, 0, f"folder {v.folder.name!r} is not named _<vendor> "
              "(underscore + lower-case name); FlagGems imports backends as _<vendor_name>"
              + lower_case_hint(v.folder.name))
    for rel in missing_files(v.folder):
        v.add("required-file", v.folder / rel, 0, f"missing; FlagGems needs {rel} in every "
              "vendor folder (copy it from backends/_template)")


def _find_call(mod: Module) -> ast.Call | None:
    assert mod.tree is not None
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in DESCRIPTORS:
                return node
    return None


def _call_args(v: Vendor, path: Path, call: ast.Call, fields: dict[str, tuple[type, ...]],
               cls: str) -> dict[str, ast.expr]:
    args: dict[str, ast.expr] = dict(zip(fields, call.args, strict=False))
    if len(call.args) > len(fields):
        v.add("descriptor-unknown-arg", path, call.lineno, f"{cls} takes at most {len(fields)} "
              f"positional arguments, got {len(call.args)}")
    for kw in call.keywords:
        if kw.arg is None:
            v.add("descriptor-literal", path, kw.value.lineno, f"{cls}(**...) cannot be read "
                  "statically; pass each field as a keyword with a literal value")
        elif kw.arg not in fields:
            v.add("descriptor-unknown-arg", path, kw.value.lineno, f"{cls} has no field "
                  f"{kw.arg!r} (fields: {', '.join(fields)}); remove it or fix the spelling")
        else:
            args[kw.arg] = kw.value
    return args


def check_descriptor(v: Vendor, init: Module) -> str | None:
    """Check the descriptor call; return the literal vendor_name when there is one."""
    path = v.folder / "__init__.py"
    call = _find_call(init)
    if call is None:
        v.add("descriptor-missing", path, 0, "no VendorDescriptor(...) or VendorInfoBase(...) "
              "call; define vendor_info = VendorDescriptor(vendor_name=..., device_name=..., "
              "device_query_cmd=...)")
        return None
    cls = call.func.id if isinstance(call.func, ast.Name) else str(getattr(call.func, "attr", ""))
    fields = DESCRIPTORS[cls]
    args = _call_args(v, path, call, fields, cls)
    values: dict[str, object] = {}
    for name, node in args.items():
        if not isinstance(node, ast.Constant):
            if name in REQUIRED_ARGS:
                v.add("descriptor-literal", path, node.lineno, f"{cls} argument {name} is not "
                      "a literal; detection, the checker and the bot read it without running "
                      "vendor code")
            else:
                # Optional fields are legitimately computed (FlagGems' _ascend picks
                # triton_extra_name from the installed Triton version): say so, do not fail.
                v.add("not-static", path, node.lineno, f"{cls} argument {name} is computed "
                      "when the backend is imported; its value was not checked")
            continue
        if not isinstance(node.value, fields[name]):
            want = " or ".join("None" if t is type(None) else t.__name__ for t in fields[name])
            v.add("descriptor-type", path, node.lineno, f"{cls} argument {name} must be {want}, "
                  f"got {node.value!r}")
            continue
        values[name] = node.value
    for name in REQUIRED_ARGS:
        if name not in args:
            v.add("descriptor-missing-arg", path, call.lineno, f"{cls} needs {name}=...")
    query = values.get("device_query_cmd")
    if isinstance(query, str) and not query.strip() \
            and not detected_by_torch(v, values.get("vendor_name")):
        v.add("device-query-empty", path, args["device_query_cmd"].lineno, "device_query_cmd is "
              "empty and FlagGems does not detect this vendor through torch, so detection can "
              "never find the device (set e.g. 'npu-smi info', or GEMS_VENDOR at run time)")
    return _check_name(v, path, args, values)


def detected_by_torch(v: Vendor, name: object) -> bool:
    """Whether FlagGems finds vendor `name` before running commands (its torch attribute, or
    NVIDIA's device name), per the tree's own table when there is one."""
    if not isinstance(name, str):
        return False
    table = v.context.torch_detected if v.context is not None else None
    return name in (TORCH_DETECTED if table is None else table) or name in ALWAYS_TORCH_DETECTED


def _check_name(v: Vendor, path: Path, args: dict[str, ast.expr], values: dict[str, object]) -> str | None:
    name = values.get("vendor_name")
    if not isinstance(name, str):
        return None
    line = args["vendor_name"].lineno
    if FOLDER_RE.match(v.folder.name) and name != v.vendor:
        v.add("vendor-name-mismatch", path, line, f"vendor_name {name!r} differs from the folder "
              f"{v.folder.name!r}; FlagGems imports _<vendor_name>, so rename one of them")
    ctx = v.context
    if ctx is not None and ctx.vendors is not None and name not in ctx.vendors:
        v.add("vendor-not-registered", path, line, f"vendor {name!r} is not in the vendors enum "
              f"of {v.rel(ctx.vendors_path or ctx.package)}: it can never be detected; add "
              f"{name.upper()} = <next number> there")
    return name
