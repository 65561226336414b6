"""The one table of backend-checker rules: stable id -> (severity, what it means).

Ids are a contract: users silence or grep them, the bot links them. Add a rule here (one line)
and give it a broken backend under `testing/resources/backends/`; a test walks this table.
"""

from __future__ import annotations

from flagbot.hooks.findings import ERROR, WARNING, Finding

RULES: dict[str, tuple[str, str]] = {
    # folder and files
    "vendor-folder-name": (ERROR, "a vendor folder is named _<vendor> (lower case)"),
    "required-file": (ERROR, "__init__.py, heuristics_config_utils.py, tune_configs.yaml, ops/__init__.py exist"),
    "python-syntax": (ERROR, "every Python file of the backend parses"),
    "file-too-large": (ERROR, "every file the checker reads is under its size limit (1 MiB for sources)"),
    "not-static": (WARNING, "a value the checker cannot read without running code"),
    # the descriptor in __init__.py
    "descriptor-missing": (ERROR, "__init__.py builds VendorDescriptor(...) or VendorInfoBase(...)"),
    "descriptor-literal": (ERROR, "descriptor arguments are literals"),
    "descriptor-type": (ERROR, "descriptor arguments have the field's type (str / bool / None)"),
    "descriptor-missing-arg": (ERROR, "vendor_name, device_name and device_query_cmd are given"),
    "descriptor-unknown-arg": (ERROR, "no keyword the descriptor class does not have"),
    "device-query-empty": (WARNING, "device_query_cmd is not empty where FlagGems detects the "
                                    "vendor by that command (not through torch)"),
    "vendor-name-mismatch": (ERROR, "vendor_name equals the folder name without its underscore"),
    "vendor-not-registered": (ERROR, "vendor_name is in the vendors enum of runtime/common.py "
                                     "(runtime/commom_utils.py in trees before 2025-12)"),
    "unused-ops-missing": (ERROR, "the current form defines CUSTOMIZED_UNUSED_OPS in __init__.py"),
    "unused-literal": (ERROR, "unused-op lists are literal tuples/lists of strings"),
    # operators
    "specific-ops-shape": (ERROR, "get_specific_ops() returns literal (aten_name, function[, Autograd.x]) tuples"),
    "aten-name": (ERROR, "aten names are real operator names (name or name.overload)"),
    "op-func-missing": (ERROR, "every referenced or imported function exists in its module"),
    "op-duplicate": (ERROR, "an aten name or exported function name is registered once"),
    "all-undefined": (ERROR, "every __all__ name is defined or imported"),
    "all-duplicate": (WARNING, "no name twice in __all__ (harmless to Python: a tidy-up)"),
    "unused-unknown": (ERROR, "every unused-op name matches an operator function (or aten name)"),
    "unused-and-implemented": (WARNING, "an op both implemented and listed unused is dropped"),
    "vendor-lists-ignored": (WARNING, "an unused-op list FlagGems' loader never reads (NVIDIA's, before 2025-12)"),
    "unused-not-aten": (WARNING, "without a FlagGems tree: an unused-op name matches an ATen op or a vendor function"),
    "specific-ops-ignored": (WARNING, "get_specific_ops() in a tree that uses CUSTOMIZED_UNUSED_OPS is dead code"),
    "op-replaces-nothing": (WARNING, "a vendor op's function name matches a generic FlagGems function"),
    # heuristics, tune configs, arch folders
    "heuristics-shape": (ERROR, "HEURISTICS_CONFIGS is a dict of dicts of callables"),
    "heuristics-duplicate-key": (ERROR, "no key twice in a HEURISTICS_CONFIGS dict literal"),
    "arch-heuristics-export": (WARNING, "an arch folder with heuristics re-exports HEURISTICS_CONFIGS"),
    "yaml-syntax": (ERROR, "YAML files parse"),
    "yaml-duplicate-key": (ERROR, "no key twice in one YAML mapping, at any level"),
    "config-schema": (ERROR, "*_expand.yaml maps op -> config/strategy entries; enable_configs.yaml "
                             "has include/exclude lists of names"),
    "tune-schema": (ERROR, "tune_configs.yaml entries are explicit (META + launch params) or generators"),
    "tune-unknown-key": (WARNING, "a tune entry key the config loader ignores (vendor compile options)"),
    "tune-key-unreferenced": (WARNING, "a tune key is referenced by some operator code"),
    "arch-map-folder": (ERROR, "ARCH_MAP is a literal str -> str dict whose values are sub-folders"),
    "arch-folder-unreached": (WARNING, "an arch-like sub-folder is reached by some ARCH_MAP key"),
}


def make(rule: str, path: str, line: int, message: str) -> Finding:
    """A Finding for `rule`, with the severity the table gives it."""
    severity, _ = RULES[rule]
    return Finding(path=path, line=line, severity=severity, rule=rule, message=message)
