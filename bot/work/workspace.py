"""Git workspaces for the checkers: a clone cache per repository, fetched incrementally.

Nothing from the repository ever runs here: no hooks (`core.hooksPath=/dev/null`), no submodules,
no filter drivers or fsmonitor (user and system config are not read, and the repository's own
config is ours), symlinks are checked out as plain files so a PR cannot point a checker at files
outside the checkout, and only the https/http/file transports are allowed (never `ext::`). The
installation token travels in an environment-provided header, never in a URL or on disk.

Repository work (init, config, clone, fetch, worktrees) goes through GitPython, whose
`GitCommandError` carries the command, status and stderr; the file list of a PR comes from
hooks' pinned plumbing runner (`flagbot.hooks.git`), parsed from NUL-separated output.
"""

from __future__ import annotations

import base64
import os
import shutil
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from urllib.parse import urlsplit

from git import GitCommandError, Repo

from flagbot.bot.context import PullRequest, Pushed
from flagbot.bot.github import ChangedFile
from flagbot.hooks import git as plumbing
from flagbot.hooks.errors import UsageError

# Written into the cache's own config, so git commands the checkers run in a worktree see them.
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),
    ("core.symlinks", "false"),
    ("core.fsmonitor", "false"),
    ("core.autocrlf", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("protocol.allow", "never"),
    ("protocol.https.allow", "always"),
    ("protocol.http.allow", "always"),
    ("protocol.file.allow", "always"),
    ("gc.auto", "0"),
    ("advice.detachedHead", "false"),
)
# Every git process of the workspace: no user or system config, never a credential prompt.
ISOLATED_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_TERMINAL_PROMPT": "0", "GIT_NO_REPLACE_OBJECTS": "1"}
PULL_REF = "refs/flagbot/pull/{number}"
STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "changed"}
# info/attributes outranks the repository's .gitattributes: checked-out bytes equal the blobs
# (no eol conversion, no filter drivers, no ident expansion), which patch verification needs.
NEUTRAL_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding\n"


class WorkspaceError(UsageError):
    """The PR head or base cannot be fetched; says from where and what to check."""


# `git push --porcelain` flags (git-push(1), OUTPUT); a dry run reports `dry-run`
PUSH_FLAGS = {"*": "new", " ": "updated", "+": "forced", "=": "unchanged", "!": "rejected",
              "-": "deleted"}


def auth_env(url: str, token: str | None, token_host: str) -> dict[str, str]:
    """GIT_CONFIG_* variables sending the token as `x-access-token` basic auth to `token_host` only."""
    parts = urlsplit(url)
    if not token or parts.scheme not in ("https", "http") or parts.netloc != token_host:
        return {}
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    # Environment, not -c: argv is visible to every user of the host in `ps`.
    return {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.extraHeader",
            "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}"}


def open_repo(path: Path) -> Repo:
    """A GitPython `Repo` whose git processes run with `ISOLATED_ENV`."""
    repo = Repo(path)
    repo.git.update_environment(**ISOLATED_ENV)
    return repo


def write_config(repo: Repo) -> None:
    """Write `SAFE_CONFIG` into the repository's own config."""
    with repo.config_writer() as config:
        for key, value in SAFE_CONFIG:
            section, _, option = key.rpartition(".")
            if "." in section:  # protocol.https.allow -> [protocol "https"] allow
                name, _, sub = section.partition(".")
                section = f'{name} "{sub}"'
            config.set_value(section, option, value)


def stderr_of(exc: GitCommandError) -> str:
    """What git printed on stderr, without GitPython's framing."""
    return str(exc.stderr or "").strip().removeprefix("stderr:").strip(" '\n")


