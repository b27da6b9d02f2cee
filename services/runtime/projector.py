"""The projector service: folds the partition logs into read models, idempotently.

Read models of a game (all in the game's partition slot, written by one script that also
acknowledges the log entry): the view of every seat and the spectator view (the title's
``view``) and the applied version. The event feeds (each event redacted by the title's
``redact`` for a seat or for spectators) are derived from the events when read, up to the
applied version (services/runtime/feeds.py), not stored. Global read models (lobby by
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
from redis.exceptions import NoScriptError

from schemas.envelope import (
    LIFECYCLE_EVENTS,
    EventEnvelope,
    SeedRevealed,
)
from services.adapters import ended, scripts
from services.adapters.keys import CHANGES_MAXLEN, GAME_ID
from services.adapters.pipeline import send_all
from services.adapters.redis_store import EventStore, GroupReader, Settings
from services.kernel import codec as get_codec
from services.kernel import game as lifecycle
from services.kernel.decider import Title
from services.runtime.consumer import (
    READ_COUNT,
    consume_batches,
    consumer_name,
    is_connection_error,
    read_groups,
    retry_connection,
)

log = structlog.get_logger("questhall.projector")

GROUP = "projector"
STATUSES = ("lobby", "active", "finished", "abandoned")
ENDED = ("finished", "abandoned")
_LOBBY_EVENTS = tuple(e for e in LIFECYCLE_EVENTS if e is not SeedRevealed)
"""Events that change a game's lobby entry or result."""
JSON = msgspec.json.Encoder()


def lobby_note(title: Title, game: lifecycle.Game) -> str:
    """The title's one-line lobby note of ``game`` (optional hook ``lobby_note``), at most 200 characters."""
    fn = getattr(title, "lobby_note", None)
    if fn is None or game.rules is None:
        return ""
    return str(fn(game.rules))[:200]


