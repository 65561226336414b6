"""`flagbot serve`, `flagbot worker` and `flagbot replay`.

serve: gunicorn (`flagbot.bot.entry.wsgi:app`) as a child process, plus, in SQLite mode, the queue
consumer in this process. worker: a consumer only (Redis mode: any number, on any host).
`serve` and `work` take the handlers and the app as arguments (the commands pass the bot's own);
tests/bot/fake_bot.py runs them with fakes. Modules with prometheus_client are imported only
after `PROMETHEUS_MULTIPROC_DIR` is set.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flagbot.bot.entry.serving.heap import settle_heap
from flagbot.bot.settings import METRICS_ENV, Settings, private_state
from flagbot.hooks.errors import UsageError

if TYPE_CHECKING:
    from flagbot.bot.worker import Handlers, Worker

log = logging.getLogger("flagbot")
STOP_WAIT_S = 30.0
WORKER_CLASS = "flagbot.bot.entry.serving.gunicorn_worker.KeepAliveWorker"
WSGI_APP = "flagbot.bot.entry.wsgi:app"
# Builds the handlers a worker runs, given the worker's settings.
HandlersFactory = Callable[[Settings], "Handlers"]


def load_settings(cwd: str | None) -> Settings:
    """Settings from the environment; a relative state dir is taken relative to `-C PATH`."""
    settings = Settings.from_env()
    state_dir = settings.state_dir
    if not state_dir.is_absolute():
        state_dir = (Path(cwd) if cwd else Path.cwd()) / state_dir
    return settings.with_overrides(state_dir=state_dir.resolve())


def setup_logging(args: argparse.Namespace, settings: Settings) -> Settings:
    """Text or JSON lines, secrets redacted (`bot/monitoring/logs.py`), for serve and worker; returns the
    settings with the chosen format, which serve hands to gunicorn (it logs its own lines)."""
    from flagbot.bot.monitoring import logs

    settings = settings.with_overrides(log_format=args.log_format or settings.log_format)
    try:
        logs.setup(args.log_level, settings.log_format, (
            settings.webhook_secret, settings.webhook_secret_previous, settings.private_key))
    except ValueError as exc:
        raise UsageError(f"FLAGBOT_LOG_FORMAT: {exc}") from exc
    return settings


def add_worker_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by serve (its in-process consumer) and worker."""
    parser.add_argument("--worker-threads", type=int, default=None, metavar="N",
                        help="consumer threads (default: the settings' worker_threads, 2)")
    parser.add_argument("--lease-seconds", type=float, default=60.0, metavar="S",
                        help="a running delivery whose worker is silent this long is run again")
    parser.add_argument("--retry-delays", default="5,30", metavar="S,S",
                        help="back-off before each retry of a failed handler (default %(default)s)")
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--log-format", choices=("text", "json"), default=None,
                        help="text lines, or one JSON object per line (default: "
                        "FLAGBOT_LOG_FORMAT, else text)")
    parser.add_argument("--stop-timeout", type=float, default=60.0, metavar="S",
                        help="on SIGTERM, give running jobs this long to finish, then put them "
                        "back in the queue (default %(default)s)")


def bot_handlers(settings: Settings) -> Handlers:
    """The bot's own handlers, acting on GitHub as the App."""
    from flagbot.bot.dispatch import BotHandlers

    return BotHandlers(settings)


def retry_delays(text: str) -> tuple[float, ...]:
    """`--retry-delays 5,30` as seconds (UsageError otherwise)."""
    try:
        return tuple(float(x) for x in text.split(","))
    except ValueError as exc:
        raise UsageError(f"--retry-delays {text!r}: not a comma list of seconds") from exc


def make_worker(settings: Settings, args: argparse.Namespace, handlers: HandlersFactory) -> Worker:
    """A start-ready Worker for these options (imports metrics: call after the env is set)."""
    from flagbot.bot.worker import Worker

    delays = retry_delays(args.retry_delays)
    return Worker(settings, handlers(settings), threads=args.worker_threads,
                  lease_s=args.lease_seconds, retry_delays_s=delays)


