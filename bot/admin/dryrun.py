"""`GitHubClient` without GitHub: reads a local checkout, records the writes it would make.

`flagbot replay --dry-run` runs the real handlers against this, so maintainers can try a config
or a payload on their machine. It knows only what the payload, the checkout and the replay's
options say: the PR's labels come from the payload, every person has the role `role` (the
replay's `--as-role`), there are no earlier comments, and the only check runs and artifacts are
those the replay states it assumes (`assume_check_run`, `add_artifact`). Pushes are recorded
(`record_push`), never made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flagbot.bot.github import (
    Action,
    ArtifactRef,
    ArtifactTooLarge,
    ChangedFile,
    CheckRunRef,
    Comment,
    Label,
)
from flagbot.bot.work.workspace import diff_files, redact
from flagbot.hooks import git
from flagbot.hooks.config import CONFIG_PATH


class DryRunClient:
    """Reads from `repo` (a git checkout) and records every write in `actions`."""

    bot_login = "flagbot[bot]"

    def __init__(self, repo: Path, full_name: str, base_sha: str, head_sha: str,
                 pr_labels: Sequence[str] = (), *, role: str = "write") -> None:
        self.repo = repo
        self.full_name = full_name
        self.base_sha = base_sha
        self.head_sha = head_sha
        self.labels = list(pr_labels)
        self.role = role
        self.actions: list[Action] = []
        self._next_id = 1
        self._check_runs: list[tuple[str, CheckRunRef]] = []
        self._artifacts: dict[int, list[tuple[ArtifactRef, bytes]]] = {}

    def assume_check_run(self, head_sha: str, ref: CheckRunRef) -> None:
        """Answer `check_runs` as if `ref` existed on `head_sha` (the replay says so)."""
        self._check_runs.append((head_sha, ref))
        self._next_id = max(self._next_id, ref.id)

    def add_artifact(self, run_id: int, name: str, data: bytes) -> None:
        """Answer `run_artifacts(run_id)` with an artifact `name` whose zip is `data`."""
        self._next_id += 1
        ref = ArtifactRef(self._next_id, name, len(data))
        self._artifacts.setdefault(run_id, []).append((ref, data))

    def record_push(self, url: str, refspecs: Sequence[str]) -> None:
        """A push the bot would make (the workspace of a dry run calls this instead of pushing)."""
        self._record("git.push", url=redact(url), refspecs=list(refspecs))

    def spare_writes(self) -> float:
        return float("inf")  # nothing is sent: nothing waits

    def read_file(self, path: str, ref: str) -> str | None:
        # The working tree's config wins: trying an edited config is what a dry run is for.
        if path == CONFIG_PATH and (self.repo / path).is_file():
            return (self.repo / path).read_text(encoding="utf-8")
        for rev in (ref, f"origin/{ref}"):
            proc = git.run(["show", f"{rev}:{path}"], cwd=self.repo, check=False)
            if proc.returncode == 0:
                return proc.stdout.decode("utf-8", "replace")
        return None

    def pull_head(self, number: int) -> str:
        return self.head_sha

    def pull_files(self, number: int) -> list[ChangedFile]:
        # What GitHub lists: the diff from the merge base to the head.
        return diff_files(self.repo, self.base_sha, self.head_sha)

    def repo_labels(self) -> dict[str, Label]:
        return {}

    def create_label(self, label: Label) -> None:
        self._record("label.create", name=label.name, color=label.color, description=label.description)

    def issue_labels(self, number: int) -> list[str]:
        return list(self.labels)

    def add_labels(self, number: int, names: Sequence[str]) -> None:
        self.labels += list(names)
        self._record("label.add", pr=number, names=list(names))

    def remove_label(self, number: int, name: str) -> None:
        self.labels = [n for n in self.labels if n != name]
        self._record("label.remove", pr=number, name=name)

    def check_runs(self, head_sha: str, name: str) -> list[CheckRunRef]:
        return [ref for sha, ref in self._check_runs if sha == head_sha and ref.name == name]

    def create_check_run(self, head_sha: str, name: str, fields: dict[str, Any]) -> int:
        output = fields.get("output") or {}
        self._record("check_run.create", name=name, conclusion=fields.get("conclusion"),
                     title=output.get("title"), annotations=output.get("annotations") or [],
                     summary=output.get("summary", ""))
        self._next_id += 1
        return self._next_id

    def update_check_run(self, run_id: int, fields: dict[str, Any]) -> None:
        output = fields.get("output") or {}
        detail = {k: fields[k] for k in ("status", "conclusion") if fields.get(k)}
        if output.get("title"):
            detail["title"] = output["title"]
        self._record("check_run.update", id=run_id, **detail,
                     annotations=output.get("annotations") or [], summary=output.get("summary", ""))

    def comments(self, number: int) -> list[Comment]:
        return []

    def create_comment(self, number: int, body: str) -> int:
        self._record("comment.create", pr=number, body=body)
        self._next_id += 1
        return self._next_id

    def edit_comment(self, comment_id: int, body: str) -> None:
        self._record("comment.edit", id=comment_id, body=body)

    def react(self, comment_id: int, content: str) -> None:
        self._record("reaction.create", comment=comment_id, content=content)

    def permission(self, login: str) -> str:
        return self.role  # `flagbot replay --as-role`; GitHub is not asked

    def pull_json(self, number: int) -> dict[str, Any]:
        return {"number": number, "head": {"sha": self.head_sha, "ref": "HEAD", "repo": None},
                "base": {"sha": self.base_sha, "ref": "HEAD"}, "labels": [
                    {"name": n} for n in self.labels], "body": ""}

    def open_pulls(self, head_branch: str) -> list[int]:
        return []

    def create_pull(self, title: str, body: str, head_branch: str, base: str) -> int:
        self._record("pull.create", head=head_branch, base=base, title=title, body=body)
        self._next_id += 1
        return self._next_id

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> int | None:
        self._record("workflow.dispatch", workflow=workflow, ref=ref, inputs=dict(inputs))
        return None

    def workflow_run(self, run_id: int) -> dict[str, Any] | None:
        return None

    def workflow_runs(self, workflow: str, event: str = "workflow_dispatch") -> list[dict[str, Any]]:
        return []

    def cancel_workflow_run(self, run_id: int) -> bool:
        self._record("workflow.cancel", run=run_id)
        return True

    def run_jobs(self, run_id: int) -> list[dict[str, Any]]:
        return []

    def run_artifacts(self, run_id: int) -> list[ArtifactRef]:
        return [ref for ref, _ in self._artifacts.get(run_id, [])]

    def download_artifact(self, artifact_id: int, max_bytes: int) -> bytes:
        for ref, data in (pair for pairs in self._artifacts.values() for pair in pairs):
            if ref.id == artifact_id:
                if len(data) > max_bytes:
                    raise ArtifactTooLarge(f"artifact {artifact_id} is over {max_bytes} bytes")
                return data
        return b""

    def git_ref(self, ref: str) -> str | None:
        return None

    def set_git_ref(self, ref: str, sha: str, *, create: bool) -> None:
        self._record("ref.create" if create else "ref.move", ref=ref, sha=sha)

    def delete_git_ref(self, ref: str) -> bool:
        self._record("ref.delete", ref=ref)
        return True

    def branch_commits(self, branch: str, count: int) -> list[str]:
        return []

    def _record(self, kind: str, **detail: Any) -> None:
        self.actions.append(Action(kind, detail))
