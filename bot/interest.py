"""Which deliveries the bot acts on, as data: ingest decides before recording, without loading
any handler code (the web process stays small).

Each event maps its actions to what else the payload must show. The handlers declare the same
events and actions (`Handler.actions`; a test keeps the two equal) and apply their finer filter
in the worker, so a delivery wanted here may still be skipped there, never the reverse.
"""

from __future__ import annotations

from typing import Any

ANY = "any"
SENT_BY_PERSON = "sent by a person"  # the bot's own labels come back as webhooks too
BY_PERSON = "comment by a person"  # and so do its comments
BASE_CHANGED = "base changed"  # an edit that moved the pull request's base branch

INTEREST: dict[str, dict[str, str]] = {
    "pull_request": {"opened": ANY, "synchronize": ANY, "reopened": ANY,
                     "ready_for_review": ANY, "closed": ANY, "edited": BASE_CHANGED,
                     "labeled": SENT_BY_PERSON, "unlabeled": SENT_BY_PERSON},
    "issue_comment": {"created": BY_PERSON, "edited": BY_PERSON},
    "workflow_run": {"in_progress": ANY, "completed": ANY},
    "workflow_job": {"in_progress": ANY},
}


def is_bot(user: object) -> bool:
    """True for an App or any other bot account (a payload's `user` or `sender` object)."""
    return isinstance(user, dict) and (
        user.get("type") == "Bot" or str(user.get("login") or "").endswith("[bot]"))


def _shows(payload: dict[str, Any], need: str) -> bool:
    if need == SENT_BY_PERSON:
        sender = payload.get("sender")
        return not (isinstance(sender, dict) and sender.get("type") == "Bot")
    if need == BY_PERSON:
        comment = payload.get("comment")
        return isinstance(comment, dict) and not is_bot(comment.get("user") or {})
    if need == BASE_CHANGED:
        return "base" in (payload.get("changes") or {})
    return True


def wanted(event: str, payload: dict[str, Any]) -> bool:
    """True when some handler may act on (event, payload["action"]); no I/O."""
    needs = INTEREST.get(event)
    action = payload.get("action") if isinstance(payload, dict) else None
    if needs is None or not isinstance(action, str) or action not in needs:
        return False
    return _shows(payload, needs[action])
