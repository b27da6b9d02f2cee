"""A real gateway on a free port, with every title's worker and a projector, on the test Redis.

The services and uvicorn run in a background event loop (an anyio blocking portal thread);
tests talk to them over sockets only (the SDK), as a chat bot or mobile client would.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import anyio.from_thread
import pytest

from services.adapters.redis_store import Settings
from services.gateway import GatewayConfig
from services.gateway.server import gateway_running

ADMIN = "admin-test-token"
KEYS = (b"current-key-for-tests", b"previous-key-for-tests")


@dataclass
class Running:
    url: str
    settings: Settings
    config: GatewayConfig


def make_config(**kw) -> GatewayConfig:
    base = dict(token_keys=KEYS, admin_token=ADMIN, token_ttl=3600, max_body=16384, ws_max_message=8192,
                rate_per_seat=1000, rate_window=1, command_timeout=10.0,
                admit_creates=100_000, admit_joins=100_000, admit_starts=100_000, audit_rate=100_000)
    base.update(kw)
    return GatewayConfig(**base)


def run_gateway(settings: Settings, config: GatewayConfig) -> Iterator[Running]:
    """Start services + gateway in a portal thread for the duration of the generator."""
    kwargs = {"worker_kwargs": {"min_idle_ms": 2000}, "projector_kwargs": {"min_idle_ms": 2000}, "bots": True}
    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(gateway_running(settings, config, service_kwargs=kwargs)) as port:
            yield Running(f"http://127.0.0.1:{port}", settings, config)


@pytest.fixture(scope="module")
def gateway(redis_url: str) -> Iterator[Running]:
    """One gateway (with workers and projector) per test module, in its own namespace."""
    settings = Settings(url=redis_url, namespace=f"gw{uuid.uuid4().hex[:10]}", partitions=4)
    yield from run_gateway(settings, make_config())


async def finished_bus_game(s: Settings, seed: int) -> str:
    """An Orion Duel bot game played to its end on the bus (not the gateway, whose create limit a
    test may have spent), its read models projected; returns its id."""
    import random

    from services.adapters.client import BusClient
    from services.adapters.redis_store import connect
    from services.local.demo import TitleStats
    from services.local.demo import play_bot_game as bus_game

    r = connect(s.url)
    try:
        c, stats = BusClient(r, s), TitleStats()
        await bus_game(c, "orion_duel", 2, random.Random(seed), stats)
        gid = stats.game_ids[0]
        await c.wait_projected(gid, int(await r.hget(s.keys.game(gid, "meta"), "version")))
        return gid
    finally:
        await r.aclose()


def strings(obj):
    """Every string anywhere in a JSON-like value (for leak checks)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)
