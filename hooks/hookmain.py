"""What every command and hook shares: argument errors as exit 2, and the exit-code funnel.

`flagbot <command>` maps errors in hooks/cli.py; a console script such as
`flagbot-check-vendor-backend` calls the module's `main` directly, where an uncaught exception
would exit 1 ("check failed"). Every hook's `main` goes through `guarded` instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from flagbot.hooks.errors import EXIT_USAGE, FlagbotError, UsageError

# What a shell reports for a program that SIGPIPE ended (128 + 13), as `| head` users expect.
EXIT_CLOSED_PIPE = 141


def closed_pipe() -> int:
    """The reader of our output went away (`... | head -c1`): normal, so no traceback.

    Later writes, including the interpreter's flush at exit, go to /dev/null instead of raising
    again.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_CLOSED_PIPE


def flush_stdout() -> None:
    """Write out buffered output while a closed pipe can still be handled.

    When stdout is a pipe (not a terminal) Python buffers it, so a short output reaches the pipe
    only at the interpreter's final flush, where a BrokenPipeError can no longer be caught and
    ends the process with 120 and a message. Flushing before returning raises it here instead.
    """
    sys.stdout.flush()


def exit_quietly_on_closed_pipe() -> None:
    """For a SystemExit on its way out (argparse's --help): flush now, and if the reader is gone
    leave with the closed-pipe status instead of the interpreter's 120 and message."""
    try:
        flush_stdout()
    except BrokenPipeError:
        raise SystemExit(closed_pipe()) from None


def guarded(body: Callable[[Sequence[str] | None, str | None], int], argv: Sequence[str] | None,
            cwd: str | None, prog: str) -> int:
    """Run `body(argv, cwd)`: expected errors print one message, a crash prints a traceback; 2."""
    try:
        code = body(argv, cwd)
        flush_stdout()
        return code
    except FlagbotError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        return closed_pipe()
    except SystemExit:
        exit_quietly_on_closed_pipe()
        raise
    except Exception:  # a crash must never read as "check failed" (1)
        import traceback  # only on a crash: `flagbot patch` start-up is timed in milliseconds

        traceback.print_exc()
        print(f"{prog}: internal error (a bug in flagbot); please report it with the traceback "
              "above", file=sys.stderr)
        return EXIT_USAGE


def require_files(given: Sequence[str], base: Path) -> None:
    """A path the user typed that does not exist is a usage error (2), not a failed check (1):
    the spelling is wrong, not the thing it names (a folder is the command's to judge)."""
    missing = [p for p in given if not (base / p).exists()]
    if missing:
        raise UsageError(f"{', '.join(missing)}: no such file (relative to {base})",
                         hint="check the spelling, or leave the paths out to check every one")


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """`parser.parse_args` that raises UsageError instead of exiting (the bot calls commands)."""
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:
        if exc.code in (0, None):
            raise
        raise UsageError(f"invalid arguments for {parser.prog} (usage above)") from None
