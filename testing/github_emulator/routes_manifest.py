"""The App manifest flow: the "new GitHub App" page a browser posts a manifest to, and
`POST /app-manifests/{code}/conversions`, which turns the one-time code into the App's credentials.

On GitHub the first step is a web page where a person confirms the registration; the emulator
confirms at once and redirects to the manifest's `redirect_url` with `code` and `state`, as GitHub
does after the click. Codes are single-use and expire after an hour ("Registering a GitHub App
from a manifest").
"""

from __future__ import annotations

import json
import re
import secrets
import time
from typing import Any
from urllib.parse import urlencode

from testing.github_emulator import rest
from testing.github_emulator.auth import new_private_key_pem
from testing.github_emulator.server import ApiError, Reply, Request, invalid, not_found

CODE_TTL_S = 3600


def _manifest(req: Request) -> dict[str, Any]:
    raw = req.body_dict().get("manifest")
    try:
        manifest = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        manifest = None
    if not isinstance(manifest, dict):
        raise ApiError(400, "manifest must be a JSON object in the form field `manifest`")
    hook = manifest.get("hook_attributes")
    if not isinstance(manifest.get("url"), str) or not manifest["url"]:
        raise invalid("url is required", "Integration", "url", "missing_field")
    if hook is not None and not (isinstance(hook, dict) and isinstance(hook.get("url"), str)):
        raise invalid("hook_attributes.url is required", "Integration", "hook_attributes", "invalid")
    return manifest


def new_app(req: Request) -> Reply:
    """POST /settings/apps/new (or /organizations/{org}/settings/apps/new), form field `manifest`:
    the registration is confirmed and the browser sent to `redirect_url?code=...&state=...`."""
    manifest = _manifest(req)
    owner = req.params.get("org") or "octocat"
    code = secrets.token_hex(10)
    req.emu.state.manifests[code] = (manifest, owner, time.time() + CODE_TTL_S)
    query = {"code": code, **({"state": req.query["state"]} if "state" in req.query else {})}
    redirect = manifest.get("redirect_url")
    if not redirect:
        return Reply(200, {"code": code, "state": req.query.get("state")})
    sep = "&" if "?" in redirect else "?"
    return Reply(302, None, {"Location": f"{redirect}{sep}{urlencode(query)}"})


def slug_of(name: str) -> str:
    """GitHub's slug of an App name: lower case, runs of other characters as one dash."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "app"


def convert(req: Request) -> Reply:
    """POST /app-manifests/{code}/conversions (no credentials): the new App with its id, pem,
    webhook secret and client secret; the code works once."""
    found = req.emu.state.manifests.pop(req.params["code"], None)
    if found is None or found[2] < time.time():
        raise not_found()
    manifest, owner, _ = found
    app_id = req.emu.state.next_id()
    name = str(manifest.get("name") or f"app-{app_id}")
    slug = slug_of(name)
    urls = req.emu.urls
    app = {
        "id": app_id, "slug": slug, "node_id": rest.node_id("App", app_id), "name": name,
        "owner": rest.user(urls, owner), "description": manifest.get("description") or "",
        "external_url": manifest["url"], "html_url": f"{urls.html}/apps/{slug}",
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "permissions": dict(manifest.get("default_permissions") or {}),
        "events": list(manifest.get("default_events") or []),
        "client_id": f"Iv1.{secrets.token_hex(8)}", "client_secret": secrets.token_hex(20),
        "webhook_secret": secrets.token_hex(20), "pem": new_private_key_pem(),
    }
    req.emu.state.registered_apps.append({**app, "manifest": manifest})
    return Reply(201, app)
