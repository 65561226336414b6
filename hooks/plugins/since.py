"""`--since REF` for check-plugins: the findings at REF, and which of today's are new.

A small local adapter with the shape of the project-wide helper for "findings new since REF"
(`judge(repo, since, head, check) -> (new, inherited)`): when that helper exists, the CLI and
the check run can call it instead and this module goes. REF's tree is written into a scratch
folder through a private index file (nothing of the user's HEAD, index, files, refs or
worktrees is touched) and checked the same way as the working tree.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from flagbot.hooks import git
from flagbot.hooks.findings import Finding

Check = Callable[[Path], list[Finding]]
# "first at line 12" moves with unrelated edits above it: not part of a finding's identity
_LINE_IN_MESSAGE = re.compile(r"\bline \d+")
# the files a registry check reads at REF (pathspecs, from the repository root)
SOURCES = (":(top,glob)**/*.py", ":(top,glob)**/*.yaml", ":(top,glob)**/*.yml")


def match_key(f: Finding) -> tuple[str, str, str]:
    return f.rule, f.path, _LINE_IN_MESSAGE.sub("line N", f.message)


def split_new(base: Sequence[Finding], head: Sequence[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(new, inherited): each base finding excuses one head finding with the same rule, path
    and message (line numbers aside); the head findings left over are new."""
    left: dict[tuple[str, str, str], int] = defaultdict(int)
    for f in base:
        left[match_key(f)] += 1
    new: list[Finding] = []
    inherited: list[Finding] = []
    for f in sorted(head):
        key = match_key(f)
        if left[key]:
            left[key] -= 1
            inherited.append(f)
        else:
            new.append(f)
    return new, inherited


def findings_at(repo: Path, ref: str, check: Check) -> list[Finding]:
    """`check(folder)` on REF's tree; `folder` is the same sub-folder `repo` is of its tree."""
    commit = git.resolve_commit(repo, ref, what="--since")
    prefix = git.out(["rev-parse", "--show-prefix"], cwd=repo).rstrip("/")
    scratch = Path(tempfile.mkdtemp(prefix="flagbot-since-"))
    try:
        # a private index file: the repository's own index is never read or written
        env = {"GIT_INDEX_FILE": str(scratch / "index")}
        tree = scratch / "tree"
        git.run(["read-tree", commit], cwd=repo, env=env)
        # only what registries and their facts are made of: Python and YAML files
        wanted = git.run(["ls-files", "-z", "--", *SOURCES], cwd=repo, env=env).stdout
        # links become plain files holding their target, so nothing outside is ever read
        git.run(["-c", "core.symlinks=false", "checkout-index", "-f", "-z", "--stdin",
                 f"--prefix={tree}/"], cwd=repo, env=env, stdin=wanted)
        tree.mkdir(exist_ok=True)  # an empty tree writes nothing
        return check(tree / prefix if prefix else tree)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def judge(repo: Path, since: str | None, head: list[Finding],
          check: Check) -> tuple[list[Finding], list[Finding] | None]:
    """(findings to report, inherited or None): with `since`, head's new findings and the
    inherited ones; without, `head` unchanged and None."""
    if not since:
        return head, None
    return split_new(findings_at(repo, since, check), head)
