"""JSON bodies shaped like api.github.com's, with every `url` pointing back at the emulator."""

from __future__ import annotations

import base64
import hashlib
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from testing.github_emulator.gitstore import DiffFile, TreeEntry
from testing.github_emulator.state import Comment, EmuRepo, Issue, RepoState, iso

REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")


@dataclass(frozen=True)
class Urls:
    """Where the emulated API and web UI live (`api` = emu.url; `html` = the fake web host)."""

    api: str
    html: str
    app_slug: str = "flagbot"
    app_id: int = 1


def node_id(kind: str, ident: int | str) -> str:
    """An opaque GraphQL-style node id, stable per object."""
    return base64.b64encode(f"0:{kind}{ident}".encode()).decode().rstrip("=")


def user_id(login: str) -> int:
    """A stable numeric id for `login`."""
    return zlib.crc32(login.encode()) % 90_000_000 + 1_000_000


def user(u: Urls, login: str) -> dict[str, Any]:
    """A user (or `[bot]` account) object."""
    uid = user_id(login)
    return {
        "login": login,
        "id": uid,
        "node_id": node_id("User", uid),
        "avatar_url": f"{u.html}/avatars/{quote(login)}",
        "url": f"{u.api}/users/{quote(login)}",
        "html_url": f"{u.html}/{quote(login)}",
        "type": "Bot" if login.endswith("[bot]") else "User",
        "site_admin": False,
    }


def repo(u: Urls, r: EmuRepo, parent: EmuRepo | None = None) -> dict[str, Any]:
    """A full repository object; `clone_url` is the bare repository's file:// URL."""
    api = f"{u.api}/repos/{r.full_name}"
    body: dict[str, Any] = {
        "id": r.id,
        "node_id": node_id("Repository", r.id),
        "name": r.name,
        "full_name": r.full_name,
        "private": False,
        "owner": user(u, r.owner),
        "html_url": f"{u.html}/{r.full_name}",
        "description": None,
        "fork": r.fork_of is not None,
        "url": api,
        "clone_url": r.clone_url,
        "git_url": r.clone_url,
        "ssh_url": r.clone_url,
        "svn_url": f"{u.html}/{r.full_name}",
        "pulls_url": api + "/pulls{/number}",
        "issues_url": api + "/issues{/number}",
        "labels_url": api + "/labels{/name}",
        "contents_url": api + "/contents/{+path}",
        "default_branch": r.default_branch,
        "visibility": "public",
        "archived": False,
        "disabled": False,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "pushed_at": "2026-01-01T00:00:00Z",
        "permissions": {"admin": False, "maintain": False, "push": True, "triage": True, "pull": True},
    }
    if parent is not None:
        body["parent"] = body["source"] = repo(u, parent)
    return body


def label(u: Urls, r: EmuRepo, lab: dict[str, Any]) -> dict[str, Any]:
    """A label object."""
    return {
        "id": lab["id"],
        "node_id": node_id("Label", lab["id"]),
        "url": f"{u.api}/repos/{r.full_name}/labels/{quote(lab['name'], safe='')}",
        "name": lab["name"],
        "color": lab["color"],
        "description": lab["description"],
        "default": False,
    }


def _ref_part(u: Urls, rs: RepoState, head_repo: EmuRepo, ref: str, sha: str) -> dict[str, Any]:
    return {
        "label": f"{head_repo.owner}:{ref}",
        "ref": ref,
        "sha": sha,
        "user": user(u, head_repo.owner),
        "repo": repo(u, head_repo),
    }


