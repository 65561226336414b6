"""Check run `flagbot / plugins`: plugin registries on PRs that touch them, new vs inherited.

Runs `check_plugins` on the whole head tree and on the base commit's tree (so a PR is blamed
only for what it introduces), in a child process with the same memory and time limits as the
other checks. Posted only on PRs touching `plugins.paths` of `.github/flagbot.yml`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from flagbot.bot import sandbox
from flagbot.bot.context import Context, PullRequest
from flagbot.bot.github import ChangedFile
from flagbot.bot.github.checkruns import CheckResult
from flagbot.bot.globs import compile_globs, matching_glob
from flagbot.bot.markdown import code, plain
from flagbot.hooks import unchecked
from flagbot.hooks.config import RepoConfig
from flagbot.hooks.errors import FlagbotError
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.plugins import since
from flagbot.hooks.plugins.check import check_plugins

NAME = "flagbot / plugins"


def touched(config: RepoConfig, files: Iterable[ChangedFile]) -> list[str]:
    """The PR's paths (new and old names) that `plugins.paths` selects."""
    globs = compile_globs(tuple(config["plugins"]["paths"]))
    paths = {p for f in files for p in (f.filename, f.previous) if p}
    return sorted(p for p in paths if matching_glob(p, globs))


def check_root(tree: Path) -> list[Finding]:
    """Every registry of the tree (none: no finding, not a `nothing-checked` warning)."""
    return [f for f in check_plugins(["."], base=tree) if f.rule != unchecked.RULE]


def new_and_inherited(tree: Path, base_sha: str) -> tuple[list[Finding], list[Finding]] | None:
    """(new, inherited) findings of the head checkout `tree` against commit `base_sha`; None
    when the head has no plugin registry at all (a `megatron/` folder of another project)."""
    try:
        raw = check_plugins(["."], base=tree)
        if any(f.rule == unchecked.RULE for f in raw):
            return None
        head = [f for f in raw if f.rule != unchecked.RULE]
        new, inherited = since.judge(tree, base_sha, head, check_root)
    except FlagbotError as exc:  # e.g. the base commit is missing: say so on the PR
        return [Finding(".", 0, ERROR, "check-plugins", str(exc))], []
    return new, inherited or []


def result(paths: list[str], new: list[Finding], inherited: list[Finding]) -> CheckResult:
    """The check run: failure only for errors the PR introduces; inherited ones listed apart."""
    errors = [f for f in new if f.severity == ERROR]
    warnings = [f for f in new if f.severity == WARNING]
    old_errors = sum(f.severity == ERROR for f in inherited)
    title = (f"{len(errors)} new error(s) in plugin registries" if errors
             else "plugin registries pass")
    lines = [f"This pull request touches {len(paths)} registry file(s) or file(s) they are "
             f"checked against. New: {len(errors)} error(s), {len(warnings)} warning(s); "
             f"inherited from the base branch: {len(inherited)} finding(s) "
             f"({old_errors} error(s)), not counted.", ""]
    lines += [f"- {code(p)}" for p in paths[:20]]
    if len(paths) > 20:
        lines.append(f"- … and {len(paths) - 20} more")
    lines += ["", "Reproduce locally: " + code("flagbot check-plugins --since <base>") + "."]
    text = "\n".join([*(f"- {plain(f.render())}" for f in sorted(new)),
                      *(["", "Inherited (already on the base branch):"] if inherited else []),
                      *(f"- {plain(f.render())}" for f in sorted(inherited))])
    return CheckResult(NAME, "failure" if errors else "success", title, "\n".join(lines), text, new)


def for_pull(ctx: Context, pr: PullRequest, config: RepoConfig,
             files: list[ChangedFile]) -> list[CheckResult]:
    """The plugins check run for this PR, or none when it touches no registry file or the
    repository has no registry."""
    paths = touched(config, files)
    if not paths:
        return []
    with ctx.workspace.checkout(pr) as tree:
        judged = sandbox.run_limited(
            new_and_inherited, tree, pr.base_sha, memory_mb=ctx.settings.check_memory_mb,
            timeout_s=ctx.settings.check_timeout_s,
            what=f"plugin checks of {ctx.full_name}#{pr.number} at {pr.head_sha[:12]}")
    return [] if judged is None else [result(paths, *judged)]
