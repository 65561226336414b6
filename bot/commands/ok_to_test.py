"""`/ok-to-test`: let kernel checks run this pull request's code, for its current head only.

Authors without the trusted role (forks, first-time contributors) get no runs on device
hardware until someone with the command's role has read the changes and says so. The approval
names the head sha; a later push needs a new one. The devices waiting on this head (and those
the PR's `ci:` labels ask for) start at once.
"""

from __future__ import annotations

from flagbot.bot.commands.base import Command, CommandContext, Outcome
from flagbot.bot.commands.parse import Invocation
from flagbot.bot.devices import plan, runs, trust
from flagbot.bot.github import comments
from flagbot.bot.github.markdown import code
from flagbot.bot.handlers import labels, summary
from flagbot.hooks.errors import UsageError


def run(cc: CommandContext, inv: Invocation) -> Outcome:
    """Record the approval of the head sha, then start the devices waiting for it."""
    if inv.args:
        raise UsageError("`/ok-to-test` takes no arguments (it approves the current head)")
    config = cc.ctx.config
    assert config is not None
    client = cc.ctx.client
    pr = cc.pull()
    existing = summary.find(client.comments(pr.number), client.bot_login)
    meta = trust.with_approval(summary.metadata(existing), pr.head_sha)
    if existing is None:
        body = summary.with_meta(f"{summary.MARKER} -->\n### flagbot summary for "
                                 f"{pr.head_sha[:10]}\n", meta)
        client.create_comment(pr.number, summary.with_kernels(body, []))
    else:
        comments.upsert(client, pr.number, existing, summary.with_meta(existing.body, meta))
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
    usage="/ok-to-test",
    summary="lets kernel checks run this pull request's code on device runners, for its "
            "current head only",
    permission="write",
    example="/ok-to-test",
    run=run,
)
