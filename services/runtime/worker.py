"""The game worker service: one title, any number of replicas sharing a consumer group.

For each command: decode the envelope and body, load the game (state cache, else snapshot +
tail), ``decide`` with the game's chance, stamp the events (versions, hash chain), and run the
atomic append (expected version, command-id idempotency, game stream, partition log, stored
outcome, XACK, reply) -- or store a rejection. On a version conflict the game is reloaded and
the command decided again. A command whose handling raised ``max_failures`` times (failures
recorded in the stream's failures hash; never the delivery count alone, which also rises when
a slow replica's entries are reclaimed) is parked in the title's dead-letter stream with a
``handling_failed`` outcome. A second handling that finds the stored outcome replies it again
and logs ``command_duplicate``.

A worker contains no game rule: it only wires the kernel to the Redis adapters.
"""

from __future__ import annotations

import os
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import anyio
import msgspec
import structlog

from schemas.envelope import Accepted, CommandEnvelope, CreateGame, Rejected
from services.adapters.keys import COMMAND_ID, GAME_ID
from services.adapters.redis_store import EventStore, GroupReader, Settings
from services.kernel import codec as get_codec
from services.kernel import game as lifecycle
from services.kernel.chance import Chance
from services.kernel.errors import ChanceExhausted, Rejection
from services.kernel.hashing import command_hash
from services.kernel.registry import ENVELOPE_DECODER
from services.kernel.runner import stamp
from services.runtime.consumer import (
    Tracker,
    consume,
    consumer_name,
    is_connection_error,
    retry_connection,
)

log = structlog.get_logger("questhall.worker")

MAX_CONFLICT_RETRIES = 50


def now_ms() -> int:
    return int(time.time() * 1000)


