"""`check_plugins(paths)`: which registries the paths select, and their findings.

A path is a repository root (or any folder: every registry under it), a registry file (that
file), or a file the registries are checked against (a `register_ops.py`, a platform module,
a Megatron source): then every registry of its repository is checked again, so removing a
kernel registration shows the configs it breaks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flagbot.hooks import unchecked
from flagbot.hooks.errors import UsageError
from flagbot.hooks.findings import Finding
from flagbot.hooks.plugins import megatron
from flagbot.hooks.plugins.dispatch_config import check_config
from flagbot.hooks.plugins.dispatch_facts import is_dispatch_package, read_plugin
from flagbot.hooks.plugins.rules import Report
from flagbot.hooks.plugins.sources import Sources

CONFIG_SUFFIXES = (".yaml", ".yml")


@dataclass
class Selection:
    """Dispatch packages -> config files to check (None: all of them); Megatron roots."""

    dispatch: dict[Path, set[Path] | None] = field(default_factory=dict)
    megatron: set[Path] = field(default_factory=set)

    def whole_package(self, pkg: Path) -> None:
        self.dispatch[pkg] = None

    def config(self, pkg: Path, path: Path) -> None:
        chosen = self.dispatch.setdefault(pkg, set())
        if chosen is not None:
            chosen.add(path)

    def __bool__(self) -> bool:
        return bool(self.dispatch or self.megatron)


def packages_under(folder: Path) -> Iterable[Path]:
    """Dispatch plugin packages at `folder` or one or two levels below it (`src/<pkg>`)."""
    for config in (*folder.glob("dispatch/config"), *folder.glob("*/dispatch/config"),
                   *folder.glob("*/*/dispatch/config")):
        pkg = config.parent.parent
        if is_dispatch_package(pkg):
            yield pkg


def select_file(path: Path, selection: Selection) -> bool:
    """Add what file `path` selects; False when it belongs to no registry."""
    for parent in path.parents:
        if is_dispatch_package(parent):
            is_config = path.parent == parent / "dispatch" / "config" \
                and path.suffix in CONFIG_SUFFIXES
            if is_config:
                selection.config(parent, path)
            else:
                selection.whole_package(parent)
            return True
        if parent.name == "megatron" and (parent.parent / megatron.REGISTRY).is_file():
            if path.suffix == ".py":
                selection.megatron.add(parent.parent)
                return True
            return False
    return False


def select(paths: Sequence[Path], base: Path) -> tuple[Selection, list[Finding]]:
    """The registries `paths` select, and a `nothing-checked` warning for each path that
    selects none; UsageError for a path that does not exist."""
    selection = Selection()
    unselected: list[Finding] = []
    for path in paths:
        shown = Report(base).rel(path)
        if path.is_dir():
            found = False
            for pkg in packages_under(path):
                selection.whole_package(pkg.resolve())
                found = True
            if (path / megatron.REGISTRY).is_file():
                selection.megatron.add(path.resolve())
                found = True
            if not found:
                unselected.append(unchecked.finding(shown, "no plugin registry here (looked for "
                                  "<pkg>/dispatch/config/*.yaml beside <pkg>/dispatch/backends/ "
                                  f"and {megatron.REGISTRY}); pass the repository root"))
        elif path.is_file():
            if not select_file(path.resolve(), selection):
                unselected.append(unchecked.finding(shown, "belongs to no plugin registry (a "
                                  "dispatch config, a file of a dispatch package, or a Python "
                                  "file of a Megatron tree with an override registry); not "
                                  "checked"))
        else:
            raise UsageError(f"{shown}: no such file or folder")
    return selection, unselected


# What a registry check reads of a tree (pathspecs from the repository root): Python and YAML
# files only, so `--since REF` and the bot's merge-base run write no more than these.
SOURCES = (":(top,glob)**/*.py", ":(top,glob)**/*.yaml", ":(top,glob)**/*.yml")


def check_plugins(paths: Sequence[Path | str], *, base: Path | None = None) -> list[Finding]:
    """Findings of the registries `paths` select (relative to `base`, default the current
    folder, as are the findings' paths)."""
    here = (base or Path.cwd()).resolve()
    report = Report(here)
    sources = Sources(report)
    selection, findings = select([here / p for p in (paths or ["."])], here)
    report.findings += findings
    for pkg, chosen in sorted(selection.dispatch.items()):
        plugin = read_plugin(sources, pkg)
        files = chosen if chosen is not None else {
            p for p in plugin.config_dir.iterdir() if p.suffix in CONFIG_SUFFIXES and p.is_file()}
        for path in sorted(files):
            check_config(report, sources, plugin, path)
    for root in sorted(selection.megatron):
        megatron.check_registry(report, sources, root)
    return sorted(set(report.findings))
