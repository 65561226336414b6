"""Pulls API: pull requests, their files (from the bare repository) and commits."""

from __future__ import annotations

from typing import Any

from testing.github_emulator import gitstore, rest
from testing.github_emulator.server import Reply, Request, invalid, not_found
from testing.github_emulator.state import Issue, RepoState, iso

MAX_FILES = 3000  # GitHub lists at most 3000 files of a PR


def get_pull_issue(req: Request) -> Issue:
    """The PR named by the route's `number` (404 for a plain issue or a missing number)."""
    it = req.rs.issues.get(int(req.params["number"]))
    if it is None or not it.is_pull:
        raise not_found()
    return it


def pull_json(req: Request, rs: RepoState, it: Issue) -> dict[str, Any]:
    """The full REST pull object for `it`."""
    head = req.emu.state.repo(it.head_repo)
    head_repo = head.repo if head is not None else rs.repo
    st = req.emu.state
    return rest.pull(req.emu.urls, rs, it, head_repo, st.pr_files(rs, it), st.pr_commits(rs, it))


def list_pulls(req: Request) -> Reply:
    """GET /repos/{o}/{r}/pulls: filters state (default open), head (owner:ref) and base."""
    rs, want = req.rs, req.query.get("state", "open")
    items = []
    for it in rs.issues.values():
        if not it.is_pull or (want != "all" and it.state != want):
            continue
        if "base" in req.query and it.base_ref != req.query["base"]:
            continue
        if "head" in req.query and f"{it.head_repo.split('/')[0]}:{it.head_ref}" != req.query["head"]:
            continue
        items.append(pull_json(req, rs, it))
    return req.paginate(items)


def create_pull(req: Request) -> Reply:
    """POST /repos/{o}/{r}/pulls {title, head, base, body}: a PR from a branch of this repository
    (422 when a branch is missing or an open PR from that head to that base exists)."""
    body = req.body_dict()
    head, base = str(body.get("head") or ""), str(body.get("base") or "")
    if any(it.is_pull and it.state == "open" and it.head_ref == head and it.base_ref == base
           for it in req.rs.issues.values()):
        raise invalid(f"A pull request already exists for {head}.", "PullRequest", "head")
    for name, ref in (("head", head), ("base", base)):
        if gitstore.rev_parse(req.rs.repo.bare_path, f"refs/heads/{ref}") is None:
            raise invalid(f"{name} branch {ref!r} does not exist", "PullRequest", name)
    pull = req.emu.open_pull(req.rs.repo, head=head, base=base, user=req.emu.bot_login,
                             title=str(body.get("title") or ""), body=str(body.get("body") or ""))
    return Reply(201, pull)


def get_pull(req: Request) -> Reply:
    """GET /repos/{o}/{r}/pulls/{n}."""
    return Reply(200, pull_json(req, req.rs, get_pull_issue(req)))


def update_pull(req: Request) -> Reply:
    """PATCH /repos/{o}/{r}/pulls/{n}: title, body, state, base."""
    rs, it, body = req.rs, get_pull_issue(req), req.body_dict()
    if "base" in body:
        sha = gitstore.rev_parse(rs.repo.bare_path, f"refs/heads/{body['base']}")
        if sha is None:
            raise invalid(f"base branch {body['base']!r} does not exist", "PullRequest", "base")
        it.base_ref, it.base_sha = str(body["base"]), sha
    if body.get("state") in ("open", "closed"):
        it.state = str(body["state"])
    if "title" in body:
        it.title = str(body["title"])
    if "body" in body:
        it.body = body["body"]
    it.updated_at = iso()
    return Reply(200, pull_json(req, rs, it))


# GitHub stops sending `patch` (and reports 0 additions, deletions and changes) for the files of
# a response once the patches already in it add up to about this many lines.
PATCH_LINES_PER_RESPONSE = 20_000


def list_files(req: Request) -> Reply:
    """GET /repos/{o}/{r}/pulls/{n}/files: git diff base...head, paginated, capped at 3000;
    patches only while the page's patches stay within GitHub's line budget."""
    rs, it = req.rs, get_pull_issue(req)
    files = req.emu.state.pr_files(rs, it)[:MAX_FILES]
    u, repo = req.emu.urls, rs.repo
    reply = req.paginate(files)
    lines = 0
    page = []
    for f in reply.body:
        body = rest.pull_file(u, repo, it.head_sha, f)
        lines += (f.patch or "").count("\n") + 1 if f.patch else 0
        if lines > PATCH_LINES_PER_RESPONSE:
            body.pop("patch", None)
            body.update(additions=0, deletions=0, changes=0)
        page.append(body)
    reply.body = page
    return reply


def list_commits(req: Request) -> Reply:
    """GET /repos/{o}/{r}/pulls/{n}/commits: base..head, oldest first."""
    rs, it = req.rs, get_pull_issue(req)
    commits = gitstore.log_commits(rs.repo.bare_path, f"{it.base_sha}..{it.head_sha}")
    return req.paginate([rest.commit(req.emu.urls, rs.repo, c) for c in commits])
