"""Bot seats joined through the gateway (``{"bot": name}``) are played by the server's bot
service to the end of the game; an unknown bot is a 422 (issue 14)."""

from __future__ import annotations

import time

import anyio
import pytest

from services.sdk import Gateway, GatewayError


def test_two_server_bots_joined_over_http_finish_a_game(gateway):
    async def main():
        gw = Gateway(gateway.url)
        try:
            g = await gw.create("orion_duel", 2, {"clock": "move", "move_seconds": 60})
            a = await gw.join(g.game_id, seat=0, bot="greedy")
            await gw.join(g.game_id, seat=1, bot="random")
            assert a.name == "greedy bot"
            with pytest.raises(GatewayError) as exc:
                await gw.join((await gw.create("orion_duel", 2)).game_id, seat=0, bot="deep-blue")
            assert exc.value.status == 422 and exc.value.code == "unknown_bot"
            await a.start()
            deadline = time.monotonic() + 120
            while True:
                try:
                    v = await a.view()
                except GatewayError:
                    v = {"status": "lobby"}
                if v["status"] == "finished":
                    break
                assert time.monotonic() < deadline, "the bot game did not finish"
                await anyio.sleep(0.1)
            assert v["bots"] == ["greedy", "random"] and v["deadlines"] == []
        finally:
            await gw.aclose()

    anyio.run(main)
