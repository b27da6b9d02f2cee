"""The consumer-group loop shared by the worker and the projector, and its connection helpers.

:func:`consume` serves one stream of one consumer group until cancelled, entry by entry;
:func:`consume_batches` serves several streams of one group with one ``XREADGROUP`` over all
of them and hands each read to the service as one batch (the worker and the projector, which
run one such loop for each group of :func:`read_groups`: on one Redis, a worker 8 by default
(``QUESTHALL_READ_LOOPS``), a projector 1 (``QUESTHALL_PROJECTOR_READ_LOOPS``); one a stream on
Redis Cluster). Each reclaims pending
entries idle longer than ``min_idle_ms`` (every ``min_idle_ms / 2``), reaps idle consumers that
hold no pending entry and trims acknowledged entries (every 60 s, where asked), reads new
entries (blocking shorter than the socket timeout) and hands them on. A connection
error is logged and retried; any other error is logged and the loop goes on after
``on_error`` (e.g. dropping caches). Source: ../shared/DESIGN.md "Known pitfalls".

Slow handling is not failure: while entries are in hand (read or claimed, not yet handled), a
task beside the loop resets their idle time every ``min_idle_ms / 4`` (``GroupReader.touch``:
``XCLAIM ... JUSTID``, delivery count unchanged), so only the entries of a consumer that stopped
(crashed, hung, cut off longer than ``min_idle_ms``) are claimed by another.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import structlog
from redis.exceptions import ResponseError

from services.adapters.env import int_setting
from services.adapters.redis_store import GroupReader

log = structlog.get_logger("questhall.consumer")

Handler = Callable[[GroupReader, str, dict, int], Awaitable[None]]
"""``handle(reader, message id, fields, times delivered)``."""
BatchHandler = Callable[[list[tuple[GroupReader, list[tuple[str, dict, int]]]]], Awaitable[set[tuple[str, str]] | None]]
"""``handle_batches([(reader, [(message id, fields, times delivered)])])``: one read (or reclaim)
of one or more streams at once. Returns the ``(stream, message id)`` of the entries it left
pending (handling failed), or None for none: the tracker's ``done`` is not told of those."""


class Tracker:
    """What a service does around the handling of entries (the defaults do nothing but log).

    ``read`` runs right after a read, before any entry of it is handled (the worker indexes
    the commands in flight); ``done`` after a batch was handled (ids); ``idle`` after a read
    that found nothing; ``deleted`` gets the ids
    ``XAUTOCLAIM`` found pending but no longer in the stream (trimmed or deleted by an operator).
    """

    async def read(self, rd: GroupReader, entries: list[tuple[str, dict]]) -> None:
        return None

    async def done(self, rd: GroupReader, ids: list[str]) -> None:
        return None

    async def idle(self, rd: GroupReader) -> None:
        """A read found nothing new (after blocking ``block_ms``)."""
        return None

    async def flush(self) -> None:
        """Write now what ``read`` kept for a later pipeline (before a test hook hangs)."""
        return None

    async def deleted(self, rd: GroupReader, ids: list[str]) -> None:
        log.error("pending_entries_lost", stream=rd.stream, group=rd.group, count=len(ids), message_ids=ids[:20])


def consumer_name(kind: str) -> str:
    """A consumer name unique to this process start: ``kind-host-pid-rand``."""
    return f"{kind}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def is_connection_error(exc: BaseException) -> bool:
    """True for redis-py's and the builtin connection and timeout errors."""
    from redis.exceptions import ConnectionError as RConn
    from redis.exceptions import TimeoutError as RTimeout

    return isinstance(exc, (RConn, RTimeout, ConnectionError, TimeoutError, OSError))


async def retry_connection(fn: Any, *args: Any) -> Any:
    """Await ``fn(*args)`` until Redis answers: connection errors are retried with capped backoff
    (50 ms doubling to 2 s); any other exception propagates."""
    delay = 0.05
    while True:
        try:
            return await fn(*args)
        except Exception as exc:
            if not is_connection_error(exc):
                raise
            log.warning("redis_unavailable", error=str(exc), retry_in=delay)
        await anyio.sleep(delay)
        delay = min(delay * 2, 2.0)


