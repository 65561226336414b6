"""The `local` runner: `flagbot kernels check` in a sandboxed child of the worker, for
one-machine setups and tests (device `cpu` on Triton's interpreter).

The pull request's kernels run, but never beside the bot: the child runs inside the walls of
`isolation.py` (its own namespaces, no network, a filesystem of the interpreter, the bot's
kernels harness, the read-only checkout and a scratch folder, an empty environment), in
isolated mode (`python -I`) with the bot's harness first on its path, under a wall-clock limit
after which its whole process tree is killed. Its report is then read like any runner's: as
untrusted data, and everything it printed or wrote has the bot's secrets blanked out before
it can reach a check run.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flagbot.bot.devices import isolation
from flagbot.bot.devices.report import MAX_REPORT_BYTES
from flagbot.kernels import bubblewrap

# In the sandbox the bot's harness is mounted at isolation.HARNESS and put first on the path;
# without it (the unsafe mode) the child imports the installed flagbot (isolated mode keeps
# site-packages). Either way the PR's checkout is only the child's cwd, never on its path.
SANDBOXED_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
                  "from flagbot.kernels.cli import main; raise SystemExit(main(sys.argv[2:]))")
BOOT = "import sys; from flagbot.kernels.cli import main; raise SystemExit(main(sys.argv[1:]))"
KEPT_ENV = ("LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "TRITON_INTERPRET")
TAIL_CHARS = 3000
UNSAFE_ENV = "FLAGBOT_UNSAFE_LOCAL_RUNNER"


@dataclass(frozen=True)
class LocalRun:
    """What the child left: the report's bytes (None when it wrote none), and how it ended."""

    report: bytes | None
    exit_code: int | None  # None when it was killed at the time limit
    tail: str  # the end of its output, for the check run when there is no report

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def check_args(backend: str, ops: Sequence[str], min_speedup: float, min_native_fraction: float,
               out: str) -> list[str]:
    """`flagbot kernels check`'s arguments."""
    args = ["check", "--backend", backend, "--json", out, "--min-speedup", f"{min_speedup:g}",
            "--min-native-fraction", f"{min_native_fraction:g}"]
    if ops:
        args += ["--ops", ",".join(ops)]
    return args


def command(backend: str, ops: Sequence[str], min_speedup: float, min_native_fraction: float,
            out: Path) -> list[str]:
    """The unsandboxed child's argv (the installed harness)."""
    return [sys.executable, "-I", "-c", BOOT,
            *check_args(backend, ops, min_speedup, min_native_fraction, str(out))]


def passed_env() -> dict[str, str]:
    return {k: os.environ[k] for k in KEPT_ENV if k in os.environ}


def run_check(tree: Path, argv: list[str], report: Path, timeout_s: float,
              env: dict[str, str] | None = None,
              secrets: Sequence[str] = ()) -> LocalRun:
    """Run `argv` in `tree` with the time limit; read the report it wrote (at `report`)."""
    if env is None:
        home = report.parent / "home"
        home.mkdir(exist_ok=True)
        env = dict(passed_env(), PATH=bubblewrap.PATH, HOME=str(home),
                   TRITON_CACHE_DIR=str(home / "triton"), PYTHONDONTWRITEBYTECODE="1")
    ended = bubblewrap.run(argv, timeout_s, env=env, cwd=tree)
    data = None
    if report.is_file() and not report.is_symlink() and not ended.timed_out:
        with report.open("rb") as fh:
            data = isolation.redact_bytes(fh.read(MAX_REPORT_BYTES + 1), secrets)
    tail = isolation.redact(ended.output.decode("utf-8", "replace"), secrets)[-TAIL_CHARS:]
    return LocalRun(data, ended.code, tail)


def run(tree: Path, backend: str, ops: Sequence[str], min_speedup: float,
        min_native_fraction: float, timeout_s: float, *, unsafe: bool = False,
        secrets: Sequence[str] = ()) -> LocalRun:
    """`flagbot kernels check` of `backend` in the checkout `tree`, sandboxed (raises
    `isolation.SandboxUnavailable` when it cannot be, unless `unsafe`)."""
    with tempfile.TemporaryDirectory(prefix="flagbot-local-") as tmp:
        scratch = Path(tmp)
        report = scratch / "report.json"
        if unsafe:
            argv = command(backend, ops, min_speedup, min_native_fraction, report)
            return run_check(tree, argv, report, timeout_s, secrets=secrets)
        tool = isolation.bwrap()
        (scratch / "home").mkdir()
        inner = [sys.executable, "-I", "-c", SANDBOXED_BOOT, isolation.HARNESS,
                 *check_args(backend, ops, min_speedup, min_native_fraction,
                             f"{isolation.SCRATCH}/report.json")]
        argv = isolation.wrap(tool, tree, scratch, inner, passed_env())
        # bwrap itself gets an empty environment: it stays PID 1 inside the namespace
        return run_check(tree, argv, report, timeout_s, env={}, secrets=secrets)
