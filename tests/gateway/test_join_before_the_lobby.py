"""A join without a seat must not depend on the lobby read model having caught up (breaker session).

Right after a create, the lobby entry of the game may not be projected yet; a join without a
seat then took seat 0 and answered every later join ``no_open_seat`` although seats were open.
Here no projector runs at all, so the lobby is never there: every seat must still be taken.
"""

from __future__ import annotations

import uuid

import anyio

from services.adapters.redis_store import Settings
from services.gateway.metrics import Metrics
from services.gateway.service import ApiError, GatewayService
from services.runtime.serve import services_running
from tests.gateway.conftest import make_config


def test_joins_without_a_seat_fill_every_seat_before_the_lobby_is_projected(redis_url):
    settings = Settings(url=redis_url, namespace=f"jl{uuid.uuid4().hex[:10]}", partitions=2)

    async def main() -> None:
        async with services_running(settings, titles=["questeros"], projector=False) as svc:
            gw = GatewayService(svc["redis"], settings, make_config(), Metrics())
            g = await gw.create("questeros", 3, {}, None)
            assert not await svc["redis"].exists(settings.keys.lobby_game(g.game_id))
            seats = [(await gw.join(g.game_id, f"P{i}", None, "", None)).seat for i in range(3)]
            assert seats == [0, 1, 2]
            try:
                await gw.join(g.game_id, "P3", None, "", None)
                raise AssertionError("a fourth join got a seat")
            except ApiError as exc:
                assert exc.code == "no_open_seat"

    anyio.run(main)


def test_an_unknown_title_is_not_echoed_whole(redis_url):
    settings = Settings(url=redis_url, namespace=f"jl{uuid.uuid4().hex[:10]}", partitions=2)

    async def main() -> None:
        from services.adapters.redis_store import connect

        r = connect(settings.url)
        gw = GatewayService(r, settings, make_config(), Metrics())
        for call in (lambda: gw.create("q" * 10_000, 2, {}, None), lambda: gw.lobby("q" * 10_000, "open", 5)):
            try:
                await call()
                raise AssertionError("an unknown title was accepted")
            except ApiError as exc:
                assert exc.code == "unknown_title" and len(exc.message) < 200
        await r.aclose()

    anyio.run(main)
