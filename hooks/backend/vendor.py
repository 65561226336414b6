"""The state one vendor folder's checks share: where it is, caches, context and findings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.hooks.backend.context import FlagGemsContext
from flagbot.hooks.backend.pysrc import Module, Sources
from flagbot.hooks.backend.rules import make
from flagbot.hooks.findings import Finding

FOLDER_RE = re.compile(r"^_[a-z][a-z0-9_]*$")
IDENT_RE = re.compile(r"^[A-Za-z_]\w*$")


@dataclass
class Vendor:
    """One `_<vendor>` folder under check; rules append to `findings`."""

    repo: Path
    folder: Path
    sources: Sources
    context: FlagGemsContext | None = None
    findings: list[Finding] = field(default_factory=list)
    implemented: set[str] = field(default_factory=set)  # function names the vendor exports
    implemented_aten: set[str] = field(default_factory=set)  # documented form: aten names
    arch_implemented: dict[str, set[str]] = field(default_factory=dict)  # arch folder -> names

    @property
    def vendor(self) -> str:
        return self.folder.name[1:] if self.folder.name.startswith("_") else self.folder.name

    @property
    def applies_ops(self) -> bool:
        """Whether FlagGems applies this folder's ops and unused list (not NVIDIA's in older trees)."""
        return not (self.vendor == "nvidia" and self.context is not None and self.context.older_layout)

    def rel(self, path: Path) -> str:
        """`path` relative to the repository, with forward slashes (findings' contract)."""
        try:
            return path.relative_to(self.repo).as_posix()
        except ValueError:
            return path.as_posix()

    def add(self, rule: str, path: Path, line: int, message: str) -> None:
        self.findings.append(make(rule, self.rel(path), line, message))

    def module(self, path: Path) -> Module | None:
        """Parse `path`; a syntax error (or a file too large to read) is reported once here
        and None returned."""
        mod = self.sources.module(path)
        if mod is not None and mod.error is not None:
            if not any(f.rule == mod.error_rule and f.path == self.rel(path) for f in self.findings):
                line, msg = mod.error
                if mod.error_rule == "file-too-large":
                    self.add(mod.error_rule, path, line, msg)
                else:
                    self.add(mod.error_rule, path, line, f"does not parse: {msg}; fix the syntax "
                             "(FlagGems fails at import otherwise)")
            return None
        return mod

    def report_oversized(self) -> None:
        """A finding for each Python file under the folder that was too large to read (once;
        tune files report their own)."""
        for key, exc in sorted(self.sources.oversized.items()):
            path = Path(key)
            if path.suffix == ".py" and path.is_relative_to(self.folder) and not any(
                    f.rule == "file-too-large" and f.path == self.rel(path) for f in self.findings):
                self.add("file-too-large", path, 0, str(exc))
