"""`--compare-to REF`: the backend folder as it was at REF, extracted next to the run.

The folder at REF is read with `git archive` from the repository holding `--backend` (the
working tree and HEAD are never touched) into a temporary folder, and loaded from there like
any backend outside a FlagGems tree: under its own unique module names, importing the same
`flag_gems` as the head's folder. Both versions then run in one process, on one device,
their timings interleaved (kernels/check.py).
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from flagbot.kernels.loader import Backend, load_backend
from flagbot.kernels.safe_tar import extract_inside

GIT_TIMEOUT_S = 120


class CompareError(Exception):
    """REF or the repository cannot be read (a usage error, exit 2)."""


def _git(cwd: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CompareError(f"git {' '.join(args)} in {cwd}: {exc}") from None
    if done.returncode != 0:
        raise CompareError(f"git {' '.join(args[:2])} in {cwd} failed: "
                           f"{done.stderr.decode('utf-8', 'replace').strip()[:300]}")
    return done.stdout


def extract(folder: Path, ref: str, dest: Path) -> tuple[Path, str]:
    """The backend `folder` as of `ref`, written under `dest`; (its path there, full sha)."""
    folder = folder.resolve()
    if not (folder / ".git").exists() and not _inside_repository(folder):
        raise CompareError(f"--compare-to {ref}: {folder} is not inside a git repository")
    top = Path(_git(folder, "rev-parse", "--show-toplevel").decode().strip()).resolve()
    sha = _git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()
    rel = folder.relative_to(top).as_posix()
    listing = _git(top, "ls-tree", "--name-only", sha, "--", rel).decode().strip()
    if not listing:
        raise CompareError(f"--compare-to {ref}: {rel} does not exist at {sha[:12]}")
    data = _git(top, "archive", "--format=tar", sha, "--", rel)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        _extract_data(tar, dest)
    return dest / rel, sha


def _extract_data(tar: tarfile.TarFile, dest: Path) -> None:
    try:
        extract_inside(tar, dest)
    except ValueError as exc:
        raise CompareError(f"--compare-to: {exc}") from None


def _inside_repository(folder: Path) -> bool:
    try:
        return _git(folder, "rev-parse", "--is-inside-work-tree").strip() == b"true"
    except CompareError:
        return False


def load_base(head: Backend, ref: str, dest: Path, arch: str | None) -> tuple[Backend, str]:
    """The head backend's folder at `ref`, loaded; (backend, full sha). Load errors propagate
    as the loader raises them (BackendMissing / BackendLoadError)."""
    path, sha = extract(head.path, ref, dest)
    return load_backend(path, arch=arch or head.arch, flaggems=head.flaggems), sha
