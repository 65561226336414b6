"""Apps, repositories, contents, collaborators, commits, branches and git refs."""

from __future__ import annotations

from testing.github_emulator import gitstore, rest, rest_app, tag_push
from testing.github_emulator.server import RATE_LIMIT, Reply, Request, invalid, not_found
from testing.github_emulator.state import iso

# GitHub's legacy `permission` field folds maintain into write and triage into read.
LEGACY_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read",
                     "read": "read", "none": "none"}


def _installation_id(req: Request) -> int:
    inst = int(req.params["id"])
    if inst != req.emu.installation_id:
        raise not_found()
    return inst


def create_token(req: Request) -> Reply:
    """POST /app/installations/{id}/access_tokens (App JWT): a one-hour installation token."""
    _installation_id(req)
    token, expires = req.emu.auth.issue_token()
    perms = req.body_dict().get("permissions") or rest_app.APP_PERMISSIONS
    return Reply(201, {"token": token, "expires_at": iso(expires), "permissions": perms,
                       "repository_selection": "all"})


def get_app(req: Request) -> Reply:
    """GET /app (App JWT)."""
    return Reply(200, rest_app.app(req.emu.urls))


def _installation(req: Request) -> Reply:
    return Reply(200, rest_app.installation(req.emu.urls, req.emu.installation_id, "flagos"))


def list_installations(req: Request) -> Reply:
    """GET /app/installations (App JWT)."""
    return req.paginate([_installation(req).body])


def get_installation(req: Request) -> Reply:
    """GET /app/installations/{id} (App JWT)."""
    _installation_id(req)
    return _installation(req)


def repo_installation(req: Request) -> Reply:
    """GET /repos/{o}/{r}/installation (App JWT): every emulated repository is installed."""
    body = rest_app.installation(req.emu.urls, req.emu.installation_id, req.rs.repo.owner)
    return Reply(200, body)


def installation_repos(req: Request) -> Reply:
    """GET /installation/repositories (installation token): every emulated repository."""
    u, st = req.emu.urls, req.emu.state
    repos = sorted((rs.repo for rs in st.repos.values()), key=lambda r: r.id)
    page = req.paginate(repos, lambda r: rest.repo(u, r))
    page.body = {"total_count": len(repos), "repository_selection": "all", "repositories": page.body}
    return page


def get_repo(req: Request) -> Reply:
    """GET /repos/{o}/{r}."""
    rs = req.rs
    parent = req.emu.state.repo(rs.repo.fork_of) if rs.repo.fork_of else None
    return Reply(200, rest.repo(req.emu.urls, rs.repo, parent.repo if parent else None))


def _resolve(req: Request, ref: str) -> str:
    sha = gitstore.rev_parse(req.rs.repo.bare_path, ref)
    if sha is None:
        raise not_found(f"No commit found for the ref {ref}")
    return sha


def get_contents(req: Request) -> Reply:
    """GET /repos/{o}/{r}/contents/{path}?ref=: a file (base64) or a directory listing."""
    rs = req.rs
    ref = req.query.get("ref") or rs.repo.default_branch
    sha = _resolve(req, ref)
    path = req.params.get("path", "").strip("/")
    entries = gitstore.ls_tree(rs.repo.bare_path, sha, path)
    u = req.emu.urls
    if not entries:
        raise not_found()
    if len(entries) == 1 and entries[0].path == path and entries[0].type != "tree":
        e = entries[0]
        data = gitstore.read_blob(rs.repo.bare_path, e.sha) if e.type == "blob" else None
        return Reply(200, rest.content(u, rs.repo, ref, e, data))
    return Reply(200, [rest.content(u, rs.repo, ref, e, None) for e in entries])


def collaborator_permission(req: Request) -> Reply:
    """GET /repos/{o}/{r}/collaborators/{user}/permission (owner: admin; unknown users: read)."""
    rs, login = req.rs, req.params["user"]
    role = "admin" if login == rs.repo.owner else rs.permissions.get(login, "read")
    return Reply(200, {"permission": LEGACY_PERMISSION[role], "role_name": role,
                       "user": rest.user(req.emu.urls, login)})


def get_commit(req: Request) -> Reply:
    """GET /repos/{o}/{r}/commits/{ref}."""
    sha = _resolve(req, req.params["ref"])
    commits = gitstore.log_commits(req.rs.repo.bare_path, f"{sha}^!")
    return Reply(200, rest.commit(req.emu.urls, req.rs.repo, commits[0]))


