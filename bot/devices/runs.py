"""Starting, blocking, superseding and ending kernel-check runs, one per (PR, head sha, device).

The check run `flagbot / kernels (<device>)` on the head sha is both what people see and the
bookkeeping: queued when the workflow is dispatched, in progress when a runner takes it,
completed with the report's verdict, `cancelled` when a push supersedes it, `timed_out` when no
report comes back in time, `action_required` while an untrusted author's head waits for
`/ok-to-test`. Its `external_id` (ids.Tracked) names the request and the workflow run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from github import GithubException

from flagbot.bot.context import Context, PullRequest
from flagbot.bot.dashboard import record
from flagbot.bot.devices import base_runs, isolation, local, plan, results, tags, trust
from flagbot.bot.devices.artifact import ArtifactError, fetch_report
from flagbot.bot.devices.ids import DEADLINE_EVENT, Request, Tracked
from flagbot.bot.devices.plan import Device, Rules
from flagbot.bot.devices.report import ReportError, parse_report
from flagbot.bot.github import ChangedFile, CheckRunRef, GitHubClient, checkruns, comments
from flagbot.bot.github.labels import LabelChange, add_wanted
from flagbot.bot.github.markdown import code
from flagbot.bot.handlers import labels, summary
from flagbot.bot.monitoring import metrics

ACTIVE = ("queued", "in_progress")
ICONS = {"success": "✅", "failure": "❌", "cancelled": "➖", "timed_out": "⌛",
         "action_required": "✋", "neutral": "➖", "queued": "⏳", "in_progress": "🔄"}


@dataclass(frozen=True)
class Started:
    """What asking for one device did: `dispatched`, `ran` (local), `waiting` (for
    `/ok-to-test`), `running` (one is already under way), `exists` (this head has its result),
    `failed` (the dispatch was refused), `refused` (a local device and an author without
    write access); `detail` is a sentence for replies."""

    device: str
    outcome: str
    detail: str = ""


def latest(client: GitHubClient, sha: str, device: Device) -> tuple[CheckRunRef | None, Tracked | None]:
    """The newest kernels check run of `device` on `sha`, and what it tracks."""
    runs = client.check_runs(sha, device.check_name)
    ref = max(runs, key=lambda r: r.id) if runs else None
    return ref, Tracked.decode(ref.external_id) if ref else None


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def finish(client: GitHubClient, run_id: int, result: checkruns.CheckResult, tracked: Tracked,
           max_annotations: int = checkruns.MAX_ANNOTATIONS) -> None:
    """Complete check run `run_id` with `result` (its first `max_annotations` findings
    annotated, in batches of 50), marking the request done."""
    done = tracked.but(state="done").encode()
    checkruns.complete(client, run_id, result, done, max_annotations)


def repo_html(ctx: Context) -> str:
    """The repository's web address, for links to its workflow runs."""
    repo = ctx.payload.get("repository") or {}
    return str(repo.get("html_url") or f"https://github.com/{ctx.full_name}")


def run_url(ctx: Context, run_id: int | None) -> str | None:
    return f"{repo_html(ctx)}/actions/runs/{run_id}" if run_id else None


def deadline(ctx: Context, request: Request, delay_s: float, attempt: int = 1) -> None:
    """Ask the worker to look at `request` again after `delay_s` (it ends `timed_out` then)."""
    repo = ctx.payload.get("repository") or {}
    ctx.follow_ups.append({
        "id": f"flagbot-deadline-{request.id}-{attempt}", "event": DEADLINE_EVENT,
        "delay_s": max(delay_s, 1.0),
        "payload": {"action": "check", "request": request.id, "attempt": attempt,
                    "repository": {k: repo.get(k) for k in
                                   ("full_name", "default_branch", "clone_url", "html_url")},
                    "installation": ctx.payload.get("installation")},
    })


