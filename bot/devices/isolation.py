"""The walls around a pull request's kernels when the bot's own machine runs them.

`runner: local` executes a stranger's Triton code. A child process of the worker, even under
another uid, could read the worker's environment from `/proc/<pid>/environ` (the webhook
secret, the App's private key), walk up to the state folder (ledger, queue, git caches) and
print what it found into a public check run. So the child runs under bubblewrap (`bwrap`):

- fresh user, PID, mount, IPC, UTS and network namespaces (no network at all, no other
  process visible; it runs as `nobody`);
- a filesystem that holds only the interpreter's installation (read-only), the bot's kernels
  harness (read-only, copied into the view file by file, never the folder around it), the
  pull request's checkout (read-only) and one scratch folder (writable, the report and caches);
- an empty environment, set explicitly; bwrap itself is started with an empty environment too,
  since it stays PID 1 inside the namespace and its `/proc/1/environ` is readable from there;
- resource limits (file size, open files, no core dumps) on top of the caller's time limit.

Where no working bwrap is found, nothing runs: the check run says why, unless the operator
set `FLAGBOT_UNSAFE_LOCAL_RUNNER=1`, which runs the child as before (scrubbed environment,
isolated interpreter) and is documented as unsafe for untrusted code.
"""

from __future__ import annotations

import functools
import glob
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import flagbot
import flagbot.kernels

# Paths inside the sandbox.
HARNESS = "/flagbot"
TREE = "/work/tree"
SCRATCH = "/work/scratch"

NOBODY = 65534
# A report or a Triton cache needs far less; a runaway writer stops here.
MAX_FILE_BYTES = 1024 * 1024 * 1024
MAX_OPEN_FILES = 4096
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
# What the dynamic loader, Python's locale and SSL lookups read from /etc; nothing else of it.
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/alternatives", "/etc/localtime",
             "/etc/nsswitch.conf", "/etc/passwd", "/etc/group")
GPU_NODES = ("/dev/nvidia*", "/dev/dri", "/dev/kfd", "/dev/davinci*", "/dev/mlu*",
             "/dev/mtgpu*", "/dev/xpu*")


class SandboxUnavailable(RuntimeError):
    """No usable bubblewrap here; the message says why and what to do."""


def bwrap() -> str:
    """The bwrap executable, after checking that it can build a sandbox on this host."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable(
            "the local runner needs bubblewrap (`bwrap`) to keep pull-request code away from "
            "the bot's secrets and state, and none is installed. Install it (Debian/Ubuntu: "
            "`apt-get install bubblewrap`), or use self-hosted runners (`runner:` labels).")
    problem = probe(path)
    if problem:
        raise SandboxUnavailable(
            f"bubblewrap at {path} cannot build a sandbox on this host ({problem}). Allow "
            "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run "
            "the worker where bwrap works, or use self-hosted runners.")
    return path


@functools.lru_cache(maxsize=4)
def probe(path: str) -> str:
    """'' when `path` runs a trivial command in the namespaces we ask for, else its error."""
    argv = [path, *namespace_args(), *system_binds(), "--", "/bin/true"]
    try:
        done = subprocess.run(argv, env={}, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode:
        return (done.stderr.decode("utf-8", "replace").strip() or f"exit {done.returncode}")[:300]
    return ""


def namespace_args() -> list[str]:
    return ["--unshare-all", "--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--die-with-parent", "--new-session", "--clearenv",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]


def system_binds() -> list[str]:
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in ETC_FILES:
        args += ["--ro-bind-try", f, f]
    return args


def python_binds() -> list[str]:
    """The interpreter's installation and its environment (read-only), where they are not
    under a system folder already."""
    args: list[str] = []
    seen: set[str] = set()
    for prefix in (sys.base_prefix, sys.prefix, str(Path(sys.executable).resolve().parent.parent)):
        real = os.path.realpath(prefix)
        if real in seen or any(real == d or real.startswith(d + "/") for d in SYSTEM_DIRS):
            continue
        seen.add(real)
        args += ["--ro-bind", real, real]
        if prefix != real:
            args += ["--symlink", real, prefix]
    return args


def harness_binds() -> list[str]:
    """The bot's `flagbot` package with its device side only, at HARNESS: the package's
    `__init__` and the kernels folder, never the folder they sit in (a checkout's root can hold
    the state folder, a virtual environment with credentials, and the other two sides)."""
    init = Path(flagbot.__file__).resolve()
    kernels = Path(next(iter(flagbot.kernels.__path__))).resolve()
    return ["--dir", f"{HARNESS}/flagbot",
            "--ro-bind", str(init), f"{HARNESS}/flagbot/__init__.py",
            "--ro-bind", str(kernels), f"{HARNESS}/flagbot/kernels"]


def device_binds() -> list[str]:
    args: list[str] = []
    for pattern in GPU_NODES:
        for node in sorted(glob.glob(pattern)):
            args += ["--dev-bind-try", node, node]
    return args


def environment(passed: dict[str, str]) -> list[str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": f"{SCRATCH}/home",
           "TRITON_CACHE_DIR": f"{SCRATCH}/home/triton", "PYTHONDONTWRITEBYTECODE": "1",
           "LANG": "C.UTF-8", "TMPDIR": "/tmp", **passed}
    args: list[str] = []
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    return args


def wrap(tool: str, tree: Path, scratch: Path, argv: Sequence[str],
         passed: dict[str, str]) -> list[str]:
    """bwrap's argv running `argv` (paths inside the sandbox) with `tree` read-only at TREE
    and `scratch` writable at SCRATCH."""
    return [tool, *namespace_args(), *system_binds(), *python_binds(), *harness_binds(),
            *device_binds(),
            "--ro-bind", str(tree), TREE, "--bind", str(scratch), SCRATCH, "--chdir", TREE,
            *environment(passed), "--", *argv]


def limit_resources() -> None:
    """`preexec_fn` for the sandbox's launcher: limits its whole process tree inherits."""
    for which, value in ((resource.RLIMIT_FSIZE, MAX_FILE_BYTES), (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_NOFILE, MAX_OPEN_FILES)):
        soft, hard = resource.getrlimit(which)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (cap, cap))


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
