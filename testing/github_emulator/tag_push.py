"""Workflow runs started by a pushed tag (`on: push: tags: [...]`), as GitHub starts them.

Creating a tag or moving it to another commit is a push; every workflow file in the tagged
tree whose `push.tags` filters match the tag name gets a run with event `push`, `head_branch`
the tag name and `head_sha` the tagged commit. Deleting a tag starts nothing. Filters follow
GitHub's pattern syntax as far as tags need it: `*` stops at `/`, `**` does not, `!` negates.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from testing.github_emulator import gitstore
from testing.github_emulator.state import RepoState, WorkflowRun, iso

WORKFLOWS = ".github/workflows"
REF_NAME = re.compile(r"\$\{\{\s*github\.ref_name\s*\}\}")


def pattern(glob: str) -> re.Pattern[str]:
    """A filter pattern as a regex."""
    out = ""
    i = 0
    while i < len(glob):
        if glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return re.compile(out)


def matches(filters: list[str], name: str) -> bool:
    """GitHub's rule: the last matching filter decides; `!` filters exclude."""
    hit = False
    for f in filters:
        negated = f.startswith("!")
        if pattern(f[1:] if negated else f).fullmatch(name):
            hit = not negated
    return hit


def tag_filters(doc: dict[str, Any]) -> list[str] | None:
    """`on.push.tags` of a workflow, or None when it has no such trigger."""
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` key as the boolean True
    push = on.get("push") if isinstance(on, dict) else None
    tags = push.get("tags") if isinstance(push, dict) else None
    return [str(t) for t in tags] if isinstance(tags, list) else None


def on_tag_push(rs: RepoState, next_id: Any, tag: str, sha: str) -> list[int]:
    """Start the runs a push of `tag` at `sha` triggers; returns their ids."""
    bare = rs.repo.bare_path
    listing = gitstore.git(bare, "ls-tree", "--name-only", f"{sha}:{WORKFLOWS}", check=False)
    started = []
    for name in sorted(listing.decode().split()):
        if not re.fullmatch(r"[A-Za-z0-9_.-]+\.ya?ml", name):
            continue
        raw = gitstore.git(bare, "show", f"{sha}:{WORKFLOWS}/{name}", check=False)
        try:
            doc = yaml.safe_load(raw)
        except yaml.YAMLError:
            continue
        filters = tag_filters(doc) if isinstance(doc, dict) else None
        if not filters or not matches(filters, tag):
            continue
        title = REF_NAME.sub(tag, str(doc.get("run-name") or doc.get("name") or name))
        run = WorkflowRun(next_id(), name, title, "push", tag, sha, {}, iso(), job_id=next_id())
        rs.workflow_runs[run.id] = run
        started.append(run.id)
    return started