def list_commits(req: Request) -> Reply:
    """GET /repos/{o}/{r}/commits?sha=<branch or sha> (newest first)."""
    rs = req.rs
    start = _resolve(req, req.query.get("sha") or rs.repo.default_branch)
    commits = list(reversed(gitstore.log_commits(rs.repo.bare_path, start)))
    return req.paginate(commits, lambda c: rest.commit(req.emu.urls, rs.repo, c))


def get_branch(req: Request) -> Reply:
    """GET /repos/{o}/{r}/branches/{branch}."""
    rs, name = req.rs, req.params["branch"]
    sha = gitstore.rev_parse(rs.repo.bare_path, f"refs/heads/{name}")
    if sha is None:
        raise not_found("Branch not found")
    c = gitstore.log_commits(rs.repo.bare_path, f"{sha}^!")[0]
    return Reply(200, {"name": name, "commit": rest.commit(req.emu.urls, rs.repo, c), "protected": False,
                       "_links": {"self": f"{req.emu.url}/repos/{rs.repo.full_name}/branches/{name}"}})


def get_ref(req: Request) -> Reply:
    """GET /repos/{o}/{r}/git/ref/{ref} (ref like `heads/main`)."""
    ref = "refs/" + req.params["ref"]
    sha = gitstore.rev_parse(req.rs.repo.bare_path, ref)
    if sha is None:
        raise not_found()
    return Reply(200, rest.git_ref(req.emu.urls, req.rs.repo, ref, sha))


def create_ref(req: Request) -> Reply:
    """POST /repos/{o}/{r}/git/refs {ref, sha}: 422 when it exists or the sha is unknown."""
    rs, body = req.rs, req.body_dict()
    ref, sha = str(body.get("ref") or ""), str(body.get("sha") or "")
    if not ref.startswith("refs/") or ref.count("/") < 2:
        raise invalid(f"{ref!r} is not a valid ref name", "Reference", "ref")
    if gitstore.rev_parse(rs.repo.bare_path, ref) is not None:
        raise invalid("Reference already exists", "Reference", "ref", "already_exists")
    if gitstore.rev_parse(rs.repo.bare_path, sha) != sha:
        raise invalid("Object does not exist", "Reference", "sha")
    gitstore.update_ref(rs.repo.bare_path, ref, sha)
    if ref.startswith("refs/tags/"):
        tag_push.on_tag_push(rs, req.emu.state.next_id, ref.removeprefix("refs/tags/"), sha)
    return Reply(201, rest.git_ref(req.emu.urls, rs.repo, ref, sha))


def update_ref(req: Request) -> Reply:
    """PATCH /repos/{o}/{r}/git/refs/{ref} {sha, force}: 422 on a non-fast-forward without force."""
    rs, body = req.rs, req.body_dict()
    ref, sha = "refs/" + req.params["ref"], str(body.get("sha") or "")
    old = gitstore.rev_parse(rs.repo.bare_path, ref)
    if old is None:
        raise invalid("Reference does not exist", "Reference", "ref")
    if gitstore.rev_parse(rs.repo.bare_path, sha) != sha:
        raise invalid("Object does not exist", "Reference", "sha")
    if not body.get("force") and not gitstore.is_ancestor(rs.repo.bare_path, old, sha):
        raise invalid("Update is not a fast forward", "Reference", "sha")
    gitstore.update_ref(rs.repo.bare_path, ref, sha)
    if ref.startswith("refs/tags/") and old != sha:  # the same commit again pushes nothing
        tag_push.on_tag_push(rs, req.emu.state.next_id, ref.removeprefix("refs/tags/"), sha)
    return Reply(200, rest.git_ref(req.emu.urls, rs.repo, ref, sha))


def delete_ref(req: Request) -> Reply:
    """DELETE /repos/{o}/{r}/git/refs/{ref}."""
    ref = "refs/" + req.params["ref"]
    if gitstore.rev_parse(req.rs.repo.bare_path, ref) is None:
        raise invalid("Reference does not exist", "Reference", "ref")
    gitstore.git(req.rs.repo.bare_path, "update-ref", "-d", ref)
    return Reply(204)


def get_user(req: Request) -> Reply:
    """GET /users/{login}."""
    return Reply(200, rest.user(req.emu.urls, req.params["login"]))


def rate_limit(req: Request) -> Reply:
    """GET /rate_limit (the numbers of the headers)."""
    used, reset = req.emu.rate_usage()
    core = {"limit": RATE_LIMIT, "remaining": RATE_LIMIT - used, "reset": reset, "used": used,
            "resource": "core"}
    return Reply(200, {"resources": {"core": core}, "rate": core})