def start(ctx: Context, pr: PullRequest, device: Device, rule: Rules, ops: Sequence[str]) -> Started:
    """Create the check run and dispatch the workflow (or push the tag, or run locally) for the
    PR's head."""
    client = ctx.client
    request = Request.new(pr.number, pr.head_sha, device.name)
    ops = tuple(ops or device.ops)
    tracked = Tracked(request.id, None, ops, "queued", by_tag=rule.by_tag and not device.local)
    where = "this bot's machine" if device.local else "runners " + code(", ".join(device.runner))
    check_id = client.create_check_run(pr.head_sha, device.check_name, {
        "status": "in_progress" if device.local else "queued", "started_at": now_utc(),
        "external_id": tracked.encode(),
        "output": {"title": f"queued on {device.name}",
                   "summary": f"Kernel check of {code(device.backend)} on {where}; request "
                              f"{code(request.id)}."}})
    record.started(ctx, request.id, local=device.local)
    if device.local:
        result = run_locally(ctx, pr, device, rule, ops, lambda: base_of(ctx, request, device))
        finish(client, check_id, result, tracked)
        record.finished(ctx, request.id, result.conclusion)
        return Started(device.name, "ran", f"{result.conclusion}: {result.title}")
    failed, detail = launch(ctx, check_id, request, tracked, device, rule, pr.base_sha)
    if failed:
        return Started(device.name, "failed", detail)
    return Started(device.name, "dispatched", f"{detail} on {where}")


def launch(ctx: Context, check_id: int, request: Request, tracked: Tracked, device: Device,
           rule: Rules, base_sha: str) -> tuple[bool, str]:
    """Start `request`'s run on the runners (dispatch or tag), recording it on check run
    `check_id`; (True, why) when GitHub refused, and the check run then says so. `base_sha`
    (the PR's base commit, "" when unknown) is what a dispatched run compares the head with."""
    client = ctx.client
    try:
        if tracked.by_tag:
            how = tags.push(client, device.name, request.pr, request.sha)
            run_id = None
        else:
            run_id = client.dispatch_workflow(rule.workflow, ctx.default_branch,
                                              dispatch_inputs(request, device, rule, tracked.ops,
                                                              base_sha))
    except GithubException as exc:
        why = (f"Pushing the tag `{request.tag}` failed ({exc.status}): "
               f"{code(str(exc.data)[:300], 300)}. The App needs the Contents: write permission."
               if tracked.by_tag else
               f"Dispatching `.github/workflows/{rule.workflow}` on `{ctx.default_branch}` failed "
               f"({exc.status}): {code(str(exc.data)[:300], 300)}. The workflow must be on the "
               "default branch (copy flagbot's `device-check.yml`) and the App needs the "
               "Actions: write permission.")
        finish(client, check_id, results.without_report(device, "failure", "dispatch failed", why, None),
               tracked)
        record.finished(ctx, request.id, "failure")
        return True, why
    url = run_url(ctx, run_id)
    if run_id is not None:
        client.update_check_run(check_id, {
            "external_id": tracked.but(run_id=run_id).encode(),
            **({"details_url": url} if url else {})})
    deadline(ctx, request, device.timeout_minutes * 60.0)
    if tracked.by_tag:
        return False, f"tag `{request.tag}` {how} at `{request.sha[:12]}`"
    return False, "dispatched" + (f" ({url})" if url else "")


def dispatch_inputs(request: Request, device: Device, rule: Rules, ops: Sequence[str],
                    base_sha: str) -> dict[str, str]:
    """The `workflow_dispatch` inputs of the shipped workflow."""
    return {"device": device.name, "runner": json_list(device.runner), "pr": str(request.pr),
            "sha": request.sha, "base": base_sha, "backend": device.backend, "ops": ",".join(ops),
            "min_speedup": f"{rule.min_speedup:g}",
            "min_native_fraction": f"{rule.min_native_fraction:g}", "request_id": request.id}


def run_locally(ctx: Context, pr: PullRequest, device: Device, rule: Rules, ops: Sequence[str],
                base: Callable[[], tuple[frozenset[str], str] | None] | None = None) -> checkruns.CheckResult:
    """The check run of a sandboxed run on this machine (a failure saying why where no
    sandbox can be built)."""
    settings = ctx.settings
    secrets = isolation.secrets_of((settings.webhook_secret, settings.webhook_secret_previous,
                                    settings.private_key))
    try:
        with ctx.workspace.checkout(pr) as tree:
            ran = local.run(tree, device.backend, ops, rule.min_speedup, rule.min_native_fraction,
                            device.timeout_minutes * 60.0, unsafe=settings.unsafe_local_runner,
                            secrets=secrets)
        record.ingested(ctx, pr.number, pr.head_sha, device.name, ran.report)
    except isolation.SandboxUnavailable as exc:
        return results.without_report(device, "failure", "no sandbox for the local runner",
                                      f"Nothing ran: {exc}", None)
    return local_result(ran, device, rule, base)


