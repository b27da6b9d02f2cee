"""The projector service: folds the partition logs into read models, idempotently.

Read models of a game (all in the game's partition slot, written by one script that also
acknowledges the log entry): the view of every seat and the spectator view (the title's
``view``), the event feed of every seat and of spectators (each event redacted by the title's
``redact``; stream ids ``<version>-0``), and the applied version. Global read models (lobby by
title and status, finished-game results) live in their own slot with their own dedupe record.

Every update names the version it brings the game to and is applied only if the stored
applied version is the one it was computed from (compare-and-set), so a redelivered, reclaimed
or raced log entry changes nothing twice, and a gap is filled from the game's stream.
``rebuild`` drops every read model and replays every game through the same code.

A log entry that cannot be applied (e.g. an event no code can read) is retried when it is
reclaimed; after ``max_failures`` failed tries (recorded in ``<log>:failures``) it is parked in
``<tag>:log-dead`` with the error (naming game and version) and acknowledged, so it is neither
retried forever nor holds up the others; the game's read models stay at the last version they
could reach (metrics ``questhall_projections_parked_total``).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import anyio
import msgspec
import structlog

from schemas.envelope import (
    LIFECYCLE_EVENTS,
    EventEnvelope,
    SeedRevealed,
)
from services.adapters import scripts
from services.adapters.keys import GAME_ID
from services.adapters.redis_store import EventStore, GroupReader, Settings
from services.kernel import codec as get_codec
from services.kernel import game as lifecycle
from services.kernel.decider import Title
from services.runtime.consumer import consume, consumer_name, is_connection_error, retry_connection

log = structlog.get_logger("questhall.projector")

GROUP = "projector"
STATUSES = ("lobby", "active", "finished", "abandoned")
_LOBBY_EVENTS = tuple(e for e in LIFECYCLE_EVENTS if e is not SeedRevealed)
"""Events that change a game's lobby entry or result."""
JSON = msgspec.json.Encoder()


def lobby_note(title: Title, game: lifecycle.Game) -> str:
    """The title's one-line lobby note of ``game`` (optional hook ``lobby_note``), at most 200 characters."""
    fn = getattr(title, "lobby_note", None)
    if fn is None or game.rules is None:
        return ""
    return str(fn(game.rules))[:200]


def projection(title: Title, game: lifecycle.Game, new_events: list[EventEnvelope]) -> tuple[list[tuple[int | None, bytes]], list[tuple[int | None, list[tuple[int, bytes]]]]]:
    """The read-model writes for ``game`` after ``new_events``: views and feed entries per seat.

    Returns ``(views, feeds)``: ``views`` = ``[(seat|None, JSON view envelope)]`` for every seat
    and the spectator; ``feeds`` = ``[(seat|None, [(version, JSON feed entry)])]``.
    Pure: the same input gives the same bytes (what makes ``rebuild`` byte-identical).
    """
    seats: list[int | None] = [*range(len(game.seats)), None]
    views = [(s, JSON.encode(lifecycle.view(title, game, s))) for s in seats]
    feeds = []
    for s in seats:
        entries = []
        for e in new_events:
            fe = lifecycle.redact(title, e, s)
            if fe is not None:
                entries.append((e.version, JSON.encode(fe)))
        feeds.append((s, entries))
    return views, feeds


