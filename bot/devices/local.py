"""The `local` runner: `flagbot kernels check` in a child process of the worker, for one-machine
setups and tests (device `cpu` on Triton's interpreter).

The pull request's kernels run, but never in the bot's process: the child starts in isolated
mode (`python -I`: no current folder, no PYTHONPATH, no user site on its path) from a clean
checkout of the head sha, importing the bot's own installed harness (this interpreter's), a scrubbed
environment, a temporary home, and a wall-clock limit after which its whole process group is
killed. Its report is then read like any runner's: as untrusted data.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from flagbot.bot.devices.report import MAX_REPORT_BYTES

# The harness is the installed flagbot (isolated mode keeps site-packages, where the install is);
# the PR's checkout is only the child's cwd, never on its path.
BOOT = "import sys; from flagbot.kernels.cli import main; raise SystemExit(main(sys.argv[1:]))"
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "TRITON_INTERPRET")
TAIL_CHARS = 3000


@dataclass(frozen=True)
class LocalRun:
    """What the child left: the report's bytes (None when it wrote none), and how it ended."""

    report: bytes | None
    exit_code: int | None  # None when it was killed at the time limit
    tail: str  # the end of its output, for the check run when there is no report

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def command(backend: str, ops: Sequence[str], min_speedup: float, min_native_fraction: float,
            out: Path) -> list[str]:
    """The child's argv."""
    args = ["check", "--backend", backend, "--json", str(out), "--min-speedup", f"{min_speedup:g}",
            "--min-native-fraction", f"{min_native_fraction:g}"]
    if ops:
        args += ["--ops", ",".join(ops)]
    return [sys.executable, "-I", "-c", BOOT, *args]


def run_check(tree: Path, argv: list[str], report: Path, timeout_s: float) -> LocalRun:
    """Run `argv` in `tree` with the time limit; read the report it wrote."""
    home = report.parent / "home"
    home.mkdir(exist_ok=True)
    env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
    env.update(HOME=str(home), TRITON_CACHE_DIR=str(home / "triton"), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen(argv, cwd=tree, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        code = None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    data = None
    if report.is_file() and code is not None:
        with report.open("rb") as fh:
            data = fh.read(MAX_REPORT_BYTES + 1)
    return LocalRun(data, code, out.decode("utf-8", "replace")[-TAIL_CHARS:])


def run(tree: Path, backend: str, ops: Sequence[str], min_speedup: float,
        min_native_fraction: float, timeout_s: float) -> LocalRun:
    """`flagbot kernels check` of `backend` in the checkout `tree`."""
    with tempfile.TemporaryDirectory(prefix="flagbot-local-") as tmp:
        report = Path(tmp) / "report.json"
        return run_check(tree, command(backend, ops, min_speedup, min_native_fraction, report),
                         report, timeout_s)
