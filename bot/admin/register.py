"""`flagbot setup`: register flagbot's GitHub App from `bot/admin/app.yml` through GitHub's manifest flow.

The flow ("Registering a GitHub App from a manifest", GitHub docs) has three steps: a browser
POSTs the manifest to `<web>/settings/apps/new` (or an organization's page), the person confirms,
GitHub redirects to the manifest's `redirect_url` with a one-time `code`, and
`POST <api>/app-manifests/{code}/conversions` trades the code (within an hour) for the App's id,
private key and webhook secret. Here a small HTTP server on 127.0.0.1 serves the page that posts
the manifest and receives the redirect; the credentials land in `<state dir>/github-app/`, every
file mode 0600, plus `flagbot.env` for systemd's `EnvironmentFile=` or `docker --env-file`.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import secrets
import sys
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import yaml

from flagbot.bot.settings import PUBLIC_API_URL, Settings
from flagbot.hooks.errors import FlagbotError, UsageError

MANIFEST = Path(__file__).with_name("app.yml")
CREDENTIALS_DIR = "github-app"
KEY_FILE, APP_FILE, ENV_FILE = "private-key.pem", "app.json", "flagbot.env"
CALLBACK = "/callback"
HTTP_TIMEOUT_S = 30


def web_url(api_url: str) -> str:
    """The web host of an API URL: api.github.com -> github.com; GHES `<host>/api/v3` -> `<host>`;
    anything else (an emulator) serves both at one address."""
    api_url = api_url.rstrip("/")
    if api_url == PUBLIC_API_URL:
        return "https://github.com"
    if api_url.endswith("/api/v3"):
        return api_url[: -len("/api/v3")]
    return api_url


def load_manifest(path: Path) -> dict[str, Any]:
    """The manifest template (`bot/admin/app.yml` unless --manifest names another)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(f"{path}: cannot read the App manifest ({exc})") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{path}: an App manifest must be a mapping")
    return data


def build_manifest(template: dict[str, Any], *, webhook_url: str, redirect_url: str,
                   name: str | None, homepage: str | None, public: bool) -> dict[str, Any]:
    """The manifest to post: the template with the webhook, callback, homepage and name filled in."""
    parts = urlsplit(webhook_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"--webhook-url {webhook_url!r}: not an http(s) URL",
                         hint="the public address GitHub posts to, e.g. https://bot.example.com/webhook")
    manifest = dict(template)
    manifest["hook_attributes"] = {**(template.get("hook_attributes") or {}), "url": webhook_url}
    manifest["redirect_url"] = redirect_url
    manifest["url"] = homepage or template.get("url") or f"{parts.scheme}://{parts.netloc}"
    if name:
        manifest["name"] = name
    if public:
        manifest["public"] = True
    return manifest


def start_page(action: str, manifest: dict[str, Any]) -> bytes:
    """The page that posts the manifest to GitHub (a button, submitted at once by a script)."""
    value = html.escape(json.dumps(manifest), quote=True)
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>flagbot setup</title></head>"
        f"<body><form id='f' method='post' action='{html.escape(action, quote=True)}'>"
        f"<input type='hidden' name='manifest' value='{value}'>"
        "<p>flagbot is about to register its GitHub App with GitHub.</p>"
        "<button type='submit'>Create the GitHub App</button></form>"
        "<script>document.getElementById('f').submit()</script></body></html>"
    ).encode()


# GitHub's one-time codes are short runs of letters and digits; anything else (a `../`, a `?`)
# would steer the conversion request to another API path.
CODE = re.compile(r"[0-9A-Za-z]{8,100}")


