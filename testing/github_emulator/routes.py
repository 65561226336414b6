"""The route table: every REST endpoint the emulator serves, in one literal list."""

from __future__ import annotations

import re

from testing.github_emulator import hook_log
from testing.github_emulator import routes_actions as actions
from testing.github_emulator import routes_checks as checks
from testing.github_emulator import routes_issues as issues
from testing.github_emulator import routes_manifest as manifest
from testing.github_emulator import routes_pulls as pulls
from testing.github_emulator import routes_repo as repo
from testing.github_emulator.server import Handler, Route

R = "/repos/{owner}/{repo}"
APP, INST = "app", "installation"  # which credential a route needs: App JWT or installation token
ANY = "any"  # no credential needed (the manifest flow)

# (method, path template, credential, handler); first match wins, so specific paths come first.
TABLE: list[tuple[str, str, str, Handler]] = [
    ("POST", "/settings/apps/new", ANY, manifest.new_app),
    ("POST", "/organizations/{org}/settings/apps/new", ANY, manifest.new_app),
    ("POST", "/app-manifests/{code}/conversions", ANY, manifest.convert),
    ("POST", "/app/installations/{id}/access_tokens", APP, repo.create_token),
    ("GET", "/app", APP, repo.get_app),
    ("GET", "/app/installations", APP, repo.list_installations),
    ("GET", "/app/installations/{id}", APP, repo.get_installation),
    ("GET", "/app/hook/deliveries", APP, hook_log.list_deliveries),
    ("GET", "/app/hook/deliveries/{delivery_id}", APP, hook_log.get_delivery),
    ("POST", "/app/hook/deliveries/{delivery_id}/attempts", APP, hook_log.redeliver),
    ("GET", R + "/installation", APP, repo.repo_installation),
    ("GET", "/installation/repositories", INST, repo.installation_repos),
    ("GET", "/rate_limit", INST, repo.rate_limit),
    ("GET", "/users/{login}", INST, repo.get_user),
    ("GET", R, INST, repo.get_repo),
    ("GET", R + "/contents", INST, repo.get_contents),
    ("GET", R + "/contents/", INST, repo.get_contents),  # PyGithub asks for the root this way
    ("GET", R + "/contents/{path+}", INST, repo.get_contents),
    ("GET", R + "/collaborators/{user}/permission", INST, repo.collaborator_permission),
    ("GET", R + "/commits", INST, repo.list_commits),
    ("GET", R + "/commits/{ref+}/check-runs", INST, checks.list_for_ref),
    ("GET", R + "/commits/{ref+}", INST, repo.get_commit),
    ("GET", R + "/branches/{branch+}", INST, repo.get_branch),
    ("GET", R + "/git/ref/{ref+}", INST, repo.get_ref),
    ("POST", R + "/git/refs", INST, repo.create_ref),
    ("PATCH", R + "/git/refs/{ref+}", INST, repo.update_ref),
    ("DELETE", R + "/git/refs/{ref+}", INST, repo.delete_ref),
    ("GET", R + "/pulls", INST, pulls.list_pulls),
    ("POST", R + "/pulls", INST, pulls.create_pull),
    ("GET", R + "/pulls/{number}", INST, pulls.get_pull),
    ("PATCH", R + "/pulls/{number}", INST, pulls.update_pull),
    ("GET", R + "/pulls/{number}/files", INST, pulls.list_files),
    ("GET", R + "/pulls/{number}/commits", INST, pulls.list_commits),
    ("GET", R + "/labels", INST, issues.list_labels),
    ("POST", R + "/labels", INST, issues.create_label),
    ("GET", R + "/labels/{name+}", INST, issues.get_label),
    ("PATCH", R + "/labels/{name+}", INST, issues.update_label),
    ("DELETE", R + "/labels/{name+}", INST, issues.delete_label),
    ("GET", R + "/issues/comments/{id}", INST, issues.get_comment),
    ("PATCH", R + "/issues/comments/{id}", INST, issues.update_comment),
    ("DELETE", R + "/issues/comments/{id}", INST, issues.delete_comment),
    ("GET", R + "/issues/comments/{id}/reactions", INST, issues.list_reactions),
    ("POST", R + "/issues/comments/{id}/reactions", INST, issues.create_reaction),
    ("DELETE", R + "/issues/comments/{id}/reactions/{rid}", INST, issues.delete_reaction),
    ("GET", R + "/issues", INST, issues.list_issues),
    ("POST", R + "/issues", INST, issues.create_issue),
    ("GET", R + "/issues/{number}", INST, issues.get_issue_route),
    ("PATCH", R + "/issues/{number}", INST, issues.update_issue),
    ("GET", R + "/issues/{number}/labels", INST, issues.list_issue_labels),
    ("POST", R + "/issues/{number}/labels", INST, issues.add_issue_labels),
    ("PUT", R + "/issues/{number}/labels", INST, issues.set_issue_labels),
    ("DELETE", R + "/issues/{number}/labels", INST, issues.clear_issue_labels),
    ("DELETE", R + "/issues/{number}/labels/{name+}", INST, issues.remove_issue_label),
    ("GET", R + "/issues/{number}/comments", INST, issues.list_comments),
    ("POST", R + "/issues/{number}/comments", INST, issues.create_comment),
    ("POST", R + "/check-runs", INST, checks.create_check_run),
    ("GET", R + "/check-runs/{id}", INST, checks.get_check_run),
    ("PATCH", R + "/check-runs/{id}", INST, checks.update_check_run),
    ("GET", R + "/check-runs/{id}/annotations", INST, checks.list_annotations),
    ("POST", R + "/actions/workflows/{workflow}/dispatches", INST, actions.create_dispatch),
    ("GET", R + "/actions/workflows/{workflow}/runs", INST, actions.list_runs),
    ("GET", R + "/actions/runs", INST, actions.list_runs),
    ("GET", R + "/actions/runs/{id}", INST, actions.get_run),
    ("POST", R + "/actions/runs/{id}/cancel", INST, actions.cancel_run),
    ("GET", R + "/actions/runs/{id}/jobs", INST, actions.list_jobs),
    ("GET", R + "/actions/runs/{id}/artifacts", INST, actions.list_artifacts),
    ("GET", R + "/actions/artifacts/{id}/zip", INST, actions.download_artifact),
    ("GET", "/_emu/blobs/{owner}/{repo}/artifacts/{id}", ANY, actions.artifact_blob),
]

_NUMERIC = {"id", "number", "rid", "delivery_id"}
_PLACEHOLDER = re.compile(r"\{(\w+)(\+?)\}")


def _compile(template: str) -> re.Pattern[str]:
    def repl(m: re.Match[str]) -> str:
        name, greedy = m.group(1), m.group(2)
        body = r"\d+" if name in _NUMERIC else (".+" if greedy else "[^/]+")
        return f"(?P<{name}>{body})"

    return re.compile(_PLACEHOLDER.sub(repl, template))


ROUTES: list[Route] = [(m, _compile(t), cred, h) for m, t, cred, h in TABLE]
