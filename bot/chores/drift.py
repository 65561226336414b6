"""Drift watch: one `flagbot: drift for <DEV>` issue per device whose stored patch stopped applying.

`flagbot drift --repo OWNER/NAME [--dry-run]` and the worker's schedule (`drift.every_hours` of
the repository's `.github/flagbot.yml`, default 24) fetch the default branch into the bot's clone
cache, apply every stored patch onto its head in a scratch git dir (the patch engine's
`hooks/patches/drift.py`; nothing is written to the repository) and keep the issues: opened when
a device's patch stops applying, its body rewritten only when what conflicts changed (a run
that finds the same writes nothing, not even a comment), closed with a comment when every patch
of the device applies again. The body names per base the conflicting files and hunks and the
first commit of the branch the patch fails on; it carries no run date or head commit, so an
unrelated push does not rewrite it.
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from github import GithubException

from flagbot.bot import repo_config
from flagbot.bot.github import Label
from flagbot.bot.github.identity import GitHubApp
from flagbot.bot.github.issues import (
    DryRunIssues,
    IssueWriter,
    PyGithubIssues,
    TrackedIssue,
    describe,
)
from flagbot.bot.github.markdown import code
from flagbot.bot.locks import LockTimeout, RepoLocks
from flagbot.bot.settings import Settings
from flagbot.bot.store.chores import Chores
from flagbot.bot.work.workspace import GitWorkspace
from flagbot.hooks.errors import UsageError
from flagbot.hooks.patches.drift import DriftReport, PatchDrift, check_drift

log = logging.getLogger(__name__)

TITLE = "flagbot: drift for {device}"
TITLE_PREFIX = "flagbot: drift for "
LABEL = Label("drift", "d93f0b", "A stored vendor patch no longer applies onto the default branch")
MARKER = "<!-- flagbot:drift {device} -->"
TICK_S = 600.0  # how often the worker looks for repositories whose drift check is due
RELOOK_S = 3600.0  # a repository without stored patches (or with the watch off) is asked again
SHORT = 12
# what one issue body lists at most (hostile or huge patches stay readable and under GitHub's
# 65,536-character limit)
MAX_FILES, MAX_HUNKS, MAX_BODY = 50, 20, 60000


@dataclass
class Outcome:
    """One repository's drift run: the report and the issue writes made (or, dry, planned)."""

    full_name: str
    branch: str
    report: DriftReport
    actions: list[dict[str, Any]] = field(default_factory=list)
    bodies: dict[str, str] = field(default_factory=dict)


def render_patch(drift: PatchDrift, branch: str) -> list[str]:
    since = (f"since commit {drift.since[:SHORT]}, the first commit of {code(branch)} it fails on"
             if drift.since else f"its base is not an ancestor of {code(branch)}")
    lines = [f"### base `{drift.base8}`", "",
             f"{code(drift.patch_rel)} does not apply onto {code(branch)} ({since}): mail "
             f"{drift.mail} of {drift.mails}, {code(drift.subject)}.", ""]
    for conflict in drift.conflicts[:MAX_FILES]:
        shown = conflict.hunks[:MAX_HUNKS]
        hunks = ", ".join(code(h) for h in shown) or "the file itself"
        if len(conflict.hunks) > len(shown):
            hunks += f" and {len(conflict.hunks) - len(shown)} more hunks"
        lines.append(f"- {code(conflict.path)}: {hunks} ({code(conflict.reason)})")
    if len(drift.conflicts) > MAX_FILES:
        lines.append(f"- and {len(drift.conflicts) - MAX_FILES} more files")
    if not drift.conflicts:
        lines.append("- git names no single file (see `flagbot unpatch` for its own message)")
    if drift.mail < drift.mails:
        lines.append(f"- mails {drift.mail + 1} to {drift.mails} were not tried")
    return [*lines, ""]


def render(device: str, report: DriftReport, branch: str) -> str | None:
    """The issue body for `device`, or None when every patch of it applies (and no hetero.txt
    set it belongs to lacks its patch)."""
    own = [d for d in report.drifted if d.device == device]
    missing = [s for s in report.hetero if device in s.missing]
    if not own and not missing:
        return None
    lines = [MARKER.format(device=device),
             f"Stored patches of `{device}` no longer apply onto `{branch}`; building them with "
             "`flagbot unpatch` onto a newer base fails.", ""]
    for drift in sorted(own, key=lambda d: d.base8):
        lines += render_patch(drift, branch)
    sets = [s for s in report.hetero if device in s.devices]
    for hset in sets:
        why = [f"{', '.join(hset.drifted)} drifted"] if hset.drifted else []
        why += [f"{', '.join(hset.missing)} listed without a patch"] if hset.missing else []
        lines += [f"### heterogeneous set `{hset.base8}`: {' '.join(hset.devices)}", "",
                  f"`hardwares/hetero.txt` lists these devices together; the set cannot be built: "
                  f"{'; '.join(why)}.", ""]
    body = "\n".join(lines)
    if len(body) > MAX_BODY:  # GitHub refuses bodies over 65,536 characters
        body = body[:MAX_BODY].rsplit("\n", 1)[0] + "\n\n(cut here: run `flagbot drift` for the rest)"
    lines = [body, "", "To fix: rebase the vendor branch onto the default branch, make the patch again "
              "with `flagbot patch` and open a pull request. flagbot updates this issue at each "
              "check and closes it when every patch of this device applies again."]
    return "\n".join(lines) + "\n"


