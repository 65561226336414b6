"""Issues API: issues, repository labels, issue labels, conversation comments, reactions."""

from __future__ import annotations

import re
from typing import Any

from testing.github_emulator import rest
from testing.github_emulator.server import Reply, Request, invalid, not_found
from testing.github_emulator.state import Comment, Issue, RepoState, iso

DEFAULT_LABEL_COLOR = "ededed"  # what GitHub gives labels it creates while adding them to an issue
_COLOR = re.compile(r"[0-9a-fA-F]{6}")


def get_issue(req: Request) -> Issue:
    """The issue or PR named by the route's `number` (404 when missing)."""
    it = req.rs.issues.get(int(req.params["number"]))
    if it is None:
        raise not_found()
    return it


def ensure_label(req: Request, rs: RepoState, name: str, color: str = DEFAULT_LABEL_COLOR,
                 description: str | None = None) -> dict[str, Any]:
    """Return the repository label `name`, creating it like GitHub's add-labels call does."""
    lab = rs.label(name)
    if lab is None:
        _check_label_fields(name, color, description)
        lab = {"id": req.emu.state.next_id(), "name": name, "color": color.lower(), "description": description}
        rs.labels[name.lower()] = lab
    return lab


def _check_label_fields(name: str, color: str, description: str | None) -> None:
    if not name.strip():
        raise invalid("name is missing", "Label", "name", "missing_field")
    if len(name) > 50:
        raise invalid("name is too long (maximum is 50 characters)", "Label", "name")
    if not _COLOR.fullmatch(color):
        raise invalid(f"color {color!r} is not a 6-digit hex colour", "Label", "color")
    if description is not None and len(description) > 100:
        raise invalid("description is too long (maximum is 100 characters)", "Label", "description")


def _label_json(req: Request, lab: dict[str, Any]) -> dict[str, Any]:
    return rest.label(req.emu.urls, req.rs.repo, lab)


# -- repository labels ------------------------------------------------------------------------

def list_labels(req: Request) -> Reply:
    """GET /repos/{o}/{r}/labels."""
    return req.paginate([_label_json(req, lab) for lab in req.rs.labels.values()])


def create_label(req: Request) -> Reply:
    """POST /repos/{o}/{r}/labels: 422 already_exists for a taken name (case-insensitive)."""
    body = req.body_dict()
    name = str(body.get("name") or "")
    if req.rs.label(name) is not None:
        raise invalid(f"label {name!r} already exists", "Label", "name", "already_exists")
    color = str(body.get("color", DEFAULT_LABEL_COLOR)).lstrip("#")
    lab = ensure_label(req, req.rs, name, color, body.get("description"))
    return Reply(201, _label_json(req, lab))


def _label(req: Request) -> dict[str, Any]:
    lab = req.rs.label(req.params["name"])
    if lab is None:
        raise not_found()
    return lab


def get_label(req: Request) -> Reply:
    """GET /repos/{o}/{r}/labels/{name}."""
    return Reply(200, _label_json(req, _label(req)))


def update_label(req: Request) -> Reply:
    """PATCH /repos/{o}/{r}/labels/{name}: new_name, color, description."""
    lab, body = _label(req), req.body_dict()
    new_name = str(body.get("new_name") or lab["name"])
    color = str(body.get("color", lab["color"])).lstrip("#")
    description = body.get("description", lab["description"])
    other = req.rs.label(new_name)
    if other is not None and other is not lab:
        raise invalid(f"label {new_name!r} already exists", "Label", "name", "already_exists")
    _check_label_fields(new_name, color, description)
    del req.rs.labels[lab["name"].lower()]
    old = lab["name"]
    lab.update(name=new_name, color=color.lower(), description=description)
    req.rs.labels[new_name.lower()] = lab
    for it in req.rs.issues.values():
        it.labels = [new_name if n.lower() == old.lower() else n for n in it.labels]
    return Reply(200, _label_json(req, lab))


def delete_label(req: Request) -> Reply:
    """DELETE /repos/{o}/{r}/labels/{name}: also drops it from every issue."""
    lab = _label(req)
    del req.rs.labels[lab["name"].lower()]
    for it in req.rs.issues.values():
        it.labels = [n for n in it.labels if n.lower() != lab["name"].lower()]
    return Reply(204)


# -- issues and their labels ------------------------------------------------------------------

def get_issue_route(req: Request) -> Reply:
    """GET /repos/{o}/{r}/issues/{n} (a PR answers too, with `pull_request`)."""
    return Reply(200, rest.issue(req.emu.urls, req.rs, get_issue(req)))


def _issue_labels_reply(req: Request, it: Issue) -> Reply:
    labs = [lab for n in it.labels if (lab := req.rs.label(n))]
    return Reply(200, [_label_json(req, lab) for lab in labs])


