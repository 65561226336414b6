"""A throw-away git directory that reads the repository's objects but never writes to it.

Generation and verification run in a temporary bare git dir whose object store lists the
repository's object directory as an alternate, with a temporary index. New objects (applied
blobs, trees, commits) land in the temporary store; the user's refs, index, config, hooks,
attributes and working files are never opened for writing. The directory is removed on exit,
also on Ctrl-C (the `with` block's cleanup runs on KeyboardInterrupt).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from flagbot.hooks import git


class GitDir:
    """A git directory plus an index file: the target of plumbing commands (no work tree)."""

    def __init__(self, git_dir: Path, index: Path, cwd: Path, tmp: Path) -> None:
        self.git_dir = git_dir
        self.index = index
        self.cwd = cwd
        self.tmp = tmp  # where scratch files (mailinfo output) go; never a work tree

    def run(self, args: Sequence[str], *, stdin: bytes | None = None,
            env: Mapping[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        """Run git against this directory and index, with user configuration shut out."""
        full_env = {"GIT_INDEX_FILE": str(self.index)}
        if env:
            full_env.update(env)
        return git.run(args, cwd=self.cwd, git_dir=self.git_dir, env=full_env, stdin=stdin,
                       isolated=True, check=check)

    def start(self, args: Sequence[str]) -> tuple[subprocess.Popen[bytes], Sequence[str]]:
        """Start a command without waiting; `finish` collects it."""
        proc = git.start(args, cwd=self.cwd, git_dir=self.git_dir,
                         env={"GIT_INDEX_FILE": str(self.index)}, isolated=True)
        return proc, args

    def finish(self, started: tuple[subprocess.Popen[bytes], Sequence[str]]) -> bytes:
        """stdout of a started command; GitError if it failed."""
        return git.finish(started[0], started[1]).stdout

    def out(self, args: Sequence[str], *, stdin: bytes | None = None) -> str:
        """stdout of a successful command as text without the trailing newline."""
        return self.run(args, stdin=stdin).stdout.decode("utf-8", "surrogateescape").rstrip("\n")


def repo_facts(repo: Path) -> tuple[Path, Path, str]:
    """(common git dir, object dir, object format) of the repository, in one git call."""
    text = git.out(["rev-parse", "--path-format=absolute", "--git-common-dir",
                    "--git-path", "objects", "--show-object-format"], cwd=repo)
    common, objects, fmt = text.split("\n")
    return Path(common), Path(objects), fmt


def init_git_dir(path: Path, *, alternates: Path | None, object_format: str = "sha1") -> None:
    """Write a minimal bare git directory at `path` (no git process needed)."""
    (path / "objects" / "info").mkdir(parents=True)
    (path / "objects" / "pack").mkdir()
    (path / "refs" / "heads").mkdir(parents=True)
    (path / "refs" / "tags").mkdir()
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    version = "0" if object_format == "sha1" else "1"
    config = f"[core]\n\trepositoryformatversion = {version}\n\tbare = true\n"
    if object_format != "sha1":
        config += f"[extensions]\n\tobjectformat = {object_format}\n"
    (path / "config").write_text(config)
    if alternates is not None:
        (path / "objects" / "info" / "alternates").write_text(f"{alternates}\n")


def temp_dir_name(prefix: str = "flagbot-") -> Path:
    """A fresh path under $TMPDIR (or /tmp), not created yet (`tempfile` costs ~9 ms to import).

    Naming first and creating inside the caller's `try` leaves no window where a Ctrl-C
    lands between creating the directory and knowing what to clean up.
    """
    base = Path(os.environ.get("TMPDIR") or "/tmp")
    return base / f"{prefix}{os.getpid()}-{os.urandom(6).hex()}"


def remove_tree(path: Path) -> None:
    """Delete a directory tree we created, if it exists (links are removed, not followed)."""
    if not path.is_dir():
        return
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            full = os.path.join(root, name)
            if os.path.islink(full):
                os.unlink(full)
            else:
                os.rmdir(full)
    os.rmdir(path)


class Scratch:
    """Context manager: a temporary git dir borrowing `repo`'s objects; removed on exit."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._tmp: Path | None = None
        self.gd: GitDir | None = None
        self.root = Path()

    def __enter__(self) -> GitDir:
        common, objects, fmt = repo_facts(self.repo)
        self._tmp = self.root = temp_dir_name()
        try:
            self.root.mkdir(mode=0o700)
            gdir = self.root / "git"
            init_git_dir(gdir, alternates=objects, object_format=fmt)
            if (common / "shallow").is_file():
                # keep the shallow boundary, or walks past it would hit missing parents
                (gdir / "shallow").write_bytes((common / "shallow").read_bytes())
            self.gd = GitDir(gdir, self.root / "index", self.root, self.root)
            return self.gd
        except BaseException:
            remove_tree(self.root)
            raise

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._tmp is not None:
            remove_tree(self._tmp)