def sqlite_checkpointer(settings: Settings) -> Any:
    """In SQLite mode (with background checkpoints on), a started checkpointer for the ledger
    and the queue; None with Redis."""
    if settings.redis_url or not settings.background_checkpoints:
        return None
    from flagbot.bot.store.sqlite_file import Checkpointer

    checkpointer = Checkpointer([settings.ledger_path, settings.queue_path])
    checkpointer.start()
    return checkpointer


def serving_settings(cwd: str | None) -> Settings:
    """The environment's settings for a serving process: SQLite checkpoints in the background."""
    settings = load_settings(cwd)
    return settings.with_overrides(background_checkpoints=not settings.redis_url)


def die_with_parent() -> None:
    """In the gunicorn child: get SIGTERM when `flagbot serve` dies, even by SIGKILL (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class StopSignals:
    """SIGTERM/SIGINT caught from construction on, so a signal that arrives while the worker
    starts is not the default (instant) death; `wait` blocks until one came."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.reason: list[str] = []
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.reason.append(signal.Signals(signum).name)
        self.stop.set()

    def wait(self, child: subprocess.Popen[bytes] | None = None) -> str:
        """Block until SIGTERM/SIGINT (or the child exits); return what happened."""
        while not self.stop.wait(0.5):
            if child is not None and child.poll() is not None:
                return f"gunicorn exited with status {child.returncode}"
        return self.reason[0]


def serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flagbot serve", description=(
        "Run the webhook server (gunicorn, flagbot.bot.entry.wsgi:app); without FLAGBOT_REDIS_URL it also runs "
        "the queue worker in this process."))
    parser.add_argument("--bind", default=None, help="address:port (default 0.0.0.0:$PORT, 8000)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (default 2)")
    parser.add_argument("--threads", type=int, default=4,
                        help="threads per gunicorn worker (default 4)")
    parser.add_argument("--worker-class", default=WORKER_CLASS, metavar="CLASS",
                        help="gunicorn worker class (default %(default)s: keep-alive "
                        "connections stay with their thread; 'gthread' is gunicorn's own)")
    parser.add_argument("--access-log", action="store_true", help="log every request")
    parser.add_argument("--no-worker", action="store_true",
                        help="do not run the queue worker in this process (SQLite mode)")
    add_worker_options(parser)
    return parser


def has_control_socket() -> bool:
    """Whether this gunicorn has the control socket (and so its off switch)."""
    from gunicorn.config import Config

    return "control_socket_disable" in Config().settings


def gunicorn_command(args: argparse.Namespace, bind: str, app: str) -> list[str]:
    """The gunicorn child's command line, serving the WSGI app named `app` (module:name)."""
    cmd = [sys.executable, "-m", "gunicorn", "--workers", str(args.workers), "--bind", bind,
           "--worker-class", args.worker_class, "--threads", str(args.threads),
           "--graceful-timeout", "20", "--log-level", args.log_level]
    if has_control_socket():
        # gunicorn >= 24's control socket sits in $HOME, shared by every server run there
        cmd.append("--no-control-socket")
    if args.access_log:
        cmd += ["--access-logfile", "-"]
    return [*cmd, app]


def serve_main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """`flagbot serve`: the production server (gunicorn + in-process consumer in SQLite mode)."""
    return serve(serve_parser().parse_args(argv), cwd=cwd)


def use_metrics_dir(settings: Settings) -> Settings:
    """Point prometheus_client at a fresh `<state_dir>/metrics` unless the environment named one.

    prometheus_client reads its own PROMETHEUS_MULTIPROC_DIR once, when it is first imported, so
    the variable is set in this process's environment (before that import) as well as handed to
    the gunicorn child; flagbot's own modules read it only through `Settings.metrics_dir`.
    """
    if settings.metrics_dir is not None:
        return settings
    metrics_dir = settings.state_dir / "metrics"
    shutil.rmtree(metrics_dir, ignore_errors=True)  # counters restart with the server
    metrics_dir.mkdir()
    os.environ[METRICS_ENV] = str(metrics_dir)
    return settings.with_overrides(metrics_dir=metrics_dir)


