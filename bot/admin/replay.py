"""`flagbot replay PAYLOAD.json --event EVENT [--repo PATH] [--dry-run]`: run the handlers once.

Without --dry-run it acts on GitHub as the App (GITHUB_APP_ID, GITHUB_PRIVATE_KEY, GITHUB_API_URL
from the environment), exactly like the worker would for that delivery. With --dry-run it uses a
local checkout instead of GitHub and changes nothing anywhere; it prints what it would do, and
what it assumed where only GitHub would know.
Exit status: 0 ok, 1 a check run failed (or the config is invalid), 2 usage or environment error.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flagbot.bot.github.client import ROLES
from flagbot.hooks.errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError

if TYPE_CHECKING:
    from flagbot.bot.admin.dryrun import DryRunClient
    from flagbot.hooks.config import RepoConfig

EPILOG = """\
dry runs, per event:
  pull_request   base and head commits from the payload; both must be in the checkout.
  issue_comment  the commands of the comment. On a pull request its head is --head, else
                 refs/remotes/pr/N or refs/pull/N/head when the checkout has one (N: the
                 payload's issue.number), else HEAD; its base is --base, else the tip of
                 origin/<default branch>, else of <default branch> (what GitHub calls the
                 base; the changed files are counted from the merge base). The commenter has
                 the --as-role role. The reaction, the reply and any push are printed as
                 would-do actions; nothing is sent or pushed.
  workflow_run   the run is matched to its request by its title, as the worker would; the
                 kernels check run the request names is assumed queued on its head (a dry run
                 cannot see check runs). A completed run's verdict comes from --report
                 (report.json or the artifact's zip); without it the run has no report.
  workflow_job   not replayable dry: the job names its run only by id, which only GitHub can
                 look up; replay the run's workflow_run payload instead.
The worker's own follow-ups (flagbot_deadline) are not replayed from a file.
"""


def parser() -> argparse.ArgumentParser:
    """The argument parser of `flagbot replay`."""
    p = argparse.ArgumentParser(prog="flagbot replay", description=__doc__.splitlines()[0],
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("payload", help="webhook payload JSON (as GitHub delivered it)")
    p.add_argument("--event", required=True, help="the X-GitHub-Event of the delivery, e.g. pull_request")
    p.add_argument("--repo", help="local checkout of the repository (--dry-run; default: current directory)")
    p.add_argument("--dry-run", action="store_true", help="use the local checkout, never GitHub")
    p.add_argument("--delivery", default="replay", help="delivery id to report (default: replay)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--head", metavar="REV", help="issue_comment --dry-run: the pull request's head "
                   "commit (default: refs/remotes/pr/N, refs/pull/N/head, else HEAD)")
    p.add_argument("--base", metavar="REV", help="issue_comment --dry-run: the tip of the base branch "
                   "(default: origin/<default branch>, else <default branch>)")
    p.add_argument("--as-role", choices=ROLES, default="write", help="--dry-run: the repository role "
                   "GitHub would report for the commenter or author (default: write)")
    p.add_argument("--report", metavar="FILE", help="workflow_run --dry-run: the run's report "
                   "(report.json, or the artifact's zip); without it a completed run has none")
    return p


def load_payload(path: Path) -> dict[str, Any]:
    """The payload file as a JSON object (UsageError naming the file otherwise)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from exc
    except ValueError as exc:
        raise UsageError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the payload must be a JSON object")
    return data


def require_commits(repo: Path, shas: dict[str, str], number: int) -> None:
    """UsageError naming each payload commit the local checkout lacks, and how to fetch it."""
    from flagbot.hooks import git

    missing = [f"{role} {sha}" for role, sha in shas.items()
               if not git.has_object(repo, f"{sha}^{{commit}}")]
    if missing:
        raise UsageError(f"{repo}: the payload's {' and '.join(missing)} are not in this checkout",
                         hint=f"git -C {repo} fetch origin pull/{number}/head (and the base branch), "
                              "then run replay again")


def resolve(repo: Path, rev: str) -> str | None:
    """The commit `rev` names in `repo`, or None."""
    from flagbot.hooks import git

    proc = git.run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
                   cwd=repo, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def comment_commits(repo: Path, payload: dict[str, Any], default_branch: str, head: str | None,
                    base: str | None) -> tuple[str, str, list[str]]:
    """(base, head, what was assumed) of the pull request an `issue_comment` is on."""
    number = int((payload.get("issue") or {}).get("number") or 0)
    if head is not None:
        head_sha, head_from = resolve(repo, head), head
        if head_sha is None:
            raise UsageError(f"--head {head}: no such commit in {repo}")
    else:
        tried = [f"refs/remotes/pr/{number}", f"refs/pull/{number}/head", "HEAD"]
        head_sha, head_from = next(((sha, rev) for rev in tried if (sha := resolve(repo, rev))),
                                   (None, ""))
        if head_sha is None:
            raise UsageError(f"{repo}: no head commit for #{number} ({', '.join(tried)} missing)",
                             hint=f"git fetch origin pull/{number}/head, then pass --head FETCH_HEAD")
    if base is not None:
        base_sha, base_from = resolve(repo, base), base
        if base_sha is None:
            raise UsageError(f"--base {base}: no such commit in {repo}")
    else:
        tried = [f"refs/remotes/origin/{default_branch}", f"refs/heads/{default_branch}"]
        base_sha, base_from = next(((sha, rev) for rev in tried if (sha := resolve(repo, rev))),
                                   (None, ""))
        if base_sha is None:
            raise UsageError(f"{repo}: the default branch {default_branch!r} is not in this checkout",
                             hint="pass --base REV (the tip of the pull request's base branch)")
    return base_sha, head_sha, [f"pull request #{number}: head {head_sha[:12]} ({head_from}), base "
                                f"{base_sha[:12]} ({base_from}); its branch name is unknown (HEAD)"]


def report_zip(path: Path) -> bytes:
    """The artifact's zip: the file itself when it is one, else `report.json` zipped."""
    import io
    import zipfile

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"--report {path}: cannot read: {exc.strerror}") from exc
    if zipfile.is_zipfile(io.BytesIO(data)):
        return data
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("report.json", data)
    return buf.getvalue()


def assume_waiting_run(client: DryRunClient, config: RepoConfig | None, payload: dict[str, Any],
                       report: Path | None) -> list[str]:
    """Make the dry-run client answer as GitHub would while the run's request waits for it:
    the kernels check run queued on the request's head, and the run's artifact (from --report)."""
    import time

    from flagbot.bot.devices import plan
    from flagbot.bot.devices.ids import Request, Tracked
    from flagbot.bot.github import CheckRunRef

    run = payload.get("workflow_run") or {}
    request = Request.from_title(str(run.get("display_title") or ""))
    device = plan.devices(config).get(request.device) if request and config is not None else None
    if request is None or device is None:
        return []  # the handler says why it skips the run
    client.assume_check_run(request.sha, CheckRunRef(
        1, device.check_name, "queued", None, Tracked(request.id).encode(), started_at=time.time()))
    notes = [f"{device.check_name!r} on {request.sha[:12]} is queued for request {request.id} "
             "(a dry run cannot see check runs)"]
    run_id = int(run.get("id") or 0)
    if report is not None:
        client.add_artifact(run_id, request.artifact, report_zip(report))
        notes.append(f"run {run_id} uploaded {request.artifact} holding {report.name}")
    elif payload.get("action") == "completed":
        notes.append(f"run {run_id} uploaded no report artifact (give one with --report FILE)")
    return notes


def dry_run(repo: Path, delivery: str, event: str, payload: dict[str, Any], *,
            head: str | None = None, base: str | None = None, role: str = "write",
            report: Path | None = None) -> dict[str, Any]:
    """Run the handlers against `repo` with the recording client; nothing leaves this machine."""
    from flagbot.bot import repo_config
    from flagbot.bot.admin.dryrun import DryRunClient
    from flagbot.bot.context import Context, PullRequest
    from flagbot.bot.dispatch import run_context
    from flagbot.bot.settings import Settings
    from flagbot.bot.work.workspace import LocalWorkspace

    full_name = str((payload.get("repository") or {}).get("full_name") or repo.name)
    default_branch = str((payload.get("repository") or {}).get("default_branch") or "main")
    misplaced = [opt for opt, value, wanted in (("--head", head, "issue_comment"),
                                                ("--base", base, "issue_comment"),
                                                ("--report", report, "workflow_run"))
                 if value is not None and event != wanted]
    if misplaced:
        raise UsageError(f"{', '.join(misplaced)}: not used for --event {event}")
    assumed = [f"everyone has the {role!r} role"]
    if event == "pull_request":
        pr = PullRequest.from_payload(payload)
        require_commits(repo, {"base": pr.base_sha, "head": pr.head_sha}, pr.number)
        base_sha, head_sha, labels = pr.base_sha, pr.head_sha, list(pr.labels)
    elif event == "issue_comment":
        issue = payload.get("issue") or {}
        labels = [str(lab.get("name")) for lab in issue.get("labels") or [] if isinstance(lab, dict)]
        if issue.get("pull_request"):
            base_sha, head_sha, notes = comment_commits(repo, payload, default_branch, head, base)
            assumed += notes
        else:  # an issue: no command that needs a pull request runs
            base_sha = head_sha = resolve(repo, "HEAD") or ""
    elif event == "workflow_run":
        base_sha = head_sha = ""
        labels = []
    else:
        raise UsageError(f"--event {event} cannot be replayed with --dry-run: the payload names its "
                         "workflow run only by id (workflow_job.run_id), and only GitHub can look "
                         "the run up",
                         hint="replay the run's workflow_run payload with --dry-run, or drop "
                              "--dry-run to act on GitHub")
    client = DryRunClient(repo, full_name, base_sha, head_sha, labels, role=role)
    config, error = repo_config.load(client, default_branch)
    if event == "workflow_run":
        assumed += assume_waiting_run(client, config, payload, report)
    with tempfile.TemporaryDirectory(prefix="flagbot-replay-") as scratch:
        ctx = Context(Settings(), delivery, event, payload, full_name, default_branch, client,
                      LocalWorkspace(repo, Path(scratch), on_push=client.record_push), config,
                      error, dry_run=True)
        return {**run_context(ctx), "assumed": assumed}


def run_on_github(settings: Any, delivery: str, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Run the handlers as the worker would: as the App, under the pull request's lock."""
    from flagbot.bot.dispatch import BotHandlers
    from flagbot.bot.locks import RepoLocks
    from flagbot.bot.worker import run_locked

    repo = (payload.get("repository") or {}).get("full_name")
    return run_locked(RepoLocks(settings), BotHandlers(settings), delivery, event, payload,
                      repo if isinstance(repo, str) else None)


def render(result: dict[str, Any]) -> str:
    """Human-readable lines: each action, with annotations and comment bodies indented."""
    mode = "would do" if result.get("dry_run") else "did"
    lines = [f"{result.get('repository')} {result.get('event')}.{result.get('action')}: "
             f"{len(result.get('actions', []))} action(s) {mode}"]
    for action in result.get("actions", []):
        # a dry run records the annotations themselves, a real one (the client) their count
        listed = action.get("annotations") if isinstance(action.get("annotations"), list) else []
        detail = {k: v for k, v in action.items()
                  if k not in ("kind", "body", "summary") and not (k == "annotations" and listed)}
        lines.append(f"  {action['kind']} " + " ".join(f"{k}={v!r}" for k, v in detail.items()))
        for ann in listed:
            lines.append(f"      {ann['path']}:{ann['start_line']}: {ann['annotation_level']}: "
                         f"[{ann.get('title', '')}] {ann['message']}")
        for text in (action.get("summary"), action.get("body")):
            if text:
                lines += ["      | " + line for line in str(text).splitlines()]
    for name, conclusion in (result.get("conclusions") or {}).items():
        lines.append(f"  {name}: {conclusion}")
    for key in ("skipped", "conclusion", "check_run"):
        if result.get(key):
            lines.append(f"  {key}: {result[key]}")
    lines += [f"  assumed: {note}" for note in result.get("assumed") or []]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Entry point of `flagbot replay`."""
    args = parser().parse_args(argv)
    # absolute: the checkout is cloned from inside a scratch folder, where "." means nothing
    base = Path(cwd or ".").resolve()
    payload = load_payload(base / args.payload)
    from flagbot.bot.dispatch import HANDLERS, INTERNAL, wants

    if args.event in INTERNAL:
        # Not a GitHub event: the worker schedules it after a dispatch and runs it when due. A
        # dry run cannot see the check run it looks at, and a real replay that is early would
        # schedule its next look as a follow-up that only the worker's queue can run.
        raise UsageError(f"--event {args.event}: the worker's own follow-up, not replayed from a "
                         "file", hint="the worker runs it when it is due")
    if args.event not in HANDLERS:
        known = "; ".join(f"{name}: {HANDLERS[name].help}" for name in sorted(HANDLERS))
        raise UsageError(f"--event {args.event}: no handler (known: {known})")
    if not wants(args.event, payload):
        print(f"{args.event}.{payload.get('action')}: no handler reacts to this action; nothing to do")
        return EXIT_OK
    if args.dry_run:
        repo = (base / (args.repo or ".")).resolve()
        if not (repo / ".git").exists():
            raise UsageError(f"--repo {repo}: not a git checkout", hint="pass the repository's checkout")
        result = dry_run(repo, args.delivery, args.event, payload, head=args.head, base=args.base,
                         role=args.as_role, report=base / args.report if args.report else None)
    else:
        given = [f"--{name.replace('_', '-')}" for name in ("repo", "head", "base", "report")
                 if getattr(args, name)] + (["--as-role"] if args.as_role != "write" else [])
        if given:
            raise UsageError(f"{', '.join(given)}: only used with --dry-run (the real run asks "
                             "GitHub)")
        from flagbot.bot.settings import Settings

        settings = Settings.from_env()
        if not settings.app_id or not settings.private_key:
            raise UsageError("acting on GitHub needs GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or "
                             "GITHUB_PRIVATE_KEY_PATH) in the environment",
                             hint="or add --dry-run to try it against a local checkout")
        from flagbot.bot.settings import private_state

        private_state(settings.state_dir)  # clones of the repository land there
        if settings.redis_url:  # the repository lock lives there
            from flagbot.bot.store.redis_reach import require_redis

            require_redis(settings.redis_url)
        result = run_on_github(settings, args.delivery, args.event, payload)
    print(json.dumps(result, indent=2, default=str) if args.json else render(result))
    failed = [n for n, c in (result.get("conclusions") or {}).items() if c == "failure"] + \
        ([result["conclusion"]] if result.get("conclusion") == "failure" else [])
    return EXIT_CHECK_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
