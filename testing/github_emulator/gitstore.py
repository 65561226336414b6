"""Bare git repositories behind the emulator: commits, refs, blobs, trees and PR diffs."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Fixed clock for emulator-made commits, so the same test builds the same shas on every run.
_EPOCH = 1764115200  # 2025-11-26T00:00:00Z
_ZERO = "0" * 40

_STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "changed"}


class GitError(RuntimeError):
    """A git command in an emulator repository failed (command, rc and stderr in the message)."""


@dataclass(frozen=True)
class DiffFile:
    """One changed file of a PR, as `GET /pulls/{n}/files` reports it."""

    filename: str
    status: str
    additions: int
    deletions: int
    sha: str
    previous_filename: str | None
    patch: str | None


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree listing (mode, type, blob/tree sha, size, path)."""

    mode: str
    type: str
    sha: str
    size: int
    path: str


def _env() -> dict[str, str]:
    # Hooks and test harnesses export GIT_DIR/GIT_INDEX_FILE; they must not redirect our bare repos.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env.setdefault("GIT_AUTHOR_NAME", "emulator")
    env.setdefault("GIT_AUTHOR_EMAIL", "emulator@example.invalid")
    return env


def git(repo: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
    """Run git in `repo` and return stdout; raise GitError on failure when `check`."""
    cmd = ["git", "-C", str(repo), "-c", "core.quotepath=false", *args]
    proc = subprocess.run(cmd, input=stdin, capture_output=True, env=_env())
    if check and proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        raise GitError(f"{' '.join(cmd)}: exit {proc.returncode}: {err}")
    return proc.stdout


def init_bare(path: Path, default_branch: str) -> None:
    """Create an empty bare repository whose HEAD points at `default_branch`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    git(path.parent, "init", "-q", "--bare", f"--initial-branch={default_branch}", str(path))


def clone_bare(src: Path, dst: Path) -> None:
    """Make `dst` a bare copy of `src` with all its branches (a fork)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    git(dst.parent, "clone", "-q", "--bare", "--no-local", str(src), str(dst))


def _quote_path(path: str) -> str:
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _data(blob: bytes) -> bytes:
    return b"data %d\n" % len(blob) + blob + b"\n"


def commit_files(
    repo: Path,
    *,
    branch: str,
    parent: str | None,
    files: dict[str, str | bytes],
    delete: list[str],
    message: str,
    author: tuple[str, str],
    seq: int,
) -> str:
    """Commit `files` (and deletions) on top of `parent` onto `branch` with git fast-import; return the sha."""
    when = f"{_EPOCH + seq * 60} +0000"
    ident = f"{author[0]} <{author[1]}> {when}".encode()
    out = bytearray()
    out += f"commit refs/heads/{branch}\n".encode()
    out += b"author " + ident + b"\ncommitter " + ident + b"\n"
    out += _data(message.encode())
    out += f"from {parent}\n".encode() if parent else f"from {_ZERO}\n".encode()
    for path in delete:
        out += f"D {_quote_path(path)}\n".encode()
    for path, content in files.items():
        blob = content.encode() if isinstance(content, str) else content
        out += f"M 100644 inline {_quote_path(path)}\n".encode() + _data(blob)
    # --force: tests may rewrite a branch onto an unrelated parent (force push).
    git(repo, "fast-import", "--quiet", "--force", stdin=bytes(out))
    return rev_parse(repo, f"refs/heads/{branch}") or ""


def rev_parse(repo: Path, ref: str) -> str | None:
    """Return the commit sha `ref` names in `repo`, or None when it names no commit."""
    out = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    sha = out.decode().strip()
    return sha or None


def update_ref(repo: Path, ref: str, sha: str) -> None:
    """Point `ref` at `sha` in `repo`."""
    git(repo, "update-ref", ref, sha)


def fetch_ref(repo: Path, src_repo: Path, src_ref: str, dst_ref: str) -> None:
    """Copy `src_ref` of another repository into `dst_ref` of `repo` (fork PR heads)."""
    git(repo, "fetch", "-q", "--no-tags", str(src_repo), f"+{src_ref}:{dst_ref}")


def is_ancestor(repo: Path, old: str, new: str) -> bool:
    """True when `old` is an ancestor of `new` (a fast-forward update)."""
    cmd = ["git", "-C", str(repo), "merge-base", "--is-ancestor", old, new]
    return subprocess.run(cmd, capture_output=True, env=_env()).returncode == 0


def ls_tree(repo: Path, ref: str, path: str) -> list[TreeEntry]:
    """List `path` at `ref`: one entry for a file, its children for a directory ('' = root)."""
    spec = f"{ref}:{path}" if path else f"{ref}^{{tree}}"
    kind = git(repo, "cat-file", "-t", spec, check=False).decode().strip()
    if kind == "tree":
        out = git(repo, "ls-tree", "-z", "--long", spec)
        prefix = f"{path}/" if path else ""
    elif kind in ("blob", "commit"):
        out = git(repo, "ls-tree", "-z", "--long", ref, "--", path)
        prefix = ""
    else:
        return []
    entries = []
    for rec in out.decode(errors="surrogateescape").split("\0"):
        if not rec:
            continue
        meta, name = rec.split("\t", 1)
        mode, typ, sha, size = meta.split()
        entries.append(TreeEntry(mode, typ, sha, int(size) if size.isdigit() else 0, prefix + name))
    return entries


def read_blob(repo: Path, sha: str) -> bytes:
    """Return the bytes of blob `sha`."""
    return git(repo, "cat-file", "blob", sha)


def log_commits(repo: Path, rev_range: str) -> list[dict[str, str]]:
    """Commits of `rev_range` oldest first: sha, tree, parents, author/committer name/email/date, message."""
    fmt = "%H%x1f%T%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%B%x1e"
    out = git(repo, "log", "--reverse", f"--format={fmt}", rev_range, "--").decode(errors="replace")
    keys = ("sha", "tree", "parents", "an", "ae", "ad", "cn", "ce", "cd", "message")
    return [dict(zip(keys, rec.strip("\n").split("\x1f", 9), strict=True)) for rec in out.split("\x1e") if rec.strip()]


def _patches(repo: Path, spec: str) -> list[str | None]:
    out = git(repo, "diff", "-M", "--no-color", "--no-ext-diff", spec).decode(errors="replace")
    chunks = ("\n" + out).split("\ndiff --git ")[1:]
    patches: list[str | None] = []
    for chunk in chunks:
        at = chunk.find("\n@@")
        # GitHub omits `patch` for binary files and for changes without hunks (mode only, empty file).
        patches.append(chunk[at + 1 :].rstrip("\n") if at >= 0 else None)
    return patches


def _count_lines(patch: str | None) -> tuple[int, int]:
    # Same numbers as `git diff --numstat`: the hunk lines only (the patch starts at the first @@).
    if patch is None:
        return 0, 0
    lines = patch.split("\n")
    return sum(1 for x in lines if x.startswith("+")), sum(1 for x in lines if x.startswith("-"))


def diff_files(repo: Path, base: str, head: str) -> list[DiffFile]:
    """Files changed between the merge base of `base` and `head`, and `head` (GitHub's PR files)."""
    spec = f"{base}...{head}"
    raw = git(repo, "diff", "-M", "--raw", "-z", "--abbrev=40", spec).decode(errors="surrogateescape")
    fields = raw.split("\0")
    patches = _patches(repo, spec)
    files: list[DiffFile] = []
    i = 0
    while i < len(fields) and fields[i].startswith(":"):
        _, _, old_sha, new_sha, code = fields[i][1:].split(" ")
        letter = code[0]
        if letter in "RC":
            prev, name = fields[i + 1], fields[i + 2]
            i += 3
        else:
            prev, name = None, fields[i + 1]
            i += 2
        n = len(files)
        patch = patches[n] if n < len(patches) else None
        add, dele = _count_lines(patch)
        files.append(
            DiffFile(
                filename=name,
                status=_STATUS.get(letter, "modified"),
                additions=add,
                deletions=dele,
                sha=old_sha if letter == "D" else new_sha,
                previous_filename=prev,
                patch=patch,
            )
        )
    return files
