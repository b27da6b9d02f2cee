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

Reads shared by the sockets of a process (:meth:`ChangeFeed.snapshot`): what a socket reads
when woken -- its reader's view, whether that view's version is settled, and the feed entries
after its cursor -- is one pipelined round trip, and sockets of the same game and reader
(5,000 spectators of one table) share one such read until the next change of that game: a read
is reused only while no change of its game was seen since it started (a per-game generation,
bumped by the reader before it wakes the sockets; every generation is void when the reader
(re)starts), so a socket never takes an older state than its own read would have given, and a
socket that took a snapshot just before a change is woken by that change and reads again.
The reads of different games asked for while one is on its way go together in the next round
trip (:class:`~services.gateway.roundtrips.RoundTrips`: one connection, not one per read).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog

from services.gateway.roundtrips import RoundTrips

log = structlog.get_logger("questhall.gateway.fanout")

BLOCK_MS = 1000
"""XREAD BLOCK of the reader (shorter than the socket timeout)."""


SNAPSHOT_BYTES = 32 << 20
"""Bytes of feed entries and views the process keeps in shared snapshots (least recently used dropped)."""


@dataclass
class Snapshot:
    """What the sockets of one game and reader see, read at one moment (one round trip).

    ``rows``: every feed entry with version > ``after`` as ``(version, JSON)``; ``view``: the
    stored view envelope (JSON) or None, at version ``w``; ``settled``: ``w`` is the last event
    of an accepted command (a view pushed only then); ``gone``: the game has no metadata (it was
    archived, or never existed): its sockets are closed 4404."""

    after: int
    rows: list[tuple[int, bytes]]
    view: bytes | None
    w: int
    settled: bool
    gone: bool = False
    size: int = 0
    token: tuple[int, int] = (0, 0)
    done: asyncio.Future | None = field(default=None, repr=False)


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
        self.epoch = 0
        """Bumped when a reader (re)starts: every snapshot taken before is void."""
        self.gen: dict[str, int] = {}
        """Per subscribed game: a number drawn anew (from ``_seq``, never reused) at each change seen;
        a snapshot is valid while its game's number is unchanged."""
        self._seq = 0
        self.snaps: OrderedDict[tuple[str, int | None], Snapshot] = OrderedDict()
        self._readers: dict[str, set[int | None]] = {}
        """The readers of each game with a snapshot in ``snaps`` (dropped per game at a change)."""
        self.snap_bytes = 0
        self.reads = 0
        """Snapshot reads made (round trips to Redis; the rest were shared)."""
        self.shared = 0
        """Snapshots served without a read of their own."""
        self.round_trips = RoundTrips(r)
        """The snapshot reads of every socket woken at once share round trips (one in flight)."""

    def subscribe(self, game_id: str, waker: Waker) -> None:
        self.subs.setdefault(game_id, set()).add(waker)
        if game_id not in self.gen:
            self._seq += 1
            self.gen[game_id] = self._seq
        self._ensure_running()

    def unsubscribe(self, game_id: str, waker: Waker) -> None:
        s = self.subs.get(game_id)
        if s is not None:
            s.discard(waker)
            if not s:
                del self.subs[game_id]
                self.gen.pop(game_id, None)
                self._drop(game_id)

    # -- shared reads --------------------------------------------------------------------------

    def _token(self, game_id: str) -> tuple[int, int]:
        return self.epoch, self.gen.get(game_id, 0)

    def _drop(self, game_id: str, reader: Any = ...) -> None:
        """Forget the snapshots of ``game_id`` (of one ``reader``, or all of them)."""
        readers = self._readers.get(game_id)
        if not readers:
            return
        for rd in (list(readers) if reader is ... else [reader]):
            snap = self.snaps.pop((game_id, rd), None)
            readers.discard(rd)
            if snap is not None:
                self.snap_bytes -= snap.size
        if not readers:
            del self._readers[game_id]

    def _keep(self, key: tuple[str, int | None], snap: Snapshot) -> None:
        self.snaps[key] = snap
        self._readers.setdefault(key[0], set()).add(key[1])

    def _changed(self, game_id: str) -> None:
        if game_id in self.subs:
            self._seq += 1
            self.gen[game_id] = self._seq
            self._drop(game_id)

    def shared_for(self, game_id: str, seat: int | None, after: int) -> bool:
        """True if :meth:`snapshot` for these would be answered from a shared snapshot (one valid, or
        being read), with no round trip of its own."""
        snap = self.snaps.get((game_id, seat))
        return (snap is not None and snap.token == self._token(game_id) and snap.after <= after
                and snap.token[0] >= 0)

    async def snapshot(self, game_id: str, seat: int | None, after: int) -> Snapshot:
        """What a socket of ``game_id`` reading as ``seat`` (None: spectators) with cursor ``after``
        sends next: a shared snapshot if one valid for it exists (or is being read), else one
        read of its own (one round trip; two when the view lags the accepted commands).

        Valid: taken with no change of the game seen since its read started, so it holds every
        change notified before; a change made later is notified later and wakes the socket again."""
        key = (game_id, seat)
        snap = self.snaps.get(key)
        if snap is not None and snap.token == self._token(game_id) and snap.after <= after:
            if snap.done is not None:  # being read: wait for that read rather than make another
                await asyncio.shield(snap.done)
            if snap.token[0] >= 0:  # not a failed read
                self.shared += 1
                return snap
        snap = Snapshot(after=after, rows=[], view=None, w=0, settled=False, token=self._token(game_id),
                        done=asyncio.get_running_loop().create_future())
        self._drop(game_id, seat)
        self._keep(key, snap)
        try:
            await self._read_into(snap, game_id, seat)
        except BaseException:
            snap.token = (-1, -1)  # its waiters read again
            raise
        finally:
            done, snap.done = snap.done, None
            done.set_result(None)
            if snap.token != self._token(game_id) and self.snaps.get(key) is snap:
                self._drop(game_id, seat)  # a failed read, or a change seen meanwhile: not for later sockets
        if self.snaps.get(key) is snap:
            snap.size = sum(len(b) for _, b in snap.rows) + len(snap.view or b"") + 100
            self.snap_bytes += snap.size
            while self.snap_bytes > SNAPSHOT_BYTES and self.snaps:
                self._drop(*next(iter(self.snaps)))
        return snap

    async def _read_into(self, snap: Snapshot, game_id: str, seat: int | None) -> None:
        from services.adapters import ended
        from services.kernel import codec as get_codec
        from services.runtime import feeds

        self.reads += 1
        k = self.keys
        commands = k.game(game_id, "commands")
        # the view first, then the projected version: the feed derived up to it holds every entry
        # up to the view (services/runtime/feeds.py: feeds are derived from the events, not stored)
        view, last, applied, (title, status), rows = await self.round_trips.run([
            ("GET", k.view(game_id, seat)),
            ("XREVRANGE", commands, "+", "-", "COUNT", 1),
            ("GET", k.rm(game_id, "applied")),
            ("HMGET", k.game(game_id, "meta"), "title", "status"),
            ("XRANGE", k.game(game_id, "events"), f"({snap.after}-0" if snap.after else "-", "+")])
        bound = int(applied or 0)
        snap.gone = title is None  # archived (services/audit/archive.py) while the socket was open, or since
        if title is None or bound <= snap.after:
            snap.rows = []
        elif (status or b"").decode() in ended.ENDED or not rows or int(rows[0][0].split(b"-")[0]) != snap.after + 1:
            # ended (its feed is cached whole by services.runtime.feeds) or packed: derived there
            snap.rows = await feeds.read(self.r, k, game_id, seat, snap.after, None)
        else:
            snap.rows = feeds.row_entries(get_codec(title.decode()), game_id,
                                          [row for row in rows if int(row[0].split(b"-")[0]) <= bound], seat)
        snap.view = view = ended.view_json(view)
        if view is not None:
            from services.gateway.service import view_version

            snap.w = view_version(view)
            latest = int(last[0][0].split(b"-")[0]) if last else None
            # the view lags the accepted commands (or the game's streams are packed): the exact check
            snap.settled = snap.w == latest or bool(
                await ended.command_rows(self.r, k, game_id, f"{snap.w}-0", f"{snap.w}-0"))

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
                    self.epoch += 1  # a change before this position may be unseen: no snapshot of before is reused
                    self.snaps.clear()
                    self._readers.clear()
                    self.snap_bytes = 0
                    self._wake_all()
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
                    gid = fields.get(b"g", b"").decode(errors="replace")
                    self._changed(gid)  # before the wake: a woken socket never takes a snapshot of before
                    for w in self.subs.get(gid, ()):
                        w.wake()
