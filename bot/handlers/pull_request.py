"""The `pull_request` flow: labels, then the two check runs, then the sticky summary comment.

Every step is find-then-update, so running a delivery twice writes nothing the second time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flagbot.bot import interest
from flagbot.bot.context import Context, PullRequest
from flagbot.bot.devices import plan as device_plan
from flagbot.bot.devices import runs as device_runs
from flagbot.bot.devices import trust
from flagbot.bot.github import ChangedFile, Comment, checkruns, comments
from flagbot.bot.github.checkruns import CheckResult
from flagbot.bot.github.client import ROLES
from flagbot.bot.github.labels import LabelChange, add_wanted, remove_stale
from flagbot.bot.github.markdown import code_block, plain
from flagbot.bot.handlers import (
    backends,
    downstream,
    judging,
    labels,
    patch_history,
    patches,
    plugins,
    routing,
    summary,
)
from flagbot.bot.handlers.base import Handler
from flagbot.bot.work import regenerate, sandbox
from flagbot.hooks import git as plumbing
from flagbot.hooks.config import CONFIG_PATH, RepoConfig
from flagbot.hooks.findings import Finding
from flagbot.hooks.folders import layout_for_paths

EVENT = "pull_request"
ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review", "edited", "closed", "labeled",
           "unlabeled")
# GET /pulls/{n}/files lists at most 3000 files ("pulls" REST docs).
FILES_CAP = 3000


def wants(payload: dict[str, Any]) -> bool:
    """Opened, pushed, reopened, ready for review, base branch changed, labelled by a person (a
    device label asks for regeneration; the bot's own labels do not), or closed: exactly
    ingest's interest filter."""
    return interest.wanted(EVENT, payload)


def config_failure(name: str, problems: list[str]) -> CheckResult:
    """A failed check run that names every bad key of the configuration."""
    text = "\n".join(f"- {plain(p)}" for p in problems)
    return CheckResult(name, "failure", f"invalid {CONFIG_PATH}",
                       f"`{CONFIG_PATH}` on the default branch has {len(problems)} problem(s); "
                       f"nothing was checked until it is fixed:\n\n{text}")


def handle(ctx: Context) -> dict[str, Any]:
    """Run the whole flow for one `pull_request` delivery; returns what each step did."""
    if ctx.action == "closed":  # merged or closed: the label log, FlagScale's history, ciflow tags
        number = int((ctx.payload.get("pull_request") or {}).get("number") or 0)
        return {**downstream.closed(ctx), **patch_history.on_closed(ctx),
                "tags_deleted": device_runs.drop_tags(ctx, number)}
    if ctx.action == "unlabeled":  # only a `ci: <device>` label in tag mode: its tag goes
        return device_runs.unlabeled(ctx)
    pr = PullRequest.from_payload(ctx.payload)
    client = ctx.client
    head = client.pull_head(pr.number)
    if head != pr.head_sha:
        # A late or replayed delivery for an older head: acting on it would put the old head's
        # labels and summary back; the delivery for the current head does the work.
        return {"superseded_by": head, "conclusions": {}, "writes": {}}
    existing = summary.find(client.comments(pr.number), client.bot_login)
    meta = summary.metadata(existing)
    if ctx.config is None:
        problems = ctx.config_error.problems if ctx.config_error else ["unreadable"]
        results = [config_failure(patches.NAME, problems), config_failure(backends.NAME, problems)]
        done = publish_all(ctx, pr, results)
        body = summary.render(summary.Summary(pr.head_sha, config_problems=problems,
                                              default_branch=ctx.default_branch), meta)
        done["summary"] = comments.upsert(client, pr.number, existing, body)[0]
        return {"config_error": problems, "conclusions": {r.name: r.conclusion for r in results},
                "writes": done}
    label = [str((ctx.payload.get("label") or {}).get("name") or "")]
    if ctx.action == "labeled" and not regenerate.labelled_devices(ctx.config, label) \
            and not device_plan.labelled(ctx.config, label):
        return {"skipped": "not a device or ci label", "conclusions": {}, "writes": {}}
    files = client.pull_files(pr.number)
    capped = len(files) >= FILES_CAP
    if capped:  # GitHub stops listing at 3000 files; git has them all
        files = ctx.workspace.changed_files(pr)
    # a FlagGems or FlagScale repository without configuration: its own folders are checked
    paths = labels.touched_paths(files)
    ctx.config = layout_for_paths(ctx.config, paths)
    regen = regenerate.for_pull(ctx, pr, files)
    if regen.outcome == "pushed":  # the new head's synchronize delivery does the rest
        return {"regenerated": regen.outcome, "commit": regen.commit, "conclusions": {},
                "writes": {}}
    label_findings: list[Finding] = []
    wanted, at_merge = labels.split_by_when(labels.plan_labels(
        ctx.config, paths, known=known_devices(ctx, pr, paths),
        max_vendor=ctx.settings.max_vendor_labels, skipped=label_findings))
    change = plan_labels(ctx, pr, wanted, existing)
    # Order matters for crash safety, since the comment is where "the bot added this" lives:
    # stale labels go before the comment stops listing them, new ones come after it lists them.
    remove_stale(client, pr.number, change)
    # Device runs first: a runner's minutes dwarf the checks below, so they start soonest.
    kernels = device_runs.for_pull(ctx, pr, files, meta)
    results = [with_label_findings(ctx.config, fold_into_check(regen, r)
                                   if r.name == patches.NAME else r, label_findings)
               for r in [*run_checks(ctx, pr, ctx.config, files),
                         *plugins.for_pull(ctx, pr, ctx.config, files)]]
    done = publish_all(ctx, pr, results)
    clone_url = str((ctx.payload.get("repository") or {}).get("clone_url") or "")
    label_lines = [*labels.describe(wanted), *labels.describe_at_merge(at_merge),
                   *labels.describe_skipped(label_findings)]
    report = summary.Summary(pr.head_sha, label_lines, list(change.to_remove), results,
                             default_branch=ctx.default_branch,
                             patch_lines=regenerate.describe(regen, clone_url) if regen.devices else [],
                             kernel_lines=device_runs.section(
                                 client, device_plan.devices(ctx.config), pr.head_sha)
                             if ctx.config["devices"] else [])
    seen_at = str((ctx.payload.get("pull_request") or {}).get("updated_at") or "")
    body = summary.render(report, {**meta, "bot_labels": list(change.bot_labels),
                                   trust.HEADS: trust.with_head(meta, pr.head_sha, seen_at)})
    done["summary"] = comments.upsert(client, pr.number, existing, body)[0]
    add_wanted(client, pr.number, change)
    recorded = downstream.record_labels(ctx, wanted, change)
    return {"files": len(files), "files_from_git": capped, "regenerated": regen.outcome,
            **({"kernels": kernels} if kernels else {}),
            "feed_labels": recorded, "labels_added": list(change.to_add),
            "labels_removed": list(change.to_remove),
            "conclusions": {r.name: r.conclusion for r in results}, "writes": done}


def known_devices(ctx: Context, pr: PullRequest, paths: list[str]) -> set[str] | None:
    """Devices that may become labels: configured under `devices:`, or with a folder under
    hardwares/ or a `_<vendor>` backend folder on the base already (read from git, only when
    the PR touches a vendor folder at all); None (any well-formed one) when the PR adds a new
    one and its author has write permission."""
    assert ctx.config is not None
    known = {str(name) for name in ctx.config["devices"]}
    touched = {found[0] for p in paths if (found := labels.vendor_of(p, ctx.config))}
    if not touched:
        return known
    with ctx.workspace.held():
        git_dir = ctx.workspace.objects(pr)
        for root in (ctx.config.hardwares, ctx.config.backends):
            listed = plumbing.run(["ls-tree", "-z", "-d", "--name-only",
                                   f"{pr.base_sha}:{root.strip('/')}"], cwd=git_dir, check=False)
            if listed.returncode == 0:
                names = listed.stdout.decode("utf-8", "replace").split("\0")
                known |= {n.removeprefix("_") if root == ctx.config.backends else n
                          for n in names if n}
    if touched - known and is_writer(ctx.client.permission(pr.author) if pr.author else "none"):
        return None  # a writer's new vendor folder: its first, largest PR gets the label too
    return known


def is_writer(role: str) -> bool:
    """Whether a repository role may push (write, maintain, admin)."""
    return role in ROLES and ROLES.index(role) >= ROLES.index("write")


def with_label_findings(config: RepoConfig, result: CheckResult,
                        found: list[Finding]) -> CheckResult:
    """`result` with the warnings about vendor folders under its own root (hardwares/ for the
    patches check, the backends folder for the backends check)."""
    root = config.hardwares if result.name == patches.NAME else config.backends
    mine = [f for f in found if f.path.startswith(root.rstrip("/") + "/")]
    if not mine or result.name not in (patches.NAME, backends.NAME):
        return result
    text = "\n".join(filter(None, [result.text, *(f"- {plain(f.render())}" for f in mine)]))
    return CheckResult(result.name, result.conclusion, result.title, result.summary, text,
                       [*result.findings, *mine])


def publish_all(ctx: Context, pr: PullRequest, results: list[CheckResult]) -> dict[str, Any]:
    """Write every check run; one that fails does not keep the others from being written
    (the first error is raised after all were tried, so the delivery is retried)."""
    done: dict[str, Any] = {}
    errors: list[Exception] = []
    for r in results:
        try:
            done[r.name] = checkruns.publish(ctx.client, pr.head_sha, r, ctx.settings.max_annotations)
        except Exception as exc:  # the other check runs are still written
            done[r.name] = f"failed: {type(exc).__name__}"
            errors.append(exc)
    if errors:
        raise errors[0]
    return done


def plan_labels(ctx: Context, pr: PullRequest, wanted: dict[str, labels.WantedLabel],
                existing: Comment | None) -> LabelChange:
    """Compare wanted labels with the PR's and with those the summary says the bot added."""
    current = ctx.client.issue_labels(pr.number)
    have = {name.lower() for name in current}
    missing = any(name.lower() not in have for name in wanted)
    return labels.plan_change(wanted, current, summary.bot_labels(existing),
                              ctx.client.repo_labels() if missing else {})


def run_checks(ctx: Context, pr: PullRequest, config: RepoConfig,
               files: list[ChangedFile]) -> list[CheckResult]:
    """Both check results; a checkout of the head is made only when something needs checking."""
    patch_list = patches.touched_patches(config, files)
    check_patches = bool(patch_list) or patches.touches_hardwares(config, files)
    folders = backends.touched_folders(config, files)
    check_routing = routing.may_touch_routing(config, files)
    if not check_patches and not folders and not check_routing:
        return [patches.nothing_to_check(), backends.nothing_to_check()]
    memory_mb, timeout_s = ctx.settings.check_memory_mb, ctx.settings.check_timeout_s
    what = f"checks of {ctx.full_name}#{pr.number} at {pr.head_sha[:12]}"
    routing_found: tuple[list[str], list[Finding]] = ([], [])
    patch_findings: list[Finding] | None = None
    backend_findings: tuple[list[str], list[Finding]] | None = None
    with ctx.workspace.checkout(pr) as tree:
        # the PR's files are parsed in a child process with memory and time limits
        if check_patches or folders:
            patch_findings, backend_findings = sandbox.run_limited(
                check_tree, tree, config, patch_list if check_patches else None, folders,
                memory_mb=memory_mb, timeout_s=timeout_s, what=what)
        if check_routing:
            routing_found = sandbox.run_limited(
                routing.run_checks, tree, config, labels.touched_paths(files),
                memory_mb=memory_mb, timeout_s=timeout_s, what=what)
    # the same checks at the merge base: only what the pull request introduces fails a check
    base = judging.BaseSide(ctx, pr)
    results = [patches.nothing_to_check(), backends.nothing_to_check()]
    if patch_findings is not None:
        results[0] = base.judge(patches.NAME, patch_findings,
                                lambda new: patches.result(config, patch_list, new),
                                check_patches_at, config, patch_list, paths=[config.hardwares])
    if backend_findings is not None:
        checked, found = backend_findings
        results[1] = base.judge(backends.NAME, found,
                                lambda new: backends.result(folders, checked, new),
                                check_backends_at, config, checked,
                                paths=backends.base_paths(config))
    routed, found_routes = routing_found
    if routed:  # only PRs that change routing get the run (most repositories have none)
        results.append(base.judge(routing.NAME, found_routes,
                                  lambda new: routing.result(routed, new),
                                  routing.check_at, config, routed))
    return results


def check_patches_at(tree: Path, config: RepoConfig, patch_list: list[str]) -> list[Finding]:
    """The patches check on the base's tree: the PR's patches that existed there, hetero.txt."""
    return patches.run_checks(tree, config, judging.existing_paths(tree, patch_list))


def check_backends_at(tree: Path, config: RepoConfig, folders: list[str]) -> list[Finding]:
    """The backends check on the base's tree: the PR's vendor folders that existed there."""
    present = judging.existing_paths(tree, folders)
    return backends.run_checks(tree, config, present)[1] if present else []


def check_tree(tree: Path, config: RepoConfig, patch_list: list[str] | None,
               folders: list[str]) -> tuple[list[Finding] | None, tuple[list[str], list[Finding]] | None]:
    """Both checkers on a checkout (what runs in the limited child): the patches' findings
    (None: not checked) and the backends' (checked folders, findings; None: not checked)."""
    patch_findings = patches.run_checks(tree, config, patch_list) if patch_list is not None else None
    backend_findings = backends.run_checks(tree, config, folders) if folders else None
    return patch_findings, backend_findings
def fold_into_check(regen: regenerate.Regen, result: CheckResult) -> CheckResult:
    """The `flagbot / patches` result with a failed regeneration made part of it."""
    if regen.outcome not in ("failed", "rejected"):
        return result
    summary = (f"Regenerating the patch of {', '.join(regen.devices) or 'the labelled devices'} "
               f"failed:\n\n{code_block(regen.message)}\n\n{result.summary}")
    title = "patch regeneration failed" if regen.outcome == "failed" else "branch moved; not pushed"
    conclusion = "failure" if regen.outcome == "failed" else result.conclusion
    return CheckResult(result.name, conclusion, title, summary, result.text, result.findings)


HANDLER = Handler(EVENT, frozenset(ACTIONS), wants, handle,
                  "labels, patch regeneration, `flagbot / patches`, `flagbot / backends`, "
                  "`flagbot / plugins`, summary comment; once merged, FlagScale's "
                  "patch_history.yaml update")
