"""`/help`: the commands this repository answers to, generated from the registry."""

from __future__ import annotations

from flagbot.bot.commands.base import Command, CommandContext, Outcome, required_role
from flagbot.bot.commands.parse import MAX_COMMANDS, Invocation
from flagbot.bot.github.markdown import code


def run(cc: CommandContext, inv: Invocation) -> Outcome:
    """A table of every command: usage, who may run it here, an example."""
    configured = cc.ctx.config["commands"] if cc.ctx.config is not None else {}
    lines = ["| command | what it does | needs | example |", "| --- | --- | --- | --- |"]
    for cmd in sorted(cc.commands.values(), key=lambda c: c.name):
        lines.append(f"| `{cmd.usage}` | {cmd.summary} | {required_role(cmd, configured)} | "
                     f"`{cmd.example}` |")
    lines += ["", f"Write each command at the start of its own line (not in a quote or code block); "
                  f"up to {MAX_COMMANDS} per comment. You ({code(cc.login)}) have the "
                  f"`{cc.role}` role here; minimums can be changed under `commands:` in "
                  "`.github/flagbot.yml` on the default branch."]
    return Outcome(True, "\n".join(lines))


COMMAND = Command(
    name="help",
    usage="/help",
    summary="lists these commands",
    permission="read",
    example="/help",
    run=run,
    needs_pull=False,
)
