"""The Redis event store, command bus and group reader (layer 4).

- :class:`Settings` -- where and how: ``REDIS_URL``, ``QUESTHALL_NAMESPACE`` (default ``qh``),
  ``QUESTHALL_PARTITIONS`` (default 8, fixed once a namespace holds data).
- :func:`connect` -- a redis-py asyncio client (``redis://`` single node; ``redis+cluster://``
  Redis Cluster), socket timeout longer than every blocking read.
- :class:`EventStore` -- load (snapshot + tail), read events, the atomic append / reject /
  park scripts, snapshots, outcomes.
- :class:`CommandBus` -- what a client does: put a command on its title's stream and wait for
  the one outcome of its command id.
- :class:`GroupReader` -- a consumer in a consumer group over one stream: blocking reads
  (``BLOCK`` shorter than the client's socket timeout, checked when the reader is made: a
  ValueError otherwise, also under ``python -O``; a timeout is "nothing yet"), the group recreated
  on ``NOGROUP`` (``BUSYGROUP`` accepted), pending entries reclaimed with ``XAUTOCLAIM``
  (reply indexed: 3 elements on Redis 7 / Valkey, 2 on 6.2), idle consumers without pending
  entries reaped, never one that holds pending entries.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

import msgspec
import redis.asyncio as aioredis
import structlog
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from schemas.envelope import Accepted, CommandEnvelope, EventEnvelope, Outcome, Rejected
from services.adapters import ended, scripts
from services.adapters.env import int_setting
from services.adapters.keys import Keys
from services.adapters.pipeline import send_all
from services.kernel import game as lifecycle
from services.kernel.registry import Codec, get_title

BLOCK_MS = 2000
SOCKET_TIMEOUT = 10.0

log = structlog.get_logger("questhall.bus")

OUTCOME_DECODER = msgspec.msgpack.Decoder(Accepted | Rejected)
_SNAPSHOT_DECODER = msgspec.msgpack.Decoder(lifecycle.Snapshot)
ENC = msgspec.msgpack.Encoder()
ARCHIVED = "archived"
"""The part of the key ``g:<game>:archived`` that ``questhall archive`` leaves in the game's slot
once it has deleted the rest (about 70 bytes an archived game; ``restore`` deletes it): a first
append to that id answers a conflict (the append script), and the worker's load of a game
without events refuses it (``game_archived``), so an archived game's id is never created again."""


def redacted_url(url: str) -> str:
    """``url`` without its password (``redis://user:***@host:port/db``), for messages and logs."""
    from urllib.parse import urlsplit, urlunsplit

    u = urlsplit(url)
    if not u.password:
        return url
    host = u.hostname or ""
    netloc = f"{u.username or ''}:***@{host}" + (f":{u.port}" if u.port else "")
    return urlunsplit((u.scheme, netloc, u.path, u.query, u.fragment))


