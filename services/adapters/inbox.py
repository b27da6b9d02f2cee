"""One reply inbox per client process: outcomes without a Redis connection per waiting caller.

A client process (gateway replica, bus client, bot runner, bench) names its inbox in every
command it puts on a command stream (the stream entry's ``r`` field, beside the command
envelope ``c``; the command envelope itself, which is hashed and audited, is unchanged). The
worker's append / reject script pushes the outcome (msgpack, it names its command id and game
id) onto ``<ns>:{<ns>:pN}:inbox:<name>``: a list in the slot of the game's partition, so no
script touches a key outside the game's slot (Redis Cluster). The list expires ``reply_ttl``
seconds after the push that made it (the reader pops it empty, Redis deletes an empty list, and
the next push makes it again with a new expiry: one ``EXPIRE`` per list made, not per push), so
the inbox of a process that went away disappears by itself; a list its reader has not emptied
for ``reply_ttl`` s expires with what it holds (those waiters get the stored outcome).

One reader task per process pops every partition's inbox list with ``BLMPOP`` (one connection
on a single Redis; on Redis Cluster one per partition, since a multi-key blocking pop must stay
in one slot) and resolves the waiting futures by ``(game id, command id)``. ``BLMPOP`` pops
from the first non-empty list of its keys only, so each call names the lists starting one
further on (round robin): a busy first partition never holds a later one's outcomes back for
more than ``partitions - 1`` pops, and no round trip is added (a drain of every list with
``LPOP`` after each pop did the same for 20 % more Redis CPU per command). The stored outcome
stays the source of truth: a waiter not answered by its inbox checks the stored outcome after
0.5 s, then at doubling intervals up to 4 s, in one pipeline per sweep for every waiter due (a
missed delivery, an entry sent without an inbox). When the reader loses its connection, every
waiter gets a connection error, as a caller blocked on Redis would: Redis may have lost what
it sent, so it sends again with the same command id (what the bus client does).

Why lists per partition, not (sharded) pub/sub: a push to a list is kept while the reader is
reconnecting (pub/sub drops it), it needs Redis >= 7.0 only for ``BLMPOP`` (``BLPOP`` is used
where it is missing), and redis-py's asyncio cluster client has no sharded pub/sub.

Closing: :meth:`Inbox.aclose` (through ``CommandBus.aclose``) stops the reader before its
process closes the client. Closing the client's pool under a reader still blocked in its pop
(its waiters gone, the pop not yet timed out) cut its connection from under it, which the
reader reported as a lost connection (``inbox_unavailable error='Connection closed by
server.'``: the bench's generator processes logged it at the end of an overloaded run, no
Redis limit involved). A lost connection is logged (``inbox_unavailable``, warning) and fails
every waiter; outcomes resolved from the stored outcome instead of the inbox are counted
(:attr:`Inbox.fallbacks`) and logged (``inbox_fallback``, warning, at most one line per
:data:`FALLBACK_LOG_S` with the count since the last), so a slow or cut inbox never goes unseen.

Bounds: one entry per waiting command id (any number of callers of the same id share it);
the inbox lists hold only the outcomes of this process's commands of the last ``reply_ttl`` s.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import msgspec
import structlog
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from schemas.envelope import Accepted, Outcome, Rejected

log = structlog.get_logger("questhall.inbox")

POP_COUNT = 512
"""Outcomes taken per BLMPOP."""
BLOCK_S = 1.0
"""BLMPOP timeout (shorter than the socket timeout); the reader stops when nothing waits."""
FIRST_CHECK_S = 0.5
"""A waiter not answered by its inbox checks the stored outcome after this, then doubling ..."""
MAX_CHECK_S = 4.0
"""... up to this interval."""
FALLBACK_LOG_S = 10.0
"""At most one ``inbox_fallback`` line per this many seconds (with the count since the last)."""

_DECODER = msgspec.msgpack.Decoder(Accepted | Rejected)


@dataclass
class _Waiter:
    futures: list[asyncio.Future] = field(default_factory=list)
    next_check: float = 0.0
    interval: float = FIRST_CHECK_S


class Inbox:
    """The reply inbox of one client process for one namespace (see the module docstring).

    ``r``: the process's redis-py asyncio client; ``keys``: the namespace's
    :class:`~services.adapters.keys.Keys`. A :class:`~services.adapters.redis_store.CommandBus`
    owns one; a process keeps one bus.
    """

    def __init__(self, r: Any, keys: Any) -> None:
        self.r = r
        self.keys = keys
        self.name = f"i{uuid.uuid4().hex[:20]}"
        self.lists = [keys.inbox(p, self.name) for p in range(keys.partitions)]
        self.cluster = hasattr(r, "get_nodes")
        self.waiters: dict[tuple[str, str], _Waiter] = {}
        self._tasks: list[asyncio.Task | None] = []
        self.delivered = 0
        """Outcomes resolved from the inbox (a counter)."""
        self.fallbacks = 0
        """Outcomes resolved from the stored outcome instead (a counter)."""
        self._recheck = False
        self._closing = False
        """In :meth:`aclose`: a reader that stops starts no other."""
        self._reader: Any = None
        self._fallbacks_logged = 0
        self._fallback_logged_at = float("-inf")

    def __len__(self) -> int:
        """Command ids waited for now."""
        return len(self.waiters)

    def expect(self, game_id: str, command_id: str) -> asyncio.Future:
        """A future resolved with the outcome of ``command_id`` (register it before sending)."""
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        w = self.waiters.get((game_id, command_id))
        if w is None:
            w = self.waiters[(game_id, command_id)] = _Waiter(next_check=time.monotonic() + FIRST_CHECK_S)
        w.futures.append(fut)
        self._ensure_running()
        return fut

    def forget(self, game_id: str, command_id: str, fut: asyncio.Future) -> None:
        """Stop waiting with ``fut`` (answered, timed out or cancelled)."""
        if fut.done() and not fut.cancelled():
            fut.exception()  # retrieved: a connection error set while the caller was elsewhere is not "never retrieved"
        w = self.waiters.get((game_id, command_id))
        if w is None:
            return
        if fut in w.futures:
            w.futures.remove(fut)
        if not w.futures:
            del self.waiters[(game_id, command_id)]

    def resolve(self, out: Outcome) -> bool:
        """Hand ``out`` to every waiter of its command id; False if none waited."""
        w = self.waiters.pop((out.game_id, out.command_id), None)
        if w is None:
            return False
        for fut in w.futures:
            if not fut.done():
                fut.set_result(out)
        return True

    def _fail_all(self, exc: Exception) -> None:
        """Raise a connection error in every waiter: Redis may have lost what they sent (a
        restart without the last writes), so each sends its command again (same command id:
        the first outcome is the only one) once Redis answers."""
        waiters, self.waiters = self.waiters, {}
        for w in waiters.values():
            for fut in w.futures:
                if not fut.done():
                    fut.set_exception(RedisConnectionError(f"the reply inbox lost its connection ({exc}); send again"))

    async def aclose(self) -> None:
        """Stop the reader tasks and the sweep and give the reader's connection back (call it
        before closing the client; the waiters, if any, are left to their timeouts)."""
        tasks = [t for t in self._tasks if t is not None and not t.done()]
        self._closing = True
        try:
            for t in tasks:
                t.cancel()
            for t in tasks:
                try:
                    await t
                except BaseException:  # noqa: BLE001 - cancelled (or already failed): stopped either way
                    pass
        finally:
            self._closing = False
        self._tasks = []

    # -- the reader -------------------------------------------------------------------------
    def _ensure_running(self) -> None:
        """Start the reader tasks (and the sweep) that are not running (each stops when nothing waits)."""
        loop = asyncio.get_running_loop()
        groups = [[k] for k in self.lists] if self.cluster else [self.lists]
        if not self._tasks:
            self._tasks = [None] * (len(groups) + 1)  # type: ignore[list-item]
        for i, t in enumerate(self._tasks):
            if t is None or t.done():
                self._tasks[i] = loop.create_task(self._read(groups[i]) if i < len(groups) else self._sweep())

    async def _read(self, lists: list[str]) -> None:
        # its own connection (taken from the pool once, held while anything waits), so a pool
        # saturated by the process's sends never starves the reader that answers them; the
        # client object is made once (redis-py reads package metadata whenever one is made) and
        # gives its connection back to the pool whenever the reader stops
        if self._reader is None:
            self._reader = self.r if self.cluster else self.r.client()
        try:
            await self._read_with(self._reader, lists)
        finally:
            if self._reader is not self.r:
                try:
                    await self._reader.aclose()  # its connection only (the pool is the process's)
                except BaseException:  # noqa: BLE001 - cancelled at shutdown: the pool goes with the client
                    pass
        if self.waiters and not self._closing:
            # a command registered while this reader gave its connection back found it not done
            # yet and started none: once this task is done, one starts (else that command waited
            # for the stored-outcome fallback, or for the next command to start a reader)
            asyncio.get_running_loop().call_soon(self._ensure_running)

    async def _read_with(self, reader: Any, lists: list[str]) -> None:
        delay = 0.05
        use_blmpop = True
        turn = 0
        while self.waiters:
            # BLMPOP (and BLPOP) pop from the first non-empty list they name: under load the first
            # partitions' lists won every call and a later one's outcomes waited (100-350 ms: issue
            # 11), so every call names the lists from one further on
            turn = (turn + 1) % len(lists)
            order = lists[turn:] + lists[:turn]
            try:
                if use_blmpop:
                    got = await reader.blmpop(BLOCK_S, len(order), *order, direction="LEFT", count=POP_COUNT)
                    raws = got[1] if got else []
                else:
                    got = await reader.blpop(order, timeout=BLOCK_S)
                    raws = [got[1]] if got else []
                delay = 0.05
            except Exception as exc:  # noqa: BLE001 - a lost connection: retry, then check every waiter
                if isinstance(exc, ResponseError) and use_blmpop and "unknown command" in str(exc).lower():
                    use_blmpop = False  # Redis < 7.0
                    continue
                log.warning("inbox_unavailable", error=str(exc), retry_in=delay)
                self._fail_all(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                continue
            for raw in raws:
                try:
                    out = _DECODER.decode(raw)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    log.warning("inbox_undecodable", size=len(raw))
                    continue
                if self.resolve(out):
                    self.delivered += 1

    async def _sweep(self) -> None:
        """Check the stored outcome of every waiter due (one pipeline of GETs per sweep)."""
        while self.waiters:
            await asyncio.sleep(0.1 if self._recheck else 0.25)
            now = time.monotonic()
            everyone, self._recheck = self._recheck, False
            due = [key for key, w in self.waiters.items() if everyone or w.next_check <= now]
            for i in range(0, len(due), 500):
                chunk = due[i:i + 500]
                try:
                    async with self.r.pipeline(transaction=False) as pipe:
                        for gid, cid in chunk:
                            pipe.get(self.keys.outcome(gid, cid))
                        raws = await pipe.execute()
                except Exception as exc:  # noqa: BLE001 - Redis away: the next sweep tries again
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                    self._recheck = True
                    break
                for key, raw in zip(chunk, raws, strict=True):
                    w = self.waiters.get(key)
                    if w is None:
                        continue
                    if raw is not None and self.resolve(_DECODER.decode(raw)):
                        self.fallbacks += 1
                        continue
                    w.interval = min(w.interval * 2, MAX_CHECK_S)
                    w.next_check = now + w.interval
            self._log_fallbacks(now)

    def _log_fallbacks(self, now: float) -> None:
        """One ``inbox_fallback`` line per :data:`FALLBACK_LOG_S` at most, if any outcome came
        from the stored outcome since the last (its inbox push was not popped in time: a slow or
        cut reader, or a command sent without an inbox)."""
        new = self.fallbacks - self._fallbacks_logged
        if new and now - self._fallback_logged_at >= FALLBACK_LOG_S:
            log.warning("inbox_fallback", resolved_from_stored=new, delivered_total=self.delivered,
                        fallbacks_total=self.fallbacks, waiting=len(self.waiters))
            self._fallbacks_logged = self.fallbacks
            self._fallback_logged_at = now

