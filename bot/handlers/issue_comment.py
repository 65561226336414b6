"""`issue_comment`: slash commands get an `eyes` reaction on receipt, then exactly one reply.

The reply quotes each command and says what happened or exactly why not: an unknown command
(with the known ones), wrong arguments (with the usage), a refused permission (the role needed
and the one the commenter has). Comments by bots, the App included, are never read. The reply
carries a hidden marker with the comment's id and a digest of its commands: a redelivery finds
it and does nothing, and an edit that changes the commands updates that reply in place.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from datetime import datetime
from typing import Any

from git import GitCommandError

from flagbot.bot import interest
from flagbot.bot.commands.base import CommandContext, Outcome, allows, required_role
from flagbot.bot.commands.parse import MAX_COMMANDS, Invocation, Parsed, parse
from flagbot.bot.context import Context, field_of
from flagbot.bot.github import Comment, comments
from flagbot.bot.github.markdown import clip, code, code_block
from flagbot.bot.handlers.base import Handler
from flagbot.bot.handlers.deferred import Deferred
from flagbot.bot.settings import Settings
from flagbot.bot.store.rates import Rates
from flagbot.hooks.config import CONFIG_PATH
from flagbot.hooks.errors import FlagbotError, UsageError

log = logging.getLogger(__name__)

EVENT = "issue_comment"
ACTIONS = ("created", "edited")
MARKER = "<!-- flagbot:reply"
META_RE = re.compile(r"<!-- flagbot:reply (\{.*?\}) -->")
LOGIN_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
MAX_REPLY_CHARS = 60000  # under GitHub's 65536 for a comment body
MAX_SECTION_CHARS = 8000
# Command comments from people who are not the repository's owner, members or collaborators
# answered per window (the numbers are settings): per commenter, per pull request and per
# repository, checked before any GitHub call (`admit`). A comment over a limit gets no
# reaction and no reply: a flood costs the queue a local check per comment, and the authors of
# other pull requests wait for nothing.
RATE_WINDOW_S = 600.0
# An outsider's command yields the write pacing to other work (other pull requests' labels,
# check runs and comments) for up to DEFER_FOR_S, looking again every DEFER_STEP_S.
DEFER_FOR_S = 300.0
DEFER_STEP_S = 20.0
WRITES_PER_REPLY = 2


def wants(payload: dict[str, Any]) -> bool:
    """A person's new comment holding a command, or an edit that changed its commands."""
    comment = payload.get("comment")
    if not interest.wanted(EVENT, payload) or not isinstance(comment, dict):
        return False
    body = comment.get("body")
    if not isinstance(body, str) or "/" not in body:
        return False
    parsed = parse(body)
    if not parsed.commands:
        return False
    if payload.get("action") == "edited":
        old = ((payload.get("changes") or {}).get("body") or {}).get("from")
        if isinstance(old, str) and parse(old).signature() == parsed.signature():
            return False
    return True


def digest(parsed: Parsed) -> str:
    """A short stable id of what a comment asks for."""
    raw = json.dumps([parsed.signature(), parsed.dropped], separators=(",", ":")).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def find_reply(comments: list[Comment], bot_login: str, comment_id: int) -> tuple[Comment | None, str]:
    """The bot's reply to `comment_id` and the digest it recorded (None, "" when none)."""
    for c in comments:
        if c.author != bot_login or MARKER not in c.body:
            continue
        match = META_RE.search(c.body)
        try:
            meta = json.loads(match.group(1)) if match else {}
        except ValueError:
            continue
        if isinstance(meta, dict) and meta.get("comment") == comment_id:
            return c, str(meta.get("digest") or "")
    return None, ""


def handle(ctx: Context) -> dict[str, Any]:
    """React, run each command, and post (or update) the one reply."""
    comment = field_of(ctx.payload, "comment")
    comment_id = int(field_of(comment, "id"))
    login = str(field_of(comment, "user", "login"))
    number = int(field_of(ctx.payload, "issue", "number"))
    client = ctx.client
    parsed = parse(str(comment.get("body") or ""))
    if login == client.bot_login or not parsed.commands:
        return {"skipped": "no command"}
    role = client.permission(login)
    yield_to_others(ctx, comment)
    key = digest(parsed)
    existing, answered = find_reply(client.comments(number), client.bot_login, comment_id)
    if existing is not None and answered == key:
        return {"comment": comment_id, "reply": "unchanged", "reply_id": existing.id}
    client.react(comment_id, "eyes")
    if ctx.config is None:
        problems = ctx.config_error.problems if ctx.config_error else ["unreadable"]
        sections = [(inv, Outcome(False, f"{CONFIG_PATH} on {code(ctx.default_branch)} has "
                                         "errors, so no command runs until it is fixed:\n\n"
                                         + "\n".join(f"- {code(p, 300)}" for p in problems)))
                    for inv in parsed.commands]
    else:
        # Imported here: commands reach back into the handlers' modules (summary, labels,
        # check runs), so the registry must not load while this package is importing.
        from flagbot.bot.commands.registry import COMMANDS

        cc = CommandContext(ctx, COMMANDS, login, role)
        is_pull = bool((ctx.payload.get("issue") or {}).get("pull_request"))
        sections = [(inv, run_one(cc, inv, is_pull)) for inv in parsed.commands]
    body = render(login, comment_id, key, sections, parsed.dropped)
    reply, reply_id = comments.write(client, number, existing, body)
    return {"comment": comment_id, "reply": reply, "reply_id": reply_id,
            "commands": [{"name": inv.name, "ok": out.ok, **out.facts} for inv, out in sections],
            "dropped": parsed.dropped}