def projection(title: Title, game: lifecycle.Game) -> list[tuple[int | None, bytes]]:
    """The views of ``game``: ``[(seat|None, JSON view envelope)]`` for every seat and the
    spectator (feeds are derived from the events when read: services/runtime/feeds.py).
    Pure: the same input gives the same bytes (what makes ``rebuild`` byte-identical).
    """
    seats: list[int | None] = [*range(len(game.seats)), None]
    return [(s, JSON.encode(lifecycle.view(title, game, s))) for s in seats]


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
        self.slow = 0
        """Games of a batch brought up to date from their stream (no usable cached state, a gap, a conflict)."""
        self.parked_entries = 0
        """Log entries parked after ``max_failures`` failed tries."""
        self.beats: dict[str, float] = {}

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve every partition log until cancelled (waits for Redis if it is not up yet)."""
        await retry_connection(self.store.check_partitions)
        readers = [GroupReader(self.r, self.keys.log(p), GROUP, self.consumer, count=READ_COUNT) for p in self.partitions]
        for rd in readers:
            await retry_connection(rd.ensure_group)
        groups = read_groups(self.r, readers, role="projector")
        log.info("projector_started", consumer=self.consumer, partitions=len(readers), reads=len(groups))
        async with anyio.create_task_group() as tg:
            for group in groups:
                tg.start_soon(self._serve, group)
            if 0 in self.partitions:  # one sweeper per deployment's partition 0 owner(s)
                tg.start_soon(self._sweep)
            task_status.started()

    async def _sweep(self) -> None:
        """Every minute: expire games never started (services/runtime/janitor.py)."""
        from services.runtime.janitor import expire_lobby, lobby_ttl

        ttl = lobby_ttl()
        while ttl > 0:
            await anyio.sleep(60)
            try:
                await expire_lobby(self.r, self.settings, ttl)
            except Exception as exc:  # noqa: BLE001 - a sweep never stops the projector
                log.warning("lobby_sweep_failed", error_type=type(exc).__name__)

    async def _serve(self, readers: list[GroupReader]) -> None:
        async def batches(got: list[tuple[GroupReader, list[tuple[str, dict, int]]]]) -> None:
            await self.apply_batches([(rd.stream, entries) for rd, entries in got])

        await consume_batches(readers, batches, service="projector", min_idle_ms=self.min_idle_ms,
                              reap_idle_ms=self.reap_idle_ms, faults=self.faults, beats=self.beats,
                              on_error=self.cache.clear, trim="groups")

    async def apply_batch(self, log_stream: str, entries: list[tuple[str, dict, int]]) -> None:
        """Project one read of a partition log (see :meth:`apply_batches`)."""
        await self.apply_batches([(log_stream, entries)])

    async def apply_batches(self, batches: list[tuple[str, list[tuple[str, dict, int]]]]) -> None:
        """Project one read of one or more partition logs: ``[(log, [(message id, fields, times delivered)])]``.

        The entries are grouped by game and coalesced: a game whose cached state is at the
        version just before its first new entry (and chains on it by hash) is projected from the
        event payloads the entries carry, with no read; the batch's projection scripts (each a
        compare-and-set on the applied version that acknowledges the game's last entry) and the
        acknowledgement of the game's earlier entries go in one pipeline (lobby and results, in
        their own slot, in one pipeline before it). A game without a usable cached state, or
        whose script answers a conflict, is brought up to date from its stream
        (:meth:`apply`). A game whose entries cannot be applied is logged and its entries stay
        pending (each failure recorded; parked after ``max_failures``); it never holds up the others.
        """
        by_game: dict[tuple[str, str], list[tuple[str, dict]]] = {}  # (log, game id): a game's entries
        for log_stream, entries in batches:
            for mid, fields, _ in entries:
                by_game.setdefault((log_stream, fields.get(b"g", b"?").decode(errors="replace")), []).append((mid, fields))
        half = "half_pipeline" in self.faults and len(by_game) > 1
        if half:  # test hook: project the batch's first half of games only, then hang (to be killed)
            by_game = dict(list(by_game.items())[:len(by_game) // 2])
        failed = await self._apply_games(by_game)
        if half:
            log.warning("fault_half_pipeline", games=len(by_game))
            await anyio.sleep_forever()
        for log_stream, entries in batches:
            done = [mid for mid, _, d in entries if d > 1 and (log_stream, mid) not in failed]
            if done:  # applied after earlier failures: their failure records go
                await self.r.hdel(self.keys.failures(log_stream), *done)

    async def _failed(self, log_stream: str, gid: str, rows: list[tuple[str, dict]], exc: Exception) -> None:
        """Record a failed try of each of a game's entries; park an entry that failed ``max_failures`` times."""
        log.error("projection_failed", log_stream=log_stream, message_id=rows[-1][0], game_id=gid[:80], exc_info=exc)
        self.cache.pop(gid, None)
        fails = self.keys.failures(log_stream)
        for mid, fields in rows:
            if await self.r.hincrby(fails, mid, 1) >= self.max_failures:
                error = f"projection failed {self.max_failures} times: {type(exc).__name__}: {exc}"[:500]
                p = self.keys.partition(gid) if GAME_ID.match(gid) else int(log_stream.rsplit(":p", 1)[-1].split("}", 1)[0])
                await self.store.park(stream=log_stream, dead=self.keys.log_dead(p), group=GROUP, msg_id=mid,
                                      payload=fields.get(b"e", b""), error=error)
                await self.r.hdel(fails, mid)
                self.parked_entries += 1
                log.error("projection_parked", log_stream=log_stream, message_id=mid, game_id=gid[:80],
                          version=fields.get(b"v", b"?").decode(errors="replace")[:20], error=error)

    async def _apply_games(self, by_game: dict[tuple[str, str], list[tuple[str, dict]]]) -> set[tuple[str, str]]:
        """Project the entries of a batch, by (log, game) (see :meth:`apply_batches`); returns the
        ``(log, message id)`` of the entries whose game failed."""
        failed: set[tuple[str, str]] = set()
        steps: list[tuple[tuple[str, str], list[str], lifecycle.Game, Any]] = []
        slow: list[tuple[str, str]] = []
        lobby: list[lifecycle.Game] = []
        stored = await self._stored_versions(by_game)
        for key, rows in by_game.items():
            log_stream, gid = key
            try:
                step = self._coalesce(gid, rows, log_stream, stored.get(gid, 0))
            except Exception:  # e.g. a payload no code can read: the stream path decides (and records it)
                self.cache.pop(gid, None)
                step = None
            if step is None:
                slow.append(key)
                continue
            after, call, lobby_changed = step
            if lobby_changed:
                lobby.append(after)
            steps.append((key, [m for m, _ in rows], after, call))
        if lobby:  # first, in their own slot: a projection is never acknowledged before its lobby entry
            for attempt in (1, 2):
                try:
                    async with self.r.pipeline(transaction=False) as pipe:
                        for game in lobby:
                            self._lobby_call(game, pipe)
                        await pipe.execute()
                    break
                except NoScriptError:  # a Redis restart or SCRIPT FLUSH: load it and send the batch again
                    if attempt == 2:
                        raise
                    await self.r.script_load(scripts.LOBBY)
        if steps:
            commands: list[tuple[Any, ...]] = []
            for (log_stream, _), mids, _, (keys, args) in steps:
                commands.append(("EVALSHA", self._project.sha, len(keys), *keys, *args))
                if len(mids) > 1:
                    commands.append(("XACK", log_stream, GROUP, *mids[:-1]))
            results = await send_all(self.r, commands)
            it = iter(results)
            for key, mids, after, _ in steps:
                gid = key[1]
                res = next(it)
                if len(mids) > 1:
                    ack = next(it)
                    if isinstance(ack, Exception) and is_connection_error(ack):
                        raise ack
                if isinstance(res, Exception):
                    if is_connection_error(res):
                        raise res
                    if isinstance(res, NoScriptError):
                        await self.r.script_load(scripts.PROJECT)
                    slow.append(key)
                    self.cache.pop(gid, None)
                    continue
                if res[0] in (b"ok", b"skip"):
                    if res[0] == b"ok":
                        await self._settle(self.cache.get(gid), after)
                    self._remember(after)
                    self.applied += 1
                    continue
                self.cache.pop(gid, None)  # another projector moved the game on, or our cache is stale
                slow.append(key)
        self.slow += len(slow)
        for key in slow:
            log_stream, gid = key
            rows = by_game[key]
            try:
                await self.apply(gid, rows[-1][1][b"t"].decode(), max(int(f[b"v"]) for _, f in rows),
                                 log_stream=log_stream, msg_id=rows[-1][0])
                if len(rows) > 1:
                    await self.r.xack(log_stream, GROUP, *[m for m, _ in rows[:-1]])
            except Exception as exc:
                if is_connection_error(exc):
                    raise
                await self._failed(log_stream, gid, rows, exc)
                failed.update((log_stream, m) for m, _ in rows)
        return failed

    async def _stored_versions(self, by_game: dict[tuple[str, str], list[tuple[str, dict]]]) -> dict[str, int]:
        """The stored version (game metadata) of each game of the batch not cached whose entries
        start at version 1, in one pipelined round trip: the new-game path of :meth:`_coalesce` is
        taken only for a game that holds those versions (an archived game's metadata is gone, and
        its log entries handed out again must not be projected back: the stream path finds
        nothing and writes nothing)."""
        def first_version(rows: list[tuple[str, dict]]) -> int | None:
            try:
                return min(int(f[b"v"]) for _, f in rows)
            except (KeyError, ValueError):  # an entry no code can read: the stream path decides (and records it)
                return None

        gids = sorted({gid for (_, gid), rows in by_game.items() if gid not in self.cache and first_version(rows) == 1})
        if not gids:
            return {}
        async with self.r.pipeline(transaction=False) as pipe:
            for gid in gids:
                pipe.hget(self.keys.game(gid, "meta"), "version")
            got = await pipe.execute()
        return {gid: int(v or 0) for gid, v in zip(gids, got, strict=True)}

    def _coalesce(self, gid: str, rows: list[tuple[str, dict]], log_stream: str, stored: int = 0
                  ) -> tuple[lifecycle.Game, tuple[list, list], bool] | None:
        """The projection of ``rows`` (one game's entries of a batch) from the cached state and the
        payloads they carry: ``(state after, (keys, args) of the script, lobby changed)``; None
        if the cache cannot be used (absent, or a gap between it and the entries). A game not in
        the cache whose entries start at version 1 starts from the empty game if its metadata
        (``stored``, read for the whole batch in one round trip) holds those versions (its
        script's compare-and-set on the applied version 0 says whether another projector was
        first), so a new game costs no read of its stream or of ``applied``."""
        game = self.cache.get(gid)
        title_name = rows[-1][1][b"t"].decode()
        if game is None:
            if stored < max(int(f[b"v"]) for _, f in rows):  # 0 unless its entries start at 1 (_stored_versions)
                return None  # not a new game, or not one the store holds (``stored``: its metadata's version)
            game = lifecycle.new_game(gid, title_name)
        codec = get_codec(title_name)
        new: list[EventEnvelope] = []
        nxt = game.version + 1
        for _, f in sorted(rows, key=lambda row: int(row[1][b"v"])):
            v = int(f[b"v"])
            if v < nxt:
                continue  # projected already (as far as this projector knows: the script checks)
            if v != nxt:
                return None  # a gap: fill it from the stream
            e = codec.decode_event(f[b"e"], game_id=gid, version=v)
            if e.prev_hash != (new[-1].hash if new else game.last_hash):
                return None
            new.append(e)
            nxt += 1
        after = lifecycle.fold(codec.title, new, game)
        return after, self._project_call(codec.title, game, after, log_stream, rows[-1][0]), \
            (any(isinstance(e.body, _LOBBY_EVENTS) for e in new) or lobby_note(codec.title, game) != lobby_note(codec.title, after))

    def _project_call(self, title: Title, before: lifecycle.Game, after: lifecycle.Game, log_stream: str,
                      msg_id: str) -> tuple[list[str], list[Any]]:
        """``(keys, args)`` of the projection script bringing a game's read models from ``before`` to ``after``."""
        k = self.keys
        gid = after.game_id
        views = projection(title, after)
        seats = [s for s, _ in views]
        done = after.status in ENDED  # an ended game's views are stored compressed (services/adapters/ended.py)
        # feeds are derived from the events (services/runtime/feeds.py): the projection that ends
        # a game deletes any feed stored before they were
        applied, view_keys, feed_keys = k.projection_keys(gid, seats, seats if done else [])
        args: list[Any] = [before.version, after.version, GROUP, msg_id, len(views), len(feed_keys),
                           *[ended.pack_view(b) if done else b for _, b in views], gid, CHANGES_MAXLEN]
        return [applied, log_stream, *view_keys, *feed_keys, k.changes(k.partition(gid))], args

    def _remember(self, game: lifecycle.Game) -> None:
        self.cache[game.game_id] = game
        self.cache.move_to_end(game.game_id)
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)

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
            keys, args = self._project_call(title, game, after, log_stream, msg_id)
            res = await self._project(keys=keys, args=args)
            tag = res[0].decode()
            if tag in ("ok", "skip"):
                if tag == "ok":
                    await self._settle(game, after)
                self._remember(after)
                self.applied += 1
                log.debug("projected", title=title.name, game_id=game_id, version=after.version)
                return tag
            self.cache.pop(game_id, None)
        raise RuntimeError(f"could not project game {game_id!r} to version {version}: kept conflicting")

    async def _settle(self, before: lifecycle.Game | None, after: lifecycle.Game) -> None:
        """Once a projection ended the game: its storage is settled (services/adapters/ended.py:
        accepted outcomes expire after ``ended_outcome_ttl`` s, the streams are packed into one
        record). Its feeds went with the projection (services/runtime/feeds.py)."""
        if after.status not in ENDED or (before is not None and before.status in ENDED):
            return
        await ended.settle(self.r, self.settings, after.game_id)

    async def _update_lobby(self, game: lifecycle.Game) -> None:
        await self._lobby_call(game, None)

    def _lobby_call(self, game: lifecycle.Game, pipe: Any) -> Any:
        """The lobby script for ``game`` (on ``pipe`` if given, else awaitable on the client)."""
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
        keys = [k.lobby_applied(game.game_id), k.lobby_game(game.game_id), k.result(game.game_id), k.lobby_index(game.title, status), *others]
        args = [game.version, game.game_id, game.created_at, result, *flat]
        if pipe is not None:
            return pipe.execute_command("EVALSHA", self._lobby.sha, len(keys), *keys, *args)
        return self._lobby(keys=keys, args=args)


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
