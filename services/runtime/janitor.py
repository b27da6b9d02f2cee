"""Retention sweeps that keep a hosted service from growing without limit (issue 13).

:func:`expire_lobby` ends every game still in the lobby (created, never started) after
``QUESTHALL_LOBBY_TTL`` seconds (default 24 h; 0: never): it sends the operator's ``end_game``
through the bus, so the game ends with an event stating why (``game_abandoned``, no seat) and
leaves the open lobby; a finished or abandoned game is archived later (``questhall archive``).
The command id is fixed per game (``c:expire``), so several projectors sweeping at once send one
command. The projector runs the sweep every minute. No game rule here: the lifecycle decides.
"""

from __future__ import annotations

import os
import time

import structlog

from schemas.envelope import CommandEnvelope, EndGame
from services.adapters.redis_store import CommandBus, Settings
from services.kernel import titles as all_titles

log = structlog.get_logger("questhall.janitor")


def lobby_ttl() -> int:
    """``QUESTHALL_LOBBY_TTL`` seconds (default 86400; 0 turns the sweep off)."""
    return int(os.environ.get("QUESTHALL_LOBBY_TTL", "86400"))


async def expire_lobby(r: object, settings: Settings, ttl_s: int, now_ms: int | None = None, limit: int = 500) -> list[str]:
    """Send ``end_game`` for games in the lobby created more than ``ttl_s`` ago; returns their ids
    (at most ``limit`` per title per sweep)."""
    if ttl_s <= 0:
        return []
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    cut = now - ttl_s * 1000
    bus = CommandBus(r, settings)
    sent: list[str] = []
    for title in sorted(all_titles()):
        old = await r.zrangebyscore(settings.keys.lobby_index(title, "lobby"), "-inf", cut, start=0, num=limit)
        for raw in old:
            gid = raw.decode()
            hours = ttl_s / 3600
            env = CommandEnvelope(command_id="c:expire", game_id=gid, title=title, issued_at=now,
                                  body=EndGame(reason=f"expired: not started within {hours:g} h"))
            await bus.send(env)
            sent.append(gid)
    if sent:
        log.info("lobby_expired", games=len(sent))
    return sent
