"""Judge the change, not the tree: every check run that judges a PR runs at its merge base too.

A check run fails only on findings the pull request introduces. Each check module keeps
building its result from a list of findings; `judged` hands it the new ones (so its
conclusion, title and annotations speak of them) and adds the inherited ones in a collapsed
section with their count. The base side runs the same check on the tree of the merge base,
written from the bot's clone cache (hooks/since.py), and is cached on disk by tree id and
check key under the state folder: a second pull request on the same base checks nothing there.

    base = BaseSide(ctx, pr)
    result = base.judge(backends.NAME, head_findings,
                        lambda new: backends.result(folders, checked, new),  # the run from new
                        check_backends_at, config, checked,  # run at the base, in the sandbox
                        paths=backends.base_paths(config))   # what to write of the base tree

A check run added later (plugins) calls `judge` the same way and adds its name to
JUDGED_CHECKS (a `when: merged` label waits for every judged run to pass).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from flagbot import hooks as hooks_package
from flagbot.bot.context import Context, PullRequest
from flagbot.bot.github.checkruns import CheckResult
from flagbot.bot.github.markdown import plain
from flagbot.bot.work.sandbox import LimitExceeded, run_limited
from flagbot.hooks import __version__
from flagbot.hooks import git as plumbing
from flagbot.hooks.errors import FlagbotError
from flagbot.hooks.findings import Finding
from flagbot.hooks.since import Check, FindingsCache, findings_at, split_new
from flagbot.kernels import flaggems_layout, tune_configs, yamlload

CACHE_FOLDER = "findings-cache"
# The check runs that judge a pull request (a label `when: merged` waits for all of them to
# pass); a new one adds its name here.
JUDGED_CHECKS = ("flagbot / patches", "flagbot / backends", "flagbot / routing",
                 "flagbot / plugins")
# what the collapsed section lists at most (the count is always exact)
MAX_LISTED = 500


def checker_digest() -> str:
    """A digest of the checkers' code and data (hooks/ and the kernels/ readers it uses): a
    cached base result from other rules is never reused, also between builds of one version."""
    digest = hashlib.sha256(__version__.encode())
    hooks_root = Path(str(hooks_package.__file__)).parent
    files = sorted(p for p in hooks_root.rglob("*") if p.suffix in (".py", ".txt"))
    files += [Path(str(module.__file__)) for module in (flaggems_layout, tune_configs, yamlload)]
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def check_key(name: str, *parts: Any, code: str = "") -> str:
    """A cache key for one configured check: its name, the checkers' code digest and a digest
    of everything else that changes its findings (config, file lists)."""
    # a RepoConfig stands for its merged mapping; anything else must print the same each time
    plain_parts = [getattr(part, "raw", part) for part in parts]
    raw = json.dumps(plain_parts, sort_keys=True, default=str).encode()
    return f"{name}-{code or __version__}-{hashlib.sha256(raw).hexdigest()[:16]}"


class BaseSide:
    """The PR's merge base and the findings of checks there (one per delivery)."""

    def __init__(self, ctx: Context, pr: PullRequest) -> None:
        self.ctx = ctx
        self.pr = pr
        self.cache = FindingsCache(ctx.settings.state_dir / CACHE_FOLDER)
        self._base: str | None = None
        self._code = ""

    def merge_base(self) -> str | None:
        """Where the PR's branch left the base branch (GitHub diffs from there); None when
        the histories share no commit."""
        if self._base is None:
            with self.ctx.workspace.held():
                git_dir = self.ctx.workspace.objects(self.pr)
                proc = plumbing.run(["merge-base", self.pr.base_sha, self.pr.head_sha],
                                    cwd=git_dir, check=False)
            self._base = proc.stdout.decode().strip() if proc.returncode == 0 else ""
        return self._base or None

    def findings(self, key: str, check: Check, paths: Sequence[str] = ()) -> list[Finding] | None:
        """`check(tree)` on the merge base's tree (only `paths` written out), cached; None
        when there is no merge base or the base could not be checked (then every finding
        counts, as before this existed)."""
        base = self.merge_base()
        if base is None:
            return None
        try:
            with self.ctx.workspace.held():
                git_dir = self.ctx.workspace.objects(self.pr)
                return findings_at(git_dir, base, check, key=key, paths=paths, cache=self.cache)
        except (FlagbotError, LimitExceeded):
            return None  # the head's findings are then judged whole, never hidden


    def judge(self, name: str, head: list[Finding],
              result_of: Callable[[list[Finding]], CheckResult],
              base_check: Callable[..., list[Finding]], *args: Any,
              paths: Sequence[str] = ()) -> CheckResult:
        """One check run, judged: `base_check(tree, *args)` (a module-level function: it runs
        in the limited child process) on the merge base's tree, cached under a key made of
        `name` and `args`; then `judged(result_of, head, those findings)`."""
        settings = self.ctx.settings
        what = f"{name} of {self.ctx.full_name}#{self.pr.number} at its merge base"

        def at_base(tree: Path) -> list[Finding]:
            return run_limited(base_check, tree, *args, memory_mb=settings.check_memory_mb,
                               timeout_s=settings.check_timeout_s, what=what)

        self._code = self._code or checker_digest()
        key = check_key(name, base_check.__name__, *args, code=self._code)
        base = self.findings(key, at_base, paths)
        return judged(result_of, head, base)


def judged(result_of: Callable[[list[Finding]], CheckResult], head: list[Finding],
           base: list[Finding] | None) -> CheckResult:
    """The check's result from the findings new since the base, with the inherited ones
    listed apart; `result_of(head)` unchanged when the base was not checked."""
    if base is None:
        return result_of(head)
    new, inherited = split_new(base, head)
    result = result_of(new)
    lines = [f"**{len(new)} new, {len(inherited)} existing** finding(s): this check judges "
             "what the pull request changes; findings already present at its merge base are "
             "listed below and do not fail it.", "", result.summary]
    if inherited:
        shown = sorted(inherited)[:MAX_LISTED]
        more = len(inherited) - len(shown)
        lines += ["", f"<details><summary>{len(inherited)} existing finding(s), inherited from "
                  "the base (not annotated)</summary>", "",
                  *(f"- {plain(f.render())}" for f in shown),
                  *([f"- … and {more} more"] if more else []), "", "</details>"]
    return CheckResult(result.name, result.conclusion, result.title, "\n".join(lines),
                       result.text, result.findings, inherited)


def existing_paths(tree: Path, rels: Sequence[str]) -> list[str]:
    """Those of `rels` present in `tree` (a folder the PR adds is not there at its base)."""
    return [rel for rel in rels if (tree / rel).exists()]
