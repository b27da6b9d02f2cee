"""A game archived while a gateway knows it (its title cached, sockets open): the gateway then
answers as one that never saw it, 404 ``game_not_found`` and sockets closed 4404, and serves it
again once it is restored (real Redis, real gateway, real sockets)."""

from __future__ import annotations

import anyio
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from services.adapters.redis_store import connect
from services.audit.archive import archive, restore
from services.sdk import Gateway, GatewayError
from tests.gateway.conftest import finished_bus_game


async def _code(call) -> tuple[int, str]:
    with pytest.raises(GatewayError) as e:
        await call
    return e.value.status, e.value.code


def test_a_game_archived_under_a_warm_gateway_is_gone_there_too_and_back_once_restored(gateway):
    s = gateway.settings

    async def main():
        gid = await finished_bus_game(s, 5)
        async with Gateway(gateway.url) as gw:
            view = await gw.spectator_view(gid)  # the gateway caches the game's title
            assert view["status"] == "finished"
            assert await gw.spectator_feed(gid)
            sock = await ws_connect(f"{gw.ws_url}/v1/games/{gid}/ws")
            with anyio.fail_after(30):  # the socket's catch-up: the feed, then the view
                while '"type":"view"' not in await sock.recv():
                    pass
            r = connect(s.url)
            try:
                await archive(r, s, gid)
                # the open socket is woken by the archive's change entry, finds the game gone: 4404
                with pytest.raises(ConnectionClosed) as ce, anyio.fail_after(30):
                    while True:
                        await sock.recv()
                assert ce.value.rcvd.code == 4404 and "game_not_found" in ce.value.rcvd.reason
                # every read answers as a gateway that never saw the game (it said view_not_ready and 200 [])
                assert await _code(gw.spectator_view(gid)) == (404, "game_not_found")
                assert await _code(gw.spectator_feed(gid)) == (404, "game_not_found")
                assert await _code(gw.spectator_feed(gid, after=3)) == (404, "game_not_found")
                assert await _code(gw.game(gid)) == (404, "game_not_found")
                again = await ws_connect(f"{gw.ws_url}/v1/games/{gid}/ws")
                with pytest.raises(ConnectionClosed) as ce, anyio.fail_after(30):
                    while True:
                        await again.recv()
                assert ce.value.rcvd.code == 4404
                await restore(r, s, gid)
            finally:
                await r.aclose()
            assert await gw.spectator_view(gid) == view  # restored: served again, the same view
            assert await gw.spectator_feed(gid)

    anyio.run(main)