class GitWorkspace:
    """A bare clone of one repository under `cache_root`, and worktrees of PR heads beside it."""

    def __init__(self, cache_root: Path, full_name: str, clone_url: str,
                 token: Callable[[], str | None] = lambda: None,
                 lock: Callable[[], AbstractContextManager[None]] = nullcontext) -> None:
        self.full_name = full_name
        # the repository's lock, held while the cache or a worktree is in use (and only then)
        self._lock = lock
        self._held = 0
        self.clone_url = clone_url
        self.git_dir = cache_root / "git" / f"{full_name}.git"
        self.trees = cache_root / "worktrees" / full_name
        self._token = token
        self._host = urlsplit(clone_url).netloc
        self._repo: Repo | None = None

    @property
    def repo(self) -> Repo:
        """The bare cache (created with the safe config on first use)."""
        if self._repo is None:
            if not (self.git_dir / "HEAD").is_file():
                self.git_dir.mkdir(parents=True, exist_ok=True)
                Repo.init(self.git_dir, bare=True, env=ISOLATED_ENV)
                write_config(open_repo(self.git_dir))
                write_attributes(self.git_dir)
            self._repo = open_repo(self.git_dir)
            # an inherited GIT_DIR (a git hook's) must not redirect the cache's commands
            self._repo.git.update_environment(GIT_DIR=str(self.git_dir))
        return self._repo

    def ensure(self) -> None:
        """Create the bare cache with the safe config (once)."""
        self.repo  # noqa: B018  (the property creates it)

    def missing(self, shas: Sequence[str]) -> list[str]:
        """Those of `shas` that are not commits in the cache (a plumbing question: the pinned
        runner answers it, as for the dry run's workspace; GitPython only clones, fetches,
        adds worktrees and pushes)."""
        self.ensure()
        return [sha for sha in shas if not plumbing.has_object(self.git_dir, f"{sha}^{{commit}}")]

    def fetch(self, url: str, refspecs: Sequence[str]) -> bool:
        """Fetch `refspecs` from `url` (no tags, no submodules); False when a ref is missing there."""
        env = auth_env(url, self._token(), self._host)
        try:
            self.repo.git.fetch("--quiet", "--no-tags", "--no-recurse-submodules",
                                "--no-write-fetch-head", url, *refspecs, env=env)
        except GitCommandError as exc:
            err = stderr_of(exc)
            if "couldn't find remote ref" in err or "not our ref" in err:
                return False
            raise WorkspaceError(f"{self.full_name}: git fetch from {redact(url)} failed: {err}",
                                 hint="check that the App is installed on the repository and "
                                      "can read it") from exc
        return True

    def update(self, pr: PullRequest) -> None:
        """Make the PR's base and head commits present, fetching only what is missing."""
        self.ensure()
        need = self.missing([pr.base_sha, pr.head_sha])
        if not need:
            return
        base_spec = f"+refs/heads/{pr.base_ref}:refs/remotes/origin/{pr.base_ref}"
        ref = PULL_REF.format(number=pr.number)
        # GitHub keeps refs/pull/N/head in the base repository, also for forks: one fetch
        # usually brings both commits. A fork's branch is the fallback when that ref is missing.
        if self.fetch(self.clone_url, [base_spec, f"+refs/pull/{pr.number}/head:{ref}"]):
            if not self.missing([pr.head_sha]):
                return
        elif pr.base_sha in need:
            self.fetch(self.clone_url, [base_spec])
        if pr.head_clone_url and self.fetch(pr.head_clone_url, [f"+refs/heads/{pr.head_ref}:{ref}"]) \
                and not self.missing([pr.head_sha]):
            return
        raise WorkspaceError(
            f"{self.full_name}#{pr.number}: head commit {pr.head_sha} not found in refs/pull/"
            f"{pr.number}/head or {pr.head_ref!r} of {redact(pr.head_clone_url or self.clone_url)}",
            hint="the branch may have been force-pushed since the delivery; the next "
                 "synchronize delivery checks the new head")

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the repository's lock (re-entrant within this workspace): around any use of
        the cache outside `checkout` and `changed_files`, which take it themselves."""
        if self._held:
            self._held += 1
            try:
                yield
            finally:
                self._held -= 1
            return
        with self._lock():
            self._held = 1
            try:
                yield
            finally:
                self._held = 0

    def changed_files(self, pr: PullRequest) -> list[ChangedFile]:
        """The PR's files as GitHub counts them (merge base to head), without GitHub's 3000 cap."""
        with self.held():
            self.update(pr)
            return diff_files(self.git_dir, pr.base_sha, pr.head_sha)

    def fetch_commit(self, sha: str) -> bool:
        """Make commit `sha` (a full id) of the repository present; False when it has none."""
        if not self.missing([sha]):
            return True
        return self.fetch(self.clone_url, [sha]) and not self.missing([sha])

    def objects(self, pr: PullRequest) -> Path:
        """The cache's git dir, holding the PR's base and head (call within `held()`)."""
        self.update(pr)
        return self.git_dir

    def push(self, url: str, refspecs: Sequence[str]) -> list[Pushed]:
        """Push `refspecs` from the cache to `url`, the token sent as for fetches; a ref the
        remote refuses (not a fast-forward, say) comes back `rejected`, not as an error."""
        env = auth_env(url, self._token(), self._host)
        try:
            with self.held():
                out = self.repo.git.push("--porcelain", "--no-verify", url, *refspecs, env=env)
        except GitCommandError as exc:
            pushed = parse_push(str(exc.stdout or ""))
            if pushed:
                return pushed
            raise WorkspaceError(f"{self.full_name}: git push to {redact(url)} failed: "
                                 f"{stderr_of(exc)}",
                                 hint="check that the App may write to the repository "
                                      "(Contents: write)") from exc
        return parse_push(out)

    @contextmanager
    def checkout(self, pr: PullRequest) -> Iterator[Path]:
        """A detached worktree at the PR head, removed afterwards; the repository's lock is
        held meanwhile."""
        with self.held():
            with self._checkout(pr) as path:
                yield path

    @contextmanager
    def _checkout(self, pr: PullRequest) -> Iterator[Path]:
        self.update(pr)
        # Under the repository lock no other worker uses a worktree of this repository, so
        # anything left in trees/ is from a worker killed mid-delivery: clear it.
        if self.trees.is_dir():
            for stale in self.trees.iterdir():
                shutil.rmtree(stale, ignore_errors=True)
        git = self.repo.git
        git.worktree("prune")
        path = self.trees / f"{pr.number}-{pr.head_sha[:12]}-{uuid.uuid4().hex[:8]}"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            git.worktree("add", "--quiet", "--detach", str(path), pr.head_sha)
            yield path
        finally:
            try:
                git.worktree("remove", "--force", str(path))
            except GitCommandError:
                pass  # never added, or already gone; the folder goes below either way
            shutil.rmtree(path, ignore_errors=True)


class LocalWorkspace:
    """For `flagbot replay --dry-run`: a throwaway shared clone of a local checkout."""

    def __init__(self, repo: Path, scratch: Path,
                 on_push: Callable[[str, Sequence[str]], None] | None = None) -> None:
        self.repo = repo
        self.scratch = scratch
        self.on_push = on_push  # told of each push instead of making it (the replay records it)

    def held(self) -> AbstractContextManager[None]:
        """Nothing to lock: the scratch clones are this run's own."""
        return nullcontext()

    def changed_files(self, pr: PullRequest) -> list[ChangedFile]:
        """The PR's files: merge base to head in the local checkout."""
        return diff_files(self.repo, pr.base_sha, pr.head_sha)

    def fetch_commit(self, sha: str) -> bool:
        """True when the checkout has commit `sha` (a dry run fetches nothing)."""
        return plumbing.has_object(self.repo, f"{sha}^{{commit}}")

    def objects(self, pr: PullRequest) -> Path:
        """A bare clone sharing the checkout's objects (new objects land there, not in it)."""
        path = self.scratch / "objects.git"
        if not path.is_dir():
            Repo.clone_from(str(self.repo), path, env=ISOLATED_ENV, shared=True, bare=True,
                            no_tags=True)
            write_config(open_repo(path))
        return path

    def push(self, url: str, refspecs: Sequence[str]) -> list[Pushed]:
        """Nothing is pushed in a dry run: `on_push` is told, and each ref says `dry-run`."""
        if self.on_push is not None:
            self.on_push(url, refspecs)
        return [Pushed(spec.rpartition(":")[2], "dry-run") for spec in refspecs]

    @contextmanager
    def checkout(self, pr: PullRequest) -> Iterator[Path]:
        """A clone sharing the checkout's objects, at the PR head; the checkout is never touched."""
        path = self.scratch / f"pr{pr.number}-{uuid.uuid4().hex[:8]}"
        Repo.clone_from(str(self.repo), path, env=ISOLATED_ENV, shared=True, no_checkout=True,
                        no_tags=True)
        try:
            clone = open_repo(path)
            write_config(clone)
            write_attributes(path / ".git")
            try:
                clone.git.cat_file("-e", f"{pr.head_sha}^{{commit}}")
            except GitCommandError:
                raise WorkspaceError(f"{self.repo}: commit {pr.head_sha} (the payload's head) is "
                                     "not in this checkout",
                                     hint=f"git fetch origin pull/{pr.number}/head") from None
            clone.git.checkout("--quiet", "--detach", pr.head_sha)
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)


