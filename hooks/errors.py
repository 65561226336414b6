"""One error type per exit code, so every command maps failures the same way.

The exit codes are a contract users' scripts and CI read: 0 ok, 1 a check failed (the patch or
the checked files are wrong), 2 usage or environment error (docs/patches.md, docs/hooks.md).
"""

from __future__ import annotations

from flagbot.exit_codes import EXIT_CHECK_FAILED, EXIT_OK, EXIT_USAGE

__all__ = ["EXIT_CHECK_FAILED", "EXIT_OK", "EXIT_USAGE"]  # and the error types below


class FlagbotError(Exception):
    """An expected failure with a message for the user; `exit_code` says which kind."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class UsageError(FlagbotError):
    """Bad arguments or environment (not a repository, unknown commit...): exit 2."""

    exit_code = EXIT_USAGE


class CheckFailed(FlagbotError):
    """The thing checked is wrong (round trip mismatch, patch does not apply...): exit 1."""

    exit_code = EXIT_CHECK_FAILED
