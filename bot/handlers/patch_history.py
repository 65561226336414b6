"""FlagScale's `hardware/patch_history.yaml`, kept by the bot: after a merged pull request added
or changed a vendor's per-file folders, the bot records the merge commit for that device, its
tasks (from the folders' `diff.yaml`) and the backends it touched, exactly as the maintainers'
tool does by hand, and proposes it: a commit on `flagbot/patch-history/<number>` and a pull
request (the default), or a push onto the default branch (`patch_history: {update: push}` in
.github/flagbot.yml; when the branch moved meanwhile, the pull request is made instead).

Idempotent: the commit's content and dates come from the merge commit, so a redelivery makes
the same commit, pushes nothing new and finds the pull request already open.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from flagbot.bot.context import Context, PullRequest, field_of
from flagbot.bot.github import ChangedFile
from flagbot.bot.handlers import labels
from flagbot.bot.work.regenerate import noreply
from flagbot.hooks import git
from flagbot.hooks.folders import layout_for_paths
from flagbot.hooks.patches import perfile_history
from flagbot.hooks.patches.perfile import DIFF_YAML, TASKS
from flagbot.kernels.yamlload import safe_load_bounded

BRANCH = "flagbot/patch-history/{number}"
TITLE = "[{devices}] record patch history for #{number}"
MAX_READ = 1024 * 1024


def touched_folders(hardwares: str, files: Iterable[ChangedFile]) -> dict[str, set[str]]:
    """device -> backends whose `<hardwares>/<device>/<backend>/` the PR added to or changed."""
    prefix = hardwares.strip("/") + "/"
    out: dict[str, set[str]] = {}
    for f in files:
        rest = f.filename[len(prefix):].split("/") if f.filename.startswith(prefix) else []
        if f.status != "removed" and len(rest) >= 3:
            out.setdefault(rest[0], set()).add(rest[1])
    return out


def show(git_dir: Path, commit: str, rel: str) -> str | None:
    """A file's text at `commit`, None when absent."""
    proc = git.run(["cat-file", "blob", f"{commit}:{rel}"], cwd=git_dir, check=False)
    return proc.stdout[:MAX_READ].decode("utf-8", "replace") if proc.returncode == 0 else None


def tasks_of(git_dir: Path, commit: str, folder: str) -> list[str] | None:
    """The tasks a per-file folder's diff.yaml lists at `commit`; None: not a per-file folder."""
    import yaml

    text = show(git_dir, commit, f"{folder}/{DIFF_YAML}")
    if text is None:
        return None
    try:
        doc = safe_load_bounded(text)
    except yaml.YAMLError:
        return []
    tasks = doc.get("task") if isinstance(doc, dict) else None
    listed = tasks if isinstance(tasks, list) else [tasks]
    return [str(t) for t in listed if t in TASKS]


def updated_history(git_dir: Path, merge: str, hardwares: str,
                    touched: dict[str, set[str]]) -> tuple[str, str, list[str]]:
    """(old text, new text, devices recorded) of the history file after `merge`."""
    rel = perfile_history.history_rel(hardwares)
    old = show(git_dir, merge, rel) or ""
    new = old
    devices = []
    for device, backends in sorted(touched.items()):
        tasks: set[str] = set()
        kept = []
        for backend in sorted(backends):
            found = tasks_of(git_dir, merge, f"{hardwares.strip('/')}/{device}/{backend}")
            if found is not None:
                kept.append(backend)
                tasks.update(found)
        if kept and tasks:
            new = perfile_history.record(new, device, sorted(tasks), kept, merge)
            devices.append(device)
    return old, new, devices


def commit_history(git_dir: Path, merge: str, rel: str, text: str, message: str, bot: str) -> str:
    """A commit on `merge` changing only `rel` to `text`, by the bot, dated like `merge`."""
    blob = git.out(["hash-object", "-w", "--stdin"], cwd=git_dir, stdin=text.encode())
    index = git_dir / f"flagbot-history-{os.getpid()}-{os.urandom(4).hex()}.index"
    try:
        env = {"GIT_INDEX_FILE": str(index)}
        git.run(["read-tree", merge], cwd=git_dir, env=env)
        git.run(["update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}"], cwd=git_dir,
                env=env)
        tree = git.out(["write-tree"], cwd=git_dir, env=env)
    finally:
        index.unlink(missing_ok=True)
    when = git.out(["log", "-1", "--format=%ct %cz", merge], cwd=git_dir)
    ident = {f"GIT_{role}_{key}": value for role in ("AUTHOR", "COMMITTER")
             for key, value in (("NAME", bot), ("EMAIL", noreply(bot)), ("DATE", when))}
    return git.out(["commit-tree", tree, "-p", merge], cwd=git_dir, env=ident,
                   stdin=message.encode() + b"\n")


def on_closed(ctx: Context) -> dict[str, Any]:
    """A `closed` delivery: for a merged PR touching per-file folders, propose the history."""
    pr = field_of(ctx.payload, "pull_request")
    merge = str(pr.get("merge_commit_sha") or "")
    if not pr.get("merged") or not merge or ctx.config is None:
        return {}
    mode = str(ctx.config["patch_history"]["update"])
    number = int(field_of(pr, "number"))
    files = ctx.client.pull_files(number)
    config = layout_for_paths(ctx.config, labels.touched_paths(files))
    hw = config.hardwares
    touched = touched_folders(hw, files)
    if not touched or mode == "off":
        return {"patch_history": "off"} if touched else {}
    with ctx.workspace.held():
        git_dir = ctx.workspace.objects(PullRequest.from_payload(ctx.payload))
        if not ctx.workspace.fetch_commit(merge):
            return {"patch_history": f"merge commit {merge[:12]} not found"}
        old, new, devices = updated_history(git_dir, merge, hw, touched)
        if new == old:
            return {"patch_history": "up to date"}
        title = TITLE.format(devices=" ".join(devices), number=number)
        message = (f"{title}\n\nRecords {merge} in {perfile_history.history_rel(hw)} for "
                   f"{', '.join(devices)}, as tools/patch/merge.py would after #{number}.")
        commit = commit_history(git_dir, merge, perfile_history.history_rel(hw), new, message,
                                ctx.client.bot_login)
    return propose(ctx, number, mode, commit, title, message)


def propose(ctx: Context, number: int, mode: str, commit: str, title: str,
            message: str) -> dict[str, Any]:
    """Push onto the default branch (mode `push`, fast-forward only), else branch + PR."""
    url = str((ctx.payload.get("repository") or {}).get("clone_url") or "")
    if mode == "push":
        done = ctx.workspace.push(url, [f"{commit}:refs/heads/{ctx.default_branch}"])
        if done and done[0].outcome != "rejected":
            return {"patch_history": "pushed", "commit": commit}
    branch = BRANCH.format(number=number)
    done = ctx.workspace.push(url, [f"+{commit}:refs/heads/{branch}"])
    if not done or done[0].outcome == "rejected":
        raise RuntimeError(f"pushing {branch} was refused: {done[0].detail if done else 'no answer'}")
    existing = ctx.client.open_pulls(branch)
    pull = existing[0] if existing else ctx.client.create_pull(
        title, message.split("\n\n", 1)[1] + "\n\nFlagScale's unpatch takes the last commit "
        "listed for a device, task and backends.", branch, ctx.default_branch)
    return {"patch_history": "proposed", "commit": commit, "branch": branch, "pull": pull}