def parse_push(out: str) -> list[Pushed]:
    """The ref lines of `git push --porcelain` output."""
    pushed = []
    for line in out.removeprefix("stdout:").strip(" '\n").splitlines():
        flag, tab, rest = line[:1], line[1:2], line[2:]
        if tab != "\t" or flag not in PUSH_FLAGS:
            continue
        refs, _, detail = rest.partition("\t")
        pushed.append(Pushed(refs.rpartition(":")[2], PUSH_FLAGS[flag], detail.strip()))
    return pushed


def diff_files(repo: Path, base: str, head: str) -> list[ChangedFile]:
    """Files changed from merge-base(base, head) to head, renames detected, like GitHub lists them."""
    merge_base = plumbing.out(["merge-base", base, head], cwd=repo)
    raw = plumbing.run(["diff", "--name-status", "-z", "-M", "--no-ext-diff", merge_base, head], cwd=repo).stdout
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    files, i = [], 0
    while i < len(fields) - 1:
        code = fields[i][:1]
        if code in ("R", "C"):
            files.append(ChangedFile(fields[i + 2], STATUS[code], fields[i + 1]))
            i += 3
        else:
            files.append(ChangedFile(fields[i + 1], STATUS.get(code, "modified")))
            i += 2
    return files


def write_attributes(git_dir: Path) -> None:
    """Neutralise the repository's .gitattributes for every worktree of `git_dir`."""
    info = git_dir / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "attributes").write_text(NEUTRAL_ATTRIBUTES, encoding="utf-8")


def redact(url: str) -> str:
    """`url` without any user:password part (never log a token)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.split("@", 1)[1]).geturl()
