"""`flagbot check-backend` / the `check-vendor-backend` hook: static checks of vendor folders.

Folders come from PATH arguments (files or folders under the root), `--all`, or, with neither,
the files staged in git (the hook form; pre-commit passes the staged files as PATHs). Rules and
their ids: hooks/backend/rules.py; user guide: docs/hooks.md.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from flagbot.hooks.backend.check import check_vendor
from flagbot.hooks.backend.context import FlagGemsContext, find_package, load_context
from flagbot.hooks.backend.discover import (
    folder_of,
    folders_for_paths,
    staged_paths,
    vendor_folders,
)
from flagbot.hooks.backend.pysrc import Sources
from flagbot.hooks.config import ConfigError, RepoConfig, load_config
from flagbot.hooks.errors import UsageError
from flagbot.hooks.findings import Finding, has_errors, render_json, render_text
from flagbot.hooks.hookmain import configured_folder, guarded

WHAT = "check-backend"


def backend_root(repo: Path, root: str | None) -> str:
    """`root`, else `backends` from .github/flagbot.yml, else the default `backends`."""
    return configured_folder(repo, root, "backends")


def flaggems_context(repo: Path, root: Path, package: str | None,
                     config: RepoConfig | None = None) -> FlagGemsContext | None:
    """The FlagGems context: an explicit package dir, the config's, or the one above the root
    (`package`: relative to `repo`). With `config` given (the bot's case), the checkout's own
    config file is never read and nothing outside `repo` is: the package must lie inside it,
    and the search above the root stops at it."""
    if package is None:
        if config is None:
            try:
                config = load_config(repo)
            except ConfigError:
                config = None
        configured = config["flaggems"].get("package_root") if config is not None else None
        package = configured if isinstance(configured, str) else None
    if package is not None:
        pkg = (repo / package).resolve()
        if config is not None and not pkg.is_relative_to(repo):
            raise UsageError(f"{package}: not inside the repository ({repo})",
                             hint="flaggems.package_root is a path relative to the repository")
        if not (pkg / "runtime" / "common.py").is_file():
            raise UsageError(f"{package}: not a flag_gems package (no runtime/common.py)",
                             hint="point --flaggems at src/flag_gems, or pass --no-context")
        return load_context(pkg, root)
    found = find_package(root, top=repo if config is not None else None)
    return load_context(found, root) if found is not None else None


def check_backends(repo: Path, folders: list[str] | None = None, *, root: str | None = None,
                   flaggems: str | None = None, context: bool = True, jobs: int = 1,
                   config: RepoConfig | None = None) -> list[Finding]:
    """Findings for vendor `folders` (repo-relative; None = every `_<vendor>` under the root).

    `config` (the bot passes the default branch's) replaces the checkout's own
    `.github/flagbot.yml`, which is then never read: a pull request must not choose the rules
    it is checked by; and no path is resolved outside `repo`.

    `jobs` > 1 checks vendors in forked worker processes (the CLI does; a threaded server
    calling this library should keep the default 1, since fork and threads do not mix).
    """
    repo = repo.resolve()
    if root is None and config is not None:
        root = config.backends
    root_path = (repo / backend_root(repo, root)).resolve()
    if config is not None and not root_path.is_relative_to(repo):
        raise UsageError(f"{root}: the backends folder is not inside the repository ({repo})")
    if folders is None:
        targets = vendor_folders(root_path)
    else:
        targets = [(repo / f).resolve() for f in folders]
        outside = [f for f, t in zip(folders, targets, strict=False) if not t.is_relative_to(repo)]
        if config is not None and outside:
            raise UsageError(f"not inside the repository: {', '.join(outside)}")
        missing = [f for f, t in zip(folders, targets, strict=False) if not t.is_dir()]
        if missing:
            raise UsageError(f"no such vendor folder: {', '.join(missing)}",
                             hint=f"vendor folders live under {backend_root(repo, root)}/_<vendor>")
    ctx = flaggems_context(repo, root_path, flaggems, config) if context and targets else None
    if jobs > 1 and len(targets) >= 2 * jobs and "fork" in multiprocessing.get_all_start_methods():
        # Vendors are independent; forked workers share the loaded context copy-on-write.
        chunks = [targets[i::jobs] for i in range(jobs)]
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            parts = pool.map(_check_chunk, [repo] * jobs, chunks, [ctx] * jobs)
            return sorted(f for part in parts for f in part)
    return sorted(_check_chunk(repo, targets, ctx))


def _check_chunk(repo: Path, folders: list[Path], ctx: FlagGemsContext | None) -> list[Finding]:
    sources = Sources()
    return [f for folder in folders for f in check_vendor(repo, folder, sources, ctx)]


def default_jobs() -> int:
    """Worker processes for the command line: the CPUs this process may use, at most 8."""
    try:
        return max(1, min(8, len(os.sched_getaffinity(0))))
    except AttributeError:  # not on Linux
        return max(1, min(8, os.cpu_count() or 1))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flagbot check-backend", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="vendor folders, or files inside them (others are ignored)")
    parser.add_argument("--root", help="folder holding the _<vendor> folders (default: "
                        "`backends` in .github/flagbot.yml, else backends/)")
    parser.add_argument("--all", action="store_true", help="check every _<vendor> folder under the root")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--flaggems", metavar="DIR", help="the flag_gems package directory "
                        "(default: found above the root, or flaggems.package_root in the config)")
    parser.add_argument("--no-context", action="store_true", help="ignore any FlagGems source tree")
    parser.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                        help="worker processes (default: one per CPU, at most 8)")
    return parser


def select_folders(repo: Path, root: Path, args: argparse.Namespace) -> list[str] | None:
    """Repo-relative folders to check, or None for all of them."""
    if args.all:
        return None
    if not args.paths:
        found = folders_for_paths(staged_paths(repo), root)
    else:
        paths = [(repo / p).resolve() for p in args.paths]
        if root in paths:
            return None  # the root itself: everything under it
        found = folders_for_paths(paths, root)
        # An explicit folder outside the root (a copy, a test corpus) is checked as given.
        found += [p for p in paths if p.is_dir() and folder_of(p, root) is None and p not in found]
    return [f.relative_to(repo).as_posix() if f.is_relative_to(repo) else str(f) for f in found]


def _run(argv: Sequence[str] | None, cwd: str | None) -> int:
    args = build_parser().parse_args(argv)
    repo = Path(cwd or ".").resolve()
    root_rel = backend_root(repo, args.root)
    root = (repo / root_rel).resolve()
    folders = select_folders(repo, root, args)
    findings = check_backends(repo, folders, root=root_rel, flaggems=args.flaggems,
                              context=not args.no_context, jobs=args.jobs or default_jobs())
    checked = len(folders) if folders is not None else len(vendor_folders(root))
    if args.format == "json":
        print(render_json(findings, WHAT, checked=checked, root=root_rel))
    elif findings or checked:
        print(render_text(findings, f"{WHAT}: {checked} vendor folder(s)"))
    return 1 if has_errors(findings) else 0


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Check vendor backend folders; 0 clean (warnings allowed), 1 errors found, 2 usage."""
    return guarded(_run, argv, cwd, "flagbot check-backend")


if __name__ == "__main__":
    raise SystemExit(main())