@dataclass(frozen=True)
class Settings:
    """Connection and layout settings, from the environment by default."""

    url: str = field(default_factory=lambda: os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    namespace: str = field(default_factory=lambda: os.environ.get("QUESTHALL_NAMESPACE", "qh"))
    partitions: int = field(default_factory=lambda: int_setting("QUESTHALL_PARTITIONS", 8))
    """``QUESTHALL_PARTITIONS`` (services/adapters/env.py: a malformed value is a ValueError naming it)."""
    snapshot_every: int = 50
    """A worker writes a snapshot when a game's version crosses a multiple of this."""
    reply_ttl: int = 120
    """Seconds a client's reply inbox list lives after the last outcome pushed to it."""
    rejected_ttl: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_REJECTED_TTL", "86400")))
    """Seconds a rejected outcome is kept (``QUESTHALL_REJECTED_TTL``, default 24 h; 0: for good).
    Accepted outcomes are kept while their game runs."""
    ended_outcome_ttl: int = field(default_factory=lambda: int(os.environ.get("QUESTHALL_ENDED_OUTCOME_TTL", "3600")))
    """Seconds the accepted outcomes of an ended game are kept after its end
    (``QUESTHALL_ENDED_OUTCOME_TTL``, default 1 h; 0: for good). A retry after that is decided
    again and refused (the game is over): it can never be applied twice."""

    @property
    def keys(self) -> Keys:
        return Keys(self.namespace, self.partitions)


try:
    import hiredis as _hiredis
except ImportError:  # pragma: no cover - hiredis is a dependency; redis-py's own packer then
    _hiredis = None


class PackedConnection(aioredis.Connection):
    """redis-py's asyncio connection with commands packed by hiredis (C) instead of redis-py's
    Python packer, which was the worker's and projector's largest single cost (a script call
    carries 20 to 40 arguments). Same bytes on the wire; an argument hiredis cannot pack
    (``None``, ``bool``) goes to redis-py's packer, which refuses it as before (``DataError``)."""

    def pack_command(self, *args: Any) -> list[bytes]:
        if _hiredis is None:
            return super().pack_command(*args)
        first = args[0]
        if isinstance(first, str):
            args = (*first.encode().split(), *args[1:])  # "CONFIG GET" is two arguments
        elif b" " in first:
            args = (*first.split(), *args[1:])
        try:
            return [_hiredis.pack_command(args)]
        except TypeError:
            return super().pack_command(*args)


def connect(url: str, *, max_connections: int = 4096, client_name: str | None = None, pool_wait: float = 20.0) -> Any:
    """An asyncio Redis client for ``url`` (``redis+cluster://host:port`` for Redis Cluster).

    ``max_connections``: the pool's bound (per node). On a single Redis the pool is a
    ``BlockingConnectionPool``: a caller beyond the bound waits (up to ``pool_wait`` s, then
    redis-py's ``ConnectionError("No connection available.")``, see :func:`pool_exhausted`) for a free
    connection instead of opening one, so a client process that passes a small bound keeps a
    constant number of connections however many commands it has in flight (waiting callers
    hold none: see :mod:`services.adapters.inbox`). A service needs one connection per
    partition loop (blocking reads) plus a few. ``client_name``: ``CLIENT SETNAME`` of every
    connection (to count them).
    """
    common: dict[str, Any] = dict(socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=5.0, health_check_interval=15,
                                  max_connections=max_connections)
    if client_name:
        common["client_name"] = client_name
    if url.startswith("redis+cluster://"):
        from redis.asyncio.cluster import RedisCluster

        return RedisCluster.from_url("redis://" + url[len("redis+cluster://"):], **common)
    pool = aioredis.BlockingConnectionPool.from_url(url, timeout=pool_wait, retry=_reconnect_once(), **common)
    if pool.connection_class is aioredis.Connection:  # not for unix sockets or TLS
        pool.connection_class = PackedConnection
    return aioredis.Redis.from_pool(pool)


def _reconnect_once() -> Any:
    """A pooled connection's retry policy: a command that fails with a ``ConnectionError`` (the
    connection died, e.g. it lived through a Redis restart: "Connection closed by server.") is
    sent once more on a fresh connection; timeouts are not retried. Safe for every command the
    services send: a repeated command append or outcome script answers by its command id and
    version, an XADD of a command is deduplicated by its id, XACK and the read-model
    compare-and-set are idempotent, and a blocking pop whose answer was lost falls back to the
    stored outcome (services/adapters/inbox.py)."""
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff
    from redis.exceptions import ConnectionError as RConn

    return Retry(NoBackoff(), 1, supported_errors=(RConn,))


def pool_exhausted(exc: BaseException) -> bool:
    """True if ``exc`` is a blocking pool's refusal after its wait: every connection was in use."""
    from redis.exceptions import ConnectionError as RConn

    return isinstance(exc, RConn) and str(exc).startswith("No connection available")


def decode_outcome(data: bytes) -> Outcome:
    """Decode a stored outcome (msgpack)."""
    return OUTCOME_DECODER.decode(data)


class EventStore:
    """Game streams, snapshots, outcomes and the atomic scripts, for one namespace."""

    def __init__(self, r: Any, settings: Settings) -> None:
        self.r = r
        self.settings = settings
        self.keys = settings.keys
        self._append = r.register_script(scripts.APPEND)
        self._reject = r.register_script(scripts.REJECT)
        self._park = r.register_script(scripts.PARK)

    async def check_partitions(self) -> None:
        """Record the partition count on first use; refuse a different one later (RuntimeError)."""
        await self.r.set(self.keys.config, self.settings.partitions, nx=True)
        stored = int(await self.r.get(self.keys.config))
        if stored != self.settings.partitions:
            raise RuntimeError(
                f"namespace {self.settings.namespace!r} was created with {stored} partitions, "
                f"not {self.settings.partitions}: set QUESTHALL_PARTITIONS={stored}"
            )

    async def read_events(self, codec: Codec, game_id: str, start: int = 1, end: int | None = None) -> list[EventEnvelope]:
        """Events ``start..end`` (inclusive) of a game, decoded. Raises CorruptEvent."""
        out: list[EventEnvelope] = []
        lo = f"{start}-0"
        hi = f"{end}-0" if end is not None else "+"
        while True:
            batch = await ended.event_rows(self.r, self.keys, game_id, lo, hi, count=500)
            for mid, fields in batch:
                v = int(mid.split(b"-")[0])
                out.append(codec.decode_event(fields[b"e"], game_id=game_id, version=v))
            if len(batch) < 500:
                return out
            lo = "(" + batch[-1][0].decode()

    async def read_snapshot(self, codec: Codec, game_id: str) -> lifecycle.Game | None:
        """The stored snapshot if it was written by code of this state type and rules version
        (its fingerprint is :func:`~services.kernel.game.snapshot_fingerprint`), else None."""
        raw = await self.r.get(self.keys.game(game_id, "snap"))
        return self._snapshot(codec, raw) if raw is not None else None

    @staticmethod
    def _snapshot(codec: Codec, raw: bytes) -> lifecycle.Game | None:
        try:
            snap = _SNAPSHOT_DECODER.decode(raw)
            if snap.fingerprint != lifecycle.snapshot_fingerprint(codec.title):
                return None  # another state type or rules version: ignored, never mixed in
            return msgspec.msgpack.decode(snap.game, type=lifecycle.Game[codec.title.state_type])
        except (msgspec.ValidationError, msgspec.DecodeError):
            return None  # e.g. the bare format of older code

    async def load(self, codec: Codec, game_id: str) -> lifecycle.Game:
        """The game's state: latest snapshot plus the events after it (empty game if none).

        A snapshot is a cache, used only if its fingerprint is this code's and it is of the
        stored history (its last hash is the stored event's at its version); one that is not is
        ignored and rewritten from the full replay. Raises CorruptEvent.
        """
        return (await self.load_game(codec, game_id))[1]

    async def load_game(self, codec: Codec, game_id: str, *, stop_at_other_title: bool = False
                        ) -> tuple[str | None, lifecycle.Game, bytes | None]:
        """``(title named by the game's metadata or None, state, secret seed or None)`` of a game:
        its metadata title, snapshot and first ``snapshot_every + 1`` events in one pipeline, then
        its seed (a game not created yet: one round trip; a game of up to ``snapshot_every``
        events: two; a longer one reads the tail after its snapshot too). The state as :meth:`load` says. Raises CorruptEvent. ``stop_at_other_title``:
        a game whose metadata names another title than ``codec``'s is not decoded (its events
        are not of this codec): ``(that title, an empty game, None)``."""
        title = codec.title
        k = self.keys
        first = self.settings.snapshot_every + 1
        # the reads in the order they had as single commands: title, snapshot, events, then (a
        # round trip later, only for a game that has events) the seed, so a create racing this
        # load is seen whole or not at all; a game not created yet (a load's common case: its
        # create) costs one round trip
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.hget(k.game(game_id, "meta"), "title")
            pipe.get(k.game(game_id, "snap"))
            pipe.xrange(k.game(game_id, "events"), "1-0", "+", count=first)
            pipe.exists(ended.key(k, game_id))  # after the events: an ended game's streams may be packed
            owner, snap_raw, head, packed = await pipe.execute()
        if not head and packed:
            head = await ended.rows_from_packed(self.r, k, game_id, head, 1, first, first)
        if stop_at_other_title and owner is not None and owner.decode() != title.name:
            return owner.decode(), lifecycle.new_game(game_id, title.name), None
        seed_raw = await self.r.hget(k.game(game_id, "secret"), "seed") if (head or snap_raw is not None) else None
        head_events = [codec.decode_event(f[b"e"], game_id=game_id, version=int(mid.split(b"-")[0])) for mid, f in head]
        game = lifecycle.new_game(game_id, title.name)
        cached = self._snapshot(codec, snap_raw) if snap_raw is not None else None
        if cached is not None and cached.version > 0:
            at = ([e for e in head_events if e.version == cached.version] if cached.version <= len(head_events)
                  else await self.read_events(codec, game_id, cached.version, cached.version))
            if at and at[0].hash == cached.last_hash:
                game = cached
        # game stream ids are the versions 1, 2, ...: the head is events 1..len(head). Never read
        # past it unless it was cut at ``first`` (the seed was read for the events read here)
        tail = head_events[game.version:]
        if len(head) == first:
            tail += await self.read_events(codec, game_id, start=max(game.version, len(head_events)) + 1)
        after = lifecycle.fold(title, tail, game)
        if snap_raw is not None and game.version == 0 and after.version > 0:
            await self.save_snapshot(after)  # the ignored snapshot is rewritten by this code
        return (owner.decode() if owner is not None else None), after, (bytes.fromhex(seed_raw.decode()) if seed_raw else None)

    async def read_commands(self, codec: Codec, game_id: str) -> list[tuple[int, int, CommandEnvelope]]:
        """The accepted commands of a game that appended events: ``(version before, version after, envelope)``."""
        rows = await ended.command_rows(self.r, self.keys, game_id)
        dec = msgspec.msgpack.Decoder(CommandEnvelope[codec.command_union])
        return [(int(f[b"from"]), int(mid.split(b"-")[0]), dec.decode(f[b"c"])) for mid, f in rows]

    async def seed(self, game_id: str) -> bytes | None:
        """The game's secret seed (worker side only), or None for a game not created yet."""
        raw = await self.r.hget(self.keys.game(game_id, "secret"), "seed")
        return bytes.fromhex(raw.decode()) if raw else None

    async def save_snapshot(self, game: lifecycle.Game) -> None:
        """Store ``game`` as the snapshot, with this code's fingerprint of its title."""
        fp = lifecycle.snapshot_fingerprint(get_title(game.title))
        snap = lifecycle.Snapshot(fingerprint=fp, game=msgspec.msgpack.encode(game))
        await self.r.set(self.keys.game(game.game_id, "snap"), msgspec.msgpack.encode(snap))

    async def outcome(self, game_id: str, command_id: str) -> Outcome | None:
        """The stored outcome of a command id, else the one its ended game's packed record gives back."""
        raw = await ended.outcome_bytes(self.r, self.keys, game_id, command_id)
        return decode_outcome(raw) if raw is not None else None

    def append_call(self, *, before: lifecycle.Game, after: lifecycle.Game, events: list[EventEnvelope],
                    outcome: Accepted, stream: str, group: str, msg_id: str, seed: bytes | None,
                    command: CommandEnvelope, inbox: str = "") -> tuple[list[str], list[Any]]:
        """``(keys, args)`` of the append script for one accepted command (see :meth:`append`)."""
        gid = before.game_id
        k = self.keys
        p = k.partition(gid)
        g = k.game_prefix(gid)
        keys = [g + "meta", g + "events", k.log(p), k.outcome(gid, outcome.command_id),
                stream, k.inbox(p, inbox or "-"), k.games(p), g + "secret", g + "commands", g + ARCHIVED]
        args = [before.version, group, msg_id, ENC.encode(outcome), gid, after.last_hash, after.status,
                after.title, self.settings.reply_ttl if inbox else 0, seed.hex() if (seed and before.version == 0) else "",
                ENC.encode(command), before.last_hash, *[ENC.encode(e) for e in events]]
        return keys, args

    @staticmethod
    def append_result(res: Any) -> tuple[str, Any]:
        """The append script's answer: ``("ok", version)``, ``("dup", outcome)`` or ``("conflict", version)``
        (version 0 for the first append to the id of an archived game: the script answers ``archived``)."""
        tag = res[0].decode()
        if tag == "dup":
            return tag, decode_outcome(res[1])
        return tag, 0 if res[1] == b"archived" else int(res[1])

    async def append(self, *, before: lifecycle.Game, after: lifecycle.Game, events: list[EventEnvelope],
                     outcome: Accepted, stream: str, group: str, msg_id: str, seed: bytes | None,
                     command: CommandEnvelope, inbox: str = "") -> tuple[str, Any]:
        """The atomic append. Returns ``("ok", version)``, ``("dup", outcome)`` or ``("conflict", version)``.

        Checks the outcome record (idempotency) and the expected version first; then appends
        the events to the game stream and the partition log, records the accepted ``command``
        in the game's command stream (id = the version it brought the game to; for audits),
        updates metadata, stores the outcome, acknowledges ``msg_id`` and pushes the outcome to
        the sender's reply ``inbox`` (``''`` = none) -- all in one script.
        """
        keys, args = self.append_call(before=before, after=after, events=events, outcome=outcome, stream=stream,
                                      group=group, msg_id=msg_id, seed=seed, command=command, inbox=inbox)
        return self.append_result(await self._append(keys=keys, args=args))

    def reject_call(self, *, outcome: Outcome, stream: str, group: str, msg_id: str, decided_at: int | None,
                    decided_hash: str, inbox: str = "") -> tuple[list[str], list[Any]]:
        """``(keys, args)`` of the reject script for a command on its game's own partition stream."""
        k = self.keys
        p = k.partition(outcome.game_id)
        keys = [k.outcome(outcome.game_id, outcome.command_id), stream, k.inbox(p, inbox or "-"), k.dead(p, "none"),
                k.game(outcome.game_id, "meta")]
        args = [group, msg_id, ENC.encode(outcome), self.settings.reply_ttl if inbox else 0, b"", "",
                "" if decided_at is None else decided_at, decided_hash, self.settings.rejected_ttl]
        return keys, args

    async def reject(self, *, outcome: Rejected, stream: str, group: str, msg_id: str,
                     dead: tuple[str, bytes, str] | None = None, decided_at: int | None = None,
                     decided_hash: str = "", inbox: str = "") -> Outcome | None:
        """Store a rejection (unless an outcome exists), acknowledge and push it to the sender's
        reply ``inbox`` (``''`` = none); returns the stored outcome, or None on a conflict (see
        :meth:`reject_tagged`)."""
        return (await self.reject_tagged(outcome=outcome, stream=stream, group=group, msg_id=msg_id, dead=dead,
                                         decided_at=decided_at, decided_hash=decided_hash, inbox=inbox))[1]

    async def reject_tagged(self, *, outcome: Rejected, stream: str, group: str, msg_id: str,
                            dead: tuple[str, bytes, str] | None = None, decided_at: int | None = None,
                            decided_hash: str = "", inbox: str = "") -> tuple[str, Outcome | None]:
        """Store a rejection (unless an outcome exists), acknowledge and push it to the sender's
        reply ``inbox`` (``''`` = none). Returns ``("ok", outcome)`` (stored now), ``("dup", the
        outcome stored before)`` or ``("conflict", None)``.

        ``dead``: ``(dead-letter stream, payload, error)`` to park the command as well.
        ``decided_at``, ``decided_hash``: the game version and last hash the rule refused it on; if
        the game is not there any more, nothing is written and None is returned (decide again).
        """
        k = self.keys
        p = k.partition(outcome.game_id)
        dl_key, payload, err = dead if dead else (k.dead(p, "none"), b"", "")
        # An entry that arrived on another partition's stream (a misrouted or forged command):
        # the script may only touch keys of the game's slot (Redis Cluster), so it gets a
        # stand-in stream of that slot and no message id, and the entry is acknowledged after.
        ack_stream, ack_later = stream, ""
        if not stream.startswith(k.tag(p) + ":"):
            ack_later, stream, msg_id = msg_id, k.commands(p, "_misrouted"), ""
            dl_key = k.dead(p, dl_key.rsplit(":dead:", 1)[-1])
        res = await self._reject(
            keys=[k.outcome(outcome.game_id, outcome.command_id), stream, k.inbox(p, inbox or "-"), dl_key,
                  k.game(outcome.game_id, "meta")],
            args=[group, msg_id, ENC.encode(outcome), self.settings.reply_ttl if inbox else 0, payload, err,
                  "" if decided_at is None else decided_at, decided_hash, self.settings.rejected_ttl],
        )
        if res[0] == b"conflict":
            return "conflict", None
        if ack_later:
            await self.r.xack(ack_stream, group, ack_later)
        return res[0].decode(), decode_outcome(res[1])

    async def park(self, *, stream: str, dead: str, group: str, msg_id: str, payload: bytes, error: str) -> None:
        """Dead-letter an undecodable entry and acknowledge it."""
        await self._park(keys=[stream, dead], args=[group, msg_id, payload, error])


SEND_BATCH = 512
"""Commands one pipeline of the bus's sender carries at most."""


class CommandBus:
    """Client side of the bus: submit a command and wait for its one outcome.

    Owns the process's reply :class:`~services.adapters.inbox.Inbox` (keep one bus per
    process): a waiting caller holds a future, not a Redis connection. Sends are batched: a
    command sent while the process's previous send is on its way waits for it and goes with
    every other command that came meanwhile in one pipeline (``XADD`` each, up to
    :data:`SEND_BATCH` a round trip), so a process with many commands in flight pays one round
    trip for many of them, and one alone is sent at once.
    """

    def __init__(self, r: Any, settings: Settings) -> None:
        from services.adapters.inbox import Inbox

        self.r = r
        self.settings = settings
        self.keys = settings.keys
        self.inbox = Inbox(r, self.keys)
        self._queue: list[tuple[str, dict, asyncio.Future]] = []
        self._sender: asyncio.Task | None = None
        self.sent_batches = 0
        """Round trips the sender made (a counter; ``sent / sent_batches`` is the batch size)."""
        self.sent = 0
        """Commands the sender put on their streams."""

    async def send(self, envelope: CommandEnvelope) -> None:
        """Put ``envelope`` (body a Struct) on its title's command stream of its partition,
        naming this process's inbox (the outcome is pushed there). Raises what ``XADD`` raised
        (a connection error: nothing may have been sent; send again with the same command id).
        A cancelled caller's command may still be sent."""
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._enqueue(envelope, fut, lambda: fut.done() or fut.set_result(None))
        await fut

    def _enqueue(self, envelope: CommandEnvelope, fut: asyncio.Future, sent: Any) -> None:
        """Queue ``envelope`` for the sender (encoded here: an encoding error, e.g. OverflowError,
        raises now and nothing is queued). If its XADD fails, ``fut`` gets the error; else
        ``sent()`` (if any) is called once it is on its stream, unless ``fut`` was cancelled."""
        p = self.keys.partition(envelope.game_id)
        self._queue.append((self.keys.commands(p, envelope.title), ENC.encode(envelope), fut, sent))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send_queued())

    async def _send_queued(self) -> None:
        """Send every queued command, a pipeline per round trip, until the queue is empty."""
        inbox = self.inbox.name
        while self._queue:
            batch, self._queue = self._queue[:SEND_BATCH], self._queue[SEND_BATCH:]
            try:
                results = await send_all(self.r, [("XADD", stream, "*", "c", c, "r", inbox) for stream, c, *_ in batch])
            except BaseException as exc:  # noqa: BLE001 - handed to every sender of the batch
                for _, _, fut, _ in batch:
                    if not fut.done():
                        fut.set_exception(exc if isinstance(exc, Exception) else RedisConnectionError("send cancelled"))
                if not isinstance(exc, Exception):
                    for _, _, fut, _ in self._queue:
                        if not fut.done():
                            fut.set_exception(RedisConnectionError("send cancelled"))
                    self._queue = []
                    raise
                continue
            self.sent_batches += 1
            self.sent += len(batch)
            for (_, _, fut, sent), res in zip(batch, results, strict=True):
                if isinstance(res, Exception):
                    if not fut.done():
                        fut.set_exception(res)
                    continue
                if sent is not None and not fut.cancelled():
                    try:
                        sent()
                    except Exception:  # noqa: BLE001 - one caller's callback must not stop the others' sends
                        log.exception("sent_callback_failed")

    async def aclose(self) -> None:
        """Stop the process's inbox reader (before the client is closed: closing the pool under
        a blocked reader would read as a lost connection, ``inbox_unavailable``)."""
        await self.inbox.aclose()

    async def wait(self, game_id: str, command_id: str, timeout: float = 30.0) -> Outcome | None:
        """Wait up to ``timeout`` s for the outcome of ``command_id`` (sent by anyone); None if none came."""
        fut = self.inbox.expect(game_id, command_id)
        try:
            raw = await self.r.get(self.keys.outcome(game_id, command_id))
            if raw is not None:
                return decode_outcome(raw)
            return await self._until(fut, game_id, command_id, timeout)
        finally:
            self.inbox.forget(game_id, command_id, fut)

    async def submit(self, envelope: CommandEnvelope, timeout: float = 30.0, *, sent: Any = None) -> Outcome | None:
        """Send and wait. A retry with the same command id returns the first outcome. ``sent()``:
        called once the command is on its stream, before the wait (the gateway's socket sends
        a seat's next command then, in order, while this one waits)."""
        fut = self.inbox.expect(envelope.game_id, envelope.command_id)  # before sending: no reply can be missed
        try:
            # the outcome's own future carries the send's error too (one future and one wake-up a
            # command fewer than awaiting the send first)
            self._enqueue(envelope, fut, sent)
            return await self._until(fut, envelope.game_id, envelope.command_id, timeout)
        finally:
            self.inbox.forget(envelope.game_id, envelope.command_id, fut)

    async def _until(self, fut: asyncio.Future, game_id: str, command_id: str, timeout: float) -> Outcome | None:
        # the waiter's own future (one per caller): a timer resolves it with None (cheaper than wait_for)
        timer = asyncio.get_running_loop().call_later(timeout, _expire, fut)
        try:
            out = await fut
        finally:
            timer.cancel()
        if out is not None:
            return out
        try:
            raw = await self.r.get(self.keys.outcome(game_id, command_id))
        except (RedisConnectionError, RedisTimeoutError):  # e.g. a pooled connection a restart broke
            return None  # no outcome known: the caller sends again (same command id)
        return decode_outcome(raw) if raw is not None else None


