"""New versus inherited findings: what a change introduced, judged against an earlier commit.

Every checker reports on a whole tree, but a reviewer (and a required check) needs to know what
this change added. Two pieces, shared by every command's `--since REF` and by the bot:

- `split_new(base, head) -> (new, inherited)` matches head findings against base findings with
  the same rule, file and message. Lines are only a tie-break, and line numbers inside messages
  ("first at line 12") are ignored, so editing above an old problem does not make it new. It is
  multiset matching: two identical findings at head against one at base is one new finding.
- `findings_at(repo, ref, check)` runs `check(root)` on the tree of `ref`, materialised in a
  scratch directory that borrows the repository's objects (the user's HEAD, index, working
  files, refs and worktree list are never touched). The scratch directory is a git work tree of
  its own, so checkers that ask git (the patch checker's history) work there as in the user's
  checkout. Pass a `FindingsCache` to reuse results for the same tree: two pull requests on one
  base check it once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from flagbot.hooks import git
from flagbot.hooks.findings import Finding
from flagbot.hooks.patches.scratch import remove_tree, repo_facts, temp_dir_name

Check = Callable[[Path], list[Finding]]

# Line numbers a message quotes ("first at line 12", "(line 40)") move with unrelated edits.
_LINE_IN_MESSAGE = re.compile(r"\b(line|lines)\s+\d+(\s*[-,]\s*\d+)*", re.IGNORECASE)


def match_key(f: Finding) -> tuple[str, str, str]:
    """What must be equal for a head finding to be the same as a base finding."""
    return f.rule, f.path, _LINE_IN_MESSAGE.sub(r"\1 N", f.message)


def split_new(base: Sequence[Finding], head: Sequence[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(new, inherited): head findings without / with a matching base finding.

    Per (rule, path, message) the first min(#base, #head) head findings are inherited; those
    on the same line as a base finding are matched first, then the rest in line order, so a
    block that moved keeps its findings inherited and an added duplicate is the one called new.
    """
    base_lines: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for f in base:
        base_lines[match_key(f)].append(f.line)
    groups: dict[tuple[str, str, str], list[Finding]] = defaultdict(list)
    for f in head:
        groups[match_key(f)].append(f)
    new: list[Finding] = []
    inherited: list[Finding] = []
    for key, found in groups.items():
        lines = sorted(base_lines.get(key, []))
        left: list[Finding] = []
        for f in sorted(found):
            if f.line in lines:
                lines.remove(f.line)
                inherited.append(f)
            else:
                left.append(f)
        # unmatched base findings pair with unmatched head ones in line order (moved lines)
        inherited += left[:len(lines)]
        new += left[len(lines):]
    return sorted(new), sorted(inherited)


class FindingsCache:
    """Findings per (tree id, check key): in memory, and in `directory` when one is given.

    The tree id names the content exactly, so an entry never goes stale; the directory lets a
    later process (a restarted bot worker) reuse it. Entries are small JSON files.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self.memory: dict[tuple[str, str], list[Finding]] = {}
        self.hits = 0

    def _file(self, tree: str, key: str) -> Path | None:
        if self.directory is None:
            return None
        # a readable head for people looking at the folder, the digest of the whole key for
        # uniqueness (keys carry pathspecs and can be long)
        head = re.sub(r"[^A-Za-z0-9_.-]", "_", key.split("|", 1)[0])[:40]
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        return self.directory / tree[:2] / f"{tree}-{head}-{digest}.json"

    def get(self, tree: str, key: str) -> list[Finding] | None:
        if (tree, key) in self.memory:
            self.hits += 1
            return list(self.memory[tree, key])
        path = self._file(tree, key)
        if path is None or not path.is_file():
            return None
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
            found = [Finding(**row) for row in rows]
        except (OSError, ValueError, TypeError):
            return None  # a damaged entry is a miss: the check simply runs again
        self.memory[tree, key] = found
        self.hits += 1
        return list(found)

    def put(self, tree: str, key: str, findings: Sequence[Finding]) -> None:
        self.memory[tree, key] = list(findings)
        path = self._file(tree, key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{temp_dir_name('').name}.tmp")
        tmp.write_text(json.dumps([asdict(f) for f in findings]), encoding="utf-8")
        tmp.replace(path)  # atomic: a reader sees the old entry or the whole new one


def tree_of(repo: Path, ref: str) -> str:
    """The id of `ref`'s root tree; UsageError naming the ref if it is not a commit here."""
    commit = git.resolve_commit(repo, ref, what="--since")
    return git.out(["rev-parse", f"{commit}^{{tree}}"], cwd=repo)


