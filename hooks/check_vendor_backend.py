"""`flagbot check-backend` / the `check-vendor-backend` hook: static checks of vendor folders.

Folders come from PATH arguments (files or folders under the root), `--all`, or, with neither,
the files staged in git (the hook form; pre-commit passes the staged files as PATHs). Rules and
their ids: hooks/backend/rules.py; user guide: docs/hooks.md.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from flagbot.hooks import since, unchecked
from flagbot.hooks.backend import runner
from flagbot.hooks.backend.context import FlagGemsContext, find_package, load_context, vendors_file
from flagbot.hooks.backend.discover import (
    folder_of,
    folders_for_paths,
    staged_paths,
    vendor_folders,
)
from flagbot.hooks.config import RepoConfig
from flagbot.hooks.errors import UsageError
from flagbot.hooks.findings import Finding, render_json, render_text
from flagbot.hooks.folders import (
    config_line,
    configured_folder,
    flaggems_package_root,
    other_layouts,
)
from flagbot.hooks.hookmain import guarded

WHAT = "check-backend"


def backend_root(repo: Path, root: str | None) -> str:
    """`root`, else `backends` from .github/flagbot.yml, else the layout found (hooks/folders.py)."""
    return configured_folder(repo, "backends", root, option="--root DIR")


def flaggems_context(repo: Path, root: Path, package: str | None,
                     config: RepoConfig | None = None) -> FlagGemsContext | None:
    """The FlagGems context: an explicit package dir, the config's, or the one above the root
    (`package`: relative to `repo`). With `config` given (the bot's case), the checkout's own
    config file is never read and nothing outside `repo` is: the package must lie inside it,
    and the search above the root stops at it."""
    if package is None and config is not None:
        configured = config["flaggems"].get("package_root")
        package = configured if isinstance(configured, str) else None
    elif package is None:
        package = flaggems_package_root(repo, option="--flaggems DIR or --no-context")
    if package is not None:
        pkg = (repo / package).resolve()
        if config is not None and not pkg.is_relative_to(repo):
            raise UsageError(f"{package}: not inside the repository ({repo})",
                             hint="flaggems.package_root is a path relative to the repository")
        if vendors_file(pkg) is None:
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

    def load() -> FlagGemsContext | None:
        return flaggems_context(repo, root_path, flaggems, config) if context and targets else None

    if jobs > 1 and len(targets) >= 2 * jobs and runner.can_fork():
        return runner.run_parallel(repo, targets, load, jobs)
    return runner.run_serial(repo, targets, load)


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
                        "`backends` in .github/flagbot.yml, else backends/ or FlagGems' "
                        "src/flag_gems/runtime/backend/, whichever exists)")
    parser.add_argument("--all", action="store_true", help="check every _<vendor> folder under the root")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--flaggems", metavar="DIR", help="the flag_gems package directory "
                        "(default: found above the root, or flaggems.package_root in the config)")
    parser.add_argument("--no-context", action="store_true", help="ignore any FlagGems source tree")
    parser.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                        help="worker processes (default: one per CPU, at most 8)")
    since.add_option(parser)
    unchecked.add_strict(parser)
    return parser


def select_folders(repo: Path, root: Path, args: argparse.Namespace) -> list[str] | None:
    """Repo-relative folders to check, or None for all of them."""
    if args.all:
        return None
    if not args.paths:
        found = folders_for_paths(staged_paths(repo), root)
    else:
        paths = [(repo / p).resolve() for p in args.paths]
        missing = [p for p, path in zip(args.paths, paths, strict=True) if not path.exists()]
        if missing:
            raise UsageError(f"no such file or folder: {', '.join(missing)}",
                             hint="check the spelling; `flagbot check-backend --all` checks every "
                                  "vendor folder")
        if root in paths:
            return None  # the root itself: everything under it
        found = folders_for_paths(paths, root)
        # An explicit folder outside the root (a copy, a test corpus) is checked as given.
        found += [p for p in paths if p.is_dir() and folder_of(p, root) is None and p not in found]
    return [f.relative_to(repo).as_posix() if f.is_relative_to(repo) else str(f) for f in found]


def vendor_root_of(rel: str) -> str | None:
    """The folder holding the `_<vendor>` folder that `rel` lies in, as the hook pattern sees it."""
    parts = rel.split("/")[:-1]
    marks = [i for i, p in enumerate(parts) if i and p.startswith("_") and not p.startswith("__")]
    preferred = [i for i in marks if parts[i - 1] in ("backend", "backends")]
    return "/".join(parts[:(preferred or marks)[0]]) if marks else None


def nothing_checked(repo: Path, root_rel: str, paths: list[Path], folders: list[str] | None,
                    checked: int) -> list[Finding]:
    """The `nothing-checked` warning: PATHs given but none in a vendor folder, or an empty root."""
    if checked:
        return []
    if folders is not None and paths:
        rels = [_rel(repo, p) for p in paths]
        shown = next((r for r in rels if vendor_root_of(r)), rels[0])
        where = vendor_root_of(shown)
        message = (f"{len(rels)} path(s) given, none inside a _<vendor> folder under "
                   f"{root_rel}/, so nothing was checked")
        return [unchecked.finding(shown, message + (_fix(where) if where else ""))]
    if folders is None:
        for other in other_layouts(repo, "backends", root_rel):
            count = len(vendor_folders(repo / other))
            if count:
                return [unchecked.finding(root_rel, (
                    f"no _<vendor> folder under {root_rel}/, but {other}/ has {count}, so "
                    f"nothing was checked{_fix(other)}"))]
    return []


def since_paths(repo: Path, root: Path, root_rel: str, flaggems: str | None,
                folders: list[str]) -> list[str]:
    """What `--since` writes of REF's tree: the backends root, the FlagGems package around it
    (the context), the configuration and folders given outside the root; the rest of a large
    tree is never read."""
    package = flaggems if flaggems is not None else None
    if package is None:
        found = find_package(root, top=repo)
        package = found.relative_to(repo).as_posix() if found is not None and \
            found.is_relative_to(repo) else None
    outside = [f for f in folders if not Path(f).is_absolute()]
    return [p for p in (root_rel, package, ".github", *outside) if p]


def _fix(root: str) -> str:
    return f"; to check them set {config_line('backends', root)} (or pass --root {root})"


def _rel(repo: Path, path: Path) -> str:
    return path.relative_to(repo).as_posix() if path.is_relative_to(repo) else str(path)


def _run(argv: Sequence[str] | None, cwd: str | None) -> int:
    args = build_parser().parse_args(argv)
    repo = Path(cwd or ".").resolve()
    root_rel = backend_root(repo, args.root)
    root = (repo / root_rel).resolve()
    folders = select_folders(repo, root, args)
    jobs = args.jobs or default_jobs()

    def check(tree: Path) -> list[Finding]:
        present = folders if folders is None or tree == repo else \
            [f for f in folders if not Path(f).is_absolute() and (tree / f).is_dir()]
        if present == []:
            return []  # none of the folders existed then: everything is new
        return check_backends(tree, present, root=root_rel, flaggems=args.flaggems,
                              context=not args.no_context, jobs=jobs)

    findings = check(repo)
    checked = len(folders) if folders is not None else len(vendor_folders(root))
    given = [(repo / p).resolve() for p in args.paths]
    findings += nothing_checked(repo, root_rel, given, folders, checked)
    findings, inherited = since.judge(repo, args.since, findings, check,
                                      paths=since_paths(repo, root, root_rel, args.flaggems,
                                                        folders or []))
    if args.format == "json":
        print(render_json(findings, WHAT, inherited=inherited, checked=checked, root=root_rel,
                          **({"since": args.since} if args.since else {})))
    elif findings or checked:
        print(render_text(findings, f"{WHAT}: {checked} vendor folder(s)", inherited=inherited,
                          since=args.since or ""))
    else:  # say so: an empty output would read as a pass
        print(f"{WHAT}: nothing to check: no staged changes under {root_rel}/ (pass PATH ... or "
              "--all)" if not args.paths else f"{WHAT}: nothing to check")
    return unchecked.exit_status(findings, strict=unchecked.strict_mode(args.strict))


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Check vendor backend folders; 0 clean (warnings allowed), 1 errors found, 2 usage."""
    return guarded(_run, argv, cwd, "flagbot check-backend")


if __name__ == "__main__":
    raise SystemExit(main())
