"""Shared round trips: the small reads and counts of many sockets and commands in one.

The gateway's socket path made a round trip of its own for every command (its rate count and
stored-outcome check) and for every socket woken by a change (its view, settled check and feed),
each through redis-py's ``Pipeline`` on a connection of the process's bounded pool. At 1,000
commands/s over sockets that was 2,000+ pool checkouts a second, each held across a round trip
and the event loop's turn to read its reply: the 48 connections ran out, callers queued for
the pool for hundreds of ms and, past ``QUESTHALL_POOL_WAIT``, sockets were closed 1013
(``bench``: 691 of 1,000 sockets in one run at 1,000 games / 1 s).

A :class:`RoundTrips` sends every request queued while its previous round trip was on its way
in one :func:`~services.adapters.pipeline.send_all` (hiredis-packed, one connection, up to
:data:`MAX_COMMANDS` commands), like the bus client's ``XADD`` batches: one request alone goes
at once, many in flight cost one round trip and one connection, not one each. Replies are
raw (bytes, ints, lists; redis-py's parsed forms where ``send_all`` falls back to its pipeline:
Redis Cluster, TLS, unix sockets). The replies of a round trip are read under one timer (the
connection's socket timeout for the whole round trip), not redis-py's timer per reply: a
snapshot read carries 6 commands, a rate check 4, and the per-reply timer (a timeout context,
a timer handle, a heap push and its cancel) was a tenth of the gateway's CPU in its profile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError

from services.adapters.pipeline import send_all

MAX_COMMANDS = 2048
"""Commands one round trip carries at most (the rest go in the next)."""


class RoundTrips:
    """Requests (a few commands each) of one process, coalesced into shared round trips.

    ``r``: the process's redis-py asyncio client. One sender task at a time: it takes what is
    queued, sends it, hands each request its replies, and goes on while anything is queued.
    """

    def __init__(self, r: Any) -> None:
        self.r = r
        self._queue: list[tuple[Sequence[Sequence[Any]], asyncio.Future]] = []
        self._sender: asyncio.Task | None = None
        self.round_trips = 0
        """Round trips made (a counter)."""
        self.requests = 0
        """Requests answered (a counter; ``requests / round_trips`` is the batch size)."""

    async def run(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """The replies of ``commands`` (each ``(name, *args)``) in order; raises the first error
        reply, or the connection's error (redis-py's ``ConnectionError`` / ``TimeoutError``, or
        its pool's ``No connection available``) as that request's own round trip would have. A
        cancelled caller's commands may still be sent."""
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._queue.append((commands, fut))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send_queued())
        out = await fut
        for reply in out:
            if isinstance(reply, Exception):
                raise reply
        return out

    async def _send_queued(self) -> None:
        while self._queue:
            n = 0
            cut = 0
            for cut, (cmds, _) in enumerate(self._queue, 1):  # noqa: B007 - cut is used below
                n += len(cmds)
                if n >= MAX_COMMANDS:
                    break
            batch, self._queue = self._queue[:cut], self._queue[cut:]
            try:
                replies = await self._send([c for cmds, _ in batch for c in cmds])
            except BaseException as exc:  # noqa: BLE001 - handed to every request of the batch
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc if isinstance(exc, Exception) else RedisConnectionError("round trip cancelled"))
                if not isinstance(exc, Exception):  # cancelled (shutdown): nothing queued is sent
                    for _, fut in self._queue:
                        if not fut.done():
                            fut.set_exception(RedisConnectionError("round trip cancelled"))
                    self._queue = []
                    raise
                continue
            self.round_trips += 1
            i = 0
            for cmds, fut in batch:
                if not fut.done():
                    fut.set_result(replies[i:i + len(cmds)])
                i += len(cmds)
            self.requests += len(batch)

    async def _send(self, commands: list[Sequence[Any]]) -> list[Any]:
        """:func:`~services.adapters.pipeline.send_all`, with the replies read under one timer."""
        return await send_all(self.r, commands)
