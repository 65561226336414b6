"""Check run `flagbot / backends`: the backend checker on the vendor folders the PR touches."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from flagbot.bot.github import ChangedFile
from flagbot.bot.github.checkruns import CheckResult
from flagbot.bot.github.markdown import code, plain
from flagbot.bot.handlers.labels import vendor_of
from flagbot.hooks.check_vendor_backend import check_backends
from flagbot.hooks.config import RepoConfig
from flagbot.hooks.errors import FlagbotError
from flagbot.hooks.findings import ERROR, WARNING, Finding

NAME = "flagbot / backends"


def touched_folders(config: RepoConfig, files: Iterable[ChangedFile]) -> list[str]:
    """The `<backends>/_<vendor>` folders with a changed, added, renamed or removed file."""
    prefix = config.backends.rstrip("/") + "/"
    folders = set()
    for f in files:
        for path in (f.filename, f.previous or ""):
            found = vendor_of(path, config) if path.startswith(prefix) else None
            if found is not None:
                folders.add(found[1])
    return sorted(folders)


def base_paths(config: RepoConfig) -> list[str]:
    """What the check reads at the merge base: the FlagGems package around the backends root
    (its registry and vendors enum are the context), else the backends root alone."""
    package = config["flaggems"].get("package_root")
    root = config.backends.strip("/")
    if isinstance(package, str) and package:
        return [package.strip("/"), root]
    suffix = "/runtime/backend"  # FlagGems' own layout: src/flag_gems/runtime/backend
    return [root[: -len(suffix)]] if root.endswith(suffix) else [root]


def nothing_to_check() -> CheckResult:
    """The result when the PR touches no vendor folder: success, so the check can be required."""
    return CheckResult(NAME, "success", "no vendor folders touched",
                       "This pull request changes no `_<vendor>` backend folder, so there is "
                       "nothing to check.")


def run_checks(checkout: Path, config: RepoConfig, folders: list[str]) -> tuple[list[str], list[Finding]]:
    """check_backends on the folders still present at the PR head; returns (checked, findings)."""
    present = [f for f in folders if (checkout / f).is_dir()]
    if not present:
        return [], []
    try:
        # the default branch's config: the checkout's own .github/flagbot.yml is never read
        return present, check_backends(checkout, present, config=config)
    except FlagbotError as exc:  # e.g. the backends root is misconfigured: say so on the PR
        return present, [Finding(present[0], 0, ERROR, "check-backend", str(exc))]


def result(folders: list[str], checked: list[str], findings: list[Finding]) -> CheckResult:
    """Turn findings into the check run's conclusion, title and summary."""
    errors = [f for f in findings if f.severity == ERROR]
    warnings = [f for f in findings if f.severity == WARNING]
    title = (f"{len(checked)} vendor folder(s) pass" if not errors
             else f"{len(errors)} error(s) in {len(checked)} vendor folder(s)")
    lines = [f"Checked {len(checked)} vendor folder(s): {len(errors)} error(s), "
             f"{len(warnings)} warning(s).", ""]
    for folder in folders:
        if folder not in checked:
            lines.append(f"- {code(folder + '/')}: removed by this pull request, not checked")
            continue
        n = sum(1 for f in errors if f.path.startswith(folder + "/") or f.path == folder)
        lines.append(f"- {code(folder + '/')}: {'ok' if not n else f'{n} error(s)'}")
    if errors:
        lines += ["", "Reproduce locally: " + code("flagbot check-backend " + " ".join(checked)) + "."]
    text = "\n".join(f"- {plain(f.render())}" for f in sorted(findings))
    return CheckResult(NAME, "failure" if errors else "success", title, "\n".join(lines), text, findings)