def json_list(items: Sequence[str]) -> str:
    """`items` as the JSON list the workflow's `fromJSON(inputs.runner)` reads."""
    return "[" + ", ".join(f'"{i}"' for i in items) + "]"  # labels are [A-Za-z0-9_.:-] only


def local_result(ran: local.LocalRun, device: Device, rule: Rules,
                 base: Callable[[], tuple[frozenset[str], str] | None] | None = None) -> checkruns.CheckResult:
    """The check run of a local run."""
    if ran.timed_out:
        return results.without_report(device, "timed_out", f"no report within {device.timeout_minutes} min",
                                      f"The check was stopped after {device.timeout_minutes} "
                                      f"minutes.\n\n{tail_block(ran.tail)}", None)
    if ran.report is None:
        return results.without_report(device, "failure", "no report",
                                      f"The check exited {ran.exit_code} without writing a "
                                      f"report.\n\n{tail_block(ran.tail)}", None)
    return result_of(ran.report, device, rule, None, base)


def tail_block(text: str) -> str:
    from flagbot.bot.github.markdown import code_block

    return "Its output ended with:\n\n" + code_block(text[-2000:] or "(nothing)")


def result_of(data: bytes, device: Device, rule: Rules, url: str | None,
              base: Callable[[], tuple[frozenset[str], str] | None] | None = None) -> checkruns.CheckResult:
    """The check run for a report's bytes (a malformed report is a failure that says why);
    `base` tells, when asked, what the base branch's last run of the device failed."""
    try:
        report = parse_report(data)
    except ReportError as exc:
        return results.without_report(device, "failure", "unusable report",
                                      f"The report is not usable: {code(str(exc), 400)}", url)
    quarantined = rule.quarantined(device.name)
    known = base() if base is not None and any(
        op.name not in quarantined for op in report.failed) else None
    inherited, base_sha = known if known else (frozenset(), "")
    return results.from_report(report, device, rule, url, inherited, base_sha)


def block(ctx: Context, pr: PullRequest, device: Device, rule: Rules, ops: Sequence[str],
          role: str) -> Started:
    """An `action_required` check run saying who must approve this head, and how."""
    request = Request.new(pr.number, pr.head_sha, device.name)
    text = (f"Kernel checks run this pull request's code on self-hosted hardware. Its author "
            f"{code(pr.author, 60)} has the `{role}` role here; checks start without approval "
            f"for `{rule.trusted_permission}` and above. A maintainer who has reviewed the "
            f"changes can comment `/ok-to-test` to run them on head `{pr.head_sha[:12]}`; a new "
            "push needs a new approval.")
    ctx.client.create_check_run(pr.head_sha, device.check_name, {
        "status": "completed", "conclusion": "action_required", "completed_at": now_utc(),
        "external_id": Tracked(request.id, None, tuple(ops), "waiting").encode(),
        "output": {"title": "waiting for /ok-to-test", "summary": text}})
    return Started(device.name, "waiting", text)


def ask(ctx: Context, pr: PullRequest, wanted: Sequence[tuple[Device, Sequence[str]]],
        meta: dict[str, Any], *, rerun: bool = False) -> list[Started]:
    """Start (or block, for an untrusted head) each wanted device at most once per head sha."""
    if not wanted:
        return []
    assert ctx.config is not None
    rule = plan.rules(ctx.config)
    client = ctx.client
    role = trust.author_role(client, pr.author)
    ok = trust.trusted(rule, role) or trust.approved(meta, pr.head_sha)
    done: list[Started] = []
    for device, ops in wanted:
        ref, tracked = latest(client, pr.head_sha, device)
        if ref is not None and ref.status in ACTIVE:
            done.append(Started(device.name, "running", "a run for this head is under way"))
        elif ref is not None and tracked is not None and tracked.state == "waiting" and not ok:
            done.append(Started(device.name, "waiting", "waiting for `/ok-to-test`"))
        elif ref is not None and tracked is not None and tracked.state == "done" and not rerun:
            done.append(Started(device.name, "exists", f"this head's result: {ref.conclusion}"))
        elif device.local and not trust.trusted(rule, role):
            done.append(local_refused(device, pr, role))
        elif ok:
            done.append(start(ctx, pr, device, rule, tuple(ops) or (tracked.ops if tracked else ())))
        else:
            done.append(block(ctx, pr, device, rule, ops, role))
    set_needs_label(ctx, pr, rule, blocked=any(s.outcome == "waiting" for s in done))
    return done