# Commenters GitHub calls the repository's owner, its organization's members or its
# collaborators; everyone else shares the limits.
INSIDERS = ("OWNER", "MEMBER", "COLLABORATOR")


def yield_to_others(ctx: Context, comment: dict[str, Any]) -> None:
    """Raise Deferred when an outsider's comment would take write slots other work needs: its
    reaction and reply wait while the installation's pacing has less than half its burst to
    spare, for up to DEFER_FOR_S after the comment was written (then it is answered anyway)."""
    if comment.get("author_association") in INSIDERS:
        return
    spare = ctx.client.spare_writes()
    if spare >= ctx.settings.write_burst / 2 + WRITES_PER_REPLY:
        return
    written = trust_time(str(comment.get("created_at") or ""))
    if written is not None and time.time() - written < DEFER_FOR_S:
        raise Deferred(f"{spare:.1f} write(s) to spare; an outsider's command waits", DEFER_STEP_S)


def trust_time(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def admit(settings: Settings, rates: Rates, payload: dict[str, Any]) -> str:
    """'' when a command comment may run; else the limit it is over. From the payload alone
    (GitHub's signed `author_association`), before any GitHub call, and counted once."""
    comment = payload.get("comment") or {}
    if comment.get("author_association") in INSIDERS:
        return ""
    repo = str((payload.get("repository") or {}).get("full_name") or "").lower()
    login = str((comment.get("user") or {}).get("login") or "").lower()
    number = (payload.get("issue") or {}).get("number")
    member = f"{comment.get('id')}:{digest(parse(str(comment.get('body') or '')))}"
    for key, limit in ((f"{repo}|user|{login}", settings.commands_per_user),
                       (f"{repo}|pull|{number}", settings.commands_per_pull),
                       (f"{repo}|outsiders", settings.outsider_commands_per_repo)):
        if not rates.hit(key, limit, RATE_WINDOW_S, member=member):
            return f"more than {limit} command comments in {RATE_WINDOW_S / 60:g} minutes ({key})"
    return ""


def run_one(cc: CommandContext, inv: Invocation, is_pull: bool) -> Outcome:
    """One command's outcome; expected failures become answers, never silence."""
    command = cc.commands.get(inv.name)
    known = ", ".join(f"`/{name}`" for name in sorted(cc.commands))
    if command is None:
        return Outcome(False, f"unknown command {code('/' + inv.name, 60)}; known: {known} "
                              "(`/help` explains them)")
    assert cc.ctx.config is not None
    needed = required_role(command, cc.ctx.config["commands"])
    if not allows(cc.role, needed):
        return Outcome(False, f"refused: `/{command.name}` needs the `{needed}` permission on "
                              f"this repository; {code(cc.login, 60)} has `{cc.role}`")
    if command.needs_pull and not is_pull:
        return Outcome(False, f"`/{command.name}` works in pull request comments only")
    try:
        return command.run(cc, inv)
    except FlagbotError as exc:
        text = f"not done:\n\n{code_block(clip(str(exc), 2000))}"
        if isinstance(exc, UsageError):
            text += f"\n\nusage: `{command.usage}`, e.g. `{command.example}`"
        return Outcome(False, text)
    except GitCommandError as exc:
        log.warning("%s: /%s failed in git: %s", cc.ctx.full_name, command.name, exc)
        return Outcome(False, "not done: a git command failed:\n\n" + code_block(clip(str(exc), 2000)))


def render(login: str, comment_id: int, key: str, sections: list[tuple[Invocation, Outcome]],
           dropped: int) -> str:
    """The reply body: marker, mention, one section per command, the bound note."""
    meta = json.dumps({"comment": comment_id, "digest": key}, separators=(",", ":"))
    who = f"@{login}" if LOGIN_RE.fullmatch(login) else code(login, 60)
    lines = [f"{MARKER} {meta} -->", f"{who}:", ""]
    budget = MAX_REPLY_CHARS - 500
    for inv, out in sections:
        part = f"{'✅' if out.ok else '❌'} {code(inv.line, 200)}\n\n{out.text}\n"
        if len(part) > min(budget, MAX_SECTION_CHARS):
            part = f"{'✅' if out.ok else '❌'} {code(inv.line, 200)}\n\n(answer too long to show)\n"
        budget -= len(part)
        lines.append(part)
    if dropped:
        lines.append(f"{dropped} more command(s) not run: at most {MAX_COMMANDS} per comment.")
    return "\n".join(lines).rstrip() + "\n"


HANDLER = Handler(EVENT, frozenset(ACTIONS), wants, handle,
                  "slash commands: /help, /patch, /unpatch, /check, /ok-to-test", admit=admit)
