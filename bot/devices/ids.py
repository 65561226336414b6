"""The id of one kernel-check request, and what its check run's `external_id` records.

A request is one run for (pull request, head sha, device). Its id travels as a workflow input,
comes back in the run's title (`run-name` ends in `[<id>]`) and names the report artifact, so a
finished run is matched to its request without any state on the bot's host. The check run
`flagbot / kernels (<device>)` keeps `fbk1 <request> <run id or -> <ops or -> <state>`.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

ID_RE = re.compile(r"(\d{1,9})-([0-9a-f]{40})-([0-9a-f]{8})-([A-Za-z0-9][A-Za-z0-9_.-]{0,49})")
TITLE_RE = re.compile(r"\[([^\[\]]{1,120})\]\s*\Z")
ARTIFACT = "flagbot-kernels-{request}"
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


@dataclass(frozen=True)
class Tracked:
    """What a kernels check run records about its request."""

    request: str
    run_id: int | None = None
    ops: tuple[str, ...] = ()
    state: str = "queued"

    def encode(self) -> str:
        return " ".join([TRACK_PREFIX, self.request, str(self.run_id) if self.run_id else "-",
                         ",".join(self.ops) or "-", self.state])

    @classmethod
    def decode(cls, text: str | None) -> Tracked | None:
        parts = (text or "").split(" ")
        if len(parts) != 5 or parts[0] != TRACK_PREFIX or Request.parse(parts[1]) is None \
                or parts[4] not in STATES:
            return None
        run = int(parts[2]) if parts[2].isdigit() else None
        ops = tuple(o for o in parts[3].split(",") if o and o != "-")
        return cls(parts[1], run, ops, parts[4])
