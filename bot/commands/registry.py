"""The commands the bot answers to (adding one is a module plus a line here)."""

from __future__ import annotations

from flagbot.bot.commands import check, help, ok_to_test, patch, retest, unpatch
from flagbot.bot.commands.base import Command

COMMANDS: dict[str, Command] = {c.name: c for c in (help.COMMAND, patch.COMMAND, unpatch.COMMAND,
                                                    check.COMMAND, ok_to_test.COMMAND,
                                                    retest.COMMAND)}
