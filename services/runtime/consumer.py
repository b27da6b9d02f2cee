"""The consumer-group loop shared by the worker and the projector, and its connection helpers.

:func:`consume` serves one stream of one consumer group until cancelled: it reclaims pending
entries idle longer than ``min_idle_ms`` (every ``min_idle_ms / 2``), reaps idle consumers that
hold no pending entry and trims acknowledged entries (every 60 s, where asked), reads new
entries (blocking shorter than the socket timeout) and hands each to ``handle``. A connection
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

from services.adapters.redis_store import GroupReader

log = structlog.get_logger("questhall.consumer")

Handler = Callable[[GroupReader, str, dict, int], Awaitable[None]]
"""``handle(reader, message id, fields, times delivered)``."""
BatchHandler = Callable[[GroupReader, list[tuple[str, dict, int]]], Awaitable[None]]
"""``handle_batch(reader, [(message id, fields, times delivered)])``: one read (or reclaim) at once."""


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


async def consume(rd: GroupReader, handle: Handler | None, *, service: str, min_idle_ms: int, reap_idle_ms: int,
                  faults: set[str], beats: dict[str, float], on_error: Callable[[], None],
                  trim: bool | str = False, tracker: Tracker | None = None, inflight: str | None = None,
                  handle_batch: BatchHandler | None = None) -> None:
    """Serve ``rd`` until cancelled (see the module docstring). ``beats[stream]`` is the liveness beat.

    Entries go to ``handle_batch`` (every entry of one read or reclaim in one call) if given,
    else one by one to ``handle``.

    ``faults``: test hook; ``hang_after_read`` hangs while holding the entries just read.
    ``tracker``: hooks around handling (:class:`Tracker`); ``inflight``: the in-flight index
    cleaned when the stream is trimmed. ``trim``: True trims below the one group's needs
    (command streams), ``"groups"`` below every group's (partition logs), every 60 s.
    """
    in_hand: dict[str, None] = {}  # ids being handled, in order (an ordered set)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_keep_in_hand, rd, in_hand, max(min_idle_ms / 4000, 0.01), service)
        await _loop(rd, handle, in_hand, tracker or Tracker(), service=service, min_idle_ms=min_idle_ms,
                    reap_idle_ms=reap_idle_ms, faults=faults, beats=beats, on_error=on_error, trim=trim, inflight=inflight,
                    handle_batch=handle_batch)


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


async def _loop(rd: GroupReader, handle: Handler | None, in_hand: dict[str, None], tracker: Tracker, *, service: str,
                min_idle_ms: int, reap_idle_ms: int, faults: set[str], beats: dict[str, float],
                on_error: Callable[[], None], trim: bool, inflight: str | None,
                handle_batch: BatchHandler | None) -> None:
    last_claim = 0.0
    last_reap = time.monotonic()
    claim_every = max(min_idle_ms / 2000, 0.05)
    while True:
        beats[rd.stream] = time.monotonic()  # liveness (services/runtime/health.py)
        try:
            if time.monotonic() - last_claim >= claim_every:
                last_claim = time.monotonic()
                claimed = await rd.claim(min_idle_ms)
                deleted = rd.take_deleted()
                if deleted:
                    await tracker.deleted(rd, deleted)
                in_hand.update((mid, None) for mid, _, _ in claimed)
                if handle_batch is not None:
                    if claimed:
                        await handle_batch(rd, claimed)
                    in_hand.clear()
                else:
                    for mid, fields, delivered in claimed:
                        await handle(rd, mid, fields, delivered)
                        in_hand.pop(mid, None)
                if claimed:
                    await tracker.done(rd, [mid for mid, _, _ in claimed])
            if time.monotonic() - last_reap >= 60:
                last_reap = time.monotonic()
                await rd.reap(reap_idle_ms)
                if trim == "groups":  # a stream several groups read (a partition log)
                    await rd.trim_below_groups()
                elif trim:
                    await rd.trim_acked(inflight)
            entries = await rd.read()
            if entries and "hang_after_read" in faults:  # a stalled process: indexed, never refreshed
                await tracker.read(rd, entries)
                log.warning("fault_hang_after_read", service=service, pending=len(entries))
                await anyio.sleep_forever()
            in_hand.update((mid, None) for mid, _ in entries)  # refreshed from now on
            if entries:
                await tracker.read(rd, entries)
            if handle_batch is not None:
                if entries:
                    await handle_batch(rd, [(mid, fields, 1) for mid, fields in entries])
                in_hand.clear()
            else:
                for mid, fields in entries:
                    await handle(rd, mid, fields, 1)
                    in_hand.pop(mid, None)
            if entries:
                await tracker.done(rd, [mid for mid, _ in entries])
            else:
                await tracker.idle(rd)
        except Exception as exc:
            if is_connection_error(exc):
                log.warning("redis_unavailable", service=service, error=str(exc))
            else:
                log.exception("consumer_loop_error", service=service, stream=rd.stream)
            in_hand.clear()  # left pending: claimed again (by anyone) once idle
            on_error()
            await anyio.sleep(0.2)
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
