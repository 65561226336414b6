"""Running code nobody reviewed (a pull request's kernels, a generated operator) behind walls.

A child process of ours, even under another uid, could read our environment from
`/proc/<pid>/environ`, walk the filesystem to whatever we keep beside it, reach the network,
leave detached grandchildren behind, or rewrite the files we are about to trust. Under
bubblewrap (`bwrap`, Debian's and Ubuntu's `bubblewrap` package) it gets instead:

- fresh user, PID, mount, IPC, UTS and network namespaces: no network, no process of ours
  visible, running as `nobody`; when the sandbox's first process ends, the kernel kills every
  process left in its PID namespace, so nothing outlives a run;
- a filesystem holding only the system folders and the interpreter's installation
  (read-only), the folders the caller lists (read-only or writable) and an empty `/tmp`;
- an empty environment, set explicitly (bwrap itself is started with an empty one too: it
  stays PID 1 inside the namespace, and its `/proc/1/environ` is readable from there);
- limits on file size, open files and core dumps.

`find()` raises `SandboxUnavailable` with what to do where bwrap is missing or cannot build
the namespaces (some containers forbid user namespaces); callers refuse to run then, unless
their user opted out explicitly.
"""

from __future__ import annotations

import functools
import glob
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

NOBODY = 65534
# A report, outputs or a Triton cache need far less; a runaway writer stops here.
MAX_FILE_BYTES = 1024 * 1024 * 1024
MAX_OPEN_FILES = 4096
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
# What the dynamic loader and Python's startup read from /etc; nothing else of it.
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/alternatives", "/etc/localtime",
             "/etc/nsswitch.conf", "/etc/passwd", "/etc/group")
# Accelerator device nodes of the vendors' drivers, passed through where present.
DEVICE_NODES = ("/dev/nvidia*", "/dev/dri", "/dev/kfd", "/dev/davinci*", "/dev/devmm_svm",
                "/dev/hisi_hdc", "/dev/cambricon*", "/dev/mtgpu*", "/dev/xpu*", "/dev/iluvatar*")
PATH = "/usr/local/bin:/usr/bin:/bin"


class SandboxUnavailable(RuntimeError):
    """No usable bubblewrap here; the message says why and what to do."""