def local_refused(device: Device, pr: PullRequest, role: str) -> Started:
    """The local runner shares the bot's machine: only trusted authors' code may reach it,
    whatever a `/ok-to-test` says (approval is for self-hosted runners, which hold no bot
    secrets)."""
    return Started(device.name, "refused",
                   f"{device.name} runs on the bot's own machine, which runs only code by "
                   f"authors with write access; {code(pr.author, 60)} has `{role}`. Use a "
                   "self-hosted runner device for outside contributions.")


def set_needs_label(ctx: Context, pr: PullRequest, rule: Rules, *, blocked: bool) -> None:
    """Put the needs-ok-to-test label on while a head waits for approval; take it off after."""
    client = ctx.client
    name = rule.needs_label.name
    have = {n.lower() for n in client.issue_labels(pr.number)}
    if blocked and name.lower() not in have:
        change = LabelChange(() if name in client.repo_labels() else (rule.needs_label,),
                                    (name,), (), ())
        add_wanted(client, pr.number, change)
    elif not blocked and name.lower() in have:
        client.remove_label(pr.number, name)


def cancel(client: GitHubClient, run_id: int, by_tag: bool) -> bool:
    """Cancel workflow run `run_id`; False when it had ended. Tag dispatch needs only Actions:
    read, so there a refusal (403) is no error: a moved tag's run is cancelled by the workflow's
    concurrency group, and any other ends at its own job timeout."""
    try:
        return client.cancel_workflow_run(run_id)
    except GithubException as exc:
        if by_tag and exc.status == 403:
            return False
        raise


def find_run(client: GitHubClient, workflow: str, request: Request, by_tag: bool = False) -> int | None:
    """The workflow run of `request`, searched by its title (when the dispatch gave no id), or
    for a tag-started one by its tag and head sha (the newest such run)."""
    for run in client.workflow_runs(workflow, "push" if by_tag else "workflow_dispatch"):
        if by_tag and run.get("head_branch") == request.tag and run.get("head_sha") == request.sha:
            return int(run["id"])
        if not by_tag and Request.from_title(str(run.get("display_title") or "")) == request:
            return int(run["id"])
    return None


def supersede(ctx: Context, old_sha: str, new_sha: str) -> list[str]:
    """Cancel the unfinished runs of `old_sha` (a push made them stale); returns the devices."""
    assert ctx.config is not None
    rule = plan.rules(ctx.config)
    cancelled = []
    for device in plan.devices(ctx.config).values():
        ref, tracked = latest(ctx.client, old_sha, device)
        if ref is None or tracked is None or ref.status not in ACTIVE:
            continue
        request = Request.parse(tracked.request)
        run_id = tracked.run_id or (find_run(ctx.client, rule.workflow, request, tracked.by_tag)
                                    if request else None)
        if run_id:
            cancel(ctx.client, run_id, tracked.by_tag)
        finish(ctx.client, ref.id, results.without_report(
            device, "cancelled", f"superseded by {new_sha[:10]}",
            f"A push moved the pull request to `{new_sha[:12]}`; this head's run was cancelled.",
            run_url(ctx, run_id)), Tracked(tracked.request, run_id, tracked.ops, "done"))
        record.finished(ctx, tracked.request, "cancelled")
        cancelled.append(device.name)
    return cancelled


def drop_tags(ctx: Context, number: int, names: Sequence[str] | None = None) -> list[str]:
    """Tag dispatch: delete the ciflow tags of `number` (of `names`, default every runner
    device); returns the devices whose tag existed."""
    if ctx.config is None or not number or not plan.rules(ctx.config).by_tag:
        return []
    devices = plan.devices(ctx.config)
    wanted = [n for n in (devices if names is None else names) if n in devices and not devices[n].local]
    return tags.delete(ctx.client, wanted, number)