class Projector:
    """Projects every partition's log (consumer group ``projector``)."""

    def __init__(self, r: Any, settings: Settings, *, consumer: str | None = None, partitions: list[int] | None = None,
                 min_idle_ms: int = 30_000, reap_idle_ms: int = 3_600_000, cache_size: int = 10_000,
                 faults: set[str] | None = None, max_failures: int = 5) -> None:
        self.r = r
        self.settings = settings
        self.keys = settings.keys
        self.store = EventStore(r, settings)
        self.consumer = consumer or consumer_name("projector")
        self.partitions = partitions if partitions is not None else list(range(settings.partitions))
        self.min_idle_ms = min_idle_ms
        self.reap_idle_ms = reap_idle_ms
        self.cache: OrderedDict[str, lifecycle.Game] = OrderedDict()
        self.cache_size = cache_size
        self.faults = faults or set()
        self._project = r.register_script(scripts.PROJECT)
        self._lobby = r.register_script(scripts.LOBBY)
        self.max_failures = max_failures
        self.applied = 0
        self.parked_entries = 0
        """Log entries parked after ``max_failures`` failed tries."""
        self.beats: dict[str, float] = {}

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve every partition log until cancelled (waits for Redis if it is not up yet)."""
        await retry_connection(self.store.check_partitions)
        readers = [GroupReader(self.r, self.keys.log(p), GROUP, self.consumer) for p in self.partitions]
        for rd in readers:
            await retry_connection(rd.ensure_group)
        log.info("projector_started", consumer=self.consumer, partitions=len(readers))
        async with anyio.create_task_group() as tg:
            for rd in readers:
                tg.start_soon(self._serve, rd)
            task_status.started()

    async def _serve(self, rd: GroupReader) -> None:
        async def handle(rd: GroupReader, mid: str, fields: dict, delivered: int) -> None:
            await self._entry_isolated(rd, mid, fields, delivered)

        await consume(rd, handle, service="projector", min_idle_ms=self.min_idle_ms, reap_idle_ms=self.reap_idle_ms,
                      faults=self.faults, beats=self.beats, on_error=self.cache.clear)

    async def _entry_isolated(self, rd: GroupReader, mid: str, fields: dict, delivered: int = 1) -> None:
        """One log entry; an entry that cannot be applied stays pending (reclaimed later) and is
        logged, and never holds up the entries read or reclaimed with it; after
        ``max_failures`` failed tries it is parked (see the module docstring)."""
        fails = self.keys.failures(rd.stream)
        try:
            await self._entry(rd, mid, fields)
            if delivered > 1:
                await self.r.hdel(fails, mid)
        except Exception as exc:
            if is_connection_error(exc):
                raise
            gid = fields.get(b"g", b"?").decode(errors="replace")
            log.exception("projection_failed", log_stream=rd.stream, message_id=mid, game_id=gid[:80])
            self.cache.pop(gid, None)
            if await self.r.hincrby(fails, mid, 1) >= self.max_failures:
                error = f"projection failed {self.max_failures} times: {type(exc).__name__}: {exc}"[:500]
                p = self.keys.partition(gid) if GAME_ID.match(gid) else int(rd.stream.rsplit(":p", 1)[-1].split("}", 1)[0])
                await self.store.park(stream=rd.stream, dead=self.keys.log_dead(p), group=GROUP, msg_id=mid,
                                      payload=fields.get(b"e", b""), error=error)
                await self.r.hdel(fails, mid)
                self.parked_entries += 1
                log.error("projection_parked", log_stream=rd.stream, message_id=mid, game_id=gid[:80],
                          version=fields.get(b"v", b"?").decode(errors="replace")[:20], error=error)

    async def _entry(self, rd: GroupReader, mid: str, fields: dict) -> None:
        gid = fields[b"g"].decode()
        title = fields[b"t"].decode()
        v = int(fields[b"v"])
        await self.apply(gid, title, v, log_stream=rd.stream, msg_id=mid)

    async def apply(self, game_id: str, title_name: str, version: int, *, log_stream: str | None = None, msg_id: str = "") -> str:
        """Bring the read models of a game up to at least ``version``; returns ``ok`` or ``skip``.

        It projects every event stored so far, not just up to ``version``: a command's events are
        appended atomically, so read models only ever show the state after a whole command (never
        one between the events of a command), and later log entries of the batch are skips.
        Acknowledges ``msg_id`` on ``log_stream`` in the same script as the writes.
        """
        codec = get_codec(title_name)
        title = codec.title
        k = self.keys
        log_stream = log_stream or k.log(k.partition(game_id))
        for _ in range(20):
            applied = int(await self.r.get(k.rm(game_id, "applied")) or 0)
            if applied >= version:
                if msg_id:
                    await self.r.xack(log_stream, GROUP, msg_id)
                return "skip"
            game = self.cache.get(game_id)
            new = await self.store.read_events(codec, game_id, applied + 1)
            # the cache only if it is the stored history (same version and the next event chains on it)
            if game is None or game.version != applied or (new and new[0].prev_hash != game.last_hash):
                game = lifecycle.fold(title, await self.store.read_events(codec, game_id, 1, applied)) if applied else lifecycle.new_game(game_id, title.name)
            after = lifecycle.fold(title, new, game)
            if any(isinstance(e.body, _LOBBY_EVENTS) for e in new) or lobby_note(title, game) != lobby_note(title, after):
                await self._update_lobby(after)
            views, feeds = projection(title, after, new)
            view_keys = [k.view(game_id, s) for s, _ in views]
            feed_keys = [k.feed(game_id, s) for s, _ in feeds]
            args: list[Any] = [applied, after.version, GROUP, msg_id, len(views), len(feeds), *[b for _, b in views]]
            for _, entries in feeds:
                args.append(len(entries))
                for v, b in entries:
                    args += [v, b]
            res = await self._project(keys=[k.rm(game_id, "applied"), log_stream, *view_keys, *feed_keys], args=args)
            tag = res[0].decode()
            if tag in ("ok", "skip"):
                self.cache[game_id] = after
                self.cache.move_to_end(game_id)
                while len(self.cache) > self.cache_size:
                    self.cache.popitem(last=False)
                self.applied += 1
                log.debug("projected", title=title.name, game_id=game_id, version=after.version)
                return tag
            self.cache.pop(game_id, None)
        raise RuntimeError(f"could not project game {game_id!r} to version {version}: kept conflicting")

    async def _update_lobby(self, game: lifecycle.Game) -> None:
        k = self.keys
        status = game.status
        names = [s.name for s in game.seats]
        fields = {
            "title": game.title, "status": status, "seats": len(game.seats),
            "taken": sum(n is not None for n in names), "names": JSON.encode(names), "created_at": game.created_at,
            "note": lobby_note(get_codec(game.title).title, game),
        }
        result = JSON.encode(game.result) if game.result is not None else b""
        others = [k.lobby_index(game.title, s) for s in STATUSES if s != status]
        flat: list[Any] = []
        for f, v in fields.items():
            flat += [f, v]
        await self._lobby(
            keys=[k.lobby_applied(game.game_id), k.lobby_game(game.game_id), k.result(game.game_id), k.lobby_index(game.title, status), *others],
            args=[game.version, game.game_id, game.created_at, result, *flat],
        )


async def rebuild(r: Any, settings: Settings) -> int:
    """Drop every read model of the namespace and replay every game; returns the games replayed.

    Run it with projectors stopped (or accept that they converge on the same bytes).
    """
    k = settings.keys
    patterns = [k.rm_pattern(p) for p in range(settings.partitions)] + [k.lobby_pattern()]
    for pat in patterns:
        batch = []
        async for key in r.scan_iter(match=pat, count=1000):
            batch.append(key)
            if len(batch) >= 500:
                await _delete(r, batch)
                batch = []
        if batch:
            await _delete(r, batch)
    proj = Projector(r, settings, consumer="rebuild")
    n = 0
    for p in range(settings.partitions):
        for gid in sorted(m.decode() for m in await r.smembers(k.games(p))):
            meta = await r.hgetall(k.game(gid, "meta"))
            if not meta:
                continue
            await proj.apply(gid, meta[b"title"].decode(), int(meta[b"version"]))
            n += 1
    return n


async def _delete(r: Any, keys: list[bytes]) -> None:
    for key in keys:  # one by one: keys of many slots (cluster-safe)
        await r.delete(key)
