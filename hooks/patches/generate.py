"""Patch generation: `git format-patch` of BASE..CUR with every byte-changing knob pinned.

Runs inside a scratch git dir (hooks/patches/scratch.py): no user or repository config, no
attributes file, no replace refs, so the bytes depend only on the commits (and on git's own
format, which the flags below fix as far as git allows). `hardwares/` is excluded by pathspec,
which also drops commits that touch nothing else. A range with merges is squashed into one
synthetic commit (BASE's child, CUR's tree, author, committer and message) before formatting.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from flagbot.hooks.errors import UsageError
from flagbot.hooks.patches.scratch import GitDir

# Flags beat config, so each byte-relevant setting is also given here explicitly.
FORMAT_PATCH_FLAGS: tuple[str, ...] = (
    "--stdout", "--full-index", "--binary", "--no-signature", "--no-attach", "--no-thread",
    "--no-to", "--no-cc", "--no-add-header", "--no-signoff", "--no-from", "--no-notes",
    "--no-cover-letter", "--subject-prefix=PATCH", "--no-ext-diff", "--no-textconv", "--no-color",
    "--submodule=short", "--ignore-submodules=none", "-U3", "--inter-hunk-context=0",
    "--diff-algorithm=myers", "--indent-heuristic", "-M", f"-O{os.devnull}", "--no-relative",
    "--src-prefix=a/", "--dst-prefix=b/", "--encoding=UTF-8", "--stat=72", "--summary",
)


class Range(NamedTuple):
    """What BASE..CUR holds: commits (oldest first), whether merges are among them."""

    commits: list[str]
    merges: bool


def exclude_spec(hardwares: str) -> list[str]:
    """Pathspec for 'everything except the hardwares folder'."""
    return ["--", f":(exclude,top,literal){hardwares}"]


def range_args(base: str, cur: str) -> list[str]:
    """rev-list arguments listing BASE..CUR oldest first, with parents."""
    return ["rev-list", "--reverse", "--topo-order", "--parents", f"{base}..{cur}"]


def plan_range(gd: GitDir, base: str, cur: str) -> Range:
    """The commits of BASE..CUR (oldest first) and whether any is a merge."""
    return parse_range(gd.out(range_args(base, cur)))


def parse_range(lines: str) -> Range:
    """A Range from `rev-list --parents` output."""
    commits: list[str] = []
    merges = False
    for line in lines.splitlines():
        ids = line.split()
        commits.append(ids[0])
        merges = merges or len(ids) > 2
    return Range(commits, merges)


def read_commit(gd: GitDir, oid: str) -> tuple[dict[str, bytes], bytes]:
    """(header fields, raw message) of a commit object."""
    raw = gd.run(["cat-file", "commit", oid]).stdout
    head, _, message = raw.partition(b"\n\n")
    fields: dict[str, bytes] = {}
    for line in head.split(b"\n"):
        if line and not line.startswith(b" "):
            key, _, value = line.partition(b" ")
            fields.setdefault(key.decode(), value)
    return fields, message


def ident_env(fields: dict[str, bytes]) -> dict[str, str]:
    """GIT_AUTHOR_*/GIT_COMMITTER_* reproducing a commit's author and committer lines."""
    env: dict[str, str] = {}
    for role, key in (("author", "AUTHOR"), ("committer", "COMMITTER")):
        value = fields[role].decode("utf-8", "surrogateescape")
        name_email, _, when = value.rpartition("> ")
        name, _, email = name_email.partition(" <")
        env[f"GIT_{key}_NAME"] = name
        env[f"GIT_{key}_EMAIL"] = email
        env[f"GIT_{key}_DATE"] = f"@{when}"
    return env


def squash(gd: GitDir, base: str, cur: str) -> str:
    """A commit on BASE with CUR's tree, author, committer and message (merges flattened)."""
    fields, message = read_commit(gd, cur)
    args = ["commit-tree", f"{cur}^{{tree}}", "-p", base]
    if "encoding" in fields:
        args = ["-c", f"i18n.commitEncoding={fields['encoding'].decode()}", *args]
    return gd.run(args, stdin=message, env=ident_env(fields)).stdout.decode().strip()


def format_patch_args(base: str, tip: str, hardwares: str) -> list[str]:
    """format-patch arguments for the canonical series of base..tip, hardwares/ left out."""
    return ["format-patch", *FORMAT_PATCH_FLAGS, f"--base={base}", f"{base}..{tip}",
            *exclude_spec(hardwares)]


def format_patch(gd: GitDir, base: str, tip: str, hardwares: str) -> bytes:
    """The canonical series for base..tip, hardwares/ left out."""
    return gd.run(format_patch_args(base, tip, hardwares)).stdout


class Generated(NamedTuple):
    """A generated series, the commit it was made up to, and whether merges were squashed."""

    data: bytes
    tip: str
    squashed: bool


def generate(gd: GitDir, base: str, cur: str, hardwares: str,
             rng: Range | None = None) -> Generated:
    """Make the patch series of BASE..CUR; UsageError if there is nothing to patch."""
    rng = rng or plan_range(gd, base, cur)
    if not rng.commits:
        raise UsageError(f"no commits between {base[:12]} and {cur[:12]}",
                         hint="commit your vendor changes first, then run flagbot patch again")
    tip = squash(gd, base, cur) if rng.merges else cur
    data = format_patch(gd, base, tip, hardwares)
    if not data.strip():
        raise UsageError(
            f"no changes between {base[:12]} and {cur[:12]} outside {hardwares}/",
            hint="commit the vendor changes (outside hardwares/) on top of the base first")
    return Generated(data, tip, rng.merges)


def read_commits(gd: GitDir, oids: list[str]) -> dict[str, tuple[dict[str, bytes], bytes]]:
    """(header fields, raw message) for several commits, in one `cat-file --batch` call."""
    raw = gd.run(["cat-file", "--batch"], stdin="".join(f"{o}\n" for o in oids).encode()).stdout
    result: dict[str, tuple[dict[str, bytes], bytes]] = {}
    pos = 0
    for oid in oids:
        end = raw.index(b"\n", pos)
        size = int(raw[pos:end].split()[2])
        body = raw[end + 1: end + 1 + size]
        pos = end + 1 + size + 1
        head, _, message = body.partition(b"\n\n")
        fields: dict[str, bytes] = {}
        for line in head.split(b"\n"):
            key, _, value = line.partition(b" ")
            if line and not line.startswith(b" "):
                fields.setdefault(key.decode(), value)
        result[oid] = (fields, message)
    return result


def utf8_message(fields: dict[str, bytes], message: bytes) -> bytes:
    """A commit message as format-patch shows it: re-encoded to UTF-8 when it declares another."""
    enc = fields.get("encoding", b"UTF-8").decode()
    if enc.upper().replace("-", "") == "UTF8":
        return message
    try:
        return message.decode(enc).encode("utf-8")
    except (LookupError, UnicodeDecodeError):
        return message
