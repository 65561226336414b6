"""`/check DEVICE [op ...]`: run the kernel checks of one device on this pull request's head.

The device must be configured (`devices:`) and the pull request must touch its backend folder or
the kernel paths. An untrusted author's head needs `/ok-to-test` first. One run per head and
device is under way at a time; asking again after it finished runs it again.
"""

from __future__ import annotations

import re

from flagbot.bot.commands.base import Command, CommandContext, Outcome
from flagbot.bot.commands.parse import Invocation
from flagbot.bot.devices import plan, runs
from flagbot.bot.github.markdown import code
from flagbot.bot.handlers import labels, summary
from flagbot.hooks.errors import UsageError

OP_RE = re.compile(r"[a-z][a-z0-9_]{0,39}")
MAX_OPS = 16
SAID = {"dispatched": "started", "ran": "ran", "waiting": "waiting for `/ok-to-test`",
        "running": "already running", "exists": "done", "failed": "not started"}


def run(cc: CommandContext, inv: Invocation) -> Outcome:
    """Validate the device and ops, then ask for the run."""
    config = cc.ctx.config
    assert config is not None
    devices = plan.devices(config)
    if not inv.args:
        raise UsageError("name a device", hint=f"configured: {', '.join(devices) or 'none'}")
    if inv.too_many_args or len(inv.args) > MAX_OPS + 1:
        raise UsageError(f"at most {MAX_OPS} ops at once")
    name, ops = inv.args[0], list(inv.args[1:])
    device = devices.get(name)
    if device is None:
        known = ", ".join(f"`{d}`" for d in devices) or "none (add them under `devices:` in "\
            "`.github/flagbot.yml`)"
        raise UsageError(f"no device {code(name, 60)} here", hint=f"configured devices: {known}")
    bad = [op for op in ops if not OP_RE.fullmatch(op)]
    if bad:
        raise UsageError(f"not op names: {', '.join(code(b, 60) for b in bad)}")
    rule = plan.rules(config)
    if ops and rule.by_tag and not device.local:
        raise UsageError("with tag dispatch (`kernels.dispatch: tag`) a run checks all the "
                         "device's ops: a tag carries no inputs", hint=f"`/check {name}`")
    pr = cc.pull()
    files = labels.touched_paths(cc.ctx.client.pull_files(pr.number))
    if not plan.touching(device, rule, files):
        return Outcome(False, f"nothing to check on {code(name)}: this pull request touches "
                              f"neither {code(device.backend + '/')} nor the kernel paths "
                              f"({', '.join(code(p) for p in rule.paths)})")
    meta = summary.metadata(summary.find(cc.ctx.client.comments(pr.number), cc.ctx.client.bot_login))
    started = runs.ask(cc.ctx, pr, [(device, ops)], meta, rerun=True)[0]
    runs.refresh_summary(cc.ctx, pr.number, pr.head_sha)
    ok = started.outcome in ("dispatched", "ran", "running", "exists")
    return Outcome(ok, f"{code(device.check_name)} on `{pr.head_sha[:12]}`: "
                       f"{SAID.get(started.outcome, started.outcome)}; {started.detail}",
                   {"device": device.name, "outcome": started.outcome})


COMMAND = Command(
    name="check",
    usage="/check DEVICE [op ...]",
    summary="runs the kernel checks of DEVICE (a name under `devices:`) on this head, all "
            "the backend's ops or the ones named",
    permission="write",
    example="/check a_x100 softmax mm",
    run=run,
)
