"""The consumer-group loop shared by the worker and the projector, and its connection helpers.

:func:`consume` serves one stream of one consumer group until cancelled: it reclaims pending
entries idle longer than ``min_idle_ms`` (every ``min_idle_ms / 2``), reaps idle consumers that
hold no pending entry and trims acknowledged entries (every 60 s, where asked), reads new
entries (blocking shorter than the socket timeout) and hands each to ``handle``. A connection
error is logged and retried; any other error is logged and the loop goes on after
``on_error`` (e.g. dropping caches). Source: ../shared/DESIGN.md "Known pitfalls".
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
                  trim: bool = False, handle_batch: BatchHandler | None = None) -> None:
    """Serve ``rd`` until cancelled (see the module docstring). ``beats[stream]`` is the liveness beat.

    Entries go to ``handle_batch`` (every entry of one read or reclaim in one call) if given,
    else one by one to ``handle``.

    ``faults``: test hook; ``hang_after_read`` hangs while holding the entries just read.
    """
    last_claim = 0.0
    last_reap = time.monotonic()
    claim_every = max(min_idle_ms / 2000, 0.05)
    while True:
        beats[rd.stream] = time.monotonic()  # liveness (services/runtime/health.py)
        try:
            if time.monotonic() - last_claim >= claim_every:
                last_claim = time.monotonic()
                claimed = await rd.claim(min_idle_ms)
                if handle_batch is not None:
                    if claimed:
                        await handle_batch(rd, claimed)
                else:
                    for mid, fields, delivered in claimed:
                        await handle(rd, mid, fields, delivered)
            if time.monotonic() - last_reap >= 60:
                last_reap = time.monotonic()
                await rd.reap(reap_idle_ms)
                if trim:
                    await rd.trim_acked()
            entries = await rd.read()
            if entries and "hang_after_read" in faults:
                log.warning("fault_hang_after_read", service=service, pending=len(entries))
                await anyio.sleep_forever()
            if handle_batch is not None:
                if entries:
                    await handle_batch(rd, [(mid, fields, 1) for mid, fields in entries])
            else:
                for mid, fields in entries:
                    await handle(rd, mid, fields, 1)
        except Exception as exc:
            if is_connection_error(exc):
                log.warning("redis_unavailable", service=service, error=str(exc))
            else:
                log.exception("consumer_loop_error", service=service, stream=rd.stream)
            on_error()
            await anyio.sleep(0.2)
            try:
                await rd.ensure_group()
            except Exception:
                pass