def sync_issues(writer: IssueWriter, report: DriftReport, branch: str) -> dict[str, str]:
    """Open, update or close each device's issue; returns the body per device that drifted."""
    existing: dict[str, TrackedIssue] = {}
    for found in writer.open_issues(LABEL.name):
        if found.title.startswith(TITLE_PREFIX):
            existing.setdefault(found.title[len(TITLE_PREFIX):], found)  # the oldest wins
    bodies = {}
    label_checked = False
    for device in sorted(set(report.devices()) | set(existing)):
        body = render(device, report, branch)
        issue = existing.get(device)
        if body is not None:
            bodies[device] = body
            if issue is None:
                if not label_checked and not writer.label_exists(LABEL.name):
                    writer.create_label(LABEL)
                label_checked = True
                writer.create(TITLE.format(device=device), body, LABEL.name)
            elif issue.body.replace("\r\n", "\n") != body:
                writer.edit_body(issue.number, body)
        elif issue is not None:
            writer.close(issue.number, f"Every stored patch of `{device}` applies onto `{branch}` "
                                       f"again (checked at {report.head[:SHORT]}). Closing.")
    return bodies


def run_repo(settings: Settings, app: GitHubApp, installation: int, full_name: str, *,
             dry_run: bool, locks: RepoLocks | None = None) -> Outcome:
    """Check one repository and keep its drift issues (dry: only say what would be written)."""
    locks = locks or RepoLocks(settings)
    gh = app.connect(installation)
    meta = gh.get_repo(full_name)
    branch, clone_url = meta.default_branch, meta.clone_url
    client = app.repo_client(installation, full_name)
    config, error = repo_config.load(client, branch)
    if config is None:
        raise UsageError(f"{full_name}: .github/flagbot.yml on {branch}: {error}",
                         hint="fix the file on the default branch")
    workspace = GitWorkspace(settings.state_dir, full_name, clone_url,
                             token=lambda: app.installation_token(installation),
                             lock=lambda: locks.hold(full_name))
    with workspace.held():
        workspace.ensure()
        remote = f"refs/remotes/origin/{branch}"
        if not workspace.fetch(clone_url, [f"+refs/heads/{branch}:{remote}"]):
            raise UsageError(f"{full_name}: branch {branch} not found at {clone_url}")
        head = workspace.repo.git.rev_parse(remote)
        report = check_drift(workspace.git_dir, head, config.hardwares)
    real = PyGithubIssues(gh, full_name, app.bot_login(),
                          pace=app.bucket(installation).acquire)
    writer: IssueWriter = DryRunIssues(real) if dry_run else real
    bodies = sync_issues(writer, report, branch)
    outcome = Outcome(full_name, branch, report, describe(writer.actions), bodies)
    log.info("drift %s@%s: %d patches checked, drifted: %s; %s", full_name, head[:SHORT],
             len(report.checked), ", ".join(report.drifted_devices()) or "none",
             "; ".join(a.render() for a in writer.actions) or "no issue writes")
    return outcome


def has_stored_patches(app: GitHubApp, installation: int, full_name: str) -> tuple[bool, float]:
    """(whether the default branch has a hardwares folder, `drift.every_hours`) of a repository."""
    client = app.repo_client(installation, full_name)
    repo = app.connect(installation).get_repo(full_name)
    config, _ = repo_config.load(client, repo.default_branch)
    if config is None:
        return False, 0.0
    try:
        repo.get_contents(config.hardwares, ref=repo.default_branch)
    except GithubException as exc:
        if exc.status == 404:
            return False, float(config["drift"]["every_hours"])
        raise
    return True, float(config["drift"]["every_hours"])


