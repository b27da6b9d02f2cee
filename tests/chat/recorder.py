"""A :class:`~services.frontends.chat.session.Platform` that keeps what the core sends, in memory.

For tests of the core itself (the adapters' tests use real servers): ``sent`` holds
``(target, text)`` in order, target ``"#room"`` or ``"@user"``; ``wait_for`` waits (no sleep:
an event per message) until a predicate over one message holds. :func:`chat_core` gives a core
on one, over a test gateway.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio


@dataclass
class Recorder:
    name: str = "test"
    max_text: int = 300
    unit: Literal["chars", "bytes"] = "bytes"
    multiline: bool = False
    rate: float = 0.0
    burst: int = 10
    sent: list[tuple[str, str]] = field(default_factory=list)
    _changed: anyio.Event = field(default_factory=anyio.Event)

    async def send_room(self, room: str, text: str, *, key: str | None = None) -> None:
        self._add(room, text)

    async def send_private(self, user: str, text: str, *, key: str | None = None) -> None:
        self._add("@" + user, text)

    def mention(self, user: str) -> str:
        return f"<{user}>"

    def _add(self, target: str, text: str) -> None:
        assert "\n" not in text or self.multiline
        assert len(text.encode()) <= self.max_text
        self.sent.append((target, text))
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, pred: Callable[[str, str], bool], start: int = 0, timeout: float = 30.0) -> int:
        """The index of the first message from ``start`` on with ``pred(target, text)``; waits for it."""
        i = start
        with anyio.move_on_after(timeout):
            while True:
                while i < len(self.sent):
                    if pred(*self.sent[i]):
                        return i
                    i += 1
                await self._changed.wait()
        tail = "\n".join(f"{t} {x}" for t, x in self.sent[-30:])
        raise TimeoutError(f"no such message from {start} on in {timeout} s; the last sent:\n{tail}")


FAST = dict(user_rate=1000, user_burst=1000, seed=7)
"""The core's settings in these tests: no rate limit, seeded."""


@asynccontextmanager
async def chat_core(gateway: Any, rec: Recorder | None = None, **config: Any) -> AsyncIterator[tuple[Any, Recorder, Any]]:
    """Yield ``(core, rec, r)``: a chat core over ``gateway`` speaking to ``rec`` (a new
    :class:`Recorder` if None), in a namespace of its own, and its Redis connection ``r``.

    The core is not started (``async with core``); ``r`` is closed on exit. ``config``: fields of
    :class:`~services.frontends.chat.session.ChatConfig` over :data:`FAST`.
    """
    from services.adapters.redis_store import connect
    from services.frontends.chat.session import ChatConfig, ChatCore

    rec = Recorder() if rec is None else rec
    r = connect(gateway.settings.url)
    try:
        yield ChatCore(rec, gateway.url, r, namespace="c" + uuid.uuid4().hex[:8], config=ChatConfig(**{**FAST, **config})), rec, r
    finally:
        await r.aclose()
