"""One change reader per gateway process for all its sockets, dispatching in memory.

The projector's script adds ``(g = game id, v = version)`` to its partition's change stream
``<ns>:{<ns>:pN}:changes`` (capped at about 10,000 entries) with every projection. A gateway
process reads every partition's change stream with one ``XREAD BLOCK`` (one connection on a
single Redis; one per partition on Redis Cluster, where a multi-key read stays in one slot)
and wakes the sockets of the games named there. A socket costs memory (a set entry and an
event), not a Redis connection or a poll; a woken socket reads its feed from its own cursor,
so what it sends (and resuming with ``since``) is exactly as if it had read the feed itself.

The reader starts at the stream position 5 s before it started (Redis ``TIME``), so a change
made while a socket was subscribing is not missed (a change seen twice only wakes a socket
that then finds nothing new). After the reader lost its connection, every socket is woken.
The reader stops when no socket is subscribed and starts again with the next one.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import structlog

log = structlog.get_logger("questhall.gateway.fanout")

BLOCK_MS = 1000
"""XREAD BLOCK of the reader (shorter than the socket timeout)."""


class Waker:
    """What a socket waits on: :meth:`wake` (from the reader) and :meth:`wait` (the socket)."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def wake(self) -> None:
        self._event.set()

    async def wait(self) -> None:
        """Wait for the next wake-up (one that came since the last :meth:`wait` returns at once)."""
        await self._event.wait()
        self._event = anyio.Event()


class ChangeFeed:
    """The change reader of one gateway process: ``subscribe(game, waker)`` / ``unsubscribe``.

    ``r``: the process's redis-py asyncio client; ``keys``: the namespace's key layout.
    Bound: one set entry per open socket.
    """

    def __init__(self, r: Any, keys: Any) -> None:
        self.r = r
        self.keys = keys
        self.streams = [keys.changes(p) for p in range(keys.partitions)]
        self.cluster = hasattr(r, "get_nodes")
        self.subs: dict[str, set[Waker]] = {}
        self._tasks: list[asyncio.Task | None] = []
        self.changes = 0
        """Change entries read (a counter)."""

    def subscribe(self, game_id: str, waker: Waker) -> None:
        self.subs.setdefault(game_id, set()).add(waker)
        self._ensure_running()

    def unsubscribe(self, game_id: str, waker: Waker) -> None:
        s = self.subs.get(game_id)
        if s is not None:
            s.discard(waker)
            if not s:
                del self.subs[game_id]

    def __len__(self) -> int:
        """Sockets subscribed."""
        return sum(len(s) for s in self.subs.values())

    def _ensure_running(self) -> None:
        loop = asyncio.get_running_loop()
        groups = [[s] for s in self.streams] if self.cluster else [self.streams]
        if not self._tasks:
            self._tasks = [None] * len(groups)
        for i, t in enumerate(self._tasks):
            if t is None or t.done():
                self._tasks[i] = loop.create_task(self._read(groups[i]))

    def _wake_all(self) -> None:
        for s in self.subs.values():
            for w in s:
                w.wake()

    async def _read(self, streams: list[str]) -> None:
        ids: dict[str, str] | None = None
        delay = 0.05
        while self.subs:
            try:
                if ids is None:
                    sec, _usec = await self.r.time()
                    start = f"{max(int(sec) * 1000 - 5000, 0)}-0"
                    ids = {s: start for s in streams}
                resp = await self.r.xread(ids, count=1000, block=BLOCK_MS)
                delay = 0.05
            except Exception as exc:  # noqa: BLE001 - Redis away: retry, then wake every socket
                log.warning("change_feed_unavailable", error=str(exc), retry_in=delay)
                await anyio.sleep(delay)
                delay = min(delay * 2, 2.0)
                ids = None
                self._wake_all()
                continue
            for stream, rows in resp or []:
                name = stream.decode() if isinstance(stream, bytes) else stream
                for mid, fields in rows:
                    self.changes += 1
                    ids[name] = mid.decode() if isinstance(mid, bytes) else mid
                    for w in self.subs.get(fields.get(b"g", b"").decode(errors="replace"), ()):
                        w.wake()
