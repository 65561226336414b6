"""PR work in a child process with a memory and a wall-clock limit.

The checkers parse what a pull request holds; whatever slips past their own limits (file
sizes, YAML aliases) must not take the worker with it: under `flagbot serve` the worker shares
its process with the webhook server's parent. So the checks of a checkout run in a child made
by a fork server (started once, with the checkers imported, forked per job: no threads or
locks of the worker are copied). The child's private memory is capped by RLIMIT_DATA (file
mappings such as git's packs do not count), and the parent kills it at the wall-clock limit.
A child that runs out, is killed or dies raises `LimitExceeded` here, which the worker records
as the delivery's failure without retrying (the same head would do the same again).
"""

from __future__ import annotations

import multiprocessing
import pickle
import resource
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")
MIB = 1024 * 1024
PRELOAD = ["flagbot.bot.handlers.pull_request"]  # the checkers, imported once by the server


class LimitExceeded(RuntimeError):
    """The child ran out of memory or time, or died; `permanent`: retrying cannot help."""

    permanent = True


class ChildError(RuntimeError):
    """An exception of the child that could not be sent back as itself (its text kept)."""


def _child(conn: Connection, func: Callable[..., Any], args: tuple[Any, ...],
           memory_bytes: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    try:
        reply: tuple[str, Any] = ("ok", func(*args))
    except MemoryError:
        reply = ("memory", None)
    except Exception as exc:
        try:
            pickle.loads(pickle.dumps(exc))  # some exceptions pickle but cannot be rebuilt
            reply = ("error", exc)
        except Exception:
            reply = ("error", ChildError(f"{type(exc).__name__}: {exc}"))
    try:
        conn.send(reply)
    except MemoryError:
        conn.send(("memory", None))


def run_limited(func: Callable[..., T], *args: Any, memory_mb: int, timeout_s: float,
                what: str) -> T:
    """`func(*args)` in a child process; its exceptions are raised here, LimitExceeded when
    it needs more than `memory_mb` MiB of private memory or `timeout_s` seconds, or dies.
    `func` and its arguments and result must pickle (a module-level function)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(sender, func, args, memory_mb * MIB), daemon=True,
                       name=f"flagbot-check {what}")
    proc.start()
    sender.close()
    try:
        if not receiver.poll(timeout_s):
            raise LimitExceeded(f"{what}: stopped at the {timeout_s:.0f} s time limit "
                                "(FLAGBOT_CHECK_TIMEOUT_S)")
        try:
            kind, value = receiver.recv()
        except EOFError:
            proc.join(5)
            raise LimitExceeded(f"{what}: the check process died ({exit_reason(proc.exitcode)}); "
                                f"the memory limit is {memory_mb} MiB "
                                "(FLAGBOT_CHECK_MEMORY_MB)") from None
    finally:
        receiver.close()
        if proc.is_alive():
            proc.kill()
        proc.join()
    if kind == "memory":
        raise LimitExceeded(f"{what}: needed more than the {memory_mb} MiB memory limit "
                            "(FLAGBOT_CHECK_MEMORY_MB)")
    if kind == "error":
        raise value
    result: T = value
    return result


def exit_reason(code: int | None) -> str:
    """A child's exit code in words."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"
