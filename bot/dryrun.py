"""`GitHubClient` without GitHub: reads a local checkout, records the writes it would make.

`flagbot replay --dry-run` runs the real handlers against this, so maintainers can try a config
or a payload on their machine. It knows only what the payload and the checkout say: the PR's
labels come from the payload, there are no earlier comments or check runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flagbot.bot.github import Action, ArtifactRef, ChangedFile, CheckRunRef, Comment, Label
from flagbot.bot.workspace import diff_files
from flagbot.hooks import git
from flagbot.hooks.config import CONFIG_PATH


class DryRunClient:
    """Reads from `repo` (a git checkout) and records every write in `actions`."""

    bot_login = "flagbot[bot]"

    def __init__(self, repo: Path, full_name: str, base_sha: str, head_sha: str,
                 pr_labels: Sequence[str] = ()) -> None:
        self.repo = repo
        self.full_name = full_name
        self.base_sha = base_sha
        self.head_sha = head_sha
        self.labels = list(pr_labels)
        self.actions: list[Action] = []
        self._next_id = 1

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
        return []

    def create_check_run(self, head_sha: str, name: str, fields: dict[str, Any]) -> int:
        output = fields.get("output") or {}
        self._record("check_run.create", name=name, conclusion=fields.get("conclusion"),
                     title=output.get("title"), annotations=output.get("annotations") or [],
                     summary=output.get("summary", ""))
        self._next_id += 1
        return self._next_id

    def update_check_run(self, run_id: int, fields: dict[str, Any]) -> None:
        output = fields.get("output") or {}
        self._record("check_run.update", id=run_id, annotations=output.get("annotations") or [])

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
        return "admin"  # a dry run answers as the maintainer running it would be answered

    def pull_json(self, number: int) -> dict[str, Any]:
        return {"number": number, "head": {"sha": self.head_sha, "ref": "HEAD", "repo": None},
                "base": {"sha": self.base_sha, "ref": "HEAD"}, "labels": [
                    {"name": n} for n in self.labels], "body": ""}

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> int | None:
        self._record("workflow.dispatch", workflow=workflow, ref=ref, inputs=dict(inputs))
        return None

    def workflow_run(self, run_id: int) -> dict[str, Any] | None:
        return None

    def workflow_runs(self, workflow: str) -> list[dict[str, Any]]:
        return []

    def cancel_workflow_run(self, run_id: int) -> bool:
        self._record("workflow.cancel", run=run_id)
        return True

    def run_artifacts(self, run_id: int) -> list[ArtifactRef]:
        return []

    def download_artifact(self, artifact_id: int, max_bytes: int) -> bytes:
        return b""

    def _record(self, kind: str, **detail: Any) -> None:
        self.actions.append(Action(kind, detail))
