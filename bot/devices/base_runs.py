"""What the base branch already fails: the device's last completed run on the base branch.

A pull request is not blamed for an op that fails on its base as well. The base's run is the
newest completed `flagbot / kernels (<device>)` check run on the base branch's latest commits
(runs flagbot made on commits that are now on the base branch, e.g. heads merged by
fast-forward, or ciflow runs of the branch itself); its failing ops are read from the marker
every completed run carries (`results.FAILED_MARK`), so no expired artifact is needed.
"""

from __future__ import annotations

from flagbot.bot.devices import results
from flagbot.bot.devices.plan import Device
from flagbot.bot.github import GitHubClient

BASE_COMMITS = 20  # newest commits of the base branch searched for a completed run
VERDICTS = ("success", "failure", "neutral")  # a run that reported (not cancelled or timed out)


def base_failures(client: GitHubClient, base_branch: str, device: Device) -> tuple[frozenset[str], str] | None:
    """(ops that failed, commit) of the device's last completed run on `base_branch`, or None."""
    for sha in client.branch_commits(base_branch, BASE_COMMITS):
        done = [r for r in client.check_runs(sha, device.check_name)
                if r.status == "completed" and r.conclusion in VERDICTS]
        for ref in sorted(done, key=lambda r: -r.id):
            failed = results.failed_ops(ref.summary)
            if failed is not None:
                return failed, sha
    return None