def _label_names(req: Request) -> list[str]:
    body = req.json
    if isinstance(body, dict):
        body = body.get("labels")
    if not isinstance(body, list) or not body:
        raise invalid("labels must be a non-empty list", "Issue", "labels", "missing_field")
    names = [item["name"] if isinstance(item, dict) else item for item in body]
    if not all(isinstance(n, str) for n in names):
        raise invalid("labels must be strings", "Issue", "labels")
    return [str(n) for n in names]


def list_issue_labels(req: Request) -> Reply:
    """GET /repos/{o}/{r}/issues/{n}/labels."""
    it = get_issue(req)
    return req.paginate([_label_json(req, lab) for n in it.labels if (lab := req.rs.label(n))])


def add_issue_labels(req: Request) -> Reply:
    """POST /repos/{o}/{r}/issues/{n}/labels: adds, creating missing repository labels (ededed)."""
    it = get_issue(req)
    for name in _label_names(req):
        lab = ensure_label(req, req.rs, name)
        if all(n.lower() != name.lower() for n in it.labels):
            it.labels.append(lab["name"])
    it.updated_at = iso()
    return _issue_labels_reply(req, it)


def set_issue_labels(req: Request) -> Reply:
    """PUT /repos/{o}/{r}/issues/{n}/labels: replaces the issue's labels."""
    it = get_issue(req)
    names = _label_names(req) if req.json not in ([], {"labels": []}) else []
    it.labels = []
    for name in names:
        lab = ensure_label(req, req.rs, name)
        if lab["name"] not in it.labels:
            it.labels.append(lab["name"])
    it.updated_at = iso()
    return _issue_labels_reply(req, it)


def clear_issue_labels(req: Request) -> Reply:
    """DELETE /repos/{o}/{r}/issues/{n}/labels."""
    get_issue(req).labels = []
    return Reply(204)


def remove_issue_label(req: Request) -> Reply:
    """DELETE /repos/{o}/{r}/issues/{n}/labels/{name}: 404 `Label does not exist` when absent."""
    it, name = get_issue(req), req.params["name"]
    kept = [n for n in it.labels if n.lower() != name.lower()]
    if len(kept) == len(it.labels):
        raise not_found("Label does not exist")
    it.labels = kept
    it.updated_at = iso()
    return _issue_labels_reply(req, it)


# -- comments and reactions -------------------------------------------------------------------

def add_comment(req: Request, rs: RepoState, number: int, user: str, body: str) -> Comment:
    """Store a new comment on issue/PR `number`."""
    if not body:
        raise invalid("body is missing", "IssueComment", "body", "missing_field")
    if len(body) > 65536:
        raise invalid("body is too long (maximum is 65536 characters)", "IssueComment", "body")
    now = iso()
    c = Comment(req.emu.state.next_id(), number, body, user, now, now)
    rs.comments[c.id] = c
    return c


def list_comments(req: Request) -> Reply:
    """GET /repos/{o}/{r}/issues/{n}/comments (oldest first, paginated)."""
    it = get_issue(req)
    items = [c for c in req.rs.comments.values() if c.number == it.number]
    return req.paginate([rest.comment(req.emu.urls, req.rs.repo, c) for c in items])


def create_comment(req: Request) -> Reply:
    """POST /repos/{o}/{r}/issues/{n}/comments, authored by the App's bot account."""
    it = get_issue(req)
    body = req.body_dict().get("body")
    c = add_comment(req, req.rs, it.number, req.emu.bot_login, body if isinstance(body, str) else "")
    return Reply(201, rest.comment(req.emu.urls, req.rs.repo, c))


def _comment(req: Request) -> Comment:
    c = req.rs.comments.get(int(req.params["id"]))
    if c is None:
        raise not_found()
    return c


def get_comment(req: Request) -> Reply:
    """GET /repos/{o}/{r}/issues/comments/{id}."""
    return Reply(200, rest.comment(req.emu.urls, req.rs.repo, _comment(req)))


def update_comment(req: Request) -> Reply:
    """PATCH /repos/{o}/{r}/issues/comments/{id}."""
    c = _comment(req)
    body = req.body_dict().get("body")
    if not isinstance(body, str) or not body:
        raise invalid("body is missing", "IssueComment", "body", "missing_field")
    c.body, c.updated_at = body, iso()
    return Reply(200, rest.comment(req.emu.urls, req.rs.repo, c))


def delete_comment(req: Request) -> Reply:
    """DELETE /repos/{o}/{r}/issues/comments/{id}."""
    del req.rs.comments[_comment(req).id]
    return Reply(204)


def list_reactions(req: Request) -> Reply:
    """GET /repos/{o}/{r}/issues/comments/{id}/reactions."""
    c = _comment(req)
    return req.paginate([rest.reaction(req.emu.urls, rid, u, x) for rid, u, x in c.reactions])


