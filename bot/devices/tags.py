"""Tag dispatch: a lightweight tag `ciflow/<device>/<PR number>` at the head starts the run.

The host repository's workflow subscribes with `on: push: tags: ['ciflow/**']`, so starting a run
needs only Contents: write (no Actions: write), the workflow file comes from the tagged tree, and
each (device, PR) has one tag: a new head moves it (force, since a force-push need not descend
from the old head) and unlabelling or closing deletes it. A push of a tag to the commit it already
names starts nothing on GitHub, so asking again for the same head deletes and re-creates it.
"""

from __future__ import annotations

from collections.abc import Iterable

from flagbot.bot.devices.ids import TAG
from flagbot.bot.github import GitHubClient


def ref_of(device: str, pr: int) -> str:
    """The ref path the git refs API takes (`tags/ciflow/<device>/<pr>`)."""
    return "tags/" + TAG.format(device=device, pr=pr)


def push(client: GitHubClient, device: str, pr: int, sha: str) -> str:
    """Point the device's tag of `pr` at `sha` so that a push event fires; says what was done."""
    ref = ref_of(device, pr)
    now = client.git_ref(ref)
    if now is None:
        client.set_git_ref(ref, sha, create=True)
        return "created"
    if now == sha:
        client.delete_git_ref(ref)
        client.set_git_ref(ref, sha, create=True)
        return "re-created"
    client.set_git_ref(ref, sha, create=False)
    return "moved"


def delete(client: GitHubClient, devices: Iterable[str], pr: int) -> list[str]:
    """Delete the tags of `devices` for `pr` that exist; returns the devices whose tag went."""
    gone = []
    for device in devices:
        ref = ref_of(device, pr)
        if client.git_ref(ref) is not None and client.delete_git_ref(ref):
            gone.append(device)
    return gone
