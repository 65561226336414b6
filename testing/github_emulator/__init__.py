"""A GitHub REST API emulator for flagbot's bot tests: a real HTTP server that PyGithub talks to.

The contract is /work/briefs/emulator_api.md (docs/github-emulator.md for users). Quick start::

    from testing.github_emulator import Emulator, sign_body
    with Emulator(tmp_path / "gh") as emu:                  # starts on 127.0.0.1:<free port>
        repo = emu.create_repo("flagos/FlagGems", files={"README.md": "hi\\n"})
        emu.push_commit(repo, branch="feature", files={"hardwares/A_X100/x.patch": "..."})
        pr = emu.open_pull(repo, head="feature", base="main", user="alice")
        payload = emu.payload(event="pull_request", action="opened", repo=repo, number=pr["number"])
        # ... point the bot at GITHUB_API_URL=emu.url, GITHUB_APP_ID=emu.app_id,
        #     GITHUB_PRIVATE_KEY=emu.private_key_pem, deliver the payload, then:
        assert emu.issue_labels(repo, 1) == ["module: PrivateUse1"]

Additions beyond the contract:

* `Call` has two more fields: `raw_path` (as sent, percent-encoded) and `auth` ("app" for a valid
  App JWT, "installation" for a live installation token, "" otherwise). `Call.path` is
  percent-decoded (`/repos/o/r/issues/1/labels/module: PrivateUse1`).
* `emu.writes()` leaves out the App's own calls under `/app/` (the token exchange), so
  "the replay wrote nothing" holds even when the bot mints a fresh token.
* `emu.stop()` also shuts pooled keep-alive connections (a stopped emulator looks down to
  clients that talked to it); `emu.start()` after `stop()` reuses the port when free, so
  `emu.url` normally stays the same across a restart.
* `Emulator(state_dir, private_key_pem=PEM)` reuses an App key instead of generating one (RSA
  generation costs 50-250 ms on a loaded CI box); `new_private_key_pem()` makes one, so a
  module- or session-scoped fixture can share it. Also `app_id=`, `installation_id=`, `app_slug=`.
* Ids are above 2**31 (as on GitHub), so int32 assumptions fail in tests.
* `emu.inject(...)`: `path` is a regex that must match the whole decoded path (`re.fullmatch`);
  faults are consulted before routing and auth, oldest first; `body` defaults to GitHub's message
  for that failure (primary rate limit when `x-ratelimit-remaining: 0` is among the headers,
  secondary rate limit for other 403/429, "Server Error" for 5xx) so PyGithub's `GithubRetry`
  classifies them as GitHub's own.
* `emu.fork_repo(repo, "bob/name") -> EmuRepo` (a fork for `open_pull(..., head_repo=fork)`).
  Every PR head, fork or not, is also at `refs/pull/<n>/head` of the base repository, as on GitHub.
* `emu.pull(repo, n)` (the REST JSON now), `emu.change_base(repo, n, "release")` (returns the
  `changes` object for an `edited` payload: `emu.payload(..., action="edited", changes=changes)`),
  `emu.open_issue(...)`, `emu.add_comment(repo, n, user, body)` (a person's comment),
  `emu.add_label(repo, name, color, description)` and `emu.label_issue(repo, n, *names)` (labels
  set by people; not recorded as calls).
* `emu.payload(...)`: extra keyword arguments go into the payload (`before=` for synchronize,
  `changes=` for edited); `event="issue_comment"` with `body=` creates the comment (by `sender`)
  unless `comment_id=` names an existing one; `event="check_run"` takes `run_id=`;
  `event="ping"` needs no repository.
* `emu.expire_tokens()` (every issued installation token stops working: 401), `emu.bot_login`
  (`flagbot[bot]`, the author of comments and reactions made with the token), `emu.server_errors`
  (tracebacks of emulator crashes, answered 500), `emu.rate_usage()`.
* More endpoints: `GET /app/installations[/{id}]`, `GET /installation/repositories`,
  `GET /rate_limit`, `GET /users/{login}`, `GET /repos/{o}/{r}/pulls` (state/head/base filters), `PATCH /repos/{o}/{r}/pulls/{n}`,
  `DELETE /repos/{o}/{r}/issues/{n}/labels`, `GET|DELETE .../issues/comments/{id}/reactions[/{rid}]`,
  `GET .../check-runs/{id}/annotations`, `GET .../commits/{ref}`, `GET .../branches/{branch}`,
  `GET .../git/ref/{ref}`, `POST .../git/refs`, `PATCH|DELETE .../git/refs/{ref}`.
* `GET .../commits/{ref}/check-runs` honours `filter=latest` (default: newest run per name).
* Collaborator permission: the owner is `admin`; unknown users get `read` (a public repository);
  the legacy `permission` field folds maintain→write and triage→read, `role_name` is exact.
* Unlike GitHub, a push to a PR's head branch (by a test or by the bot through the clone URL)
  does not move the PR by itself: call `emu.update_pull_head(repo, n)`, as the contract says.
* The App's webhook and delivery log (`hook_log.py`): `emu.set_webhook(url, secret)`,
  `emu.deliver(event, payload)` (POSTed, signed, logged), `emu.hook_deliveries()`,
  `emu.wait_deliveries()`; `GET /app/hook/deliveries[/{id}]`, `POST .../{id}/attempts`
  (redelivered from a thread, same guid). Issues: `POST|GET .../issues`, `PATCH .../issues/{n}`.
* `python -m testing.github_emulator.webhook_fixtures` rebuilds `tests/data/webhooks/*.json`.
* `testing.webhooks.delivery_headers(event, body, secret, delivery=None)` builds the headers of a
  signed delivery.
"""

from __future__ import annotations

from testing.github_emulator.auth import new_private_key_pem
from testing.github_emulator.emulator import Emulator
from testing.github_emulator.gitstore import GitError
from testing.github_emulator.state import Call, EmuRepo
from testing.webhooks import delivery_headers, sign_body

__all__ = ["Call", "EmuRepo", "Emulator", "GitError", "delivery_headers", "new_private_key_pem", "sign_body"]
