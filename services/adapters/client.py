"""A bus-level client: what the demo, bots, scenario runner and tests use to play games.

It talks to Redis through :class:`~services.adapters.redis_store.CommandBus` (commands) and
reads the projector's read models (views, feeds, lobby). Clients outside the trusted network
use the gateway instead.
"""

from __future__ import annotations

import itertools
import os
import time
from typing import Any

import anyio
import msgspec
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from schemas.base import Command
from schemas.envelope import (
    Accepted,
    CommandEnvelope,
    CreateGame,
    JoinSeat,
    Outcome,
    Rejected,
    StartGame,
)
from services.adapters import ended
from services.adapters.redis_store import CommandBus, Settings

_seq = itertools.count()


def new_id(prefix: str = "") -> str:
    """A fresh id (``prefix`` + 20 hex chars: 80 random bits from ``os.urandom``; the first 20 hex
    chars of a ``uuid4`` used before cost five times as much, 5 % of the bench client's CPU)."""
    return f"{prefix}{os.urandom(10).hex()}"


class NoOutcome(Exception):
    """No outcome arrived within the timeout (the command may still be handled later)."""


class BusClient:
    """Submit commands and read read models for games in one namespace."""

    def __init__(self, r: Any, settings: Settings, *, timeout: float = 30.0) -> None:
        self.r = r
        self.settings = settings
        self.keys = settings.keys
        self.bus = CommandBus(r, settings)
        self.timeout = timeout

    async def submit(self, title: str, game_id: str, body: Command, seat: int | None = None, *,
                     command_id: str | None = None, expected_version: int | None = None, player: str | None = None) -> Outcome:
        """Submit ``body`` as ``seat`` and wait for its outcome. Raises NoOutcome on timeout.

        If Redis is unreachable (a restart), the same command id is sent again until it answers
        (for up to ``timeout`` s): the first outcome is the only one, so a retry is safe.
        """
        env = CommandEnvelope(command_id=command_id or new_id("c"), game_id=game_id, title=title, body=body, seat=seat,
                              player=player, expected_version=expected_version, issued_at=int(time.time() * 1000))
        out = None
        deadline = time.monotonic() + self.timeout
        delay = 0.05
        while True:
            try:
                out = await self.bus.submit(env, self.timeout)
                break
            except (RedisConnectionError, RedisTimeoutError, OSError):
                if time.monotonic() + delay > deadline:
                    raise
            await anyio.sleep(delay)  # Redis away (a restart): the same command id again, backing off to 1 s
            delay = min(delay * 2, 1.0)
        if out is None:
            raise NoOutcome(f"no outcome for command {env.command_id} of game {game_id} within {self.timeout}s")
        return out

    async def create(self, title: str, seats: int, options: dict | None = None, game_id: str | None = None) -> str:
        """Create a game; returns its id. Raises ValueError with the rejection if refused."""
        gid = game_id or new_id("g")
        out = await self.submit(title, gid, CreateGame(seats=seats, options=options or {}))
        if isinstance(out, Rejected):
            raise ValueError(f"{out.code}: {out.message}")
        return gid

    async def setup(self, title: str, seats: int, options: dict | None = None, names: list[str] | None = None,
                    game_id: str | None = None) -> tuple[str, int]:
        """Create, join every seat and start; returns ``(game_id, version)``. Raises ValueError if refused."""
        gid = await self.create(title, seats, options, game_id)
        steps: list[tuple[Command, int]] = [(JoinSeat(name=(names[i] if names else f"Seat {i}")), i) for i in range(seats)]
        steps.append((StartGame(), 0))
        version = 1
        for body, seat in steps:
            out = await self.submit(title, gid, body, seat)
            if not isinstance(out, Accepted):
                raise ValueError(f"{out.code}: {out.message}")
            version = out.version
        return gid, version

    async def view_raw(self, game_id: str, seat: int | None) -> bytes | None:
        """The projected view envelope (JSON bytes) of a seat, or None before the first projection."""
        return ended.view_json(await self.r.get(self.keys.view(game_id, seat)))

    async def view(self, game_id: str, seat: int | None) -> dict | None:
        raw = await self.view_raw(game_id, seat)
        return msgspec.json.decode(raw) if raw is not None else None

    async def applied(self, game_id: str) -> int:
        """The version the read models of a game are at."""
        return int(await self.r.get(self.keys.rm(game_id, "applied")) or 0)

    async def wait_projected(self, game_id: str, version: int, timeout: float | None = None) -> None:
        """Wait until the read models reach ``version`` (riding out a Redis restart). Raises NoOutcome on timeout."""
        deadline = time.monotonic() + (timeout or self.timeout)
        delay = 0.002
        while True:
            try:
                if await self.applied(game_id) >= version:
                    return
            except (RedisConnectionError, RedisTimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                raise NoOutcome(f"read models of {game_id} did not reach version {version}")
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.05)

    async def feed(self, game_id: str, seat: int | None, after: int = 0) -> list[dict]:
        """Feed entries of a seat with version > ``after`` (an ended game's derived from its stream)."""
        from services.runtime import feeds

        return [msgspec.json.decode(b) for _, b in await feeds.read(self.r, self.keys, game_id, seat, after, None)]
