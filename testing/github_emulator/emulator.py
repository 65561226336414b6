"""`Emulator`: a GitHub REST API on 127.0.0.1 backed by bare git repositories, for the bot's tests."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

from testing.github_emulator import gitstore, hook_log, payloads, rest, rest_app
from testing.github_emulator.auth import AppAuth
from testing.github_emulator.dispatch import RateWindow, dispatch
from testing.github_emulator.routes_actions import workflow_run
from testing.github_emulator.routes_repo import LEGACY_PERMISSION
from testing.github_emulator.server import (
    EmuHTTPServer,
    Fault,
    default_fault_body,
    serve_in_thread,
)
from testing.github_emulator.state import (
    Artifact,
    Call,
    Comment,
    EmuRepo,
    Issue,
    RepoState,
    State,
    WorkflowRun,
    iso,
)

RepoRef = EmuRepo | str
WRITE_METHODS = ("POST", "PATCH", "PUT", "DELETE")


class Emulator:
    """GitHub's REST API for one App installation; see the package docstring for the full API."""

    def __init__(self, state_dir: Path, *, app_id: str = "4242", installation_id: int = 31337,
                 app_slug: str = "flagbot", private_key_pem: str | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.app_id = str(app_id)
        self.installation_id = installation_id
        self.app_slug = app_slug
        self.auth = AppAuth(self.app_id, private_key_pem)
        self.private_key_pem = self.auth.private_key_pem
        self.state = State()
        self.faults: list[Fault] = []
        self.server_errors: list[str] = []  # tracebacks of handler crashes (answered with 500)
        self.url = ""
        self.urls = rest.Urls("", "", app_slug, int(self.app_id))
        self._server: EmuHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.rate = RateWindow()
        self.hooks = hook_log.HookLog()

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> Emulator:
        """Start serving on a free port of 127.0.0.1 (a restart reuses the port if it can); sets `url`."""
        port = int(self.url.rsplit(":", 1)[1]) if self.url else 0
        try:
            self._server = EmuHTTPServer(self, dispatch, port)
        except OSError:  # the old port was taken meanwhile: the URL changes
            self._server = EmuHTTPServer(self, dispatch, 0)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.urls = rest.Urls(self.url, self.url, self.app_slug, int(self.app_id))
        self._thread = serve_in_thread(self._server)
        return self

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server.close_connections()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Emulator:
        return self.start() if self._server is None else self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    @property
    def bot_login(self) -> str:
        """The login GitHub shows for writes made with the installation token (`<slug>[bot]`)."""
        return f"{self.app_slug}[bot]"

    # -- building the world ---------------------------------------------------------------------

    def _rs(self, repo: RepoRef) -> RepoState:
        name = repo.full_name if isinstance(repo, EmuRepo) else repo
        rs = self.state.repo(name)
        if rs is None:
            raise KeyError(f"emulator: no repository {name!r}; create it with emu.create_repo() first")
        return rs

    def _register(self, full_name: str, bare: Path, default_branch: str, fork_of: str | None) -> EmuRepo:
        repo = EmuRepo(full_name, self.state.next_id(), bare, bare.resolve().as_uri(), default_branch, fork_of)
        self.state.repos[full_name.lower()] = RepoState(repo)
        return repo

    def create_repo(self, full_name: str, files: dict[str, str | bytes] | None = None,
                    default_branch: str = "main") -> EmuRepo:
        """A new repository whose default branch holds `files` in one commit (none: empty repo)."""
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"emulator: repository name {full_name!r} must look like 'owner/name'")
        with self.state.lock:
            if self.state.repo(full_name) is not None:
                raise ValueError(f"emulator: repository {full_name!r} already exists")
            bare = self.state_dir / "repos" / owner / f"{name}.git"
            gitstore.init_bare(bare, default_branch)
            repo = self._register(full_name, bare, default_branch, None)
            if files:
                self.push_commit(repo, branch=default_branch, files=files, message="Initial commit")
            return repo

    def fork_repo(self, repo: RepoRef, full_name: str) -> EmuRepo:
        """A fork of `repo` called `full_name` (its own bare repository with the same branches)."""
        with self.state.lock:
            src = self._rs(repo).repo
            owner, _, name = full_name.partition("/")
            bare = self.state_dir / "repos" / owner / f"{name}.git"
            gitstore.clone_bare(src.bare_path, bare)
            return self._register(full_name, bare, src.default_branch, src.full_name)

    def push_commit(self, repo: RepoRef, branch: str = "feature", files: dict[str, str | bytes] | None = None,
                    delete: list[str] | None = None, message: str = "Update", base: str = "main",
                    author: tuple[str, str] = ("Alice", "alice@example.com")) -> str:
        """Commit onto `branch` (created from `base` when missing) in the bare repository; return the sha."""
        with self.state.lock:
            bare = self._rs(repo).repo.bare_path
            parent = gitstore.rev_parse(bare, f"refs/heads/{branch}") or gitstore.rev_parse(bare, f"refs/heads/{base}")
            if parent is None and gitstore.rev_parse(bare, "HEAD") is not None:
                raise ValueError(f"emulator: neither branch {branch!r} nor base {base!r} exists in {bare}")
            self.state.seq += 1
            return gitstore.commit_files(bare, branch=branch, parent=parent, files=files or {},
                                         delete=delete or [], message=message, author=author, seq=self.state.seq)

    def _sync_pull_ref(self, rs: RepoState, it: Issue) -> None:
        # GitHub keeps every PR head (fork or not) at refs/pull/N/head of the base repository.
        ref = f"refs/pull/{it.number}/head"
        if it.head_repo.lower() == rs.repo.full_name.lower():
            gitstore.update_ref(rs.repo.bare_path, ref, it.head_sha)
        else:
            head = self._rs(it.head_repo).repo
            gitstore.fetch_ref(rs.repo.bare_path, head.bare_path, f"refs/heads/{it.head_ref}", ref)

    def _branch_sha(self, repo: EmuRepo, branch: str) -> str:
        sha = gitstore.rev_parse(repo.bare_path, f"refs/heads/{branch}")
        if sha is None:
            raise ValueError(f"emulator: branch {branch!r} does not exist in {repo.full_name}")
        return sha

    def open_pull(self, repo: RepoRef, head: str = "feature", base: str = "main", user: str = "alice",
                  title: str = "Update", body: str = "", head_repo: EmuRepo | None = None,
                  draft: bool = False, maintainer_can_modify: bool = False) -> dict[str, Any]:
        """Open a PR (from `head_repo`, a fork, when given); return its REST JSON."""
        with self.state.lock:
            rs = self._rs(repo)
            src = head_repo or rs.repo
            now = iso()
            it = Issue(len(rs.issues) + 1, self.state.next_id(), title, body, user, now, now, is_pull=True,
                       head_ref=head, head_sha=self._branch_sha(src, head), head_repo=src.full_name,
                       base_ref=base, base_sha=self._branch_sha(rs.repo, base), draft=draft,
                       maintainer_can_modify=maintainer_can_modify)
            rs.issues[it.number] = it
            self._sync_pull_ref(rs, it)
            return self.pull(repo, it.number)

    def open_issue(self, repo: RepoRef, title: str = "Issue", user: str = "alice", body: str = "") -> dict[str, Any]:
        """Open a plain issue; return its REST JSON."""
        with self.state.lock:
            rs = self._rs(repo)
            now = iso()
            it = Issue(len(rs.issues) + 1, self.state.next_id(), title, body, user, now, now)
            rs.issues[it.number] = it
            return rest.issue(self.urls, rs, it)

    def _issue(self, rs: RepoState, number: int) -> Issue:
        it = rs.issues.get(number)
        if it is None:
            raise KeyError(f"emulator: {rs.repo.full_name} has no issue or PR #{number}")
        return it

    def pull(self, repo: RepoRef, number: int) -> dict[str, Any]:
        """The REST JSON of PR `number` as the API would return it now."""
        with self.state.lock:
            rs = self._rs(repo)
            it = self._issue(rs, number)
            head = self._rs(it.head_repo).repo
            return rest.pull(self.urls, rs, it, head, self.state.pr_files(rs, it), self.state.pr_commits(rs, it))

    def update_pull_head(self, repo: RepoRef, number: int) -> dict[str, Any]:
        """Re-read the PR's head branch (after pushes: a synchronize); also refreshes base.sha."""
        with self.state.lock:
            rs = self._rs(repo)
            it = self._issue(rs, number)
            it.head_sha = self._branch_sha(self._rs(it.head_repo).repo, it.head_ref)
            it.base_sha = self._branch_sha(rs.repo, it.base_ref)
            it.updated_at = iso()
            self._sync_pull_ref(rs, it)
            return self.pull(repo, number)

    def change_base(self, repo: RepoRef, number: int, base: str) -> dict[str, Any]:
        """Retarget the PR onto `base`; return the `changes` object of the `edited` payload."""
        with self.state.lock:
            rs = self._rs(repo)
            it = self._issue(rs, number)
            changes = {"base": {"ref": {"from": it.base_ref}, "sha": {"from": it.base_sha}}}
            it.base_ref, it.base_sha = base, self._branch_sha(rs.repo, base)
            it.updated_at = iso()
            return changes

    def merge_pull(self, repo: RepoRef, number: int, at: float | None = None) -> str:
        """Merge PR `number` (a merge commit of its head onto the base branch, whose tree is the
        head's: enough for a head that contains the base); close it; return the merge sha."""
        with self.state.lock:
            rs = self._rs(repo)
            it = self._issue(rs, number)
            bare = rs.repo.bare_path
            tip = self._branch_sha(rs.repo, it.base_ref)
            sha = gitstore.git(bare, "-c", "user.name=GitHub", "-c", "user.email=noreply@github.com",
                               "commit-tree", f"{it.head_sha}^{{tree}}", "-p", tip, "-p", it.head_sha,
                               "-m", f"Merge pull request #{number}").decode().strip()
            gitstore.update_ref(bare, f"refs/heads/{it.base_ref}", sha)
            it.state, it.merge_commit_sha = "closed", sha
            it.closed_at = it.merged_at = it.updated_at = iso(at)
            return sha

    def close_pull(self, repo: RepoRef, number: int, at: float | None = None) -> None:
        """Close PR `number` without merging it."""
        with self.state.lock:
            it = self._issue(self._rs(repo), number)
            it.state = "closed"
            it.closed_at = it.updated_at = iso(at)

    def set_permission(self, repo: RepoRef, user: str, permission: str) -> None:
        """Set `user`'s collaborator role: admin/maintain/write/triage/read/none."""
        if permission not in LEGACY_PERMISSION:
            raise ValueError(f"emulator: permission {permission!r} is not one of {sorted(LEGACY_PERMISSION)}")
        with self.state.lock:
            self._rs(repo).permissions[user] = permission

    def add_comment(self, repo: RepoRef, number: int, user: str, body: str) -> dict[str, Any]:
        """A comment by `user` (a person) on issue/PR `number`; return its REST JSON."""
        with self.state.lock:
            rs = self._rs(repo)
            now = iso()
            c = Comment(self.state.next_id(), self._issue(rs, number).number, body, user, now, now)
            rs.comments[c.id] = c
            return rest.comment(self.urls, rs.repo, c)

    def add_label(self, repo: RepoRef, name: str, color: str = "ededed", description: str | None = None) -> None:
        """Create a repository label directly (as a maintainer would, unrecorded)."""
        with self.state.lock:
            rs = self._rs(repo)
            rs.labels[name.lower()] = {"id": self.state.next_id(), "name": name, "color": color,
                                       "description": description}

    def label_issue(self, repo: RepoRef, number: int, *names: str) -> None:
        """Put labels on issue/PR `number` as a person would (creating missing ones, unrecorded)."""
        with self.state.lock:
            rs = self._rs(repo)
            it = self._issue(rs, number)
            for name in names:
                if rs.label(name) is None:
                    self.add_label(repo, name)
                if name not in it.labels:
                    it.labels.append(name)

    def payload(self, event: str, action: str | None = None, repo: RepoRef | None = None,
                number: int | None = None, sender: str = "octocat", body: str | None = None,
                comment_id: int | None = None, **extra: Any) -> dict[str, Any]:
        """A webhook payload for `event`; `issue_comment` created with `body` also creates the comment."""
        with self.state.lock:
            if event == "ping":
                return payloads.ping(self, sender)
            if repo is None:
                raise ValueError(f"emulator: a {event} payload needs repo=")
            rs = self._rs(repo)
            if event == "check_run":
                return payloads.check_run(self, action or "rerequested", rs, int(extra.pop("run_id")), sender, extra)
            if event in ("workflow_run", "workflow_job"):
                run = rs.workflow_runs[int(extra.pop("run_id"))]
                build = payloads.workflow_run if event == "workflow_run" else payloads.workflow_job
                return build(self, action or "completed", rs, run, sender, extra)
            it = self._issue(rs, number or 1)
            if event == "pull_request":
                return payloads.pull_request(self, action or "opened", rs, it, sender, extra)
            if event == "issue_comment":
                if comment_id is None:
                    if not body:
                        raise ValueError("emulator: an issue_comment payload needs body= (or comment_id=)")
                    comment_id = int(self.add_comment(repo, it.number, sender, body)["id"])
                return payloads.issue_comment(self, action or "created", rs, it, rs.comments[comment_id],
                                              sender, extra)
        raise ValueError(f"emulator: no payload builder for event {event!r} (ping, pull_request, "
                         "issue_comment, check_run, workflow_run, workflow_job)")

    # -- the App's webhook (testing/github_emulator/hook_log.py) -------------------------------

    def set_webhook(self, url: str, secret: str) -> None:
        """Where `deliver` and redeliveries POST events, and the secret that signs them."""
        self.hooks.url, self.hooks.secret = url, secret

    def deliver(self, event: str, payload: dict[str, Any], guid: str | None = None) -> dict[str, Any]:
        """POST one event to the webhook now and log the attempt (a fresh guid unless given);
        returns the attempt as `GET /app/hook/deliveries/{id}` shows it."""
        return hook_log.deliver(self, event, payload, guid)

    def hook_deliveries(self) -> list[dict[str, Any]]:
        """Every attempt logged so far, oldest first (the list view)."""
        with self.state.lock:
            return [d.simple() for d in self.hooks.deliveries]

    def wait_deliveries(self, timeout: float = 15.0) -> None:
        """Wait until the redeliveries requested so far were POSTed."""
        for thread in list(self.hooks.threads):
            thread.join(timeout)

    # -- what the bot did -----------------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """Every request answered so far, in order (a copy)."""
        with self.state.lock:
            return list(self.state.calls)

    def writes(self) -> list[Call]:
        """POST/PATCH/PUT/DELETE calls only (the App token exchange excluded)."""
        return [c for c in self.calls if c.method in WRITE_METHODS and not c.path.startswith("/app/")]

    def reset_calls(self) -> None:
        """Forget the recorded calls."""
        with self.state.lock:
            self.state.calls.clear()

    def labels(self, repo: RepoRef) -> dict[str, dict[str, Any]]:
        """Repository labels: name -> {"color", "description"}."""
        with self.state.lock:
            return {lab["name"]: {"color": lab["color"], "description": lab["description"]}
                    for lab in self._rs(repo).labels.values()}

    def issue_labels(self, repo: RepoRef, number: int) -> list[str]:
        """Label names on issue/PR `number`, in the order they were added."""
        with self.state.lock:
            return list(self._issue(self._rs(repo), number).labels)

    def comments(self, repo: RepoRef, number: int) -> list[dict[str, Any]]:
        """Comments on issue/PR `number`, oldest first: id, body, user.login, created_at, updated_at."""
        with self.state.lock:
            return [{"id": c.id, "body": c.body, "user": {"login": c.user}, "created_at": c.created_at,
                     "updated_at": c.updated_at}
                    for c in self._rs(repo).comments.values() if c.number == number]

    def check_runs(self, repo: RepoRef, head_sha: str) -> list[dict[str, Any]]:
        """Check runs on `head_sha`, oldest first, with `output.annotations` = every annotation sent."""
        with self.state.lock:
            rs = self._rs(repo)
            runs = []
            for cr in sorted(rs.check_runs.values(), key=lambda c: c.id):
                if cr.head_sha == head_sha:
                    body = rest_app.check_run(self.urls, rs.repo, cr)
                    body["output"]["annotations"] = [dict(a) for a in cr.annotations]
                    runs.append(body)
            return runs

    def workflow_runs(self, repo: RepoRef) -> list[dict[str, Any]]:
        """Workflow runs, oldest first, as the API shows them plus their `inputs`."""
        with self.state.lock:
            rs = self._rs(repo)
            return [{**workflow_run(self.urls, rs.repo, run), "inputs": dict(run.inputs)}
                    for run in sorted(rs.workflow_runs.values(), key=lambda x: x.id)]

    def start_workflow_run(self, repo: RepoRef, workflow: str, display_title: str,
                           event: str = "workflow_dispatch", inputs: dict[str, str] | None = None) -> int:
        """A run nobody dispatched through the API (another workflow, a person); returns its id."""
        with self.state.lock:
            rs = self._rs(repo)
            sha = gitstore.rev_parse(rs.repo.bare_path, rs.repo.default_branch) or ""
            run = WorkflowRun(self.state.next_id(), workflow, display_title, event,
                              rs.repo.default_branch, sha, dict(inputs or {}), iso(),
                              job_id=self.state.next_id())
            rs.workflow_runs[run.id] = run
            return run.id

    def set_workflow_run(self, repo: RepoRef, run_id: int, status: str,
                         conclusion: str | None = None, labels: list[str] | None = None,
                         runner: str | None = None) -> None:
        """Move a run along (a runner picked it up, it finished) as GitHub would."""
        with self.state.lock:
            run = self._rs(repo).workflow_runs[run_id]
            run.status, run.conclusion = status, conclusion
            if labels is not None:
                run.runner_labels = list(labels)
            if runner is not None:
                run.runner_name = runner

    def add_artifact(self, repo: RepoRef, run_id: int, name: str, data: bytes,
                     expired: bool = False) -> int:
        """Upload an artifact (zip bytes) to a run; returns its id."""
        with self.state.lock:
            rs = self._rs(repo)
            a = Artifact(self.state.next_id(), name, run_id, data, expired)
            rs.artifacts[a.id] = a
            return a.id

    def reactions(self, repo: RepoRef, comment_id: int) -> list[str]:
        """Reaction contents on comment `comment_id`, in order."""
        with self.state.lock:
            return [x for _, _, x in self._rs(repo).comments[comment_id].reactions]

    # -- faults, tokens, rate limits ------------------------------------------------------------

    def inject(self, method: str, path: str, status: int, times: int = 1, headers: dict[str, str] | None = None,
               body: Any = None) -> None:
        """Answer the next `times` requests whose method matches and whose decoded path fully matches `path`."""
        hdrs = dict(headers or {})
        fault = Fault(method.upper(), re.compile(path), status, times, hdrs,
                      body if body is not None else default_fault_body(status, hdrs))
        with self.state.lock:
            self.faults.append(fault)

    def expire_tokens(self) -> None:
        """Expire every installation token issued so far (the bot must mint a new one)."""
        self.auth.expire_tokens()

    def rate_usage(self) -> tuple[int, int]:
        """(requests used in the current rate-limit window, window reset epoch)."""
        return self.rate.usage()
