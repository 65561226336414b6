"""Check run `flagbot / routing`: the routing files a PR changes, and those including what it changes.

Routing files are the paths `routing.files` of `.github/flagbot.yml` names (default
`**/backends*.conf`, the FlagOS plugin's `torch_fl/configs/backends_<vendor>.conf`). A PR that
changes one, or a file one of them `include`s, gets the run; other PRs get none (the check is
about plugins, which most repositories are not). The backend names accepted are the plugin's,
`routing.backends` of the default branch's configuration and the vendor folders under the
backends root; the PR's own copy of the configuration is never read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from flagbot.bot.github import ChangedFile
from flagbot.bot.github.checkruns import CheckResult
from flagbot.bot.github.markdown import code, plain
from flagbot.bot.handlers.globs import compile_globs, matching_glob
from flagbot.bot.handlers.labels import touched_paths
from flagbot.hooks.backend.discover import vendor_folders
from flagbot.hooks.check_routing import check_routing, parse, plugin_backends
from flagbot.hooks.config import RepoConfig
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.limits import MAX_SOURCE_BYTES, read_limited

NAME = "flagbot / routing"
# routing files looked at per tree when a changed file might be included by one
MAX_ROUTING_FILES = 200
MAX_INCLUDE_DEPTH = 8


def is_routing_file(path: str, config: RepoConfig) -> bool:
    """Whether `path` is a routing file by `routing.files`."""
    globs = compile_globs(tuple(config["routing"]["files"]))
    return matching_glob(path, globs) is not None


def may_touch_routing(config: RepoConfig, files: Iterable[ChangedFile]) -> bool:
    """Whether the PR changes a routing file, or a `.conf` file one may include (decided on
    the checkout)."""
    return any(is_routing_file(p, config) or p.endswith(".conf") for p in touched_paths(files))


def routing_files(tree: Path, config: RepoConfig) -> list[str]:
    """Every routing file in the checkout (at most MAX_ROUTING_FILES), repo-relative."""
    globs = compile_globs(tuple(config["routing"]["files"]))
    found: list[str] = []
    for directory, subdirs, names in os.walk(tree):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        for name in sorted(names):
            rel = Path(directory, name).relative_to(tree).as_posix()
            if matching_glob(rel, globs) is not None:
                found.append(rel)
                if len(found) >= MAX_ROUTING_FILES:
                    return found
    return found


def includes_of(tree: Path, rel: str, depth: int = 0, seen: set[str] | None = None) -> set[str]:
    """The repo-relative files `rel` includes, directly or not (as the plugin resolves them)."""
    seen = set() if seen is None else seen
    try:
        text = read_limited(tree / rel, MAX_SOURCE_BYTES).decode("utf-8", "replace")
    except OSError:
        return seen
    for _, name in parse(tree / rel, text).includes:
        target = os.path.normpath(name if name.startswith("/") else
                                  os.path.join(os.path.dirname(rel), name))
        if target.startswith(("..", "/")) or target in seen or depth >= MAX_INCLUDE_DEPTH:
            continue
        seen.add(target)
        includes_of(tree, target, depth + 1, seen)
    return seen


def files_to_check(tree: Path, config: RepoConfig, changed: Iterable[str]) -> list[str]:
    """Routing files the PR changes, plus those including a file it changes."""
    changed = set(changed)
    out = []
    for rel in routing_files(tree, config):
        if rel in changed or changed & includes_of(tree, rel):
            out.append(rel)
    return out


def backend_names(tree: Path, config: RepoConfig) -> list[str]:
    """What routing lines may name: the plugin's backends, `routing.backends`, vendor folders."""
    names = set(plugin_backends()) | set(config["routing"]["backends"])
    names |= {p.name[1:] for p in vendor_folders(tree / config.backends)}
    return sorted(names)


def run_checks(tree: Path, config: RepoConfig, changed: list[str]) -> tuple[list[str], list[Finding]]:
    """(routing files checked, findings) on a checkout; ([], []) when none is concerned."""
    files = files_to_check(tree, config, changed)
    if not files:
        return [], []
    return files, check_routing(tree, files, backends=backend_names(tree, config))


def check_at(tree: Path, config: RepoConfig, files: list[str]) -> list[Finding]:
    """The same files checked on another tree (the merge base): those present there."""
    present = [f for f in files if (tree / f).is_file()]
    return check_routing(tree, present, backends=backend_names(tree, config)) if present else []


def result(files: list[str], findings: list[Finding]) -> CheckResult:
    """Turn findings into the check run's conclusion, title and summary."""
    errors = [f for f in findings if f.severity == ERROR]
    warnings = [f for f in findings if f.severity == WARNING]
    title = (f"{len(files)} routing file(s) pass" if not errors
             else f"{len(errors)} error(s) in {len(files)} routing file(s)")
    lines = [f"Checked {len(files)} routing file(s) and what they include: {len(errors)} "
             f"error(s), {len(warnings)} warning(s).", ""]
    lines += [f"- {code(f)}" for f in files]
    if errors:
        lines += ["", "Reproduce locally: " + code("flagbot check-routing " + " ".join(files)) + "."]
    text = "\n".join(f"- {plain(f.render())}" for f in sorted(findings))
    return CheckResult(NAME, "failure" if errors else "success", title, "\n".join(lines), text,
                       findings)