def serve(args: argparse.Namespace, *, cwd: str | None = None,
          handlers: HandlersFactory = bot_handlers, app: str = WSGI_APP) -> int:
    """Run gunicorn serving `app` and, in SQLite mode, a worker running `handlers` in process."""
    settings = setup_logging(args, serving_settings(cwd))
    bind = args.bind or f"0.0.0.0:{settings.port}"
    try:
        private_state(settings.state_dir)
    except OSError as exc:
        raise UsageError(f"state dir {settings.state_dir}: cannot create ({exc})",
                         hint="set FLAGBOT_STATE_DIR to a writable folder") from exc
    settings = use_metrics_dir(settings)
    from flagbot.bot.ingest import missing_config

    for line in missing_config(settings):
        log.warning("not configured: %s", line)
    settings = settings.with_overrides(startup_warned=True)
    signals = StopSignals()
    checkpointer = sqlite_checkpointer(settings)
    in_process = not settings.redis_url and not args.no_worker
    worker = make_worker(settings, args, handlers) if in_process else None
    child = subprocess.Popen(gunicorn_command(args, bind, app),
                             env=settings.child_environ(os.environ), cwd=cwd,
                             preexec_fn=die_with_parent)
    log.info("serving on %s (gunicorn pid %d, %d workers); queue: %s; worker: %s", bind,
             child.pid, args.workers, "Redis" if settings.redis_url else f"SQLite in {settings.state_dir}",
             "in this process" if worker else "run `flagbot worker`")
    try:
        if worker is not None:
            # not niced: the consumer holds the SQLite write lock for short moments, and a
            # low-priority holder would make the webhook workers wait (priority inversion)
            worker.start()
        settle_heap()
        why = signals.wait(child)
    finally:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                child.kill()
        if worker is not None:
            worker.stop(graceful=True, timeout_s=args.stop_timeout)
        if checkpointer is not None:
            checkpointer.stop()
    log.info("stopped: %s", why)
    if why.startswith("gunicorn"):
        raise UsageError(f"{why}; see its log above (address in use? bad --bind?)")
    return 0


def worker_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flagbot worker", description=(
        "Run queue consumer threads. With FLAGBOT_REDIS_URL every worker on every host shares "
        "the work; without it, the worker uses the SQLite queue under FLAGBOT_STATE_DIR."))
    parser.add_argument("--metrics-port", type=int, default=None,
                        help="serve this worker's Prometheus metrics on this port")
    add_worker_options(parser)
    return parser


def worker_main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """`flagbot worker`: a queue consumer (Redis mode: on any host; SQLite: on the serve host)."""
    return work(worker_parser().parse_args(argv), cwd=cwd)


def work(args: argparse.Namespace, *, cwd: str | None = None,
         handlers: HandlersFactory = bot_handlers) -> int:
    """Run a worker with `handlers` until SIGTERM/SIGINT."""
    settings = setup_logging(args, serving_settings(cwd))
    if settings.redis_url:
        from flagbot.bot.store.redis_reach import require_redis

        require_redis(settings.redis_url)
    private_state(settings.state_dir)
    signals = StopSignals()
    checkpointer = sqlite_checkpointer(settings)
    worker = make_worker(settings, args, handlers)
    if args.metrics_port:
        from prometheus_client import start_http_server

        start_http_server(args.metrics_port)
    worker.start()
    settle_heap()
    try:
        why = signals.wait()
    finally:
        worker.stop(graceful=True, timeout_s=args.stop_timeout)
        if checkpointer is not None:
            checkpointer.stop()
    log.info("worker stopped: %s", why)
    return 0


def replay_main(argv: Sequence[str] | None = None, *, cwd: str | None = None) -> int:
    """`flagbot replay`: run the handlers for one recorded event (`flagbot.bot.admin.replay`)."""
    from flagbot.bot.admin.replay import main

    result: int = main(argv, cwd=cwd)
    return result
