"""`/retest [DEVICE ...]`: run again the devices whose last run on this head did not pass.

Only devices with a kernels check run on the current head count. A device is run again when
that run completed `failure` (failed ops, an unusable report, a dead runner, a refused
dispatch), `timed_out` or `cancelled`; passing (and neutral) devices, and runs still under way,
are left alone. Named devices narrow the set. The trust gate applies as for `/check`.
"""

from __future__ import annotations

from flagbot.bot.commands.base import Command, CommandContext, Outcome
from flagbot.bot.commands.parse import Invocation
from flagbot.bot.devices import plan, runs
from flagbot.bot.github.markdown import code
from flagbot.bot.handlers import summary
from flagbot.hooks.errors import UsageError

RETESTED = ("failure", "timed_out", "cancelled")


def run(cc: CommandContext, inv: Invocation) -> Outcome:
    """Re-dispatch the failed, errored or timed-out devices of this head."""
    config = cc.ctx.config
    assert config is not None
    devices = plan.devices(config)
    if inv.too_many_args:
        raise UsageError("too many devices")
    unknown = [d for d in inv.args if d not in devices]
    if unknown:
        known = ", ".join(f"`{d}`" for d in devices) or "none"
        raise UsageError(f"no device {', '.join(code(d, 60) for d in unknown)} here",
                         hint=f"configured devices: {known}")
    pr = cc.pull()
    client = cc.ctx.client
    wanted, left = [], []
    for name in (list(dict.fromkeys(inv.args)) or list(devices)):
        ref, tracked = runs.latest(client, pr.head_sha, devices[name])
        if ref is None:
            if inv.args:
                left.append(f"{code(name)}: no run on this head (use `/check {name}`)")
            continue
        if ref.status == "completed" and ref.conclusion in RETESTED:
            wanted.append((devices[name], tracked.ops if tracked else ()))
        else:
            left.append(f"{code(name)}: {ref.conclusion or ref.status}, left alone")
    if not wanted:
        said = "; ".join(left) or "no kernel check ran on this head"
        return Outcome(True, f"nothing to run again on `{pr.head_sha[:12]}`: {said}",
                       {"retested": []})
    meta = summary.metadata(summary.find(client.comments(pr.number), client.bot_login))
    started = runs.ask(cc.ctx, pr, wanted, meta, rerun=True)
    runs.refresh_summary(cc.ctx, pr.number, pr.head_sha)
    lines = [f"- {code(s.device)}: {s.outcome}; {s.detail}" for s in started] \
        + [f"- {line}" for line in left]
    ok = all(s.outcome in ("dispatched", "ran", "running") for s in started)
    return Outcome(ok, f"running again on `{pr.head_sha[:12]}`:\n\n" + "\n".join(lines),
                   {"retested": [s.device for s in started if s.outcome in ("dispatched", "ran")]})


COMMAND = Command(
    name="retest",
    usage="/retest [DEVICE ...]",
    summary="runs the kernel checks again on the devices whose last run on this head failed, "
            "errored or timed out (all such devices, or the ones named)",
    permission="write",
    example="/retest a_x100",
    run=run,
)