def issue(u: Urls, rs: RepoState, it: Issue) -> dict[str, Any]:
    """An issue object (a PR seen through the Issues API carries `pull_request`)."""
    r = rs.repo
    api = f"{u.api}/repos/{r.full_name}/issues/{it.number}"
    body: dict[str, Any] = {
        "id": it.id,
        "node_id": node_id("Issue", it.id),
        "url": api,
        "repository_url": f"{u.api}/repos/{r.full_name}",
        "labels_url": api + "/labels{/name}",
        "comments_url": api + "/comments",
        "events_url": api + "/events",
        "html_url": f"{u.html}/{r.full_name}/{'pull' if it.is_pull else 'issues'}/{it.number}",
        "number": it.number,
        "state": it.state,
        "title": it.title,
        "body": it.body,
        "user": user(u, it.user),
        "labels": [label(u, r, lab) for n in it.labels if (lab := rs.label(n))],
        "assignee": None,
        "assignees": [],
        "locked": False,
        "milestone": None,
        "comments": sum(1 for c in rs.comments.values() if c.number == it.number),
        "created_at": it.created_at,
        "updated_at": it.updated_at,
        "closed_at": it.closed_at,
        "author_association": "OWNER" if it.user == r.owner else "CONTRIBUTOR",
    }
    if it.is_pull:
        pulls = f"{u.api}/repos/{r.full_name}/pulls/{it.number}"
        html = f"{u.html}/{r.full_name}/pull/{it.number}"
        body["pull_request"] = {
            "url": pulls,
            "html_url": html,
            "diff_url": html + ".diff",
            "patch_url": html + ".patch",
            "merged_at": it.merged_at,
        }
    return body


def pull(u: Urls, rs: RepoState, it: Issue, head_repo: EmuRepo, files: list[DiffFile],
         commits: int = 1) -> dict[str, Any]:
    """A full pull request object."""
    r = rs.repo
    api = f"{u.api}/repos/{r.full_name}/pulls/{it.number}"
    issue_api = f"{u.api}/repos/{r.full_name}/issues/{it.number}"
    html = f"{u.html}/{r.full_name}/pull/{it.number}"
    base = issue(u, rs, it)
    body: dict[str, Any] = {
        "url": api,
        "id": it.id,
        "node_id": node_id("PullRequest", it.id),
        "html_url": html,
        "diff_url": html + ".diff",
        "patch_url": html + ".patch",
        "issue_url": issue_api,
        "commits_url": api + "/commits",
        "review_comments_url": api + "/comments",
        "review_comment_url": f"{u.api}/repos/{r.full_name}/pulls/comments{{/number}}",
        "comments_url": issue_api + "/comments",
        "statuses_url": f"{u.api}/repos/{r.full_name}/statuses/{it.head_sha}",
        "number": it.number,
        "state": it.state,
        "locked": False,
        "title": it.title,
        "user": base["user"],
        "body": it.body,
        "labels": base["labels"],
        "milestone": None,
        "active_lock_reason": None,
        "created_at": it.created_at,
        "updated_at": it.updated_at,
        "closed_at": it.closed_at,
        "merged_at": it.merged_at,
        "merge_commit_sha": it.merge_commit_sha,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "head": _ref_part(u, rs, head_repo, it.head_ref, it.head_sha),
        "base": _ref_part(u, rs, r, it.base_ref, it.base_sha),
        "author_association": base["author_association"],
        "auto_merge": None,
        "draft": it.draft,
        "merged": it.merged_at is not None,
        "mergeable": True,
        "rebaseable": True,
        "mergeable_state": "clean",
        "merged_by": None,
        "comments": base["comments"],
        "review_comments": 0,
        "maintainer_can_modify": it.maintainer_can_modify,
        "commits": commits,
        "additions": sum(f.additions for f in files),
        "deletions": sum(f.deletions for f in files),
        "changed_files": len(files),
        "_links": {
            "self": {"href": api},
            "html": {"href": html},
            "issue": {"href": issue_api},
            "comments": {"href": issue_api + "/comments"},
        },
    }
    return body


def pull_file(u: Urls, r: EmuRepo, head_sha: str, f: DiffFile) -> dict[str, Any]:
    """One entry of `GET /pulls/{n}/files`."""
    path = quote(f.filename)
    body: dict[str, Any] = {
        "sha": f.sha,
        "filename": f.filename,
        "status": f.status,
        "additions": f.additions,
        "deletions": f.deletions,
        "changes": f.additions + f.deletions,
        "blob_url": f"{u.html}/{r.full_name}/blob/{head_sha}/{path}",
        "raw_url": f"{u.html}/{r.full_name}/raw/{head_sha}/{path}",
        "contents_url": f"{u.api}/repos/{r.full_name}/contents/{path}?ref={head_sha}",
    }
    if f.patch is not None:
        body["patch"] = f.patch
    if f.previous_filename is not None:
        body["previous_filename"] = f.previous_filename
    return body