def unlabeled(ctx: Context) -> dict[str, Any]:
    """A person took a `ci: <device>` label off: in tag mode that device's tag is deleted."""
    if ctx.config is None:
        return {"skipped": "invalid config"}
    name = str((ctx.payload.get("label") or {}).get("name") or "")
    devices = plan.labelled(ctx.config, [name])
    if not devices:
        return {"skipped": "not a ci label"}
    number = int((ctx.payload.get("pull_request") or {}).get("number") or 0)
    return {"tags_deleted": drop_tags(ctx, number, devices)}


def section(client: GitHubClient, devices: dict[str, Device], sha: str) -> list[str]:
    """The summary comment's lines for the kernel check runs on `sha` (empty when none)."""
    rows = []
    for device in devices.values():
        ref, _ = latest(client, sha, device)
        if ref is None:
            continue
        state = ref.conclusion if ref.status == "completed" else ref.status
        link = f" ([run]({ref.details_url}))" if ref.details_url else ""
        rows.append(f"| {device.name} | {ICONS.get(state or '', '')} {state}: "
                    f"{ref.title or ''}{link} |")
    if not rows:
        return []
    return ["| device | kernel check |", "| --- | --- |", *rows]


def refresh_summary(ctx: Context, number: int, sha: str) -> str:
    """Rewrite the kernels section of the PR's summary comment from the check runs."""
    assert ctx.config is not None
    existing = summary.find(ctx.client.comments(number), ctx.client.bot_login)
    if existing is None:
        return "none"
    body = summary.with_kernels(existing.body, section(ctx.client, plan.devices(ctx.config), sha))
    return comments.upsert(ctx.client, number, existing, body)[0]


def for_pull(ctx: Context, pr: PullRequest, files: Sequence[ChangedFile],
             meta: dict[str, Any]) -> dict[str, Any]:
    """The `pull_request` step: supersede the previous head's runs, ask for the labelled devices."""
    assert ctx.config is not None
    devices = plan.devices(ctx.config)
    if not devices:
        return {}
    facts: dict[str, Any] = {}
    before = str(ctx.payload.get("before") or "")
    if ctx.action == "synchronize" and before and before != pr.head_sha:
        facts["cancelled"] = supersede(ctx, before, pr.head_sha)
    rule = plan.rules(ctx.config)
    names = list(pr.labels)
    if ctx.action == "labeled":
        names.append(str((ctx.payload.get("label") or {}).get("name") or ""))
    paths = labels.touched_paths(files)
    wanted: list[Device] = []
    untouched: list[Device] = []
    for name in plan.labelled(ctx.config, names):
        (wanted if plan.touching(devices[name], rule, paths) else untouched).append(devices[name])
    started = ask(ctx, pr, [(d, ()) for d in wanted], meta)
    facts.update(kernels={s.device: s.outcome for s in started},
                 not_touched=[d.name for d in untouched])
    return facts


def elapsed_since(ref: CheckRunRef) -> float:
    """Seconds since the check run started (0 when GitHub did not say)."""
    return time.time() - ref.started_at if ref.started_at else 0.0


RUNNER_ENDS = ("failure", "cancelled", "timed_out")  # how a run whose runner died completes
MAX_ATTEMPTS = 2  # one automatic re-dispatch, never more


def conclude(ctx: Context, ref: CheckRunRef, tracked: Tracked, device: Device,
             run: dict[str, Any]) -> str:
    """Complete the check run of a finished workflow run from its report artifact; a run that
    uploaded none is dispatched once more first (`retry`)."""
    assert ctx.config is not None
    rule = plan.rules(ctx.config)
    run_id = int(run["id"])
    url = str(run.get("html_url") or "") or run_url(ctx, run_id)
    request = Request.parse(tracked.request)
    assert request is not None
    conclusion = str(run.get("conclusion") or "")
    if tracked.progress_at is not None:
        metrics.device_running(device.name, time.time() - tracked.progress_at)
    if conclusion == "timed_out":
        metrics.device_timeout(device.name)
    done = tracked.but(run_id=run_id, state="done")
    data: bytes | None = None
    name = request.tag_artifact if tracked.by_tag else request.artifact
    uploaded = any(a.name == name for a in ctx.client.run_artifacts(run_id))
    if not uploaded and conclusion in RUNNER_ENDS:
        if tracked.attempt < MAX_ATTEMPTS:
            return retry(ctx, ref, tracked, device, rule, run_id, conclusion, url)
        result = runner_failure(ctx, device, tracked, run_id, conclusion, url)
    else:
        try:
            data = fetch_report(ctx.client, run_id, name)
            result = result_of(data, device, rule, url, lambda: base_of(ctx, request, device))
        except ArtifactError as exc:
            result = results.without_report(
                device, "failure", "no report",
                f"The workflow run ended `{code(conclusion or 'unknown', 40)}` without a usable "
                f"report ({exc}); it failed before the check wrote one, or did not upload it. "
                "See its logs.", url)
    finish(ctx.client, ref.id, result, done, ctx.settings.max_annotations)
    record.finished(ctx, tracked.request, result.conclusion, report=data, run_id=run_id, url=url)
    return result.conclusion