class Worker:
    """The worker of one title over a set of partitions.

    ``max_failures``: recorded handling failures (exceptions) of one entry before it is parked.
    ``chance_override`` maps game ids to a fixed chance: scenario and test runners only;
    ``clock_override(game_id) -> ms`` replaces the worker's clock for the ``received_at`` it
    stamps (scenario runners let time pass with it).
    ``faults`` (test hook, e.g. ``{"hang_after_read"}``) makes the worker hang while it holds
    pending entries so that a test can kill it.
    """

    def __init__(self, r: Any, settings: Settings, title: str, *, consumer: str | None = None,
                 partitions: list[int] | None = None, min_idle_ms: int = 30_000, max_failures: int = 5,
                 reap_idle_ms: int = 3_600_000, cache_size: int = 10_000,
                 chance_override: dict[str, Chance] | None = None, faults: set[str] | None = None,
                 clock_override: Callable[[str], int | None] | None = None) -> None:
        self.r = r
        self.settings = settings
        self.keys = settings.keys
        self.codec = get_codec(title)
        self.title = self.codec.title
        self.group = f"worker:{title}"
        self.dead_of = {self.keys.commands(p, title): self.keys.dead(p, title) for p in range(settings.partitions)}
        """The dead-letter stream of each command stream (same partition, same title)."""
        self.consumer = consumer or consumer_name(f"w-{title}")
        self.partitions = partitions if partitions is not None else list(range(settings.partitions))
        self.store = EventStore(r, settings)
        self.min_idle_ms = min_idle_ms
        self.max_failures = max_failures
        self.reap_idle_ms = reap_idle_ms
        self.cache: OrderedDict[str, lifecycle.Game] = OrderedDict()
        self.seeds: dict[str, bytes] = {}
        self.cache_size = cache_size
        self.chance_override = chance_override if chance_override is not None else {}
        self.faults = faults or set()
        self.clock_override = clock_override
        self.handled = 0
        """Commands whose events were appended (metrics: ``questhall_handled_total``)."""
        self.rejected = 0
        """Rejections stored by this worker."""
        self.duplicates = 0
        """Handlings that found the stored outcome (redeliveries, client retries)."""
        self.parked = 0
        """Commands parked after recorded handling failures."""
        self.lost = 0
        """Pending commands removed from their stream behind the group's back (answered ``lost``)."""
        self.beats: dict[str, float] = {}

    # -- running ----------------------------------------------------------------------------
    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve every partition until cancelled (waits for Redis if it is not up yet)."""
        await self.store_retry(self.store.check_partitions)
        readers = [GroupReader(self.r, self.keys.commands(p, self.title.name), self.group, self.consumer) for p in self.partitions]
        for rd in readers:
            await self.store_retry(rd.ensure_group)
        log.info("worker_started", title=self.title.name, consumer=self.consumer, partitions=len(readers))
        async with anyio.create_task_group() as tg:
            for rd in readers:
                tg.start_soon(self._serve, rd)
            task_status.started()

    async def store_retry(self, fn: Any, *args: Any) -> Any:
        """Run ``fn`` until Redis answers (reconnect with capped backoff)."""
        return await retry_connection(fn, *args)

    async def _serve(self, rd: GroupReader) -> None:
        await consume(rd, self._handle_entry, service=f"worker:{self.title.name}", min_idle_ms=self.min_idle_ms,
                      reap_idle_ms=self.reap_idle_ms, faults=self.faults, beats=self.beats,
                      on_error=self._forget, trim=True, tracker=_InFlight(self), inflight=self.keys.inflight(rd.stream))

    async def answer_lost(self, rd: GroupReader, ids: list[str]) -> int:
        """Answer the callers of pending commands whose entries were trimmed or deleted.

        Each id named in the stream's in-flight index gets a stored ``lost`` rejection (unless an
        outcome exists: then that one is replied again), replied to its caller; an id the index
        does not name (read by a worker that died before indexing it) is only logged. Every id
        is logged and counted (``self.lost``, metrics ``questhall_commands_lost_total``).
        Returns how many callers were answered.
        """
        index = self.keys.inflight(rd.stream)
        raw = await self.r.hmget(index, ids)
        answered = 0
        for mid, rec in zip(ids, raw, strict=True):
            self.lost += 1
            if rec is None:
                log.error("pending_command_lost", title=self.title.name, message_id=mid, identified=False)
                continue
            gid, cid = msgspec.msgpack.decode(rec)
            out = Rejected(command_id=cid, game_id=gid, code="lost",
                           message="The command was removed from its stream before it was handled; nothing was applied.")
            tag, stored = await self.store.reject_tagged(outcome=out, stream=rd.stream, group=self.group, msg_id="")
            log.error("pending_command_lost", title=self.title.name, message_id=mid, game_id=gid, command_id=cid,
                      identified=True, outcome=type(stored).__name__ if tag == "dup" else "lost")
            answered += 1
        await self.r.hdel(index, *ids)
        return answered

    async def _handle_entry(self, rd: GroupReader, mid: str, fields: dict, delivered: int) -> None:
        fails = self.keys.failures(rd.stream)
        if delivered > 1:  # only a redelivered entry can have recorded failures
            last, n = await self.r.hmget(fails, [mid, f"{mid}:n"])
            if n is not None and int(n) >= self.max_failures:
                why = f"handling failed {int(n)} times" + (f"; last error: {last.decode()}" if last else "")
                await self._park(rd, mid, fields, why)
                await self.r.hdel(fails, mid, f"{mid}:n")
                return
        try:
            await self.handle(rd.stream, mid, fields)
            if delivered > 1:
                await self.r.hdel(fails, mid, f"{mid}:n")
        except Exception as exc:
            if is_connection_error(exc):
                raise
            log.exception("command_handling_failed", title=self.title.name, message_id=mid, delivered=delivered)
            async with self.r.pipeline(transaction=True) as pipe:
                pipe.hset(fails, mid, f"{type(exc).__name__}: {exc}"[:500])
                pipe.hincrby(fails, f"{mid}:n", 1)
                await pipe.execute()
            self._forget()

    async def _park(self, rd: GroupReader, mid: str, fields: dict, error: str) -> None:
        raw = fields.get(b"c", b"")
        dead = self.dead_of[rd.stream]
        try:
            env = ENVELOPE_DECODER.decode(raw)
        except Exception:
            await self.store.park(stream=rd.stream, dead=dead, group=self.group, msg_id=mid, payload=raw, error=error)
            log.error("command_parked", title=self.title.name, message_id=mid, error=error)
            return
        out = Rejected(command_id=env.command_id, game_id=env.game_id, code="handling_failed",
                       message="The command could not be handled and was parked for an operator.")
        await self.store.reject(outcome=out, stream=rd.stream, group=self.group, msg_id=mid, dead=(dead, raw, error))
        self.parked += 1
        log.error("command_parked", title=self.title.name, game_id=env.game_id, command_id=env.command_id, error=error)

    # -- one command ------------------------------------------------------------------------
    async def handle(self, stream: str, mid: str, fields: dict) -> None:
        """Handle one command-stream entry to its one stored outcome."""
        raw = fields.get(b"c", b"")
        try:
            env: CommandEnvelope = ENVELOPE_DECODER.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            dead = self.dead_of[stream]
            ids = _readable_ids(raw)
            if ids is not None:  # parked for operators, and the caller is told under its command id
                gid, cid = ids
                out = Rejected(command_id=cid, game_id=gid, code="bad_command", message=f"The command envelope is invalid: {exc}.")
                await self.store.reject(outcome=out, stream=stream, group=self.group, msg_id=mid,
                                        dead=(dead, raw, f"undecodable envelope: {exc}"))
                log.warning("envelope_undecodable", title=self.title.name, game_id=gid, command_id=cid, error=str(exc))
                return
            await self.store.park(stream=stream, dead=dead, group=self.group, msg_id=mid, payload=raw, error=f"undecodable envelope: {exc}")
            log.warning("envelope_undecodable", title=self.title.name, message_id=mid, error=str(exc))
            return
        if not GAME_ID.match(env.game_id) or not COMMAND_ID.match(env.command_id):
            # No key may be named after an id that is not one (any length, any bytes): park.
            dead = self.dead_of[stream]
            await self.store.park(stream=stream, dead=dead, group=self.group, msg_id=mid, payload=raw,
                                  error="bad game id" if not GAME_ID.match(env.game_id) else "bad command id")
            log.warning("command_parked", title=self.title.name, message_id=mid, game_id=env.game_id[:80],
                        command_id=env.command_id[:80], error="bad id")
            return
        blog = log.bind(title=self.title.name, game_id=env.game_id, command_id=env.command_id)

        async def refuse(code: str, message: str, version: int = 0, decided_at: int | None = None, decided_hash: str = "") -> bool:
            if len(message) > 300:  # it may echo client strings (an unknown field, a title): stored for good
                message = message[:297] + "..."
            out = Rejected(command_id=env.command_id, game_id=env.game_id, code=code, message=message, version=version)
            tag, stored = await self.store.reject_tagged(outcome=out, stream=stream, group=self.group, msg_id=mid,
                                                         decided_at=decided_at, decided_hash=decided_hash)
            if tag == "conflict":
                return False
            if tag == "dup":  # handled before (a redelivery or a retry): the stored outcome was replied again
                self.duplicates += 1
                blog.info("command_duplicate", outcome=type(stored).__name__)
                return True
            self.rejected += 1
            blog.info("command_rejected", code=code, version=version)
            return True

        if env.title != self.title.name or self.keys.commands(self.keys.partition(env.game_id), env.title) != stream:
            await refuse("bad_command", f"The command for title {env.title!r} arrived on the wrong stream.")
            return
        try:
            body = self.codec.decode_command_body(env.body)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            await refuse("bad_command", f"The command body is invalid: {exc}.")
            return
        cmd = msgspec.structs.replace(env, body=body)

        for attempt in range(MAX_CONFLICT_RETRIES):
            if attempt:  # another replica moved the game on: back off a little, with jitter
                await anyio.sleep(random.uniform(0, min(0.002 * attempt, 0.05)))
            cached = env.game_id in self.cache
            try:
                game = await self._game(env.game_id)
            except Rejection as rej:  # the game id belongs to a game of another title
                await refuse(rej.code, rej.message)
                return
            if isinstance(body, CreateGame) and game.version == 0:
                seed = os.urandom(32)  # never a remembered one: the id may be used again after data loss
            else:  # the remembered seed only with the game it was remembered with (checked by its hash)
                seed = (self.seeds.get(env.game_id) if cached else None) or await self.store.seed(env.game_id)
                if seed is None and game.version > 0:
                    # never decide (or reveal) with a made-up seed: the command fails and is parked
                    raise RuntimeError(f"game {env.game_id!r} has events but no stored seed")
                if seed is None:  # no game: any command but create is refused (no_such_game)
                    seed = b"\0" * 32
            chance = self.chance_override.get(env.game_id) or lifecycle.chance_for(game, seed)
            at = self.clock_override(env.game_id) if self.clock_override is not None else None
            cmd = msgspec.structs.replace(cmd, received_at=at if at is not None else now_ms())  # the time rides in the command
            try:
                bodies = lifecycle.decide(self.title, game, cmd, chance, seed)
            except ChanceExhausted as exc:  # only a fixed (scenario) chance raises it: that run's failure
                await refuse("chance_unhonoured", f"The scripted chance cannot be honoured: {exc}.", game.version)
                return
            except Rejection as rej:
                if await refuse(rej.code, rej.message, game.version, decided_at=game.version, decided_hash=game.last_hash):
                    return
                blog.info("stale_state_rejection", decided_at=game.version)
                self._forget(env.game_id)
                continue
            envs = stamp(game, bodies, env.command_id, now_ms(), command_hash(cmd))
            after = lifecycle.fold(self.title, envs, game)
            out = Accepted(command_id=env.command_id, game_id=env.game_id, version=after.version, events=len(envs))
            tag, val = await self.store.append(before=game, after=after, events=envs, outcome=out, stream=stream,
                                               group=self.group, msg_id=mid, seed=seed, command=cmd)
            if tag == "ok":
                self._remember(after, seed)
                self.handled += 1
                blog.info("command_accepted", version=after.version, events=len(envs))
                if after.version // self.settings.snapshot_every > game.version // self.settings.snapshot_every:
                    await self.store.save_snapshot(after)
                return
            if tag == "dup":
                self.duplicates += 1
                blog.info("command_duplicate", outcome=type(val).__name__)
                return
            blog.info("version_conflict", expected=game.version, actual=val)
            self._forget(env.game_id)
        await refuse("busy", "The game changed too often while the command was decided; send it again.")

    async def _game(self, game_id: str) -> lifecycle.Game:
        g = self.cache.get(game_id)
        if g is not None:
            self.cache.move_to_end(game_id)
            return g
        owner = await self.r.hget(self.keys.game(game_id, "meta"), "title")
        if owner is not None and owner.decode() != self.title.name:
            raise Rejection("wrong_title", f"Game {game_id!r} is a game of another title.")
        return await self.store.load(self.codec, game_id)

    def _forget(self, game_id: str | None = None) -> None:
        """Drop a game (default: every game) from the state cache, with its remembered seed."""
        if game_id is None:
            self.cache.clear()
            self.seeds.clear()
        else:
            self.cache.pop(game_id, None)
            self.seeds.pop(game_id, None)

    def _remember(self, game: lifecycle.Game, seed: bytes) -> None:
        self.cache[game.game_id] = game
        self.cache.move_to_end(game.game_id)
        self.seeds[game.game_id] = seed
        while len(self.cache) > self.cache_size:
            gid, _ = self.cache.popitem(last=False)
            self.seeds.pop(gid, None)


class _InFlight(Tracker):
    """The worker's in-flight index: ``message id -> [game id, command id]`` of each command read,
    written before any of them is handled and deleted once the batch is handled, so that a
    pending command trimmed or deleted behind the group's back can still be answered."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker

    async def read(self, rd: GroupReader, entries: list[tuple[str, dict]]) -> None:
        named = {}
        for mid, fields in entries:
            ids = _readable_ids(fields.get(b"c", b""))
            if ids is not None:
                named[mid] = msgspec.msgpack.encode(list(ids))
        if named:
            await self.worker.r.hset(self.worker.keys.inflight(rd.stream), mapping=named)

    async def done(self, rd: GroupReader, ids: list[str]) -> None:
        await self.worker.r.hdel(self.worker.keys.inflight(rd.stream), *ids)

    async def deleted(self, rd: GroupReader, ids: list[str]) -> None:
        await self.worker.answer_lost(rd, ids)


def _readable_ids(raw: bytes) -> tuple[str, str] | None:
    """``(game_id, command_id)`` of an envelope that failed validation, if both are well-formed."""
    try:
        data = msgspec.msgpack.decode(raw)
    except Exception:
        return None
    if not isinstance(data, dict):
        return None
    gid, cid = data.get("game_id"), data.get("command_id")
    if isinstance(gid, str) and isinstance(cid, str) and GAME_ID.match(gid) and COMMAND_ID.match(cid):
        return gid, cid
    return None