async def consume(rd: GroupReader, handle: Handler, *, service: str, min_idle_ms: int, reap_idle_ms: int,
                  faults: set[str], beats: dict[str, float], on_error: Callable[[], None],
                  trim: bool | str = False, tracker: Tracker | None = None, inflight: str | None = None) -> None:
    """Serve ``rd`` until cancelled, entry by entry (see the module docstring). ``beats[stream]``
    is the liveness beat.

    ``faults``: test hook; ``hang_after_read`` hangs while holding the entries just read (this
    loop: a process's other read loops go on until they read entries of their own).
    ``tracker``: hooks around handling (:class:`Tracker`); ``inflight``: the in-flight index
    cleaned when the stream is trimmed. ``trim``: True trims below the one group's needs
    (command streams), ``"groups"`` below every group's (partition logs), every 60 s.
    """

    async def one_by_one(batches: list[tuple[GroupReader, list[tuple[str, dict, int]]]]) -> set[tuple[str, str]] | None:
        for r_, entries in batches:
            for mid, fields, delivered in entries:
                await handle(r_, mid, fields, delivered)
                hand[r_.stream].pop(mid, None)

    hand: dict[str, dict[str, None]] = {rd.stream: {}}
    await _serve(ReadGroup([rd]), one_by_one, hand, tracker or Tracker(), service=service, min_idle_ms=min_idle_ms,
                 reap_idle_ms=reap_idle_ms, faults=faults, beats=beats, on_error=on_error, trim=trim,
                 inflight=(lambda _s: inflight) if inflight else None)


async def consume_batches(readers: list[GroupReader], handle_batches: BatchHandler, *, service: str, min_idle_ms: int,
                          reap_idle_ms: int, faults: set[str], beats: dict[str, float], on_error: Callable[[], None],
                          trim: bool | str = False, tracker: Tracker | None = None,
                          inflight: Callable[[str], str] | None = None) -> None:
    """Serve ``readers`` (streams of one group, one consumer) until cancelled, a read at a time:
    one ``XREADGROUP`` over every stream of :func:`read_groups`' grouping (all of them on one
    Redis, one a call on Redis Cluster, see :class:`ReadGroup`), and what it returned (or what a
    reclaim took) handed to ``handle_batches`` in one call. Reclaiming, reaping, trimming and
    keeping entries in hand as :func:`consume`, per stream. ``inflight(stream)``: the stream's
    in-flight index, cleaned when it is trimmed."""
    hand: dict[str, dict[str, None]] = {rd.stream: {} for rd in readers}
    await _serve(ReadGroup(readers), handle_batches, hand, tracker or Tracker(), service=service,
                 min_idle_ms=min_idle_ms, reap_idle_ms=reap_idle_ms, faults=faults, beats=beats, on_error=on_error,
                 trim=trim, inflight=inflight)


READ_COUNT = 128
"""Entries a worker's or projector's read takes of each stream at most (``XREADGROUP COUNT``).
A batch holds what was there, so this only matters under load: in the closed loop of 1,000 games
(``bench.run --only e2e``, 2026-12-04) 128 beat 64 in four runs out of four, each beside the
other (7,265-8,430 against 5,974-7,814 commands/s); 256 was no steadier."""

READ_LOOPS = {"worker": 8, "projector": 1}
"""Read loops a worker or a projector process runs on one Redis by default (settings:
:data:`READ_LOOPS_SETTING`)."""

READ_LOOPS_SETTING = {"worker": "QUESTHALL_READ_LOOPS", "projector": "QUESTHALL_PROJECTOR_READ_LOOPS"}
"""The environment variable that sets each role's read loops."""


def read_loops(role: str = "worker") -> int:
    """How many read loops a ``role`` (``worker`` or ``projector``) process runs over its
    partitions on one Redis: ``QUESTHALL_READ_LOOPS`` for a worker (default 8: one a partition
    at the default 8 partitions), ``QUESTHALL_PROJECTOR_READ_LOOPS`` for a projector (default
    1). Its partitions are dealt
    among them round robin; each loop reads its share in one ``XREADGROUP`` and handles the read
    as a batch, so one loop decides while another's pipeline is in Redis. Each loop holds one
    Redis connection while it blocks.

    Measured in the closed loop of 1,000 games (``bench.run --only e2e``, runs beside each other;
    docs/architecture.md "Read loops"): a projector is off a command's path to its outcome, and
    one loop reads bigger batches (0.027-0.029 ms of projector CPU a command against
    0.029-0.033 with 2; 10,472-11,363 commands/s against 10,273-11,220, five runs out of five);
    with the projector at one loop, a worker's 4 beat 3 and 2 in three runs out of three
    (11,800-12,453 commands/s against 11,269-11,527 and 10,427-11,466), and 8 beat 4 in six
    runs out of six (by 0.3-8 %: 11,892-13,757 against 11,112-12,769; 2026-12-05).

    Raises ValueError naming the variable for a value that is not an integer >= 1 in ASCII
    digits (services/adapters/env.py); KeyError for another role."""
    return int_setting(READ_LOOPS_SETTING[role], READ_LOOPS[role])