def base_of(ctx: Context, request: Request, device: Device) -> tuple[frozenset[str], str] | None:
    """What the device's last completed run on the pull request's base branch failed."""
    base = str(((ctx.client.pull_json(request.pr) or {}).get("base") or {}).get("ref") or "")
    return base_runs.base_failures(ctx.client, base, device) if base else None


def retry(ctx: Context, ref: CheckRunRef, tracked: Tracked, device: Device, rule: Rules,
          run_id: int, conclusion: str, url: str | None) -> str:
    """The run ended without a report (its runner died): dispatch the same head and device once
    more, as a new request, keeping the check run open and saying so."""
    old = Request.parse(tracked.request)
    assert old is not None
    request = Request.new(old.pr, old.sha, old.device)
    again = Tracked(request.id, None, tracked.ops, "queued", tracked.attempt + 1, None,
                    (run_id, conclusion), tracked.by_tag)
    link = (f"[{run_id}]({url})" if url else str(run_id)) + f" ({runner_of(ctx.client, run_id, device)})"
    ctx.client.update_check_run(ref.id, {
        "status": "queued", "started_at": now_utc(), "external_id": again.encode(),
        **({"details_url": url} if url else {}),
        "output": {"title": f"runner failure; started again (attempt {again.attempt} of {MAX_ATTEMPTS})",
                   "summary": f"Run {link} ended {code(conclusion, 40)} without uploading a "
                              "report: the runner failed before the check could report (lost, "
                              "killed, out of time or disk). flagbot started the same head on "
                              f"{device.name} once more (request {code(request.id)}); a second "
                              "such end fails this check."}})
    metrics.device_retry(device.name)
    record.restarted(ctx, tracked.request, request.id, conclusion, run_id=run_id, url=url)
    base_sha = "" if again.by_tag else str(
        ((ctx.client.pull_json(old.pr) or {}).get("base") or {}).get("sha") or "")
    failed, _ = launch(ctx, ref.id, request, again, device, rule, base_sha)
    return "failure" if failed else "retried"


def runner_of(client: GitHubClient, run_id: int, device: Device) -> str:
    """Which runner ran the device's job of `run_id`, in words (`runner `x``, or that none took
    it): the runner's name is what a maintainer looks for first."""
    try:
        jobs = client.run_jobs(run_id)
    except GithubException:
        return "runner unknown"
    names = [str(j.get("runner_name")) for j in jobs if j.get("runner_name") and (
        not j.get("labels") or set(device.runner) <= {str(x) for x in j.get("labels") or []})]
    if not names:
        return "no runner took the job"
    return "runner " + ", ".join(code(n, 80) for n in dict.fromkeys(names))


def runner_failure(ctx: Context, device: Device, tracked: Tracked, run_id: int, conclusion: str,
                   url: str | None) -> checkruns.CheckResult:
    """The check run after the second run in a row ended without a report."""
    runs_said = [f"{run_url(ctx, tracked.prev[0])} ({runner_of(ctx.client, tracked.prev[0], device)}) "
                 f"ended `{tracked.prev[1]}`"] if tracked.prev else []
    runs_said.append(f"{url or run_id} ({runner_of(ctx.client, run_id, device)}) ended "
                     f"{code(conclusion, 40)}")
    return results.without_report(
        device, "failure", f"runner failure: no report, {tracked.attempt} runs ended `{conclusion}`",
        f"Runner failure on {code(device.name)}: {tracked.attempt} runs of this head ended without "
        f"uploading a report ({'; '.join(runs_said)}). The runners with the labels "
        f"{code(', '.join(device.runner))} lost or killed the job before the check wrote its "
        "report; flagbot does not start a third run. Look at the run's log and the runner, "
        "then comment `/retest`.", url)
