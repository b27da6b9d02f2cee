"""The bot service (``questhall bots``): plays every bot seat, from that seat's view only.

A seat becomes a bot seat by a join with ``bot`` or by a timeout under ``on_timeout = bot``
(``seat_botted``). The service reads the partition logs in its own consumer group ``bots``;
for an entry of a game it waits (bounded) until the read models reach the entry's version,
reads the spectator view to learn which bot seats the game waits for, and for each one reads
that seat's projected view (exactly what a remote client of that seat sees), asks the title's
named bot for a command and sends it through the bus as that seat with the command id
``bot:<seat>:<view version>:<tag>`` and ``expected_version`` = that version. The same view always
gives the same id and the same command (the bot's random source is seeded by game, seat and
version, and both it and the id's tag by the game's secret seed: ``hashing.keyed_tag``, so
neither can be predicted from public data before the seed's reveal), so a redelivered entry, a
second replica or a restart can only get the first outcome: idempotent. An entry whose views are not projected yet stays pending and is
reclaimed. Bounds: ``recent`` remembers at most ``cache_size`` ids sent.
No game rule here: the title's bots decide. Source: issue 14 ("Bot seats").
"""

from __future__ import annotations

import random
import time
from collections import OrderedDict
from typing import Any

import anyio
import msgspec
import structlog

from schemas.envelope import CommandEnvelope, ViewEnvelope
from services.adapters import ended
from services.adapters.redis_store import CommandBus, GroupReader, Settings
from services.kernel import get_title
from services.kernel.hashing import keyed_tag
from services.runtime.consumer import consumer_name, serve_log_group

log = structlog.get_logger("questhall.bots")

GROUP = "bots"
_SETTLED = ("finished", "abandoned")


def bot_command_id(seat: int, version: int, key: bytes = b"") -> str:
    """The deterministic command id of a bot seat's move on the view at ``version``:
    ``bot:<seat>:<version>:<tag>``, the tag keyed by ``key`` (the game's secret seed); without a
    key (scenarios, tests of old logs) ``bot:<seat>:<version>``."""
    base = f"bot:{seat}:{version}"
    return f"{base}:{keyed_tag(key, base)}" if key else base


def bot_rng(game_id: str, seat: int, version: int, key: bytes = b"") -> random.Random:
    """The bot's random source for one decision: the same view, the same choice; keyed by
    ``key`` (the game's secret seed) so that a random bot's choice cannot be computed from its
    view by anyone else."""
    base = f"{game_id}:{seat}:{version}"
    return random.Random(f"{base}:{keyed_tag(key, 'rng:' + base)}" if key else base)


def bot_move(title: Any, env: ViewEnvelope, game_id: str, key: bytes = b"") -> tuple[str, Any] | None:
    """The move of the bot playing ``env.seat`` on that seat's view: ``(command id, command)``,
    or None if the seat is no bot seat or the game does not wait for it. Pure and deterministic
    (``key``: the game's secret seed, see :func:`bot_command_id`)."""
    seat = env.seat
    if seat is None or env.view is None or seat not in env.to_move:
        return None
    name = env.bots[seat] if seat < len(env.bots) else None
    if not name or name not in title.bots:
        return None
    return (bot_command_id(seat, env.version, key),
            title.bots[name](env.view, seat, bot_rng(game_id, seat, env.version, key)))


async def game_key(r: Any, keys: Any, game_id: str) -> bytes:
    """The key of a game's server-made command ids and bot choices: its secret seed (the
    ``secret`` hash, server side only, revealed when the game ends), b"" for a game without one."""
    raw = await r.hget(keys.game(game_id, "secret"), "seed")
    return bytes.fromhex(raw.decode()) if raw else b""


class Bots:
    """The bot service over a set of partitions (see the module docstring)."""

    def __init__(self, r: Any, settings: Settings, *, consumer: str | None = None, partitions: list[int] | None = None,
                 min_idle_ms: int = 30_000, reap_idle_ms: int = 3_600_000, projection_wait: float = 5.0,
                 outcome_timeout: float = 10.0, cache_size: int = 10_000) -> None:
        self.r = r
        self.settings = settings
        self.keys = settings.keys
        self.consumer = consumer or consumer_name("bots")
        self.partitions = partitions if partitions is not None else list(range(settings.partitions))
        self.min_idle_ms = min_idle_ms
        self.reap_idle_ms = reap_idle_ms
        self.projection_wait = projection_wait
        self.outcome_timeout = outcome_timeout
        self.bus = CommandBus(r, settings)
        self.recent: OrderedDict[str, None] = OrderedDict()
        self.cache_size = cache_size
        self.handled = 0
        self.beats: dict[str, float] = {}

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Play bot seats on every partition until cancelled (waits for Redis)."""
        await serve_log_group(self.r, self.settings, self.partitions, GROUP, self.consumer, self._entry, service="bots",
                              min_idle_ms=self.min_idle_ms, reap_idle_ms=self.reap_idle_ms, beats=self.beats,
                              task_status=task_status)

    async def _entry(self, rd: GroupReader, mid: str, fields: dict, _delivered: int) -> None:
        gid = fields[b"g"].decode()
        title = fields[b"t"].decode()
        v = int(fields[b"v"])
        if await self.play(gid, title, v):
            await self.r.xack(rd.stream, GROUP, mid)

    async def play(self, game_id: str, title_name: str, version: int) -> bool:
        """Make the moves of the game's bot seats the game waits for at (at least) ``version``.

        Returns False (the entry stays pending) if the read models did not reach ``version`` in time.
        """
        deadline = time.monotonic() + self.projection_wait
        while int(await self.r.get(self.keys.rm(game_id, "applied")) or 0) < version:
            if time.monotonic() > deadline:
                return False
            await anyio.sleep(0.02)
        raw = ended.view_json(await self.r.get(self.keys.view(game_id, None)))
        if raw is None:
            return False
        spec = msgspec.json.decode(raw)
        bots = spec.get("bots") or []
        if spec.get("status") in _SETTLED or not any(bots):
            return True
        title = get_title(title_name)
        for seat in spec.get("to_move", []):
            name = bots[seat] if seat < len(bots) else None
            if not name:
                continue
            if name not in title.bots:  # checked at join: the title dropped the bot since; the seat waits for its clock
                log.warning("bot_unknown", game_id=game_id, seat=seat, bot=name[:40], title=title_name,
                            known=sorted(title.bots))
                continue
            seat_raw = ended.view_json(await self.r.get(self.keys.view(game_id, seat)))
            if seat_raw is None:
                return False
            env = msgspec.json.decode(seat_raw, type=ViewEnvelope[title.view_type])
            move = bot_move(title, env, game_id, await game_key(self.r, self.keys, game_id))
            if move is None:
                continue
            cid, cmd = move
            key = f"{game_id}/{cid}"
            if key in self.recent:
                continue
            out = await self.bus.submit(CommandEnvelope(command_id=cid, game_id=game_id, title=title_name, body=cmd,
                                                        seat=seat, player=env.seats[seat].name,
                                                        expected_version=env.version), self.outcome_timeout)
            if out is None:
                return False
            self.recent[key] = None
            while len(self.recent) > self.cache_size:
                self.recent.popitem(last=False)
            self.handled += 1
            log.info("bot_moved", game_id=game_id, seat=seat, bot=name, version=env.version,
                     outcome=type(out).__name__, code=getattr(out, "code", ""))
        return True