def read_groups(r: Any, readers: list[GroupReader], loops: int | None = None, role: str = "worker"
                ) -> list[list[GroupReader]]:
    """How ``readers`` are read, one read loop a group: on a single Redis, ``loops`` groups
    (default :func:`read_loops` of ``role``; at most one a reader) taking the readers round robin, each read
    in one ``XREADGROUP``; on Redis Cluster one a reader (a multi-stream read must stay within one
    slot, and every partition has its own)."""
    if hasattr(r, "get_nodes") or len(readers) <= 1:  # a cluster client
        return [[rd] for rd in readers]
    k = min(read_loops(role) if loops is None else loops, len(readers))
    return [list(readers[i::k]) for i in range(k)]


class ReadGroup:
    """Streams of one consumer group read by one ``XREADGROUP`` (same group, consumer, count and
    block for every stream; ``COUNT`` applies per stream)."""

    def __init__(self, readers: list[GroupReader]) -> None:
        self.readers = readers
        self.by_stream = {rd.stream: rd for rd in readers}

    async def read(self) -> list[tuple[GroupReader, list[tuple[str, dict]]]]:
        """New entries of every stream (blocking up to ``block_ms`` for any): ``[(reader, entries)]``
        of the streams that had some; ``[]`` on timeout. ``NOGROUP`` recreates every group."""
        if len(self.readers) == 1:
            rd = self.readers[0]
            got = await rd.read()
            return [(rd, got)] if got else []
        first = self.readers[0]
        try:
            resp = await first.r.xreadgroup(first.group, first.consumer, {rd.stream: ">" for rd in self.readers},
                                            count=first.count, block=first.block_ms)
        except ResponseError as exc:
            if "NOGROUP" in str(exc):
                for rd in self.readers:
                    await rd.ensure_group()
                return []
            raise
        items = resp.items() if isinstance(resp, dict) else (resp or [])
        out = []
        for name, entries in items:
            if entries:
                rd = self.by_stream[name.decode() if isinstance(name, bytes) else name]
                out.append((rd, [(mid.decode(), fields) for mid, fields in entries]))
        return out


async def _keep_in_hand(rd: GroupReader, in_hand: dict[str, None], every: float, service: str) -> None:
    """Every ``every`` s (from one send to the next, so a slow round trip does not stretch the
    period), reset the idle time of the entries in hand; errors are logged, not fatal."""
    while True:
        started = anyio.current_time()
        if in_hand:
            try:
                await rd.touch(list(in_hand))
            except Exception as exc:
                log.warning("pending_refresh_failed", service=service, stream=rd.stream, error=str(exc)[:200])
        await anyio.sleep(max(0.0, every - (anyio.current_time() - started)))


async def _serve(group: ReadGroup, handle_batches: BatchHandler, hand: dict[str, dict[str, None]], tracker: Tracker, *,
                 service: str, min_idle_ms: int, reap_idle_ms: int, faults: set[str], beats: dict[str, float],
                 on_error: Callable[[], None], trim: bool | str, inflight: Callable[[str], str] | None) -> None:
    async with anyio.create_task_group() as tg:
        for rd in group.readers:
            tg.start_soon(_keep_in_hand, rd, hand[rd.stream], max(min_idle_ms / 4000, 0.01), service)
        await _loop(group, handle_batches, hand, tracker, service=service, min_idle_ms=min_idle_ms,
                    reap_idle_ms=reap_idle_ms, faults=faults, beats=beats, on_error=on_error, trim=trim, inflight=inflight)


