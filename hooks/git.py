"""The one git runner: pinned settings, a clean environment, an explicit repository path.

Every git call in hooks/ goes through `run`. The same commits must give the same patch bytes on
any machine (docs/patches.md), so nothing
from the caller's environment may reach git: inherited GIT_* variables are dropped (a hook runs
with GIT_DIR/GIT_INDEX_FILE of the outer repository set, and GIT_DIFF_OPTS changes diff bytes),
and the settings that change diff or mail bytes are pinned with `-c`. Commands that must not see
user configuration at all (patch generation in a scratch repository) pass `isolated=True`.

Tested on git 2.39.5. Version-dependent flags used elsewhere: `mailinfo --quoted-cr` (2.34),
`format.encodeEmailHeaders` (2.31); unknown `-c` keys are ignored by older git.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from flagbot.hooks.errors import UsageError

# Settings that change format-patch / diff / apply output or behaviour. Command-line flags in
# hooks/patches/generate.py pin the same things again where git has a flag, because a flag beats
# config.
PINNED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.abbrev", "40"),
    ("core.quotePath", "true"),
    ("core.attributesFile", os.devnull),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.commentChar", "#"),
    ("core.hooksPath", os.devnull),
    ("core.fsync", "none"),
    ("color.ui", "false"),
    ("diff.renames", "true"),
    ("diff.renameLimit", "1000"),
    ("diff.noprefix", "false"),
    ("diff.mnemonicPrefix", "false"),
    ("diff.relative", "false"),
    ("diff.context", "3"),
    ("diff.interHunkContext", "0"),
    ("diff.algorithm", "myers"),
    ("diff.indentHeuristic", "true"),
    ("diff.suppressBlankEmpty", "false"),
    ("diff.submodule", "short"),
    ("diff.ignoreSubmodules", "none"),
    ("format.signOff", "false"),
    ("format.numbered", "auto"),
    ("format.thread", "false"),
    ("format.coverLetter", "false"),
    ("format.subjectPrefix", "PATCH"),
    ("format.useAutoBase", "false"),
    ("format.encodeEmailHeaders", "true"),
    ("format.forceInBodyFrom", "false"),
    ("format.notes", "false"),
    ("i18n.commitEncoding", "UTF-8"),
    ("i18n.logOutputEncoding", "UTF-8"),
    ("log.showSignature", "false"),
    ("mailinfo.scissors", "false"),
    ("am.keepcr", "true"),
    ("apply.whitespace", "nowarn"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("advice.detachedHead", "false"),
    ("init.defaultBranch", "main"),
)

# Inherited variables kept: they say where git itself lives or how to reach remotes, never
# what a command outputs.
KEEP_GIT_ENV = frozenset({"GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS"})


class GitError(UsageError):
    """A git command failed; carries the command, return code, stdout and stderr."""

    def __init__(self, cmd: Sequence[str], rc: int, stdout: bytes, stderr: bytes) -> None:
        self.cmd = list(cmd)
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        err = stderr.decode("utf-8", "replace").strip()
        super().__init__(f"git {' '.join(cmd)} failed (exit {rc}): {err or '(no message)'}")


def clean_env(extra: Mapping[str, str] | None = None, *, isolated: bool = False) -> dict[str, str]:
    """The process environment minus inherited GIT_* variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") or k in KEEP_GIT_ENV}
    env["LC_ALL"] = "C"
    env["LANGUAGE"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    if isolated:
        # user and system config must not change patch bytes; -c pins then say what we want
        env["GIT_CONFIG_GLOBAL"] = os.devnull
        env["GIT_CONFIG_NOSYSTEM"] = "1"
    if extra:
        env.update(extra)
    return env


def command(args: Sequence[str], *, git_dir: Path | None = None) -> list[str]:
    """The argv for `git args`, with pinned config, optionally against an explicit git dir."""
    argv = ["git"]
    for key, value in PINNED_CONFIG:
        argv += ["-c", f"{key}={value}"]
    if git_dir is not None:
        argv += ["--git-dir", str(git_dir)]
    return argv + list(args)


def run(
    args: Sequence[str],
    *,
    cwd: Path,
    git_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    isolated: bool = False,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run git in `cwd` (never the process cwd); raise GitError on failure when `check`."""
    proc = start(args, cwd=cwd, git_dir=git_dir, env=env, isolated=isolated)
    return finish(proc, args, stdin=stdin, check=check)


@contextmanager
def interrupts_held() -> Iterator[list[int]]:
    """Hold Ctrl-C while a child process is being created; the caller acts on it afterwards.

    A KeyboardInterrupt raised inside Popen() after the fork leaves a git process nobody waits
    for or kills, and it goes on writing into folders flagbot is already cleaning up. Python
    runs signal handlers in the main thread only, so other threads (the bot's) need nothing.
    """
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: caught.append(signum))
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, previous)


def start(
    args: Sequence[str],
    *,
    cwd: Path,
    git_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    isolated: bool = False,
) -> subprocess.Popen[bytes]:
    """Start git without waiting (to overlap independent commands); pair with `finish`."""
    with interrupts_held() as caught:
        proc = subprocess.Popen(command(args, git_dir=git_dir), cwd=str(cwd),
                                env=clean_env(env, isolated=isolated), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if caught:  # Ctrl-C came while the child was being created: stop it, then honour it
        proc.kill()
        proc.wait()
        raise KeyboardInterrupt
    return proc


def finish(proc: subprocess.Popen[bytes], args: Sequence[str], *, stdin: bytes | None = None,
           check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Wait for a started git command; raise GitError on failure when `check`."""
    try:
        stdout, stderr = proc.communicate(stdin)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if check and proc.returncode != 0:
        raise GitError(args, proc.returncode, stdout, stderr)
    return subprocess.CompletedProcess(list(args), proc.returncode, stdout, stderr)


def out(args: Sequence[str], *, cwd: Path, **kwargs: object) -> str:
    """stdout of a successful git command as text, trailing newline removed."""
    proc = run(args, cwd=cwd, **kwargs)  # type: ignore[arg-type]
    return proc.stdout.decode("utf-8", "surrogateescape").rstrip("\n")


def toplevel(path: Path) -> Path:
    """The working-tree root of the repository containing `path`; UsageError if none."""
    if not path.is_dir():
        raise UsageError(f"{path}: no such directory")
    proc = run(["rev-parse", "--show-toplevel"], cwd=path, check=False)
    if proc.returncode != 0:
        raise UsageError(
            f"{path}: not inside a git repository",
            hint="run flagbot inside the repository, or pass -C PATH",
        )
    top = proc.stdout.decode("utf-8", "surrogateescape").strip()
    if not top:
        raise UsageError(f"{path}: inside a bare repository or .git directory; need a working tree")
    return Path(top)


def resolve_commit(repo: Path, rev: str, *, what: str = "commit") -> str:
    """Full id of `rev` as a commit; UsageError naming `what` if unknown or ambiguous."""
    proc = run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
               cwd=repo, check=False)
    if proc.returncode == 0:
        return proc.stdout.decode().strip()
    probe = run(["rev-parse", "--verify", "--end-of-options", rev], cwd=repo, check=False)
    err = probe.stderr.decode("utf-8", "replace")
    if "ambiguous" in err:
        raise UsageError(f"{what} {rev!r} is ambiguous in {repo}",
                         hint="give more hex digits of the commit id")
    raise UsageError(f"{what} {rev!r} is not a commit in {repo}",
                     hint="check the id (git log --oneline), or fetch the missing history")


def resolve_commits(repo: Path, revs: Sequence[str], *, whats: Sequence[str]) -> list[str]:
    """Full ids of several revisions in one git call; per-revision errors as resolve_commit."""
    proc = run(["rev-parse", "--end-of-options", *(f"{r}^{{commit}}" for r in revs)], cwd=repo,
               check=False)
    ids = proc.stdout.decode().split()
    if proc.returncode == 0 and len(ids) == len(revs):
        return ids
    return [resolve_commit(repo, r, what=w) for r, w in zip(revs, whats, strict=True)]


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    """Whether commit `older` is an ancestor of (or equal to) `newer`."""
    proc = run(["merge-base", "--is-ancestor", older, newer], cwd=repo, check=False)
    if proc.returncode not in (0, 1):
        raise GitError(["merge-base", "--is-ancestor", older, newer], proc.returncode,
                       proc.stdout, proc.stderr)
    return proc.returncode == 0


def is_shallow(repo: Path) -> bool:
    """Whether the repository is a shallow clone (history, and maybe needed commits, are missing)."""
    return out(["rev-parse", "--is-shallow-repository"], cwd=repo) == "true"


def has_object(repo: Path, oid: str) -> bool:
    """Whether the object `oid` exists in the repository."""
    return run(["cat-file", "-e", oid], cwd=repo, check=False).returncode == 0
