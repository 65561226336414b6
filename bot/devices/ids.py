"""The id of one kernel-check request, and what its check run's `external_id` records.

A request is one run for (pull request, head sha, device). Its id travels as a workflow input,
comes back in the run's title (`run-name` ends in `[<id>]`) and names the report artifact, so a
finished run is matched to its request without any state on the bot's host. The check run
`flagbot / kernels (<device>)` keeps `fbk1 <request> <run id or -> <ops or -> <state>`, then
optional `key=value` words: `a=2` (the second attempt, after a runner died), `p=<epoch>` (when a
runner took it), `prev=<run id>:<conclusion>` (the attempt before, for the failure text),
`m=tag` (started by a ciflow tag rather than a dispatch).

With tag dispatch the workflow cannot learn the request id (a tag push carries no inputs): the
run is matched by its tag (`ciflow/<device>/<PR>`), head sha and workflow file instead, and its
artifact is named from what the tag and the sha say (`Request.tag_artifact`).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, replace

ID_RE = re.compile(r"(\d{1,9})-([0-9a-f]{40})-([0-9a-f]{8})-([A-Za-z0-9][A-Za-z0-9_.-]{0,49})")
TITLE_RE = re.compile(r"\[([^\[\]]{1,120})\]\s*\Z")
ARTIFACT = "flagbot-kernels-{request}"
TAG_ARTIFACT = "flagbot-kernels-{device}-{pr}-{sha}"
TAG = "ciflow/{device}/{pr}"
TAG_RE = re.compile(r"ciflow/([A-Za-z0-9][A-Za-z0-9_.-]{0,49})/(\d{1,9})")
PREV_RE = re.compile(r"(\d{1,15}):([a-z_]{1,20})")
TRACK_PREFIX = "fbk1"
STATES = ("waiting", "queued", "done")  # waiting: for `/ok-to-test`
# the worker's own follow-up delivery that times out a request without a report
DEADLINE_EVENT = "flagbot_deadline"


@dataclass(frozen=True)
class Request:
    """One (PR, head sha, device) run; `nonce` tells two requests for the same key apart."""

    pr: int
    sha: str
    device: str
    nonce: str

    @classmethod
    def new(cls, pr: int, sha: str, device: str) -> Request:
        return cls(pr, sha, device, secrets.token_hex(4))

    @classmethod
    def parse(cls, text: str) -> Request | None:
        match = ID_RE.fullmatch(text)
        if match is None:
            return None
        return cls(int(match.group(1)), match.group(2), match.group(4), match.group(3))

    @classmethod
    def from_title(cls, title: str) -> Request | None:
        """The request a workflow run's title (`display_title`) names, if any."""
        match = TITLE_RE.search(title or "")
        return cls.parse(match.group(1)) if match else None

    @property
    def id(self) -> str:
        return f"{self.pr}-{self.sha}-{self.nonce}-{self.device}"

    @property
    def artifact(self) -> str:
        return ARTIFACT.format(request=self.id)

    @property
    def tag(self) -> str:
        """The ciflow tag (without `refs/tags/`) that starts this request's run in tag mode."""
        return TAG.format(device=self.device, pr=self.pr)

    @property
    def tag_artifact(self) -> str:
        return TAG_ARTIFACT.format(device=self.device, pr=self.pr, sha=self.sha)


def parse_tag(name: str) -> tuple[str, int] | None:
    """(device, PR number) of a ciflow tag name, or None."""
    match = TAG_RE.fullmatch(name or "")
    return (match.group(1), int(match.group(2))) if match else None


@dataclass(frozen=True)
class Tracked:
    """What a kernels check run records about its request."""

    request: str
    run_id: int | None = None
    ops: tuple[str, ...] = ()
    state: str = "queued"
    attempt: int = 1
    progress_at: int | None = None  # epoch seconds a runner took the run
    prev: tuple[int, str] | None = None  # (run id, conclusion) of the attempt before
    by_tag: bool = False

    def encode(self) -> str:
        words = [TRACK_PREFIX, self.request, str(self.run_id) if self.run_id else "-",
                 ",".join(self.ops) or "-", self.state]
        if self.attempt > 1:
            words.append(f"a={self.attempt}")
        if self.progress_at is not None:
            words.append(f"p={self.progress_at}")
        if self.prev is not None:
            words.append(f"prev={self.prev[0]}:{self.prev[1]}")
        if self.by_tag:
            words.append("m=tag")
        return " ".join(words)

    def but(self, **changes: object) -> Tracked:
        """A copy with `changes` (dataclasses.replace, typed loosely for brevity)."""
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def decode(cls, text: str | None) -> Tracked | None:
        parts = (text or "").split(" ")
        if not 5 <= len(parts) <= 9 or parts[0] != TRACK_PREFIX or Request.parse(parts[1]) is None \
                or parts[4] not in STATES:
            return None
        run = int(parts[2]) if parts[2].isdigit() else None
        ops = tuple(o for o in parts[3].split(",") if o and o != "-")
        extra = dict(p.split("=", 1) for p in parts[5:] if "=" in p)
        attempt = int(extra["a"]) if extra.get("a", "").isdigit() and len(extra["a"]) < 3 else 1
        progress = int(extra["p"]) if extra.get("p", "").isdigit() and len(extra["p"]) < 12 else None
        prev = PREV_RE.fullmatch(extra.get("prev", ""))
        return cls(parts[1], run, ops, parts[4], max(attempt, 1), progress,
                   (int(prev.group(1)), prev.group(2)) if prev else None, extra.get("m") == "tag")