async def _loop(group: ReadGroup, handle_batches: BatchHandler, hand: dict[str, dict[str, None]], tracker: Tracker, *,
                service: str, min_idle_ms: int, reap_idle_ms: int, faults: set[str], beats: dict[str, float],
                on_error: Callable[[], None], trim: bool | str, inflight: Callable[[str], str] | None) -> None:
    last_claim = 0.0
    last_reap = time.monotonic()
    claim_every = max(min_idle_ms / 2000, 0.05)
    readers = group.readers
    while True:
        now = time.monotonic()
        for rd in readers:
            beats[rd.stream] = now  # liveness (services/runtime/health.py)
        try:
            if now - last_claim >= claim_every:
                last_claim = now
                claims = []
                for rd in readers:
                    claimed = await rd.claim(min_idle_ms)
                    deleted = rd.take_deleted()
                    if deleted:
                        await tracker.deleted(rd, deleted)
                    if claimed:
                        hand[rd.stream].update((mid, None) for mid, _, _ in claimed)
                        claims.append((rd, claimed))
                if claims:
                    left = await handle_batches(claims) or set()
                    for rd, claimed in claims:
                        hand[rd.stream].clear()
                        await tracker.done(rd, [mid for mid, _, _ in claimed if (rd.stream, mid) not in left])
            if time.monotonic() - last_reap >= 60:
                last_reap = time.monotonic()
                for rd in readers:
                    await rd.reap(reap_idle_ms)
                    if trim == "groups":  # a stream several groups read (a partition log)
                        await rd.trim_below_groups()
                    elif trim:
                        await rd.trim_acked(inflight(rd.stream) if inflight else None)
            got = await group.read()
            for rd, entries in got:
                hand[rd.stream].update((mid, None) for mid, _ in entries)  # refreshed from now on
                await tracker.read(rd, entries)
            if got and "hang_after_read" in faults:  # a stalled process: indexed, never refreshed
                for rd, _ in got:
                    hand[rd.stream].clear()
                await tracker.flush()
                log.warning("fault_hang_after_read", service=service, pending=sum(len(e) for _, e in got))
                await anyio.sleep_forever()
            if got:
                left = await handle_batches([(rd, [(mid, fields, 1) for mid, fields in entries]) for rd, entries in got]) or set()
                for rd, entries in got:
                    hand[rd.stream].clear()
                    await tracker.done(rd, [mid for mid, _ in entries if (rd.stream, mid) not in left])
            else:
                for rd in readers:
                    await tracker.idle(rd)
        except Exception as exc:
            if is_connection_error(exc):
                log.warning("redis_unavailable", service=service, error=str(exc))
            else:
                log.exception("consumer_loop_error", service=service, streams=[rd.stream for rd in readers][:8])
            for h in hand.values():
                h.clear()  # left pending: claimed again (by anyone) once idle
            on_error()
            await anyio.sleep(0.2)
            for rd in readers:
                try:
                    await rd.ensure_group()
                except Exception:
                    pass


async def serve_log_group(r: Any, settings: Any, partitions: list[int], group: str, consumer: str, handle: Handler, *,
                          service: str, min_idle_ms: int, reap_idle_ms: int, beats: dict[str, float],
                          per_partition: Callable[[int], Awaitable[None]] | None = None,
                          task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
    """Serve the consumer group ``group`` on the partition logs of ``partitions`` until cancelled
    (the clock, bot and notifier services): the group is made on each log (waiting for Redis),
    each log is consumed by :func:`consume` with ``handle``, and ``per_partition(p)`` (a loop of
    the service's own, if given) runs beside it."""
    readers = [GroupReader(r, settings.keys.log(p), group, consumer) for p in partitions]
    for rd in readers:
        await retry_connection(rd.ensure_group)
    log.info("service_started", service=service, consumer=consumer, partitions=len(readers))

    async def serve(rd: GroupReader) -> None:
        await consume(rd, handle, service=service, min_idle_ms=min_idle_ms, reap_idle_ms=reap_idle_ms,
                      faults=set(), beats=beats, on_error=lambda: None)

    async with anyio.create_task_group() as tg:
        for p, rd in zip(partitions, readers, strict=True):
            tg.start_soon(serve, rd)
            if per_partition is not None:
                tg.start_soon(per_partition, p)
        task_status.started()
