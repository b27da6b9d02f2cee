"""The Python client SDK as the server's code uses it: :mod:`questhall_client` (its own
distribution in ``clients/python/``, importable without the server) re-exported, plus bot
players through the gateway that need the titles' bots (the demo, ``questhall play``, tests).

    async with Gateway("http://127.0.0.1:8000") as gw:
        game = await gw.create("questeros", seats=2)
        alice = await gw.join(game.game_id, "Alice")          # a SeatClient holding the token
        ...
        gid, final_view, stats = await play_bot_game(gw, "questeros", 3, random.Random(1))

The client's documentation: docs/clients.md.
"""

from __future__ import annotations

import functools
import random
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import msgspec

from questhall_client import (  # noqa: F401  (re-exported: the SDK's names as before)
    CommandAccepted,
    GameCreatedReply,
    Gateway,
    GatewayError,
    LobbyGame,
    Result,
    SeatClient,
    SeatGrant,
    SeatKey,
    Subscription,
    TitleInfo,
    rate_limit_waited,
)

# ---------------------------------------------------------------------------------------------
# Bots through the gateway


@dataclass
class BotStats:
    """What a bot game through the gateway did (counts; latencies in seconds)."""

    accepted: int = 0
    rejected: int = 0
    stale: int = 0
    """Of ``rejected``: ``stale_version`` refusals (the seat's command named a version another
    seat's command had just moved past, e.g. two seats choosing at once; the bot decides again)."""
    latencies: list[float] = field(default_factory=list)
    messages: dict[int, list[dict]] = field(default_factory=dict)
    """Every socket message per seat (when ``capture``)."""


async def play_seat(client: SeatClient, bot: Any, view_type: type, rng: random.Random, stats: BotStats,
                    *, capture: bool = False, timeout: float = 120.0) -> dict:
    """Play one seat with ``bot`` (``(view, seat, rng) -> Command``) until the game ends.

    Driven by the seat's socket: on each view where the seat is to move, the bot's command is
    submitted over HTTP. Returns the last view envelope. Raises TimeoutError past ``timeout`` s.
    """
    acted = -1
    with anyio.fail_after(timeout):
        async with client.subscribe(0) as sub:
            while True:
                msg = await sub.recv()
                if capture:
                    stats.messages.setdefault(client.seat, []).append(msg)
                if msg["type"] != "view":
                    continue
                env = msg["view"]
                if env["status"] in ("finished", "abandoned"):
                    return env
                while env["status"] == "active" and client.seat in env["to_move"] and env["version"] > acted:
                    try:
                        cmd = bot(msgspec.convert(env["view"], view_type), client.seat, rng)
                    except (IndexError, ValueError):  # nothing to do in this (intermediate) view
                        break
                    t0, waited0 = time.perf_counter(), rate_limit_waited()
                    try:
                        await client.submit(cmd, expected_version=env["version"])
                    except GatewayError as exc:
                        if exc.status == 429:  # over the seat's command rate: wait as told, then retry
                            await anyio.sleep(exc.retry_after or 1)
                            continue
                        if exc.status not in (409, 422):
                            raise
                        stats.rejected += 1
                        stats.stale += exc.code == "stale_version"
                        env = await client.view()  # the game moved on (or the bot erred): decide again
                        continue
                    # the command's latency, not the SDK's back-off from 429 rate_limited answers
                    stats.latencies.append(time.perf_counter() - t0 - (rate_limit_waited() - waited0))
                    stats.accepted += 1
                    acted = env["version"]  # act again only on a newer view
                    break


async def play_bot_game(gw: Gateway, title: str, seats: int, rng: random.Random, *, options: dict | None = None,
                        bot_names: list[str] | None = None, capture: bool = False,
                        stats: BotStats | None = None) -> tuple[str, dict, BotStats]:
    """Create a game, seat a bot per seat, start, and play it to the end over HTTP and sockets.

    ``bot_names``: the bot of each seat in order (the title's bots in turn for the rest). Returns
    ``(game_id, final spectator view, stats)``. Raises ``Rejection`` ``unknown_bot`` (naming the
    title's bots) for a name the title does not have, before anything is created.
    """
    from services.kernel import get_title
    from services.kernel.game import unknown_bot

    t = get_title(title)
    for name in bot_names or []:
        if name not in t.bots:
            raise unknown_bot(t, name)
    stats = stats or BotStats()
    game = await gw.create(title, seats, options)
    clients = [await gw.join(game.game_id, f"bot-{i}", seat=i) for i in range(seats)]
    await clients[0].start()
    bots = list(t.bots.values())
    names = bot_names or []
    async with anyio.create_task_group() as tg:
        for i, c in enumerate(clients):
            bot = t.bots[names[i]] if i < len(names) else bots[i % len(bots)]
            tg.start_soon(functools.partial(play_seat, c, bot, t.view_type, random.Random(rng.randrange(1 << 30)), stats,
                                            capture=capture))
    return game.game_id, await gw.spectator_view(game.game_id), stats
