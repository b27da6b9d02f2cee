"""The game worker service: one title, any number of replicas sharing a consumer group.

A read of the command streams of the worker's partitions (on one Redis its partitions are
dealt among ``QUESTHALL_READ_LOOPS`` read loops, 8 by default, each reading its share in one
``XREADGROUP``; one a partition on Redis Cluster; up to 128 entries a stream) is handled as a
batch: decode every envelope and
body, group by game, load the games not in the state cache (snapshot + tail, concurrently),
``decide`` each game's commands in stream order on its in-memory state with the game's
chance, stamp the events (versions, hash chain), and send the batch's atomic append scripts
(expected version and hash, command-id idempotency, game stream, partition log, stored
outcome, XACK, push to the sender's reply inbox) and reject scripts in one pipeline, behind the
in-flight records of the commands read (no round trip of their own). On a
version conflict only that game's remaining commands are decided again on its reloaded state.
A cached game costs no round trip but its script (its seed, title and metadata are cached
with it and the script verifies version and hash). A command whose handling raised
``max_failures`` times (failures recorded in the stream's failures hash; never the delivery
count alone, which also rises when a slow replica's entries are reclaimed) is parked in the
title's dead-letter stream with a ``handling_failed`` outcome. A second handling that finds the
stored outcome pushes it again and counts a duplicate. Per-command log lines are at debug level; counters hold them
(``questhall_commands_*_total`` on ``/metrics``).

A worker contains no game rule: it only wires the kernel to the Redis adapters.
"""

from __future__ import annotations

import os
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec
import structlog
from redis.exceptions import NoScriptError

from schemas.envelope import Accepted, CommandEnvelope, CreateGame, Rejected
from services.adapters import ended, scripts
from services.adapters.keys import COMMAND_ID, GAME_ID, INBOX
from services.adapters.pipeline import send_all
from services.adapters.redis_store import ARCHIVED, EventStore, GroupReader, Settings
from services.kernel import codec as get_codec
from services.kernel import game as lifecycle
from services.kernel.chance import Chance
from services.kernel.errors import ChanceExhausted, Rejection
from services.kernel.hashing import command_hash_of, request_hash, request_hash_of
from services.kernel.registry import ENVELOPE_DECODER
from services.kernel.runner import stamp
from services.kernel.text import escape
from services.runtime.consumer import (
    READ_COUNT,
    Tracker,
    consume_batches,
    consumer_name,
    is_connection_error,
    read_groups,
    retry_connection,
)

log = structlog.get_logger("questhall.worker")

MAX_CONFLICT_RETRIES = 50
UNINDEX_MAX = 1024
"""Handled commands whose in-flight records wait for the stream's next pipeline at most."""


def now_ms() -> int:
    return int(time.time() * 1000)


