"""`flagbot replay PAYLOAD.json --event EVENT [--repo PATH] [--dry-run]`: run the handlers once.

Without --dry-run it acts on GitHub as the App (GITHUB_APP_ID, GITHUB_PRIVATE_KEY, GITHUB_API_URL
from the environment), exactly like the worker would for that delivery. With --dry-run it uses a
local checkout instead of GitHub and changes nothing anywhere; it prints what it would do.
Exit status: 0 ok, 1 a check run failed (or the config is invalid), 2 usage or environment error.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flagbot.hooks.errors import EXIT_CHECK_FAILED, EXIT_OK, UsageError


def parser() -> argparse.ArgumentParser:
    """The argument parser of `flagbot replay`."""
    p = argparse.ArgumentParser(prog="flagbot replay", description=__doc__.splitlines()[0])
    p.add_argument("payload", help="webhook payload JSON (as GitHub delivered it)")
    p.add_argument("--event", required=True, help="the X-GitHub-Event of the delivery, e.g. pull_request")
    p.add_argument("--repo", help="local checkout of the repository (--dry-run; default: current directory)")
    p.add_argument("--dry-run", action="store_true", help="use the local checkout, never GitHub")
    p.add_argument("--delivery", default="replay", help="delivery id to report (default: replay)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
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
               if git.run(["cat-file", "-e", f"{sha}^{{commit}}"], cwd=repo, check=False).returncode]
    if missing:
        raise UsageError(f"{repo}: the payload's {' and '.join(missing)} are not in this checkout",
                         hint=f"git -C {repo} fetch origin pull/{number}/head (and the base branch), "
                              "then run replay again")


def dry_run(repo: Path, delivery: str, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Run the handlers against `repo` with the recording client."""
    from flagbot.bot import repo_config
    from flagbot.bot.context import Context, PullRequest
    from flagbot.bot.dryrun import DryRunClient
    from flagbot.bot.handlers import run_context
    from flagbot.bot.settings import Settings
    from flagbot.bot.workspace import LocalWorkspace

    pr = PullRequest.from_payload(payload)
    require_commits(repo, {"base": pr.base_sha, "head": pr.head_sha}, pr.number)
    full_name = str((payload.get("repository") or {}).get("full_name") or repo.name)
    default_branch = str((payload.get("repository") or {}).get("default_branch") or "main")
    labels = [str(lab.get("name")) for lab in (payload["pull_request"].get("labels") or [])]
    client = DryRunClient(repo, full_name, pr.base_sha, pr.head_sha, labels)
    config, error = repo_config.load(client, default_branch)
    with tempfile.TemporaryDirectory(prefix="flagbot-replay-") as scratch:
        ctx = Context(Settings(), delivery, event, payload, full_name, default_branch, client,
                      LocalWorkspace(repo, Path(scratch)), config, error, dry_run=True)
        return run_context(ctx)


def run_on_github(settings: Any, delivery: str, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Run the handlers as the worker would: as the App, under the pull request's lock."""
    from flagbot.bot.handlers import BotHandlers
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
        detail = {k: v for k, v in action.items() if k not in ("kind", "annotations", "body", "summary")}
        lines.append(f"  {action['kind']} " + " ".join(f"{k}={v!r}" for k, v in detail.items()))
        for ann in action.get("annotations") or []:
            lines.append(f"      {ann['path']}:{ann['start_line']}: {ann['annotation_level']}: "
                         f"[{ann.get('title', '')}] {ann['message']}")
        for text in (action.get("summary"), action.get("body")):
            if text:
                lines += ["      | " + line for line in str(text).splitlines()]
    for name, conclusion in (result.get("conclusions") or {}).items():
        lines.append(f"  {name}: {conclusion}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """Entry point of `flagbot replay`."""
    args = parser().parse_args(argv)
    # absolute: the checkout is cloned from inside a scratch folder, where "." means nothing
    base = Path(cwd or ".").resolve()
    payload = load_payload(base / args.payload)
    from flagbot.bot.handlers import HANDLERS, wants

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
        result = dry_run(repo, args.delivery, args.event, payload)
    else:
        if args.repo:
            raise UsageError("--repo is only used with --dry-run (the real run clones from GitHub)")
        from flagbot.bot.settings import Settings

        settings = Settings.from_env()
        if not settings.app_id or not settings.private_key:
            raise UsageError("acting on GitHub needs GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or "
                             "GITHUB_PRIVATE_KEY_PATH) in the environment",
                             hint="or add --dry-run to try it against a local checkout")
        from flagbot.bot.settings import private_state

        private_state(settings.state_dir)  # clones of the repository land there
        result = run_on_github(settings, args.delivery, args.event, payload)
    print(json.dumps(result, indent=2, default=str) if args.json else render(result))
    failed = [n for n, c in (result.get("conclusions") or {}).items() if c == "failure"]
    return EXIT_CHECK_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
