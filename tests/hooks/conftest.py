"""Real temporary git repositories for the patch engine tests (no mocks of git).

`make_repo()` builds a repository with author, committer, dates and default branch pinned, so
commit ids (and therefore patch bytes) are the same on every run and machine.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

EPOCH = 1_764_000_000  # a fixed start date; each commit is one minute later


def git_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="Vera Vendor", GIT_AUTHOR_EMAIL="vera@vendor.invalid",
               GIT_COMMITTER_NAME="Vera Vendor", GIT_COMMITTER_EMAIL="vera@vendor.invalid",
               GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    env.update(extra)
    return env


@dataclass
class Repo:
    """A repository under test; `git()` runs the real git CLI in it."""

    path: Path
    clock: list[int] = field(default_factory=lambda: [EPOCH])

    def git(self, *args: str, env: dict[str, str] | None = None, input: bytes | None = None,
            check: bool = True) -> str:
        proc = subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=self.path,
                              env=env or git_env(), input=input, capture_output=True, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {args} failed: {proc.stderr.decode()}")
        return proc.stdout.decode("utf-8", "surrogateescape").strip()

    def write(self, rel: str, data: bytes | str, *, mode: int | None = None) -> None:
        path = self.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        if mode is not None:
            path.chmod(mode)

    def commit(self, message: str | bytes = "change") -> str:
        self.clock[0] += 60
        when = f"@{self.clock[0]} +0000"
        env = git_env(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
        self.git("add", "-A", env=env)
        msg = message.encode() if isinstance(message, str) else message
        msg = msg if msg.endswith(b"\n") else msg + b"\n"
        self.git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", "-", env=env,
                 input=msg)
        return self.rev("HEAD")

    def rev(self, rev: str) -> str:
        return self.git("rev-parse", rev)

    def copy(self, dest: Path) -> Repo:
        shutil.copytree(self.path, dest, symlinks=True)
        return Repo(dest, [self.clock[0]])

    def snapshot(self) -> dict[str, object]:
        """Everything a user could lose: HEAD, refs, index, status, stash, worktrees, files."""
        files = {}
        for p in sorted(self.path.rglob("*")):
            if ".git" not in p.relative_to(self.path).parts and p.is_file():
                files[str(p.relative_to(self.path))] = (hashlib.sha1(p.read_bytes()).hexdigest(),
                                                        p.stat().st_mode)
        index = self.path / ".git" / "index"
        return {
            "head": self.git("symbolic-ref", "-q", "HEAD", check=False) or self.rev("HEAD"),
            "refs": self.git("for-each-ref", "--format=%(refname) %(objectname)"),
            "index": hashlib.sha1(index.read_bytes()).hexdigest() if index.exists() else None,
            "status": self.git("--no-optional-locks", "status", "--porcelain=v1", "--untracked-files=all"),
            "stash": self.git("stash", "list"),
            "worktrees": self.git("worktree", "list", "--porcelain"),
            "files": files,
        }


MakeRepo = Callable[..., Repo]


@pytest.fixture(scope="session")
def make_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MakeRepo]:
    """Factory: make_repo('name') -> a fresh repository on branch main with pinned identity."""

    def factory(name: str = "repo") -> Repo:
        path = tmp_path_factory.mktemp(name)
        subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=git_env())
        return Repo(path)

    yield factory


@pytest.fixture(scope="module")
def vendor_repo(make_repo: MakeRepo) -> Repo:
    """BASE with assorted files, then a vendor series covering the hard cases (shared, read-only)."""
    repo = make_repo("vendor")
    repo.write("README.md", "upstream\n")
    repo.write("src/model.py", "".join(f"line {i}\n" for i in range(40)))
    repo.write("weights.bin", bytes(range(256)) * 8)
    repo.write("old.bin", b"\x00\x01gone\x00" * 50)
    repo.write("to_delete.txt", "bye\n")
    repo.write("rename_me.py", "".join(f"print({i})\n" for i in range(30)))
    repo.write("run.sh", "#!/bin/sh\necho hi\n")
    repo.write("crlf.txt", b"one\r\ntwo\r\n")
    repo.write("hardwares/.keep", "")
    repo.commit("upstream base")
    repo.git("tag", "base")
    repo.write("src/model.py", "".join(f"line {i}{' vendor' if i % 9 == 0 else ''}\n"
                                       for i in range(40)))
    repo.write("weights.bin", bytes(range(256)) * 7 + b"tuned" * 20)
    (repo.path / "old.bin").unlink()
    repo.write("new.bin", b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(300))
    (repo.path / "to_delete.txt").unlink()
    repo.git("mv", "rename_me.py", "renamed.py")
    (repo.path / "run.sh").chmod(0o755)
    repo.write("crlf.txt", b"one\r\ntwo \r\nthree\t \r\n")
    repo.write("dir with space/na\u00efve \u6587\u4ef6.txt", "unicode path\n")
    repo.write("latin1.txt", b"caf\xe9 cr\xe8me\n")
    repo.commit("[Vendor] adapt model for A_X100\n\nLonger explanation, caf\u00e9.\n")
    repo.write("src/model.py", (repo.path / "src/model.py").read_text() + "tail 1\n")
    repo.commit("second edit of model")
    repo.write("temp.txt", "short-lived\n")
    repo.commit("add temp")
    repo.write("src/model.py", (repo.path / "src/model.py").read_text() + "tail 2\n")
    (repo.path / "temp.txt").unlink()
    repo.write("hardwares/Z_Z1/deadbeef/deadbeef.patch", "not part of the patch\n")
    repo.commit("delete temp, third edit")
    repo.write("hardwares/Z_Z1/notes.txt", "only hardwares\n")
    repo.commit("touch only hardwares")
    repo.git("tag", "cur")
    return repo