def create_reaction(req: Request) -> Reply:
    """POST .../comments/{id}/reactions: 201 new, 200 when this user already reacted so."""
    c = _comment(req)
    content = req.body_dict().get("content")
    if content not in rest.REACTIONS:
        raise invalid(f"content {content!r} is not one of {', '.join(rest.REACTIONS)}", "Reaction", "content")
    login = req.emu.bot_login
    for rid, u, x in c.reactions:
        if u == login and x == content:
            return Reply(200, rest.reaction(req.emu.urls, rid, u, x))
    rid = req.emu.state.next_id()
    c.reactions.append((rid, login, str(content)))
    return Reply(201, rest.reaction(req.emu.urls, rid, login, str(content)))


def delete_reaction(req: Request) -> Reply:
    """DELETE .../comments/{id}/reactions/{rid}."""
    c = _comment(req)
    rid = int(req.params["rid"])
    if all(r[0] != rid for r in c.reactions):
        raise not_found()
    c.reactions = [r for r in c.reactions if r[0] != rid]
    return Reply(204)



# -- issues themselves (create, update, list) ---------------------------------------------------

def _issue_fields(req: Request, it: Issue, body: dict[str, Any]) -> None:
    """Apply the writable fields GitHub's issues/create and issues/update share."""
    if "title" in body:
        title = body["title"]
        if not isinstance(title, (str, int)) or isinstance(title, bool) or not str(title).strip():
            raise invalid("title is missing", "Issue", "title", "missing_field")
        it.title = str(title)
    if "body" in body:
        text = body["body"]
        if text is not None and not isinstance(text, str):
            raise invalid("body must be a string", "Issue", "body")
        if text is not None and len(text) > 65536:
            raise invalid("body is too long (maximum is 65536 characters)", "Issue", "body")
        it.body = text
    if "labels" in body:
        names = body["labels"]
        if not isinstance(names, list):
            raise invalid("labels must be a list", "Issue", "labels")
        it.labels = []
        for item in names:
            name = item.get("name") if isinstance(item, dict) else item
            if not isinstance(name, str):
                raise invalid("labels must be strings", "Issue", "labels")
            lab = ensure_label(req, req.rs, name)
            if lab["name"] not in it.labels:
                it.labels.append(lab["name"])


def create_issue(req: Request) -> Reply:
    """POST /repos/{o}/{r}/issues: 201; `title` required, `body` and `labels` optional (missing
    labels are created, as when adding them); the author is the App's bot user."""
    body = req.body_dict()
    if "title" not in body:
        raise invalid("title is missing", "Issue", "title", "missing_field")
    rs, now = req.rs, iso()
    it = Issue(len(rs.issues) + 1, req.emu.state.next_id(), "", None, req.emu.bot_login, now, now)
    _issue_fields(req, it, body)
    rs.issues[it.number] = it
    return Reply(201, rest.issue(req.emu.urls, rs, it))


def update_issue(req: Request) -> Reply:
    """PATCH /repos/{o}/{r}/issues/{n}: title, body, labels (replaced), state open|closed."""
    it, body = get_issue(req), req.body_dict()
    state = body.get("state")
    if state is not None and state not in ("open", "closed"):
        raise invalid(f"state {state!r} is not open or closed", "Issue", "state")
    reason = body.get("state_reason")
    if reason is not None and reason not in ("completed", "not_planned", "duplicate", "reopened"):
        raise invalid(f"state_reason {reason!r} is not allowed", "Issue", "state_reason")
    _issue_fields(req, it, body)
    now = iso()
    if state == "closed" and it.state != "closed":
        it.state, it.closed_at = "closed", now
    elif state == "open" and it.state != "open":
        it.state, it.closed_at = "open", None
    it.updated_at = now
    return Reply(200, rest.issue(req.emu.urls, req.rs, it))


def list_issues(req: Request) -> Reply:
    """GET /repos/{o}/{r}/issues: `state` (open default, closed, all), `labels` (comma list, an
    issue must carry all), `creator`, `sort` created|updated, `direction` (desc default),
    paginated; pull requests are listed too (with `pull_request`), as on GitHub."""
    q = req.query
    state = q.get("state", "open")
    if state not in ("open", "closed", "all"):
        raise invalid(f"state {state!r} is not open, closed or all", "Issue", "state")
    wanted = [n.strip().lower() for n in q.get("labels", "").split(",") if n.strip()]
    items = [it for it in req.rs.issues.values()
             if (state == "all" or it.state == state)
             and all(w in {n.lower() for n in it.labels} for w in wanted)
             and (not q.get("creator") or it.user == q["creator"])]
    key = (lambda it: (it.updated_at, it.number)) if q.get("sort") == "updated" \
        else (lambda it: (it.created_at, it.number))
    items.sort(key=key, reverse=q.get("direction", "desc") != "asc")
    return req.paginate(items, lambda it: rest.issue(req.emu.urls, req.rs, it))
