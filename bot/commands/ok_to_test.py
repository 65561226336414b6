"""`/ok-to-test [SHA]`: let kernel checks run this pull request's code, for one head only.

Authors without the trusted role (forks, first-time contributors) get no runs on device
hardware until someone with the command's role has read the changes and says so. The approval
binds to the head the maintainer could have seen: the one the PR had when the comment was
written, or the sha the comment names. A head pushed after the comment (even before the bot
handled it) is not approved, and a later push needs a new approval. The devices waiting on an
approved head (and those the PR's `ci:` labels ask for) start at once.
"""

from __future__ import annotations

import re
from typing import Any

from flagbot.bot.commands.base import Command, CommandContext, Outcome
from flagbot.bot.commands.parse import Invocation
from flagbot.bot.devices import plan, runs, trust
from flagbot.bot.github import comments
from flagbot.bot.github.markdown import code
from flagbot.bot.handlers import labels, summary
from flagbot.hooks.errors import UsageError

SHA = re.compile(r"[0-9a-f]{7,40}")


def approved_head(args: list[str], meta: dict[str, Any], head: str, commented_at: str) -> str:
    """The head this comment approves: the sha it names (which must be the PR's head), else
    the head the PR had when the comment was written. Raises UsageError with what to do."""
    if len(args) > 1:
        raise UsageError("`/ok-to-test` takes at most one argument: the head sha you reviewed")
    if args:
        named = args[0].lower()
        if not SHA.fullmatch(named):
            raise UsageError(f"{code(args[0], 60)} is not a commit sha (7 to 40 hex digits)")
        if not head.startswith(named):
            raise UsageError(f"{code(named)} is not this pull request's head "
                             f"(`{head[:12]}`): review the head and name it")
        return head
    seen = trust.head_at(meta, commented_at)
    if seen is None:
        raise UsageError("I have no record of this pull request's head at the time of your "
                         f"comment; name the head you reviewed: `/ok-to-test {head[:12]}`")
    return seen


def run(cc: CommandContext, inv: Invocation) -> Outcome:
    """Record the approval of the head the maintainer saw, then start the devices waiting for
    it (only while it is still the head)."""
    config = cc.ctx.config
    assert config is not None
    client = cc.ctx.client
    pr = cc.pull()
    existing = summary.find(client.comments(pr.number), client.bot_login)
    commented_at = str((cc.ctx.payload.get("comment") or {}).get("created_at") or "")
    sha = approved_head(list(inv.args), summary.metadata(existing), pr.head_sha, commented_at)
    meta = trust.with_approval(summary.metadata(existing), sha)
    if existing is None:
        body = summary.with_meta(f"{summary.MARKER} -->\n### flagbot summary for "
                                 f"{pr.head_sha[:10]}\n", meta)
        client.create_comment(pr.number, summary.with_kernels(body, []))
    else:
        comments.upsert(client, pr.number, existing, summary.with_meta(existing.body, meta))
    if sha != pr.head_sha:
        return Outcome(False, f"approved head `{sha[:12]}`, the head when you commented; the "
                              f"pull request has moved to `{pr.head_sha[:12]}` since, which "
                              "nobody approved. Review it and comment "
                              f"`/ok-to-test {pr.head_sha[:12]}`.", {"approved": sha})
    devices = plan.devices(config)
    rule = plan.rules(config)
    paths = labels.touched_paths(client.pull_files(pr.number))
    wanted = []
    for device in devices.values():
        _, tracked = runs.latest(client, pr.head_sha, device)
        labelled = device.name in plan.labelled(config, pr.labels)
        if (tracked is not None and tracked.state == "waiting") or \
                (labelled and plan.touching(device, rule, paths)):
            wanted.append((device, tracked.ops if tracked else ()))
    started = runs.ask(cc.ctx, pr, wanted, meta)
    if not wanted:
        runs.set_needs_label(cc.ctx, pr, rule, blocked=False)
    runs.refresh_summary(cc.ctx, pr.number, pr.head_sha)
    lines = [f"approved head `{pr.head_sha[:12]}` for kernel checks on device runners; a new "
             "push needs a new `/ok-to-test`."]
    lines += [f"- {code(s.device)}: {s.outcome}; {s.detail}" for s in started]
    if not started:
        lines.append("No device is asked for yet: add a `ci: <device>` label or comment "
                     "`/check DEVICE`.")
    return Outcome(True, "\n".join(lines), {"approved": pr.head_sha,
                                            "started": {s.device: s.outcome for s in started}})


COMMAND = Command(
    name="ok-to-test",
    usage="/ok-to-test [SHA]",
    summary="lets kernel checks run this pull request's code on device runners, for the head "
            "it had when you commented (or the head SHA you name) only",
    permission="write",
    example="/ok-to-test",
    run=run,
)
