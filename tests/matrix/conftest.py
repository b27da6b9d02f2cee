"""One real Synapse homeserver per test session (tests/synapse.py), and Matrix players on nio.

Each test registers users of its own (unique names), so tests share the server and never see
one another's rooms.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from nio import AsyncClient, AsyncClientConfig, InviteMemberEvent, RoomMemberEvent, RoomMessage

from tests.gateway.conftest import gateway  # noqa: F401  (the fixture: workers, projector, bot service)
from tests.synapse import MatrixUser, Synapse


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    """A Synapse on a free loopback port with SQLite in a temp dir, for the whole session.

    The dir is on ``/dev/shm`` where there is one: SQLite syncs every event it writes, which on
    a busy disk costs more than the whole game's logic.
    """
    shm = Path("/dev/shm")
    root = Path(tempfile.mkdtemp(prefix="qh-synapse-", dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) \
        else tmp_path_factory.mktemp("synapse")
    server = Synapse(root)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        if root.parent == shm:
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def users(synapse: Synapse) -> Callable[[str], MatrixUser]:
    """``users("alice")``: register a fresh account whose name starts with ``alice``."""
    tag = uuid.uuid4().hex[:6]
    return lambda name: synapse.register(f"{name}-{tag}")


_SYNC_FILTER = {"room": {"timeline": {"limit": 1000}}, "presence": {"types": []}}
"""A batch of up to 1,000 events per room: Synapse's default (10) cuts a busy DM room short."""


@dataclass(frozen=True)
class Seen:
    """One event a player's client received: room, sender, the content, the type (messages and
    memberships)."""

    room: str
    sender: str
    content: dict
    type: str = "m.room.message"

    @property
    def body(self) -> str:
        return self.content.get("body", "")


class Player:
    """A real Matrix client (nio) that syncs in the background, joins every invite, keeps every
    message it receives (``seen``) and can ``say`` a line in a room."""

    def __init__(self, url: str, user: MatrixUser) -> None:
        self.user = user
        self.client = AsyncClient(url, user.user_id, device_id=user.device_id,
                                  config=AsyncClientConfig(store_sync_tokens=False, encryption_enabled=False))
        self.client.restore_login(user.user_id, user.device_id, user.access_token)
        self.seen: list[Seen] = []
        self.changed = asyncio.Condition()
        self._task: asyncio.Task | None = None
        self._stop = asyncio.Event()
        self.synced = False
        self.gaps: list[str] = []
        """Rooms whose sync timeline came back ``limited`` (events this player never saw)."""

    @property
    def id(self) -> str:
        return self.user.user_id

    async def start(self) -> None:
        await self.client.sync(timeout=0, full_state=True)
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        while not self._stop.is_set():
            sync = asyncio.ensure_future(self.client.sync(timeout=10_000, sync_filter=_SYNC_FILTER))
            stopping = asyncio.ensure_future(self._stop.wait())
            await asyncio.wait({sync, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not sync.done():
                sync.cancel()
                return
            resp = sync.result()
            for room_id, info in getattr(getattr(resp, "rooms", None), "invite", {}).items():
                if any(isinstance(e, InviteMemberEvent) and e.state_key == self.id for e in info.invite_state):
                    await self.client.join(room_id)
            got = []
            for room_id, info in getattr(getattr(resp, "rooms", None), "join", {}).items():
                if info.timeline.limited and self.synced:  # events were cut from this batch: say so
                    self.gaps.append(room_id)
                got += [Seen(room_id, e.sender, e.source.get("content", {}), e.source.get("type", ""))
                        for e in info.timeline.events if isinstance(e, RoomMessage | RoomMemberEvent)]
            if hasattr(resp, "next_batch"):
                self.synced = True
            if got:
                async with self.changed:
                    self.seen += got
                    self.changed.notify_all()

    async def wait_for(self, pred: Callable[[Seen], bool], timeout: float = 30.0) -> Seen:
        """The first message (already seen or arriving) for which ``pred`` holds."""
        async def first() -> Seen:
            async with self.changed:
                while True:
                    for s in self.seen:
                        if pred(s):
                            return s
                    await self.changed.wait()
        return await asyncio.wait_for(first(), timeout)

    async def wait_index(self, pred: Callable[[Seen], bool], start: int = 0, timeout: float = 120.0) -> int:
        """The index in ``seen`` of the first message from ``start`` on for which ``pred`` holds."""
        # (an upper bound, not a wait: a hint's round trip through Synapse once took over 60 s in a loaded CI run)
        async def first() -> int:
            async with self.changed:
                while True:
                    for i in range(start, len(self.seen)):
                        if pred(self.seen[i]):
                            return i
                    await self.changed.wait()
        try:
            return await asyncio.wait_for(first(), timeout)
        except TimeoutError:
            raise TimeoutError(f"{self.id}: nothing matched in {timeout:.0f} s after index {start}; "
                               f"rooms with cut timelines {self.gaps}; last seen: {self.tail()}") from None

    def tail(self, n: int = 12) -> list[str]:
        """The last ``n`` messages seen, as ``room-prefix sender: body`` (for a timeout's message)."""
        return [f"{s.room[:6]} {s.sender.split(':')[0]}: {s.body[:100]!r}" for s in self.seen[-n:]]

    async def say(self, room: str, text: str) -> str:
        resp = await self.client.room_send(room, "m.room.message", {"msgtype": "m.text", "body": text})
        return resp.event_id

    async def stop(self) -> None:
        self._stop.set()
        if self._task:
            await self._task
        await self.client.close()