def find() -> str:
    """The bwrap executable, after checking that it can build a sandbox on this host."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailable(
            "running unreviewed code needs bubblewrap (`bwrap`) to keep it away from this "
            "machine's secrets, files and network, and none is installed. Install it "
            "(Debian/Ubuntu: `apt-get install bubblewrap`)")
    problem = probe(path)
    if problem:
        raise SandboxUnavailable(
            f"bubblewrap at {path} cannot build a sandbox on this host ({problem}). Allow "
            "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or run "
            "where bwrap works")
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
    """The interpreter's installation and its environment (read-only, at their own paths),
    where they are not under a system folder already."""
    args: list[str] = []
    seen: set[str] = set()
    for prefix in (sys.base_prefix, sys.prefix, str(Path(sys.executable).parent.parent)):
        real = os.path.realpath(prefix)
        if real in seen or any(real == d or real.startswith(d + "/") for d in SYSTEM_DIRS):
            continue
        seen.add(real)
        args += ["--ro-bind", real, real]
        if os.path.abspath(prefix) != real:
            args += ["--symlink", real, os.path.abspath(prefix)]
    return args


def harness_binds(at: str) -> list[str]:
    """flagbot's device side (the package's own modules and `kernels/`, read-only) under `at`,
    never the folder they sit in: a checkout's root can hold a state folder, a virtual
    environment with credentials, and the other two sides."""
    import flagbot
    import flagbot.kernels

    package = Path(flagbot.__file__).resolve().parent
    kernels = Path(next(iter(flagbot.kernels.__path__))).resolve()
    args = ["--dir", f"{at}/flagbot"]
    for module in sorted(package.glob("*.py")):  # __init__ and the shared exit codes
        args += ["--ro-bind", str(module), f"{at}/flagbot/{module.name}"]
    return [*args, "--ro-bind", str(kernels), f"{at}/flagbot/kernels"]


def device_binds() -> list[str]:
    args: list[str] = []
    for pattern in DEVICE_NODES:
        for node in sorted(glob.glob(pattern)):
            args += ["--dev-bind-try", node, node]
    return args


@dataclass
class Walls:
    """What one sandboxed command sees: folders (host path -> sandbox path), read-only and
    writable, its working folder and its whole environment."""

    read_only: Mapping[str, str] = field(default_factory=dict)
    writable: Mapping[str, str] = field(default_factory=dict)
    cwd: str = "/tmp"
    env: Mapping[str, str] = field(default_factory=dict)
    harness: str | None = None  # where flagbot's device side is mounted, if wanted

    def argv(self, tool: str, inner: Sequence[str]) -> list[str]:
        args = [tool, *namespace_args(), *system_binds(), *python_binds(), *device_binds()]
        if self.harness:
            args += harness_binds(self.harness)
        for host, inside in self.read_only.items():
            args += ["--ro-bind", host, inside]
        for host, inside in self.writable.items():
            args += ["--bind", host, inside]
        args += ["--chdir", self.cwd]
        for key, value in sorted({"PATH": PATH, "LANG": "C.UTF-8", "TMPDIR": "/tmp",
                                  "PYTHONDONTWRITEBYTECODE": "1", **self.env}.items()):
            args += ["--setenv", key, value]
        return [*args, "--", *inner]


def limit_resources() -> None:
    """`preexec_fn` for a sandbox's launcher: limits its whole process tree inherits."""
    for which, value in ((resource.RLIMIT_FSIZE, MAX_FILE_BYTES), (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_NOFILE, MAX_OPEN_FILES)):
        _, hard = resource.getrlimit(which)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (cap, cap))


@dataclass(frozen=True)
class Ended:
    """How a sandboxed (or plain) child ended: its exit code (None: killed at the time
    limit), everything it printed, and what it sent on its channel (see `run`)."""

    code: int | None
    output: bytes
    channel: bytes = b""
    channel_overflow: bool = False

    @property
    def timed_out(self) -> bool:
        return self.code is None


CHANNEL = "{channel}"


def run(argv: Sequence[str], timeout_s: float, *, env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None, channel_limit: int = 0) -> Ended:
    """Run `argv` in its own process group; at `timeout_s` the whole group is killed. Returns
    only once the child is gone (with a PID namespace, every process of the sandbox is).

    With `channel_limit`, the child also gets the write end of a pipe, its descriptor number
    put wherever `{channel}` stands in `argv`: a way to hand back results that, unlike a file,
    nothing can rewrite afterwards; at most `channel_limit` bytes are kept."""
    read_fd = write_fd = -1
    if channel_limit:
        read_fd, write_fd = os.pipe()
        argv = [a.replace(CHANNEL, str(write_fd)) for a in argv]
    received: list[bytes] = []
    overflow = [False]

    def drain() -> None:
        size = 0
        while chunk := os.read(read_fd, 1 << 16):
            if size + len(chunk) > channel_limit:
                overflow[0] = True
                continue  # keep draining so the child never blocks; keep nothing more
            received.append(chunk)
            size += len(chunk)

    reader = threading.Thread(target=drain, daemon=True) if channel_limit else None
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env or {}),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=limit_resources,
                                pass_fds=(write_fd,) if channel_limit else ())
    finally:
        if channel_limit:
            os.close(write_fd)
    if reader is not None:
        reader.start()
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
    if reader is not None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # a descendant still holding the pipe open
        except ProcessLookupError:
            pass
        reader.join(timeout=5)
        os.close(read_fd)
    return Ended(code, out, b"".join(received), overflow[0])