def commit(u: Urls, r: EmuRepo, c: dict[str, str]) -> dict[str, Any]:
    """A commit object from a `gitstore.log_commits` record."""
    api = f"{u.api}/repos/{r.full_name}"
    sha = c["sha"]
    return {
        "sha": sha,
        "node_id": node_id("Commit", sha),
        "url": f"{api}/commits/{sha}",
        "html_url": f"{u.html}/{r.full_name}/commit/{sha}",
        "comments_url": f"{api}/commits/{sha}/comments",
        "commit": {
            "url": f"{api}/git/commits/{sha}",
            "author": {"name": c["an"], "email": c["ae"], "date": c["ad"]},
            "committer": {"name": c["cn"], "email": c["ce"], "date": c["cd"]},
            "message": c["message"].rstrip("\n"),
            "tree": {"sha": c["tree"], "url": f"{api}/git/trees/{c['tree']}"},
            "comment_count": 0,
        },
        "author": None,
        "committer": None,
        "parents": [
            {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{u.html}/{r.full_name}/commit/{p}"}
            for p in c["parents"].split()
        ],
    }


def association(r: EmuRepo, login: str, permissions: Mapping[str, str] | None) -> str:
    """GitHub's `author_association`: the owner, a collaborator (any role), else a contributor."""
    if login == r.owner:
        return "OWNER"
    if permissions and permissions.get(login, "none") != "none":
        return "COLLABORATOR"
    return "CONTRIBUTOR"


def comment(u: Urls, r: EmuRepo, c: Comment,
            permissions: Mapping[str, str] | None = None) -> dict[str, Any]:
    """An issue comment object with its reaction summary."""
    api = f"{u.api}/repos/{r.full_name}/issues/comments/{c.id}"
    counts = {k: sum(1 for _, _, x in c.reactions if x == k) for k in REACTIONS}
    return {
        "id": c.id,
        "node_id": node_id("IssueComment", c.id),
        "url": api,
        "html_url": f"{u.html}/{r.full_name}/pull/{c.number}#issuecomment-{c.id}",
        "issue_url": f"{u.api}/repos/{r.full_name}/issues/{c.number}",
        "body": c.body,
        "user": user(u, c.user),
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "author_association": association(r, c.user, permissions),
        "reactions": {"url": api + "/reactions", "total_count": len(c.reactions), **counts},
    }


def reaction(u: Urls, rid: int, login: str, content: str) -> dict[str, Any]:
    """A reaction object."""
    return {
        "id": rid,
        "node_id": node_id("Reaction", rid),
        "user": user(u, login),
        "content": content,
        "created_at": iso(),
    }


def content(u: Urls, r: EmuRepo, ref: str, e: TreeEntry, data: bytes | None) -> dict[str, Any]:
    """A contents API entry; `data` given -> a file with base64 content (60-column lines like GitHub)."""
    typ = {"blob": "file", "tree": "dir", "commit": "submodule"}.get(e.type, "file")
    if e.mode == "120000":
        typ = "symlink"
    api = f"{u.api}/repos/{r.full_name}/contents/{quote(e.path)}?ref={quote(ref)}"
    html = f"{u.html}/{r.full_name}/{'tree' if typ == 'dir' else 'blob'}/{quote(ref)}/{quote(e.path)}"
    body: dict[str, Any] = {
        "type": typ,
        "size": e.size,
        "name": e.path.rsplit("/", 1)[-1],
        "path": e.path,
        "sha": e.sha,
        "url": api,
        "git_url": f"{u.api}/repos/{r.full_name}/git/{'trees' if typ == 'dir' else 'blobs'}/{e.sha}",
        "html_url": html,
        "download_url": None if typ == "dir" else f"{u.html}/{r.full_name}/raw/{ref}/{quote(e.path)}",
        "_links": {"self": api, "git": None, "html": html},
    }
    if data is not None:
        b64 = base64.b64encode(data).decode()
        body["encoding"] = "base64"
        body["content"] = "\n".join(b64[i : i + 60] for i in range(0, len(b64), 60)) + "\n"
    return body


def git_ref(u: Urls, r: EmuRepo, ref: str, sha: str) -> dict[str, Any]:
    """A git reference object."""
    return {
        "ref": ref,
        "node_id": node_id("Ref", hashlib.sha1(ref.encode()).hexdigest()[:12]),
        "url": f"{u.api}/repos/{r.full_name}/git/{ref}",
        "object": {"sha": sha, "type": "commit", "url": f"{u.api}/repos/{r.full_name}/git/commits/{sha}"},
    }
