"""Redis bytes per finished game, per title, live and archived (issue 13; a section of `make bench`).

One bot game per landed title is played through the bus (in-process workers and projector, a
namespace of its own), its read models projected; ``live`` is the ``MEMORY USAGE`` sum of
every key of the game (stream, command record, metadata, secret, snapshot, outcomes, views,
feeds, lobby entry, result) as the last projection left it; ``settled`` the same without the keys
that expire (an ended game's outcomes, ``QUESTHALL_ENDED_OUTCOME_TTL``, 1 h): what the game
holds from an hour after its end until it is archived; then it is archived (services/audit/archive.py) and ``archived``
is the size in Redis of its one archived bundle. Medians of ``runs`` games per title.
"""

from __future__ import annotations

import random
import statistics
import uuid
from typing import Any

LANDED = {"questeros": 3, "orion_duel": 2, "quests_over_coffee": 2}


async def game_memory(url: str, runs: int = 3) -> dict[str, dict[str, float]]:
    """``{title: {"live_bytes": median, "settled_bytes": median, "archived_bytes": median, "games": runs}}``."""
    from services.adapters.client import BusClient
    from services.adapters.redis_store import Settings, connect
    from services.audit.archive import archive, archive_key, game_bytes
    from services.local.demo import TitleStats, play_bot_game
    from services.runtime.serve import services_running

    settings = Settings(url=url, namespace=f"benchmem{uuid.uuid4().hex[:8]}", partitions=4)
    out: dict[str, dict[str, float]] = {}
    async with services_running(settings, titles=list(LANDED)) as s:
        r: Any = s["redis"]
        client = BusClient(r, settings, timeout=60)
        for name, seats in LANDED.items():
            live, settled, archived = [], [], []
            for i in range(runs):
                stats = TitleStats()
                await play_bot_game(client, name, seats, random.Random(i), stats)
                gid = stats.game_ids[0]
                meta = await r.hget(settings.keys.game(gid, "meta"), "version")
                await client.wait_projected(gid, int(meta))
                live.append(await game_bytes(r, settings, gid))
                settled.append(await game_bytes(r, settings, gid, lasting=True))
                await archive(r, settings, gid)
                archived.append(int(await r.memory_usage(archive_key(settings, gid), samples=0) or 0))
            out[name] = {"live_bytes": statistics.median(live), "settled_bytes": statistics.median(settled),
                         "archived_bytes": statistics.median(archived), "games": runs}
    r = connect(url)  # the services stopped: nothing reads the namespace's streams any more
    try:
        async for key in r.scan_iter(match=f"{settings.namespace}:*", count=1000):
            await r.delete(key)
    finally:
        await r.aclose()
    return out