def materialize(repo: Path, ref: str, dest: Path, paths: Sequence[str] = ()) -> None:
    """Write `ref`'s tree (or only `paths` of it) into `dest`, a new git work tree whose
    objects come from `repo` by alternates and whose HEAD is `ref`'s commit."""
    common, objects, fmt = repo_facts(repo)
    commit = git.resolve_commit(repo, ref, what="--since")
    gdir = dest / ".git"
    (gdir / "objects" / "info").mkdir(parents=True)
    (gdir / "refs" / "heads").mkdir(parents=True)
    (gdir / "objects" / "info" / "alternates").write_text(f"{objects}\n")
    (gdir / "HEAD").write_text(f"{commit}\n")
    version = "0" if fmt == "sha1" else "1"
    # links become plain files holding their target: a checker never reads outside the tree
    config = (f"[core]\n\trepositoryformatversion = {version}\n\tbare = false\n"
              "\tsymlinks = false\n")
    if fmt != "sha1":
        config += f"[extensions]\n\tobjectformat = {fmt}\n"
    (gdir / "config").write_text(config)
    if (common / "shallow").is_file():
        (gdir / "shallow").write_bytes((common / "shallow").read_bytes())
    git.run(["read-tree", commit], cwd=dest, isolated=True)
    if paths:
        listed = git.run(["ls-files", "-z", "--", *paths], cwd=dest, isolated=True).stdout
        git.run(["checkout-index", "-f", "-z", "--stdin"], cwd=dest, stdin=listed, isolated=True)
    else:
        git.run(["checkout-index", "-a", "-f"], cwd=dest, isolated=True)


def findings_at(repo: Path, ref: str, check: Check, *, key: str = "", paths: Sequence[str] = (),
                cache: FindingsCache | None = None) -> list[Finding]:
    """`check(root)` on the tree of `ref` in a scratch work tree; paths are relative to it.

    `paths` (pathspecs) limits what is written out, for speed; `key` names the check and its
    options for `cache` (give every differently configured check its own key).
    """
    tree = tree_of(repo, ref) if cache is not None else ""
    # `repo` may be a sub-folder of the work tree (`flagbot -C sub`): check the same sub-folder
    shown = git.run(["rev-parse", "--show-prefix"], cwd=repo, check=False)  # fails when bare
    prefix = shown.stdout.decode("utf-8", "surrogateescape").strip().rstrip("/") \
        if shown.returncode == 0 else ""
    if prefix:  # plain pathspecs are relative to `repo`, the scratch tree is the top level
        paths = [p if p.startswith(":") else f"{prefix}/{p}" for p in paths]
    cache_key = f"{key}|{prefix}|{','.join(paths)}"
    if cache is not None:
        hit = cache.get(tree, cache_key)
        if hit is not None:
            return hit
    dest = temp_dir_name("flagbot-since-")
    try:
        dest.mkdir(mode=0o700)
        materialize(repo, ref, dest, paths)
        found = check((dest / prefix).resolve() if prefix else dest.resolve())
    finally:
        remove_tree(dest)
    if cache is not None:
        cache.put(tree, cache_key, found)
    return found


def add_option(parser: argparse.ArgumentParser) -> None:
    """`--since REF`: report only findings new since REF (its tree is checked the same way)."""
    parser.add_argument("--since", metavar="REF", help="report only findings new since REF (a "
                        "commit, branch or tag; e.g. the merge base with main); exit 1 only for "
                        "new errors. The tree of REF is checked in a scratch directory.")


def judge(repo: Path, since: str | None, head: list[Finding], check: Check, *,
          key: str = "", paths: Sequence[str] = ()) -> tuple[list[Finding], list[Finding] | None]:
    """(findings to report, inherited or None): with `since`, head's new findings and the
    inherited ones (`paths`: what to write of REF's tree); without, `head` unchanged and None."""
    if not since:
        return head, None
    return split_new(findings_at(repo, since, check, key=key, paths=paths), head)
