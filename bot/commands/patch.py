"""`/patch [DEV ...]`: regenerate the stored patches now (the devices' labels when none given)."""

from __future__ import annotations

from flagbot.bot.commands.base import Command, CommandContext, Outcome
from flagbot.bot.commands.parse import Invocation
from flagbot.bot.work import regenerate
from flagbot.hooks.errors import UsageError
from flagbot.hooks.patches.devices import check_devices


def run(cc: CommandContext, inv: Invocation) -> Outcome:
    """Regenerate for the named devices, or for the PR's device labels."""
    if inv.too_many_args or len(inv.args) > regenerate.MAX_DEVICES:
        raise UsageError(f"at most {regenerate.MAX_DEVICES} devices at once")
    config = cc.ctx.config
    assert config is not None
    pr = cc.pull()
    devices = sorted(check_devices(list(inv.args))) if inv.args else \
        regenerate.labelled_devices(config, pr.labels)
    if not devices:
        pattern = config["labels"]["device"]["pattern"]
        raise UsageError(f"no device given and this pull request has no device label ({pattern!r})")
    regen = regenerate.regenerate(cc.ctx, pr, devices)
    clone_url = str(cc.ctx.payload.get("repository", {}).get("clone_url") or "")
    ok = regen.outcome not in ("failed", "rejected")
    return Outcome(ok, "\n".join(regenerate.describe(regen, clone_url)),
                   {"regenerated": regen.outcome, "commit": regen.commit})


COMMAND = Command(
    name="patch",
    usage="/patch [DEV ...]",
    summary="regenerates the stored patch of each device (default: the `device:` labels) from "
            "this pull request and pushes it",
    permission="write",
    example="/patch A_X100",
    run=run,
)
