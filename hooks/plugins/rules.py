"""The rule table of `check-plugins`: id -> (severity, what a clean registry satisfies)."""

from __future__ import annotations

import os
from pathlib import Path

from flagbot.hooks.findings import ERROR, WARNING, Finding

RULES: dict[str, tuple[str, str]] = {
    "plugin-no-implementation": (ERROR, "every op_backends entry has a token that can match an "
                                        "implementation registered on that platform"),
    "plugin-yaml-syntax": (ERROR, "dispatch configs parse as one YAML mapping"),
    "plugin-source-syntax": (ERROR, "registry Python sources parse"),
    "plugin-file-too-large": (ERROR, "registry files are under the size limit"),
    "plugin-target-not-overridable": (ERROR, "each override target names an @overridable "
                                             "function, method or class"),
    "plugin-impl-not-found": (ERROR, "each override impl names a module and attribute that exist"),
    "plugin-unknown-vendor": (ERROR, "vendor names are ones the repository registers"),
    "plugin-unknown-token": (ERROR, "tokens are flagos, reference, vendor, vendor:<v> or impl:<id>"),
    "plugin-unknown-key": (ERROR, "top-level keys are ones the plugin reads"),
    "plugin-prefer": (ERROR, "prefer is flagos, vendor or reference"),
    "plugin-duplicate-op": (ERROR, "an op is listed once under op_backends"),
    "plugin-duplicate-key": (ERROR, "no key twice in one YAML mapping"),
    "plugin-duplicate-register": (ERROR, "one override per (target, vendor)"),
    "plugin-unknown-op": (ERROR, "op_backends names ops some backend registers"),
    "plugin-config-type": (ERROR, "sections have the type the plugin reads (a mapping)"),
    "plugin-list-type": (ERROR, "lists are YAML lists of strings"),
    "plugin-strict": (ERROR, "strict is a YAML boolean (true/false)"),
    "plugin-config-unreachable": (WARNING, "each config is named after a platform the plugin "
                                           "detects (else it loads only through *_FL_CONFIG)"),
    "plugin-token-blacklisted": (WARNING, "no flagos token for an op flagos_blacklist lists"),
    "plugin-oot-unknown": (WARNING, "oot_blacklist names out-of-tree ops the plugin has"),
    "plugin-register-dynamic": (WARNING, "register() arguments are string literals (else they "
                                         "cannot be checked)"),
}


class Report:
    """Collects findings with paths relative to `base` (the directory the user ran in)."""

    def __init__(self, base: Path) -> None:
        self.base = base.resolve()
        self.findings: list[Finding] = []

    def rel(self, path: Path) -> str:
        """`path` relative to the base folder (`../x` above it, as the user typed it)."""
        return Path(os.path.relpath(path.resolve(), self.base)).as_posix()

    def add(self, rule: str, path: Path, line: int, message: str) -> None:
        self.findings.append(Finding(self.rel(path), line, RULES[rule][0], rule, message))
