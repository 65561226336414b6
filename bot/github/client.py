"""`PyGithubClient`: the `GitHubClient` the worker uses, PyGithub over the wire for one repository."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from github import Github, GithubException
from github.GithubException import UnknownObjectException
from github.IssueComment import IssueComment

from flagbot.bot.github import (
    Action,
    ArtifactRef,
    ArtifactTooLarge,
    ChangedFile,
    CheckRunRef,
    Comment,
    Label,
)
from flagbot.hooks.config import PERMISSIONS

# Repository roles, weakest first (GET .../collaborators/{user}/permission, `role_name`): no
# role, then the roles a configuration may name (hooks/config.py, the one table).
ROLES = ("none", *PERMISSIONS)


def is_not_found(exc: GithubException) -> bool:
    """True for 404s (PyGithub's UnknownObjectException or a bare 404)."""
    return isinstance(exc, UnknownObjectException) or exc.status == 404


class PyGithubClient:
    """`GitHubClient` over PyGithub for one repository; records each write in `actions`."""

    def __init__(self, gh: Github, full_name: str, login: str,
                 pace: Callable[[], float] = lambda: 0.0,
                 spare: Callable[[], float] = lambda: float("inf")) -> None:
        self._gh = gh
        self._pace = pace
        self._spare = spare
        self._repo = gh.get_repo(full_name)  # lazy: the Github object is lazy
        self.full_name = full_name
        self.bot_login = login
        self.actions: list[Action] = []
        self._comments: dict[int, Any] = {}
        self._runs: dict[int, Any] = {}

    def spare_writes(self) -> float:
        """Writes the installation could make now without waiting for its pacing."""
        return self._spare()

    def read_file(self, path: str, ref: str) -> str | None:
        try:
            content = self._repo.get_contents(path, ref=ref)
        except GithubException as exc:
            if is_not_found(exc):
                return None
            raise
        if isinstance(content, list):  # a folder where a file was expected
            return None
        return content.decoded_content.decode("utf-8", errors="replace")

    def pull_head(self, number: int) -> str:
        return str(self._repo.get_pull(number).head.sha)

    def pull_files(self, number: int) -> list[ChangedFile]:
        pull = self._repo.get_pull(number)
        return [ChangedFile(f.filename, f.status, f.previous_filename) for f in pull.get_files()]

    def repo_labels(self) -> dict[str, Label]:
        return {lab.name: Label(lab.name, lab.color, lab.description or "") for lab in self._repo.get_labels()}

    def create_label(self, label: Label) -> None:
        self._pace()
        self._repo.create_label(label.name, label.color, label.description)
        self.actions.append(Action("label.create", {"name": label.name, "color": label.color}))

    def issue_labels(self, number: int) -> list[str]:
        return [lab.name for lab in self._repo.get_issue(number).get_labels()]

    def add_labels(self, number: int, names: Sequence[str]) -> None:
        self._pace()
        self._repo.get_issue(number).add_to_labels(*names)
        self.actions.append(Action("label.add", {"pr": number, "names": list(names)}))

    def remove_label(self, number: int, name: str) -> None:
        self._pace()
        try:
            self._repo.get_issue(number).remove_from_labels(name)
        except GithubException as exc:
            if not is_not_found(exc):  # someone removed it between our read and this call
                raise
        self.actions.append(Action("label.remove", {"pr": number, "name": name}))

    def check_runs(self, head_sha: str, name: str) -> list[CheckRunRef]:
        refs = []
        for run in self._repo.get_commit(head_sha).get_check_runs(check_name=name):
            self._runs[run.id] = run
            count = run.output.annotations_count if run.output is not None else 0
            started = run.started_at.timestamp() if run.started_at is not None else None
            refs.append(CheckRunRef(run.id, run.name, run.status, run.conclusion, run.external_id,
                                    int(count or 0), started, run.details_url,
                                    str(run.output.title or "") if run.output is not None else "",
                                    str(run.output.summary or "") if run.output is not None else ""))
        return refs

    def create_check_run(self, head_sha: str, name: str, fields: dict[str, Any]) -> int:
        self._pace()
        run = self._repo.create_check_run(name=name, head_sha=head_sha, **fields)
        self._runs[run.id] = run
        self.actions.append(Action("check_run.create", _run_detail(name, fields)))
        return int(run.id)

    def update_check_run(self, run_id: int, fields: dict[str, Any]) -> None:
        run = self._runs.get(run_id) or self._repo.get_check_run(run_id)
        self._pace()
        run.edit(**fields)
        self.actions.append(Action("check_run.update", {"id": run_id, **_run_detail(run.name, fields)}))

    def comments(self, number: int) -> list[Comment]:
        out = []
        for c in self._repo.get_issue(number).get_comments():
            self._comments[c.id] = c
            out.append(Comment(c.id, c.body or "", c.user.login if c.user else ""))
        return out

    def create_comment(self, number: int, body: str) -> int:
        self._pace()
        c = self._repo.get_issue(number).create_comment(body)
        self._comments[c.id] = c
        self.actions.append(Action("comment.create", {"pr": number, "chars": len(body)}))
        return int(c.id)

    def edit_comment(self, comment_id: int, body: str) -> None:
        c = self._comments.get(comment_id)
        if c is None:  # lazy object: PATCH straight away, no GET first
            c = IssueComment(self._repo.requester, url=f"{self._repo.url}/issues/comments/{comment_id}")
        self._pace()
        c.edit(body)
        self.actions.append(Action("comment.edit", {"id": comment_id, "chars": len(body)}))


    def react(self, comment_id: int, content: str) -> None:
        # GitHub answers 200 for a reaction the App already left: repeating it is harmless.
        c = self._comments.get(comment_id) or IssueComment(
            self._repo.requester, url=f"{self._repo.url}/issues/comments/{comment_id}")
        self._pace()
        c.create_reaction(content)
        self.actions.append(Action("reaction.create", {"comment": comment_id, "content": content}))

    def _get_or_none(self, path: str) -> Any:
        """The JSON of GET `path` under the repository, None where GitHub answers 404."""
        try:
            _, data = self._repo.requester.requestJsonAndCheck("GET", f"{self._repo.url}/{path}")
        except GithubException as exc:
            if is_not_found(exc):
                return None
            raise
        return data

    def permission(self, login: str) -> str:
        data = self._get_or_none(f"collaborators/{quote(login, safe='')}/permission")
        if data is None:  # not a collaborator of a repository the user cannot see
            return "none"
        role, legacy = data.get("role_name"), data.get("permission")
        # a custom role's name means nothing here; its base permission is in `permission`
        return str(role) if role in ROLES else str(legacy if legacy in ROLES else "none")

    def pull_json(self, number: int) -> dict[str, Any]:
        return dict(self._repo.get_pull(number).raw_data)

    def open_pulls(self, head_branch: str) -> list[int]:
        """Open PRs from `head_branch` of this repository."""
        head = f"{self.full_name.split('/', 1)[0]}:{head_branch}"
        return [int(p.number) for p in self._repo.get_pulls(state="open", head=head)]

    def create_pull(self, title: str, body: str, head_branch: str, base: str) -> int:
        self._pace()
        pull = self._repo.create_pull(base=base, head=head_branch, title=title, body=body)
        self.actions.append(Action("pull.create", {"head": head_branch, "base": base,
                                                   "number": pull.number}))
        return int(pull.number)


    # -- GitHub Actions: the device-check workflow ------------------------------------------------

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> int | None:
        url = f"{self._repo.url}/actions/workflows/{quote(workflow, safe='')}/dispatches"
        body: dict[str, Any] = {"ref": ref, "inputs": inputs, "return_run_details": True}
        self._pace()
        try:
            _, data = self._repo.requester.requestJsonAndCheck("POST", url, input=body)
        except GithubException as exc:
            # Servers older than the run-details answer (GitHub Enterprise) reject the field:
            # dispatch without it; the run is then found by its title.
            if exc.status not in (400, 422) or "return_run_details" not in str(exc.data):
                raise
            del body["return_run_details"]
            _, data = self._repo.requester.requestJsonAndCheck("POST", url, input=body)
        self.actions.append(Action("workflow.dispatch", {"workflow": workflow, "ref": ref,
                                                         "request": inputs.get("request_id")}))
        run_id = (data or {}).get("workflow_run_id")
        return int(run_id) if isinstance(run_id, int) else None

    def workflow_run(self, run_id: int) -> dict[str, Any] | None:
        data = self._get_or_none(f"actions/runs/{int(run_id)}")
        return None if data is None else dict(data)

    def workflow_runs(self, workflow: str, event: str = "workflow_dispatch") -> list[dict[str, Any]]:
        _, data = self._repo.requester.requestJsonAndCheck(
            "GET", f"{self._repo.url}/actions/workflows/{quote(workflow, safe='')}/runs",
            parameters={"event": event, "per_page": 100})
        return [dict(r) for r in (data or {}).get("workflow_runs") or []]

    def cancel_workflow_run(self, run_id: int) -> bool:
        self._pace()
        try:
            self._repo.requester.requestJsonAndCheck(
                "POST", f"{self._repo.url}/actions/runs/{int(run_id)}/cancel")
        except GithubException as exc:
            if exc.status == 409 or is_not_found(exc):  # finished already, or gone
                return False
            raise
        self.actions.append(Action("workflow.cancel", {"run": run_id}))
        return True

    def run_jobs(self, run_id: int) -> list[dict[str, Any]]:
        _, data = self._repo.requester.requestJsonAndCheck(
            "GET", f"{self._repo.url}/actions/runs/{int(run_id)}/jobs", parameters={"per_page": 100})
        return [dict(j) for j in (data or {}).get("jobs") or [] if isinstance(j, dict)]

    def run_artifacts(self, run_id: int) -> list[ArtifactRef]:
        _, data = self._repo.requester.requestJsonAndCheck(
            "GET", f"{self._repo.url}/actions/runs/{int(run_id)}/artifacts",
            parameters={"per_page": 100})
        return [ArtifactRef(int(a["id"]), str(a.get("name") or ""), int(a.get("size_in_bytes") or 0),
                            bool(a.get("expired"))) for a in (data or {}).get("artifacts") or []]

    def download_artifact(self, artifact_id: int, max_bytes: int) -> bytes:
        # GitHub answers with a redirect to storage; PyGithub drops the token for other hosts.
        _, _, chunks = self._repo.requester.getStream(
            f"{self._repo.url}/actions/artifacts/{int(artifact_id)}/zip", chunk_size=65536)
        data = bytearray()
        for chunk in chunks:
            data += chunk
            if len(data) > max_bytes:
                raise ArtifactTooLarge(f"artifact {artifact_id} is over {max_bytes} bytes")
        return bytes(data)

    # -- git refs: the ciflow tags of tag dispatch ----------------------------------------------

    def git_ref(self, ref: str) -> str | None:
        data = self._get_or_none(f"git/ref/{quote(ref, safe='/')}")
        obj = (data or {}).get("object") or {}
        return str(obj.get("sha")) if isinstance(data, dict) and obj.get("sha") else None

    def set_git_ref(self, ref: str, sha: str, *, create: bool) -> None:
        self._pace()
        if create:
            self._repo.requester.requestJsonAndCheck(
                "POST", f"{self._repo.url}/git/refs", input={"ref": f"refs/{ref}", "sha": sha})
        else:
            self._repo.requester.requestJsonAndCheck(
                "PATCH", f"{self._repo.url}/git/refs/{quote(ref, safe='/')}",
                input={"sha": sha, "force": True})
        self.actions.append(Action("ref.create" if create else "ref.move", {"ref": ref, "sha": sha}))

    def delete_git_ref(self, ref: str) -> bool:
        self._pace()
        try:
            self._repo.requester.requestJsonAndCheck(
                "DELETE", f"{self._repo.url}/git/refs/{quote(ref, safe='/')}")
        except GithubException as exc:
            if is_not_found(exc) or exc.status == 422:  # gone already
                return False
            raise
        self.actions.append(Action("ref.delete", {"ref": ref}))
        return True

    def branch_commits(self, branch: str, count: int) -> list[str]:
        _, data = self._repo.requester.requestJsonAndCheck(
            "GET", f"{self._repo.url}/commits", parameters={"sha": branch, "per_page": count})
        return [str(c["sha"]) for c in (data or [])[:count] if isinstance(c, dict) and c.get("sha")]


def _run_detail(name: str, fields: dict[str, Any]) -> dict[str, Any]:
    output = fields.get("output") or {}
    detail: dict[str, Any] = {"name": name}
    for key in ("status", "conclusion"):
        if key in fields:
            detail[key] = fields[key]
    if output:
        detail["title"] = output.get("title")
        detail["annotations"] = len(output.get("annotations") or [])
    return detail