def _expire(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


class GroupReader:
    """One consumer of one consumer group over one stream."""

    def __init__(self, r: Any, stream: str, group: str, consumer: str, *, count: int = 64, block_ms: int = BLOCK_MS) -> None:
        """Raises ValueError if ``block_ms`` is not shorter than ``r``'s socket timeout (a blocking
        read would end in a socket timeout, read as a dead connection, instead of an empty reply)."""
        timeout = socket_timeout(r)
        if timeout is not None and block_ms / 1000 >= timeout:
            raise ValueError(f"BLOCK {block_ms} ms must be shorter than the client's socket timeout ({timeout} s)")
        self.r = r
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.count = count
        self.block_ms = block_ms
        self._touch = r.register_script(scripts.TOUCH)
        self.deleted: list[str] = []
        """Ids XAUTOCLAIM found pending but no longer in the stream (trimmed or deleted behind the
        group's back; Redis drops them from the pending list): taken by :meth:`take_deleted`."""

    async def ensure_group(self) -> None:
        """Create the group at id 0 (so no entry added before is skipped); BUSYGROUP is fine."""
        try:
            await self.r.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def read(self) -> list[tuple[str, dict]]:
        """New entries for this consumer (blocking up to ``block_ms``); [] on timeout."""
        try:
            resp = await self.r.xreadgroup(self.group, self.consumer, {self.stream: ">"}, count=self.count, block=self.block_ms)
        except ResponseError as exc:
            if "NOGROUP" in str(exc):
                await self.ensure_group()
                return []
            raise
        return [(mid.decode(), fields) for _, entries in (resp or []) for mid, fields in entries]

    async def claim(self, min_idle_ms: int) -> list[tuple[str, dict, int]]:
        """Reclaim entries idle >= ``min_idle_ms`` from any consumer: ``(id, fields, times delivered)``.

        XAUTOCLAIM's reply is indexed (``[next, entries, deleted?]``); the deleted ids (trimmed
        or deleted, which Redis 7 / Valkey drop from the pending list) are kept in
        :attr:`deleted` for the caller to answer (Redis 6.2 has no third element).
        """
        out: list[tuple[str, dict, int]] = []
        start = "0-0"
        for _ in range(100):
            try:
                resp = await self.r.execute_command("XAUTOCLAIM", self.stream, self.group, self.consumer, min_idle_ms, start, "COUNT", self.count)
            except ResponseError as exc:
                if "NOGROUP" in str(exc):
                    await self.ensure_group()
                    return out
                raise
            nxt, entries = resp[0], resp[1]
            if len(resp) > 2 and resp[2]:
                self.deleted += [m.decode() if isinstance(m, bytes) else m for m in resp[2]]
            claimed = [(m.decode() if isinstance(m, bytes) else m, f) for m, f in _entries(entries) if f is not None]
            if claimed:
                counts = await self._delivery_counts(claimed[0][0], claimed[-1][0], {m for m, _ in claimed})
                out += [(m, f, counts.get(m, 1)) for m, f in claimed]
            nxt = nxt.decode() if isinstance(nxt, bytes) else nxt
            if nxt == "0-0":
                break
            start = nxt
        return out

    async def _delivery_counts(self, lo: str, hi: str, want: set[str]) -> dict[str, int]:
        """Times delivered of the ids ``want`` (between ``lo`` and ``hi``) pending with this consumer.

        Paged: the consumer may hold many younger pending entries between them (entries whose
        handling failed lately), and a missed count would never let a poison command be parked.
        """
        counts: dict[str, int] = {}
        while True:
            pend = await self.r.xpending_range(self.stream, self.group, lo, hi, 200, consumername=self.consumer)
            for p in pend:
                mid = p["message_id"].decode() if isinstance(p["message_id"], bytes) else p["message_id"]
                if mid in want:
                    counts[mid] = p["times_delivered"]
            if len(pend) < 200 or want <= counts.keys():
                return counts
            last = pend[-1]["message_id"]
            lo = "(" + (last.decode() if isinstance(last, bytes) else last)

    def take_deleted(self) -> list[str]:
        """The deleted pending ids found by :meth:`claim` since the last call (then forgotten)."""
        out, self.deleted = self.deleted, []
        return out

    async def touch(self, ids: list[str]) -> int:
        """Reset the idle time of the ``ids`` still pending with this consumer (so no other
        consumer's ``XAUTOCLAIM`` takes entries this one is working on); the delivery count is
        not raised. Returns how many were refreshed (atomic script ``TOUCH``)."""
        if not ids:
            return 0
        return int(await self._touch(keys=[self.stream], args=[self.group, self.consumer, *ids]))

    async def pending_count(self) -> int:
        """Entries delivered to the group and not yet acknowledged (all consumers)."""
        try:
            info = await self.r.xpending(self.stream, self.group)
        except ResponseError:
            return 0
        return int(info["pending"])

    async def reap(self, min_idle_ms: int) -> int:
        """Delete consumers idle >= ``min_idle_ms`` that hold no pending entries (atomic script)."""
        script = self.r.register_script(scripts.REAP_CONSUMERS)
        return int(await script(keys=[self.stream], args=[self.group, min_idle_ms, self.consumer]))

    async def trim_acked(self, inflight: str | None = None) -> int:
        """Trim entries older than the group's oldest pending (else last delivered) entry; returns how many.

        Only for a stream read by this one group (command streams: outcomes and accepted
        commands are stored elsewhere). Never trims a pending or undelivered entry.
        ``inflight``: the stream's in-flight index, whose records of ids no longer pending go too.
        """
        script = self.r.register_script(scripts.TRIM_ACKED)
        return int(await script(keys=[self.stream, *([inflight] if inflight else [])], args=[self.group]))

    async def trim_below_groups(self) -> int:
        """Trim entries older than every group's oldest pending (else last delivered) entry; returns how many.

        For the partition logs (groups ``projector`` and ``clock``): an entry every group has
        acknowledged is in the game's own stream and read models already. Never trims a pending
        or undelivered entry of any group.
        """
        script = self.r.register_script(scripts.TRIM_BELOW_GROUPS)
        return int(await script(keys=[self.stream]))


def socket_timeout(r: Any) -> float | None:
    """The socket timeout (s) of a redis-py asyncio client or cluster client; None for none."""
    kwargs: dict = {}
    if hasattr(r, "connection_pool"):
        kwargs = r.connection_pool.connection_kwargs
    elif hasattr(r, "get_connection_kwargs"):
        kwargs = r.get_connection_kwargs()
    return kwargs.get("socket_timeout", SOCKET_TIMEOUT)



def _entries(entries: Any) -> list[tuple[Any, dict | None]]:
    """Normalise XAUTOCLAIM entries (raw list or redis-py's parsed tuples) to ``(id, fields)``."""
    out = []
    for e in entries or []:
        mid, fields = e[0], e[1]
        if isinstance(fields, list):
            fields = dict(zip(fields[::2], fields[1::2], strict=False))
        out.append((mid, fields))
    return out
