"""Check run `flagbot / plugins`: plugin registries on PRs that touch them, new vs inherited.

Runs `check_plugins` on the whole head tree, and through judging.py on the PR's merge base
(cached by tree id), so a PR is blamed only for what it introduces; both in a child process with
the same memory and time limits as the other checks. Posted only on PRs touching
`plugins.paths` of `.github/flagbot.yml`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from flagbot.bot.context import Context, PullRequest
from flagbot.bot.github import ChangedFile
from flagbot.bot.github.checkruns import CheckResult
from flagbot.bot.github.markdown import code, plain
from flagbot.bot.handlers import judging
from flagbot.bot.handlers.globs import compile_globs, matching_glob
from flagbot.bot.work import sandbox
from flagbot.hooks import unchecked
from flagbot.hooks.config import RepoConfig
from flagbot.hooks.findings import ERROR, WARNING, Finding
from flagbot.hooks.plugins.check import SOURCES, check_plugins

NAME = "flagbot / plugins"


def touched(config: RepoConfig, files: Iterable[ChangedFile]) -> list[str]:
    """The PR's paths (new and old names) that `plugins.paths` selects."""
    globs = compile_globs(tuple(config["plugins"]["paths"]))
    paths = {p for f in files for p in (f.filename, f.previous) if p}
    return sorted(p for p in paths if matching_glob(p, globs))


def check_root(tree: Path) -> list[Finding]:
    """Every registry of the tree (none: no finding, not a `nothing-checked` warning)."""
    return [f for f in check_plugins(["."], base=tree) if f.rule != unchecked.RULE]


def head_findings(tree: Path) -> list[Finding] | None:
    """The head checkout's findings; None when it has no plugin registry at all (a
    `megatron/` folder of another project)."""
    raw = check_plugins(["."], base=tree)
    if any(f.rule == unchecked.RULE for f in raw):
        return None
    return [f for f in raw if f.rule != unchecked.RULE]


def result(paths: list[str], new: list[Finding]) -> CheckResult:
    """The check run from the findings the PR introduces (judging.py lists the inherited)."""
    errors = [f for f in new if f.severity == ERROR]
    warnings = [f for f in new if f.severity == WARNING]
    title = (f"{len(errors)} new error(s) in plugin registries" if errors
             else "plugin registries pass")
    lines = [f"This pull request touches {len(paths)} registry file(s) or file(s) they are "
             f"checked against: {len(errors)} error(s), {len(warnings)} warning(s).", ""]
    lines += [f"- {code(p)}" for p in paths[:20]]
    if len(paths) > 20:
        lines.append(f"- … and {len(paths) - 20} more")
    lines += ["", "Reproduce locally: " + code("flagbot check-plugins --since <base>") + "."]
    text = "\n".join(f"- {plain(f.render())}" for f in sorted(new))
    return CheckResult(NAME, "failure" if errors else "success", title, "\n".join(lines), text, new)


def for_pull(ctx: Context, pr: PullRequest, config: RepoConfig,
             files: list[ChangedFile]) -> list[CheckResult]:
    """The plugins check run for this PR, or none when it touches no registry file or the
    repository has no registry."""
    paths = touched(config, files)
    if not paths:
        return []
    with ctx.workspace.checkout(pr) as tree:
        head = sandbox.run_limited(
            head_findings, tree, memory_mb=ctx.settings.check_memory_mb,
            timeout_s=ctx.settings.check_timeout_s,
            what=f"plugin checks of {ctx.full_name}#{pr.number} at {pr.head_sha[:12]}")
    if head is None:
        return []
    # the same check at the merge base (cached by tree id): only new errors fail the run
    return [judging.BaseSide(ctx, pr).judge(NAME, head, lambda new: result(paths, new),
                                            check_root, paths=SOURCES)]