def convert(api_url: str, code: str) -> dict[str, Any]:
    """Trade the one-time code for the App: id, slug, pem, webhook_secret, client id and secret."""
    import requests

    if not CODE.fullmatch(code):
        raise FlagbotError(f"the redirect's code {code[:40]!r} is not a GitHub manifest code",
                           hint="run flagbot setup again and confirm the App on GitHub")
    try:
        reply = requests.post(f"{api_url.rstrip('/')}/app-manifests/{quote(code, safe='')}/conversions",
                              headers={"Accept": "application/vnd.github+json"},
                              timeout=HTTP_TIMEOUT_S)
    except requests.RequestException as exc:
        raise FlagbotError(f"{api_url}: cannot reach the API ({exc})") from exc
    if reply.status_code != 201:
        raise FlagbotError(f"{api_url}: the manifest code was refused ({reply.status_code} "
                           f"{reply.text[:200]})", hint="codes work once and for an hour; "
                           "run flagbot setup again")
    app: dict[str, Any] = reply.json()
    for key in ("id", "pem", "webhook_secret"):
        if not app.get(key):
            raise FlagbotError(f"{api_url}: the conversion reply has no {key!r}")
    return app


def write_private(path: Path, text: str) -> None:
    """Write `text` to a file only its owner can read (mode 0600 from creation, never wider)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o600)  # in case a umask or an ACL default widened it


def env_file(app: dict[str, Any], key_path: Path, api_url: str) -> str:
    """`flagbot.env`: the settings `flagbot serve` needs, for EnvironmentFile= / --env-file."""
    lines = [f"# GitHub App {app.get('slug', '')} ({app.get('html_url', '')}), written by flagbot setup",
             f"GITHUB_APP_ID={app['id']}", f"GITHUB_PRIVATE_KEY_PATH={key_path}",
             f"GITHUB_WEBHOOK_SECRET={app['webhook_secret']}"]
    if api_url != PUBLIC_API_URL:
        lines.append(f"GITHUB_API_URL={api_url}")
    return "\n".join(lines) + "\n"


def store_credentials(folder: Path, app: dict[str, Any], api_url: str) -> Path:
    """Write the App's key, its details and the env file under `folder` (0700, files 0600)."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    key_path = (folder / KEY_FILE).resolve()
    write_private(key_path, str(app["pem"]))
    details = {k: v for k, v in app.items() if k != "pem"}
    write_private(folder / APP_FILE, json.dumps(details, indent=2, sort_keys=True) + "\n")
    write_private(folder / ENV_FILE, env_file(app, key_path, api_url))
    return folder


class Flow:
    """One registration: the page to open, the expected `state`, and what the callback got."""

    def __init__(self, action: str, manifest: dict[str, Any], api_url: str, folder: Path) -> None:
        self.action = action
        self.manifest = manifest
        self.api_url = api_url
        self.folder = folder
        self.state = secrets.token_urlsafe(16)
        self.done = threading.Event()
        self.app: dict[str, Any] | None = None
        self.error: str | None = None

    def callback(self, query: dict[str, list[str]]) -> str:
        """Handle GitHub's redirect; returns the message shown in the browser."""
        if self.done.is_set():
            return "flagbot setup has finished already; this page can be closed."
        if query.get("state", [""])[0] != self.state:
            return "This redirect does not belong to this flagbot setup run (state differs); ignored."
        try:
            app = convert(self.api_url, query.get("code", [""])[0])
            store_credentials(self.folder, app, self.api_url)
        except (FlagbotError, OSError) as exc:
            self.error = str(exc)
        else:
            self.app = app
        self.done.set()
        if self.app is None:
            return f"flagbot setup failed: {self.error}"
        return (f"GitHub App {self.app.get('slug')} registered; its credentials are in "
                f"{self.folder}. Install it: {self.app.get('html_url')}/installations/new")


def server_port(server: object) -> int:
    address = getattr(server, "server_address", ("", 0))
    return int(address[1]) if isinstance(address, tuple) else 0