class DriftSchedule:
    """In a worker: every TICK_S, each installed repository with stored patches whose drift
    check is due (`drift.every_hours` since the last, kept in the store) is checked; one worker
    at a time across hosts (a named lock)."""

    def __init__(self, settings: Settings, chores: Chores,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.chores = chores
        self.clock = clock
        self.app = GitHubApp(settings)
        self.locks = RepoLocks(settings)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def repositories(self) -> list[tuple[int, str]]:
        """(installation id, full name) of every repository the App is installed on."""
        found = []
        for installation in self.app.installation_ids():
            requester = self.app.connect(installation).requester
            page = 1
            while True:
                _, data = requester.requestJsonAndCheck(
                    "GET", "/installation/repositories", parameters={"per_page": 100, "page": page})
                repos = (data or {}).get("repositories") or []
                found += [(installation, str(r["full_name"])) for r in repos]
                if len(repos) < 100:
                    break
                page += 1
        return found

    def tick(self) -> list[Outcome]:
        """Check every repository that is due; the outcomes of those checked."""
        try:
            with self.locks.hold("flagbot:drift-schedule", timeout_s=0.0):
                return self._tick()
        except LockTimeout:
            return []

    def _tick(self) -> list[Outcome]:
        done = []
        for installation, full_name in self.repositories():
            # when the repository is next due, kept in the store: a tick costs no API call for a
            # repository that is not (its configuration is read again once it is)
            key = f"drift:next:{full_name}"
            if self.clock() < float(self.chores.get(key) or 0):
                continue
            try:
                patches, hours = has_stored_patches(self.app, installation, full_name)
                if not patches or hours <= 0:
                    self.chores.put(key, repr(self.clock() + RELOOK_S))
                    continue
                done.append(run_repo(self.settings, self.app, installation, full_name,
                                     dry_run=False, locks=self.locks))
                self.chores.put(key, repr(self.clock() + hours * 3600))
            except Exception as exc:  # one repository's trouble must not stop the others
                log.warning("drift %s: check failed (%s: %s); tried again at the next tick",
                            full_name, type(exc).__name__, exc)
        return done

    def _loop(self) -> None:
        while not self._stop.wait(TICK_S):
            self.tick()

    def start(self) -> None:
        """Ticks in a daemon thread (the first after TICK_S: starting a worker stays quick)."""
        self._thread = threading.Thread(target=self._loop, name="flagbot-drift", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


def start_schedule(settings: Settings) -> DriftSchedule | None:
    """A started DriftSchedule for a worker, or None without the App's credentials."""
    if not settings.app_id or not settings.private_key:
        return None
    from flagbot.bot.store.chores import open_chores

    schedule = DriftSchedule(settings, open_chores(settings))
    schedule.start()
    return schedule


# -- flagbot drift ------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="flagbot drift", description=(
        "Apply every stored patch of a repository onto its default branch's head (in a scratch "
        "git dir; nothing is written to the repository) and keep one `flagbot: drift for <DEV>` "
        "issue per device whose patch no longer applies. Uses the App's credentials "
        "(GITHUB_APP_ID, GITHUB_PRIVATE_KEY[_PATH]), GITHUB_API_URL and FLAGBOT_STATE_DIR (its "
        "clone cache) as `flagbot serve` does. Exit 0: every patch applies; 1: a device drifted."))
    p.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the repository to check")
    p.add_argument("--dry-run", action="store_true",
                   help="print the issue writes it would make (and their bodies), make none")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    return p


def print_outcome(outcome: Outcome, *, dry_run: bool, as_json: bool) -> None:
    report = outcome.report
    if as_json:
        print(json.dumps({"repo": outcome.full_name, "branch": outcome.branch, "head": report.head,
                          "checked": report.checked, "drifted": report.drifted_devices(),
                          "skipped": report.skipped, "dry_run": dry_run,
                          "actions": outcome.actions, "bodies": outcome.bodies}, indent=2))
        return
    print(f"{outcome.full_name} {outcome.branch} at {report.head[:SHORT]}: "
          f"{len(report.checked)} stored patches checked")
    for d in report.drifted:
        files = ", ".join(c.path for c in d.conflicts) or "?"
        print(f"  drifted: {d.patch_rel} ({files})"
              + (f" since {d.since[:SHORT]}" if d.since else ""))
    for s in report.hetero:
        print(f"  hetero.txt {s.base8}: {' '.join(s.devices)} cannot be built together")
    for line in report.skipped:
        print(f"  not checked: {line}")
    verb = "would write" if dry_run else "wrote"
    for a in outcome.actions:
        print(f"{verb}: {a['kind']} " + " ".join(f"{k}={v!r}" for k, v in a.items() if k != "kind"))
    if not outcome.actions:
        print("issues: nothing to write")
    if dry_run:
        for device, body in outcome.bodies.items():
            print(f"\n--- body of `{TITLE.format(device=device)}` ---\n{body}")


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """`flagbot drift`: exit 0 when every patch applies, 1 when a device drifted, 2 on errors."""
    from flagbot.bot.github.identity import AppCredentialsError

    args = parser().parse_args(argv)
    if args.repo.count("/") != 1 or not all(args.repo.split("/")):
        raise UsageError(f"--repo {args.repo!r}: expected OWNER/NAME")
    settings = Settings.from_env()
    # a relative FLAGBOT_STATE_DIR is taken relative to `-C PATH`, as `flagbot serve` takes it
    state_dir = (Path(cwd) if cwd else Path.cwd()) / settings.state_dir
    settings = settings.with_overrides(state_dir=state_dir.resolve())
    if settings.redis_url:  # the repository lock lives there
        from flagbot.bot.store.redis_reach import require_redis

        require_redis(settings.redis_url)
    app = GitHubApp(settings)
    try:
        installation = app.installation_of(args.repo)
        outcome = run_repo(settings, app, installation, args.repo, dry_run=args.dry_run)
    except AppCredentialsError as exc:
        raise UsageError(str(exc), hint="set GITHUB_APP_ID, GITHUB_PRIVATE_KEY (or "
                         "GITHUB_PRIVATE_KEY_PATH) and GITHUB_API_URL as for `flagbot serve`") from exc
    print_outcome(outcome, dry_run=args.dry_run, as_json=args.json)
    return 1 if outcome.bodies else 0
