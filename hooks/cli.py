"""The `flagbot` entry point: one literal command table, lazily imported, one error funnel.

Each command module exposes `main(argv, *, cwd=None) -> int`. `-C PATH` works as with git:
the path is handed to the command as `cwd` instead of changing the process directory, so the
same functions serve the bot, which works on many repositories in one process.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence

from flagbot.hooks import __version__
from flagbot.hooks.errors import EXIT_USAGE, FlagbotError
from flagbot.hooks.hookmain import closed_pipe, exit_quietly_on_closed_pipe, flush_stdout

# name -> ("module:function", one-line help). Walked by tests/hooks/test_cli.py.
COMMANDS: dict[str, tuple[str, str]] = {
    "patch": ("flagbot.hooks.patch_cmd:main", "make and verify hardwares/<DEV>/<base8>/<base8>.patch"),
    "unpatch": ("flagbot.hooks.unpatch_cmd:main", "build build/<DEV>/<repo>/ = BASE + DEV's patch"),
    "verify": ("flagbot.hooks.check_patches:verify_main", "re-check stored patches (apply, round trip, bytes)"),
    "migrate": ("flagbot.hooks.migrate_cmd:main", "bring old FlagScale-layout patches into canonical form"),
    "hetero": ("flagbot.hooks.check_hetero:hetero_main", "hetero.txt tools (`flagbot hetero check`)"),
    "check-backend": ("flagbot.hooks.check_vendor_backend:main", "check vendor backend folders"),
    "check-routing": ("flagbot.hooks.check_routing:main", "check backends.conf routing files"),
    "check-plugins": ("flagbot.hooks.check_plugins:main", "check plugin registries (dispatch configs, overrides)"),
    "check-patches": ("flagbot.hooks.check_patches:main", "pre-commit form of `verify`"),
    "serve": ("flagbot.bot.entry.cli:serve_main", "run the GitHub App webhook server"),
    "worker": ("flagbot.bot.entry.cli:worker_main", "run a queue worker (Redis mode)"),
    "replay": ("flagbot.bot.entry.cli:replay_main", "run the handlers for one recorded event"),
    "setup": ("flagbot.bot.admin.register:main", "register the GitHub App (GitHub's manifest flow)"),
    "reconcile": ("flagbot.bot.chores.reconcile:main", "ask GitHub to redeliver what the ledger lacks (one round)"),
    "drift": ("flagbot.bot.chores.drift:main", "open/update/close `flagbot: drift for <DEV>` issues"),
    "labeled": ("flagbot.bot.admin.labeled:main", "list PRs the bot labeled, merged ones first (the feed)"),
    "kernels": ("flagbot.kernels.cli:main", "Triton kernel accuracy/performance checks"),
}

USAGE = "usage: flagbot [-C PATH] [--version] COMMAND [ARGS...]"


def load_command(name: str) -> Callable[..., int]:
    target, _ = COMMANDS[name]
    module_name, func_name = target.split(":")
    module = importlib.import_module(module_name)
    func: Callable[..., int] = getattr(module, func_name)
    return func


def print_help() -> None:
    print(USAGE)
    print("\ncommands:")
    for name, (_, text) in COMMANDS.items():
        print(f"  {name:<15}{text}")
    print("\nexit status: 0 ok, 1 a check failed, 2 usage or environment error")


def split_global_options(argv: list[str]) -> tuple[str | None, list[str]]:
    """Consume leading `-C PATH` options (repeatable, relative to the previous, as git does)."""
    cwd: str | None = None
    while argv and argv[0] == "-C":
        if len(argv) < 2:
            raise FlagbotError("-C needs a path", hint="flagbot -C PATH COMMAND ...")
        cwd = os.path.join(cwd or os.getcwd(), argv[1])
        argv = argv[2:]
    if cwd is not None and not os.path.isdir(cwd):
        raise FlagbotError(f"-C {cwd}: no such directory")
    return cwd, argv


def run(argv: Sequence[str]) -> int:
    args = list(argv)
    cwd, args = split_global_options(args)
    if not args or args[0] in ("-h", "--help", "help"):
        print_help()
        return 0 if args else EXIT_USAGE
    if args[0] == "--version":
        print(f"flagbot {__version__}")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"flagbot: unknown command {name!r}", file=sys.stderr)
        print_help()
        return EXIT_USAGE
    func = load_command(name)
    return func(rest, cwd=cwd)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; map expected errors, Ctrl-C and crashes onto the exit contract."""
    try:
        code = run(sys.argv[1:] if argv is None else argv)
        flush_stdout()
        return code
    except FlagbotError as exc:
        print(f"flagbot: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("flagbot: interrupted; nothing was changed", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return closed_pipe()
    except SystemExit:  # argparse's --help (and usage errors) exit from inside a command
        exit_quietly_on_closed_pipe()
        raise
    except ImportError as exc:
        print(f"flagbot: error: {exc}\n  hint: install the extra this command needs, "
              "e.g. pip install 'flagbot[bot]' or 'flagbot[kernels]'", file=sys.stderr)
        return EXIT_USAGE
    except Exception:  # a crash is never "check failed": 1 would tell users their patch is wrong
        import traceback  # only on a crash: keeps every command's start-up lighter

        traceback.print_exc()
        print("flagbot: internal error (a bug in flagbot); please report it with the "
              "traceback above", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