def make_server(flow: Flow, port: int) -> ThreadingHTTPServer:
    """The local server: `/` posts the manifest, `/callback` receives GitHub's redirect."""

    class Page(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # the redirect's query holds the one-time code: keep it out of logs

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            port = server_port(self.server)
            if self.headers.get("Host", "") not in (f"127.0.0.1:{port}", f"localhost:{port}"):
                # a page on another site that resolves its own name to 127.0.0.1 (DNS
                # rebinding) must neither read the state nor finish the flow with its code
                self.answer(421, b"this page answers only at 127.0.0.1 or localhost")
            elif parts.path == "/":
                action = f"{flow.action}?state={flow.state}"
                self.answer(200, start_page(action, flow.manifest))
            elif parts.path == CALLBACK:
                message = flow.callback(parse_qs(parts.query))
                self.answer(200, f"<!doctype html><p>{html.escape(message)}</p>".encode())
            else:
                self.answer(404, b"not found")

        def answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return ThreadingHTTPServer(("127.0.0.1", port), Page)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="flagbot setup", description=(
        "Register flagbot's GitHub App through GitHub's manifest flow (GITHUB_API_URL picks "
        "github.com, a GitHub Enterprise host or an emulator); the App's id, private key and "
        "webhook secret are stored under $FLAGBOT_STATE_DIR/github-app/ (mode 0600)."))
    p.add_argument("--webhook-url", required=True,
                   help="public URL GitHub delivers webhooks to, e.g. https://bot.example.com/webhook")
    p.add_argument("--name", default=None, help="the App's name (default: bot/admin/app.yml's, flagbot)")
    p.add_argument("--org", default=None, help="register the App for this organization")
    p.add_argument("--homepage", default=None, help="the App's homepage (default: the webhook's origin)")
    p.add_argument("--public", action="store_true", help="let other accounts install the App")
    p.add_argument("--manifest", type=Path, default=MANIFEST,
                   help="manifest template (default: the packaged bot/admin/app.yml)")
    p.add_argument("--port", type=int, default=0,
                   help="local port for the browser page and GitHub's redirect (default: any free one)")
    p.add_argument("--timeout", type=float, default=3600.0,
                   help="seconds to wait for the redirect (GitHub's codes last an hour)")
    p.add_argument("--force", action="store_true", help="replace credentials stored before")
    return p


def main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """`flagbot setup`: print the page to open, wait for GitHub's redirect, store the credentials."""
    from flagbot.bot.entry.cli import load_settings

    args = parser().parse_args(argv)
    settings: Settings = load_settings(cwd)
    folder = settings.state_dir / CREDENTIALS_DIR
    if (folder / KEY_FILE).exists() and not args.force:
        raise UsageError(f"{folder}: an App is registered already",
                         hint="use it (flagbot.env there), or pass --force to register a new one")
    web = web_url(settings.api_url)
    action = f"{web}/organizations/{args.org}/settings/apps/new" if args.org else f"{web}/settings/apps/new"
    manifest = build_manifest(load_manifest(args.manifest), webhook_url=args.webhook_url,
                              redirect_url="", name=args.name, homepage=args.homepage,
                              public=args.public)
    flow = Flow(action, manifest, settings.api_url, folder)
    try:
        server = make_server(flow, args.port)
    except OSError as exc:
        raise UsageError(f"127.0.0.1:{args.port}: cannot listen ({exc})", hint="pick another --port") from exc
    local = f"http://127.0.0.1:{server.server_address[1]}"
    manifest["redirect_url"] = local + CALLBACK
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    print(f"Open {local}/ in a browser on this machine (over SSH: forward the port) and confirm "
          f"the App on {web}.", flush=True)
    try:
        if not flow.done.wait(args.timeout):
            raise FlagbotError(f"no redirect from GitHub within {args.timeout:.0f}s",
                               hint="run flagbot setup again and confirm the App in the browser")
    finally:
        server.shutdown()
        server.server_close()
    if flow.app is None:
        raise FlagbotError(f"registration failed: {flow.error}")
    print(f"Registered GitHub App {flow.app.get('slug')} (id {flow.app['id']}); credentials in "
          f"{folder} (mode 0600).\nInstall it on repositories: "
          f"{flow.app.get('html_url')}/installations/new\nRun the server with them: "
          f"set -a; . {folder / ENV_FILE}; set +a; flagbot serve", file=sys.stdout)
    return 0
