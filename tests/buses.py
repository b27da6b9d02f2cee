"""Games on a real Redis for the integration tests: a connection with its client, game ids by
partition, and toy games set up by a worker that runs only for the setup."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from services.adapters.client import BusClient
from services.adapters.redis_store import Settings, connect
from services.runtime.serve import services_running


def ids_by_partition(settings: Settings, prefix: str, each: int = 1) -> list[list[str]]:
    """``each`` game ids (``<prefix><i>``) of every partition, in partition order."""
    by_part: list[list[str]] = [[] for _ in range(settings.partitions)]
    for i in range(10_000):
        ids = by_part[settings.keys.partition(f"{prefix}{i}")]
        if len(ids) < each:
            ids.append(f"{prefix}{i}")
        if all(len(ids) == each for ids in by_part):
            return by_part
    raise AssertionError("too few game ids for some partition")


@asynccontextmanager
async def bus_client(settings: Settings, **client: Any) -> AsyncIterator[tuple[Any, BusClient]]:
    """A Redis connection (closed on exit) and a :class:`BusClient` on it (``client``: its options)."""
    r = connect(settings.url)
    try:
        yield r, BusClient(r, settings, **client)
    finally:
        await r.aclose()


async def setup_toy(settings: Settings, r: Any, c: BusClient, ids: Iterable[str | None],
                    target: int = 100) -> list[tuple[str, int]]:
    """Toy games of two seats, one an id (None: a new id), set up (created, joined, started) by a
    worker of their own that stops afterwards; returns ``(game id, version)`` of each."""
    async with services_running(settings, titles=["toy"], projector=False, r=r):
        return [await c.setup("toy", 2, {"target": target}, game_id=g) for g in ids]