class Worker:
    """The worker of one title over a set of partitions.

    ``max_failures``: recorded handling failures (exceptions) of one entry before it is parked.
    ``chance_override`` maps game ids to a fixed chance: scenario and test runners only;
    ``clock_override(game_id) -> ms`` replaces the worker's clock for the ``received_at`` it
    stamps (scenario runners let time pass with it).
    ``faults`` (test hook, e.g. ``{"hang_after_read"}``, or ``{"half_pipeline"}``: only the first
    half of a batch's pipeline is sent) makes the worker hang while it holds pending entries so
    that a test can kill it.
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
        self.conflicts = 0
        """Commands decided again after a version conflict (another replica moved the game on)."""
        self.beats: dict[str, float] = {}
        self.unindex: dict[str, list[str]] = {}
        """Per command stream: handled commands whose in-flight records are deleted with the next pipeline."""
        self.to_index: dict[str, dict[str, bytes]] = {}
        """Per command stream: in-flight records of commands just read, written first in the pipeline
        of their scripts (no round trip of their own)."""
        self.tracker = _InFlight(self)

    # -- running ----------------------------------------------------------------------------
    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve every partition until cancelled (waits for Redis if it is not up yet)."""
        await self.store_retry(self.store.check_partitions)
        readers = [GroupReader(self.r, self.keys.commands(p, self.title.name), self.group, self.consumer, count=READ_COUNT) for p in self.partitions]
        for rd in readers:
            await self.store_retry(rd.ensure_group)
        groups = read_groups(self.r, readers)
        log.info("worker_started", title=self.title.name, consumer=self.consumer, partitions=len(readers), reads=len(groups))
        async with anyio.create_task_group() as tg:
            for group in groups:
                tg.start_soon(self._serve, group)
            task_status.started()

    async def store_retry(self, fn: Any, *args: Any) -> Any:
        """Run ``fn`` until Redis answers (reconnect with capped backoff)."""
        return await retry_connection(fn, *args)

    async def _serve(self, readers: list[GroupReader]) -> None:
        async def batches(got: list[tuple[GroupReader, list[tuple[str, dict, int]]]]) -> set[tuple[str, str]]:
            return await self.handle_batches([(rd.stream, entries) for rd, entries in got])

        await consume_batches(readers, batches, service=f"worker:{self.title.name}", min_idle_ms=self.min_idle_ms,
                              reap_idle_ms=self.reap_idle_ms, faults=self.faults, beats=self.beats,
                              on_error=self._forget, trim=True, tracker=self.tracker, inflight=self.keys.inflight)

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
            gid, cid, *rest = msgspec.msgpack.decode(rec)
            out = Rejected(command_id=cid, game_id=gid, code="lost",
                           message="The command was removed from its stream before it was handled; nothing was applied.")
            tag, stored = await self.store.reject_tagged(outcome=out, stream=rd.stream, group=self.group, msg_id="",
                                                         inbox=rest[0] if rest else "")
            log.error("pending_command_lost", title=self.title.name, message_id=mid, game_id=gid, command_id=cid,
                      identified=True, outcome=type(stored).__name__ if tag == "dup" else "lost")
            answered += 1
        await self.r.hdel(index, *ids)
        return answered

    async def _failed(self, stream: str, mid: str, exc: Exception, failed: set[tuple[str, str]], **ids: Any) -> None:
        """Record why handling ``mid`` raised; the entry stays pending (reclaimed, parked after ``max_failures``)."""
        failed.add((stream, mid))
        log.error("command_handling_failed", title=self.title.name, message_id=mid, exc_info=exc, **ids)
        fails = self.keys.failures(stream)
        async with self.r.pipeline(transaction=True) as pipe:
            pipe.hset(fails, mid, f"{type(exc).__name__}: {exc}"[:500])
            pipe.hincrby(fails, f"{mid}:n", 1)
            await pipe.execute()

    async def _park(self, stream: str, mid: str, fields: dict, error: str) -> None:
        raw = fields.get(b"c", b"")
        dead = self.dead_of[stream]
        try:
            env = ENVELOPE_DECODER.decode(raw)
        except Exception:
            await self.store.park(stream=stream, dead=dead, group=self.group, msg_id=mid, payload=raw, error=error)
            log.error("command_parked", title=self.title.name, message_id=mid, error=error)
            return
        out = Rejected(command_id=env.command_id, game_id=env.game_id, code="handling_failed",
                       message="The command could not be handled and was parked for an operator.")
        await self.store.reject(outcome=out, stream=stream, group=self.group, msg_id=mid, dead=(dead, raw, error),
                                inbox=_inbox(fields))
        self.parked += 1
        log.error("command_parked", title=self.title.name, game_id=env.game_id, command_id=env.command_id, error=error)

    # -- a batch of commands ----------------------------------------------------------------
    async def handle(self, stream: str, mid: str, fields: dict) -> None:
        """Handle one command-stream entry to its one stored outcome (a batch of one)."""
        await self.handle_batch(stream, [(mid, fields, 1)])

    async def handle_batch(self, stream: str, entries: list[tuple[str, dict, int]]) -> None:
        """Handle the entries ``(message id, fields, times delivered)`` of one read of ``stream``
        (see :meth:`handle_batches`)."""
        await self.handle_batches([(stream, entries)])

    async def handle_batches(self, batches: list[tuple[str, list[tuple[str, dict, int]]]]) -> set[tuple[str, str]]:
        """Handle the entries ``(message id, fields, times delivered)`` of one read of one or
        more command streams ``[(stream, entries)]``.

        Every entry is decoded first (a malformed one is answered or parked on its own); the
        rest are grouped by game and each game's commands are decided in stream order on its
        in-memory state, then the batch's append / reject scripts go to Redis in one pipeline.
        Each script is atomic and checks the command id, the game's version and last hash, so a
        game that moved on (another replica) conflicts: only that game's remaining commands are
        decided again on its reloaded state. A connection error propagates (the entries stay
        pending); any other error of one command is recorded and leaves its entry pending.
        Returns the ``(stream, message id)`` of those left pending: the read loop keeps their
        in-flight records (so a caller is still answered ``lost`` if its entry is deleted
        behind the group's back; deleting them with the handled ones was a breaker's finding).
        """
        failed: set[tuple[str, str]] = set()
        parked: set[tuple[str, str]] = set()
        jobs: list[_Job] = []
        for stream, entries in batches:
            fails = self.keys.failures(stream)
            for mid, fields, delivered in entries:
                try:
                    if delivered > 1:  # only a redelivered entry can have recorded failures
                        last, n = await self.r.hmget(fails, [mid, f"{mid}:n"])
                        if n is not None and int(n) >= self.max_failures:
                            why = f"handling failed {int(n)} times" + (f"; last error: {last.decode()}" if last else "")
                            await self._park(stream, mid, fields, why)
                            await self.r.hdel(fails, mid, f"{mid}:n")
                            parked.add((stream, mid))
                            continue
                    job = await self._prepare(stream, mid, fields, delivered)
                except Exception as exc:
                    if is_connection_error(exc):
                        raise
                    await self._failed(stream, mid, exc, failed)
                    continue
                if job is not None:
                    jobs.append(job)
        # this batch's streams: the records other read loops of the process keep for their own
        # pipeline are theirs (taking them all here lost those of a loop between its read and its
        # pipeline, so a command of it left pending could not be answered `lost`: a breaker's finding)
        streams = frozenset(stream for stream, _ in batches)
        if jobs:
            await self._decide_batch(jobs, failed)
        left = {s: self.to_index.pop(s) for s in streams if s in self.to_index}
        if left:  # no pipeline of scripts went: only the entries left pending need their records
            keep = {s: {m: rec for m, rec in recs.items() if (s, m) in failed} for s, recs in left.items()}
            for s, recs in keep.items():
                if recs:
                    await self.r.hset(self.keys.inflight(s), mapping=recs)
        for stream, entries in batches:
            done = [mid for mid, _, d in entries if d > 1 and (stream, mid) not in failed and (stream, mid) not in parked]
            if done:  # handled after earlier failures: their error records go
                await self.r.hdel(self.keys.failures(stream), *done, *[f"{mid}:n" for mid in done])
        return failed

    async def _prepare(self, stream: str, mid: str, fields: dict, delivered: int) -> _Job | None:
        """Decode one entry; None if it was answered (refused) or parked right here."""
        raw = fields.get(b"c", b"")
        inbox = _inbox(fields)
        try:
            env: CommandEnvelope = ENVELOPE_DECODER.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            dead = self.dead_of[stream]
            ids = _readable_ids(raw)
            if ids is not None:  # parked for operators, and the caller is told under its command id
                gid, cid = ids
                out = Rejected(command_id=cid, game_id=gid, code="bad_command", message=f"The command envelope is invalid: {exc}.")
                await self.store.reject(outcome=out, stream=stream, group=self.group, msg_id=mid,
                                        dead=(dead, raw, f"undecodable envelope: {exc}"), inbox=inbox)
                log.warning("envelope_undecodable", title=self.title.name, game_id=gid, command_id=cid, error=str(exc))
                return None
            await self.store.park(stream=stream, dead=dead, group=self.group, msg_id=mid, payload=raw, error=f"undecodable envelope: {exc}")
            log.warning("envelope_undecodable", title=self.title.name, message_id=mid, error=str(exc))
            return None
        if not GAME_ID.match(env.game_id) or not COMMAND_ID.match(env.command_id):
            # No key may be named after an id that is not one (any length, any bytes): park.
            dead = self.dead_of[stream]
            await self.store.park(stream=stream, dead=dead, group=self.group, msg_id=mid, payload=raw,
                                  error="bad game id" if not GAME_ID.match(env.game_id) else "bad command id")
            log.warning("command_parked", title=self.title.name, message_id=mid, game_id=env.game_id[:80],
                        command_id=env.command_id[:80], error="bad id")
            return None
        if env.title != self.title.name or self.keys.commands(self.keys.partition(env.game_id), env.title) != stream:
            await self._refuse_now(stream, mid, env, inbox, "bad_command",
                                   f"The command for title {env.title!r} arrived on the wrong stream.")
            return None
        try:
            body = self.codec.decode_command_body(env.body)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            await self._refuse_now(stream, mid, env, inbox, "bad_command", f"The command body is invalid: {exc}.")
            return None
        return _Job(stream=stream, mid=mid, cmd=msgspec.structs.replace(env, body=body), inbox=inbox, delivered=delivered)

    async def _refuse_now(self, stream: str, mid: str, env: CommandEnvelope, inbox: str, code: str, message: str,
                          version: int = 0) -> None:
        """Store a rejection right away (not decided on a game state: no version check)."""
        out = Rejected(command_id=env.command_id, game_id=env.game_id, code=code, message=_short(message), version=version)
        tag, stored = await self.store.reject_tagged(outcome=out, stream=stream, group=self.group, msg_id=mid, inbox=inbox)
        if tag == "dup":  # handled before (a redelivery or a retry): the stored outcome was pushed again
            self.duplicates += 1
            log.debug("command_duplicate", title=self.title.name, game_id=env.game_id, command_id=env.command_id,
                      outcome=type(stored).__name__)
            return
        self.rejected += 1
        log.debug("command_rejected", title=self.title.name, game_id=env.game_id, command_id=env.command_id, code=code)

    async def _states(self, game_ids: list[str], creates: frozenset[str] | set[str] = frozenset()
                      ) -> dict[str, tuple[lifecycle.Game, bytes | None] | Exception]:
        """Each game's state and seed: from the cache, else loaded (concurrently) from Redis.

        ``creates``: games not cached whose first command of the batch is a ``CreateGame``: taken
        as not created yet (the empty game, no read; the append script's version check answers
        a conflict if the id is taken, and the retry loads it). A game that cannot be loaded maps
        to its exception: a :class:`Rejection` (a game of another title) or an error (e.g.
        ``CorruptEvent``); a connection error propagates.
        """
        out: dict[str, tuple[lifecycle.Game, bytes | None] | Exception] = {}
        missing = []
        for gid in game_ids:
            g = self.cache.get(gid)
            if g is not None:
                self.cache.move_to_end(gid)
                out[gid] = (g, self.seeds.get(gid))
            elif gid in creates:
                out[gid] = (lifecycle.new_game(gid, self.title.name), None)
            else:
                missing.append(gid)

        async def load(gid: str) -> None:
            try:
                owner, game, seed = await self.store.load_game(self.codec, gid, stop_at_other_title=True)  # one round trip
                if owner is not None and owner != self.title.name:
                    raise Rejection("wrong_title", f"Game {gid!r} is a game of another title.")
                if game.version == 0 and await self.r.exists(self.keys.game(gid, ARCHIVED)):
                    raise Rejection("game_archived", f"Game {gid!r} ended and was archived: its id is not used again "
                                    "(`questhall restore` brings the game back to be read and audited).")
                out[gid] = (game, seed if game.version > 0 else None)
                if game.version > 0 and seed is not None:  # the stored state: kept, even if only refusals follow
                    self._remember(game, seed)
            except Exception as exc:  # Rejection: the game id belongs to a game of another title
                if is_connection_error(exc):
                    raise
                out[gid] = exc

        if len(missing) == 1:
            await load(missing[0])
        elif missing:
            async with anyio.create_task_group() as tg:
                for gid in missing:
                    tg.start_soon(load, gid)
        return out

    async def _decide_batch(self, jobs: list[_Job], failed: set[tuple[str, str]]) -> None:
        by_game: dict[str, list[_Job]] = {}
        for job in jobs:
            by_game.setdefault(job.cmd.game_id, []).append(job)
        for attempt in range(MAX_CONFLICT_RETRIES):
            if not by_game:
                return
            if attempt:  # another replica moved a game on: back off a little, with jitter
                await anyio.sleep(random.uniform(0, min(0.002 * attempt, 0.05)))
            # first try: a game whose batch starts with its create is not read (see _states)
            creates = {g for g, js in by_game.items() if isinstance(js[0].cmd.body, CreateGame)} if not attempt else set()
            states = await self._states(list(by_game), creates)
            over = [g for g, st in states.items() if isinstance(st, tuple) and st[0].status in ended.ENDED]
            # a retry's first outcome may be in its packed record (services/adapters/ended.py)
            records = await ended.prime(self.r, self.keys, over) if over else {}
            plan: list[_Step] = []
            for gid, gjobs in by_game.items():
                st = states[gid]
                if isinstance(st, Rejection):
                    for job in gjobs:
                        plan.append(self._reject_step(job, st.code, st.message, None, ""))
                    continue
                if isinstance(st, Exception):
                    for job in gjobs:
                        await self._failed(job.stream, job.mid, st, failed, game_id=gid, command_id=job.cmd.command_id)
                    continue
                game, seed = st
                for job in gjobs:
                    try:
                        step = self._decide_one(job, game, seed, records)
                    except Exception as exc:
                        if is_connection_error(exc):
                            raise
                        await self._failed(job.stream, job.mid, exc, failed, game_id=gid, command_id=job.cmd.command_id)
                        continue
                    plan.append(step)
                    if step.after is not None:
                        game, seed = step.after, step.seed
            by_game = await self._run_plan(plan, failed)
        for gjobs in by_game.values():
            for job in gjobs:
                await self._refuse_now(job.stream, job.mid, job.cmd, job.inbox, "busy",
                                       "The game changed too often while the command was decided; send it again.")

    def _decide_one(self, job: _Job, game: lifecycle.Game, seed: bytes | None,
                    records: dict[str, ended.Unpacked] | None = None) -> _Step:
        """Decide one command on ``game`` (pure): the script call that stores its outcome.
        ``records``: the packed records of the batch's ended games (:func:`ended.prime`)."""
        cmd = job.cmd
        if isinstance(cmd.body, CreateGame) and game.version == 0:
            seed = os.urandom(32)  # never a remembered one: the id may be used again after data loss
        elif seed is None:
            if game.version > 0:
                # never decide (or reveal) with a made-up seed: the command fails and is parked
                raise RuntimeError(f"game {cmd.game_id!r} has events but no stored seed")
            seed = b"\0" * 32  # no game: any command but create is refused (no_such_game)
        chance = self.chance_override.get(cmd.game_id) or lifecycle.chance_for(game, seed)
        at = self.clock_override(cmd.game_id) if self.clock_override is not None else None
        # The time rides in the command: when its stream received it (the entry id's ms), the same
        # for every delivery, so a move sent in time stays in time when a worker gets to it late.
        cmd = msgspec.structs.replace(cmd, received_at=at if at is not None else received_ms(job.mid))
        first = ended.first_outcome(records or {}, cmd.game_id, cmd.command_id) if game.status in ended.ENDED else None
        if first is not None:  # an accepted command of an ended game whose stored outcome expired: that one
            return self._reject_step(job, "first_outcome", "", game.version, game.last_hash, first=first)
        try:
            bodies = lifecycle.decide(self.title, game, cmd, chance, seed)
        except ChanceExhausted as exc:  # only a fixed (scenario) chance raises it: that run's failure
            return self._reject_step(job, "chance_unhonoured", f"The scripted chance cannot be honoured: {exc}.",
                                     game.version, "", checked=False)
        except Rejection as rej:
            return self._reject_step(job, rej.code, rej.message, game.version, game.last_hash)
        data = msgspec.to_builtins(cmd)  # both hashes from one conversion
        envs = stamp(game, bodies, cmd.command_id, now_ms(), command_hash_of(data), seed)
        after = lifecycle.fold(self.title, envs, game)
        out = Accepted(command_id=cmd.command_id, game_id=cmd.game_id, version=after.version, events=len(envs),
                       head_hash=after.last_hash, request_hash=request_hash_of(data))
        keys, args = self.store.append_call(before=game, after=after, events=envs, outcome=out, stream=job.stream,
                                            group=self.group, msg_id=job.mid, seed=seed, command=cmd, inbox=job.inbox)
        return _Step(job=job, sha=self.store._append.sha, script=scripts.APPEND, keys=keys, args=args,
                     before=game, after=after, seed=seed)

    def _reject_step(self, job: _Job, code: str, message: str, version: int | None, last_hash: str,
                     *, checked: bool = True, first: Accepted | None = None) -> _Step:
        """The reject script of one command; ``checked``: stored only if the game is still at
        ``version`` / ``last_hash`` (a rule's refusal), else unconditionally. ``first``: the
        command's first outcome (of an ended game), stored and replied instead of a rejection."""
        cmd = job.cmd
        out = first or Rejected(command_id=cmd.command_id, game_id=cmd.game_id, code=code, message=_short(message),
                                version=version or 0, head_hash=last_hash, request_hash=request_hash(cmd))
        keys, args = self.store.reject_call(outcome=out, stream=job.stream, group=self.group, msg_id=job.mid,
                                            decided_at=version if checked else None, decided_hash=last_hash, inbox=job.inbox)
        return _Step(job=job, sha=self.store._reject.sha, script=scripts.REJECT, keys=keys, args=args,
                     before=None, after=None, seed=None, code=code)

    async def _run_plan(self, plan: list[_Step], failed: set[tuple[str, str]]) -> dict[str, list[_Job]]:
        """Run the plan's scripts in one pipeline; returns the jobs to decide again, by game.

        The pipeline first deletes the in-flight records of the commands handled before (by any
        read loop) and writes those of the commands just read from the plan's streams (the batch's:
        before any of their scripts runs; another read loop's stay for its own pipeline)."""
        if not plan:
            return {}
        half = "half_pipeline" in self.faults and len(plan) > 1
        unindex, self.unindex = self.unindex, {}  # the records of the commands handled before
        index = {s: self.to_index.pop(s) for s in {st.job.stream for st in plan} if s in self.to_index}
        commands: list[tuple[Any, ...]] = [("HDEL", self.keys.inflight(s), *ids) for s, ids in unindex.items()]
        for s, recs in index.items():
            commands.append(("HSET", self.keys.inflight(s), *[x for kv in recs.items() for x in kv]))
        for st in plan[:len(plan) // 2] if half else plan:
            commands.append(("EVALSHA", st.sha, len(st.keys), *st.keys, *st.args))
        results = await send_all(self.r, commands)
        for res in results[:len(unindex) + len(index)]:
            if isinstance(res, Exception) and is_connection_error(res):
                raise res
        results = results[len(unindex) + len(index):]
        if half:  # test hook: as if killed with half the batch's pipeline applied
            log.warning("fault_half_pipeline", title=self.title.name, applied=len(results), planned=len(plan))
            await anyio.sleep_forever()
        again: dict[str, list[_Job]] = {}
        snapshots: list[lifecycle.Game] = []
        missing_scripts = set()
        for st, res in zip(plan, results, strict=True):
            cmd = st.job.cmd
            gid = cmd.game_id
            if gid in again:  # an earlier command of the game did not go through: decided again
                again[gid].append(st.job)
                continue
            if isinstance(res, Exception):
                if is_connection_error(res):
                    raise res
                if isinstance(res, NoScriptError):  # SCRIPT FLUSH or a restart: load, decide again
                    missing_scripts.add(st.script)
                    self._forget(gid)
                    again[gid] = [st.job]
                    continue
                await self._failed(st.job.stream, st.job.mid, res, failed, game_id=gid, command_id=cmd.command_id)
                self._forget(gid)
                again[gid] = []  # the game's later commands were decided on this one: again
                continue
            tag = res[0].decode()
            if st.after is None:  # a rejection
                if tag == "conflict":
                    log.debug("stale_state_rejection", title=self.title.name, game_id=gid, command_id=cmd.command_id)
                    self.conflicts += 1
                    self._forget(gid)
                    again[gid] = [st.job]
                    continue
                if tag == "dup":
                    self.duplicates += 1
                    log.debug("command_duplicate", title=self.title.name, game_id=gid, command_id=cmd.command_id)
                else:
                    self.rejected += 1
                    log.debug("command_rejected", title=self.title.name, game_id=gid, command_id=cmd.command_id, code=st.code)
                continue
            if tag == "ok":
                self._remember(st.after, st.seed)
                self.handled += 1
                log.debug("command_accepted", title=self.title.name, game_id=gid, command_id=cmd.command_id,
                          version=st.after.version)
                if st.after.version // self.settings.snapshot_every > st.before.version // self.settings.snapshot_every:
                    snapshots.append(st.after)
                continue
            if tag == "dup":
                self.duplicates += 1
                log.debug("command_duplicate", title=self.title.name, game_id=gid, command_id=cmd.command_id)
                self._forget(gid)  # the state decided on assumed this command was new
                again[gid] = []
                continue
            self.conflicts += 1
            log.debug("version_conflict", title=self.title.name, game_id=gid, expected=st.before.version, actual=res[1])
            self._forget(gid)
            again[gid] = [st.job]
        for script in missing_scripts:
            await self.r.script_load(script)
        for game in snapshots:
            await self.store.save_snapshot(game)
        return {g: jobs for g, jobs in again.items() if jobs}

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
        # written first in the pipeline of the batch's scripts (Worker._run_plan), before any of
        # them runs; the records of commands that no script handled and that stay pending
        # (handling failed) are written after the batch (Worker.handle_batches)
        named = self.worker.to_index.setdefault(rd.stream, {})
        for mid, fields in entries:
            ids = _readable_ids(fields.get(b"c", b""))
            if ids is not None:  # with the sender's inbox: a "lost" answer reaches it too
                named[mid] = msgspec.msgpack.encode([*ids, _inbox(fields)])
        if not named:
            del self.worker.to_index[rd.stream]

    async def flush(self) -> None:
        index, self.worker.to_index = self.worker.to_index, {}
        for stream, recs in index.items():
            await self.worker.r.hset(self.worker.keys.inflight(stream), mapping=recs)

    async def done(self, rd: GroupReader, ids: list[str]) -> None:
        # deleted with the stream's next pipeline of scripts (no round trip of its own), or
        # when a read finds nothing; a record of a handled command is harmless meanwhile (the
        # read loop leaves out the ids left pending: handle_batches returns them)
        left = self.worker.unindex.setdefault(rd.stream, [])
        left += ids
        if len(left) >= UNINDEX_MAX:
            await self.idle(rd)

    async def idle(self, rd: GroupReader) -> None:
        ids = self.worker.unindex.pop(rd.stream, None)
        if ids:
            await self.worker.r.hdel(self.worker.keys.inflight(rd.stream), *ids)

    async def deleted(self, rd: GroupReader, ids: list[str]) -> None:
        await self.worker.answer_lost(rd, ids)


def received_ms(message_id: str | bytes) -> int:
    """The time (ms since the epoch, Redis's clock) a stream entry was added: its id's first part."""
    mid = message_id.decode() if isinstance(message_id, bytes) else message_id
    return int(mid.split("-", 1)[0])


@dataclass
class _Job:
    """One decoded command of a batch."""

    stream: str
    mid: str
    cmd: CommandEnvelope
    inbox: str
    delivered: int


@dataclass
class _Step:
    """One script call of a batch's pipeline: a command's append (``after`` set) or rejection."""

    job: _Job
    sha: str
    script: str
    keys: list[str]
    args: list[Any]
    before: lifecycle.Game | None
    after: lifecycle.Game | None
    seed: bytes | None
    code: str = ""


def _inbox(fields: dict) -> str:
    """The sender's reply inbox named by a command-stream entry (``''``: none or not a valid name)."""
    raw = fields.get(b"r")
    if not raw:
        return ""
    name = raw.decode(errors="replace")
    return name if INBOX.match(name) else ""


def _short(message: str) -> str:
    """A rejection message may echo client strings (an unknown field, a title): control characters
    escaped (services/kernel/text.py), stored for good, so capped."""
    message = escape(message)
    return message if len(message) <= 300 else message[:297] + "..."


class _Ids(msgspec.Struct):
    """The two ids of a command envelope (every other field skipped, not decoded)."""

    game_id: Any = None
    command_id: Any = None


_IDS = msgspec.msgpack.Decoder(_Ids)


def _readable_ids(raw: bytes) -> tuple[str, str] | None:
    """``(game_id, command_id)`` of an envelope (valid or not), if both are well-formed."""
    try:
        ids = _IDS.decode(raw)
    except Exception:
        return None
    gid, cid = ids.game_id, ids.command_id
    if isinstance(gid, str) and isinstance(cid, str) and GAME_ID.match(gid) and COMMAND_ID.match(cid):
        return gid, cid
    return None
