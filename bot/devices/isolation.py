"""The walls around a pull request's kernels when the bot's own machine runs them
(`runner: local`), and the bot's secrets kept out of what they print.

The sandbox itself is the device side's (`flagbot.kernels.bubblewrap`): no network, no process
of the bot visible, only the interpreter, flagbot's kernels harness, the read-only checkout and
one scratch folder. Where it cannot be built nothing runs, unless the operator set
`FLAGBOT_UNSAFE_LOCAL_RUNNER=1`, which runs the child with a scrubbed environment only and is
documented as unsafe for untrusted code. Whatever the child prints or writes is still
untrusted text: the bot's secrets are blanked out of it before a check run shows it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from flagbot.kernels.bubblewrap import SandboxUnavailable, Walls, find

__all__ = ["SandboxUnavailable", "HARNESS", "SCRATCH", "bwrap", "wrap", "secrets_of",
           "redact", "redact_bytes"]

# Paths inside the sandbox.
HARNESS = "/flagbot"
TREE = "/work/tree"
SCRATCH = "/work/scratch"
RUNNER_HINT = "; or give the device self-hosted runners (`runner:` labels)"


def bwrap() -> str:
    """bwrap, usable here (raises SandboxUnavailable saying what to do)."""
    try:
        return find()
    except SandboxUnavailable as exc:
        raise SandboxUnavailable(f"the local runner cannot sandbox the pull request's code: "
                                 f"{exc}{RUNNER_HINT}") from exc


def wrap(tool: str, tree: Path, scratch: Path, argv: Sequence[str],
         passed: dict[str, str]) -> list[str]:
    """bwrap's argv running `argv` (paths inside the sandbox) with `tree` read-only at TREE
    and `scratch` writable at SCRATCH."""
    walls = Walls(read_only={str(tree): TREE}, writable={str(scratch): SCRATCH}, cwd=TREE,
                  env={"HOME": f"{SCRATCH}/home", "TRITON_CACHE_DIR": f"{SCRATCH}/home/triton",
                       **passed}, harness=HARNESS)
    return walls.argv(tool, argv)


def secrets_of(values: Iterable[str | None]) -> list[str]:
    """The strings to blank out of a child's output: each secret whole, and each line of a
    multi-line one (a PEM key printed through JSON or a log arrives line by line)."""
    found: set[str] = set()
    for value in values:
        if not value:
            continue
        found.add(value)
        found.update(line.strip() for line in value.splitlines() if len(line.strip()) >= 16)
    return sorted((s for s in found if len(s) >= 8), key=len, reverse=True)


def redact(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return text


def redact_bytes(data: bytes, secrets: Sequence[str]) -> bytes:
    for secret in secrets:
        data = data.replace(secret.encode("utf-8"), b"[redacted]")
    return data
