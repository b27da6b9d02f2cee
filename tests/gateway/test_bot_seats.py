"""Bot seats joined through the gateway (``{"bot": name}``) are played by the server's bot
service to the end of the game; an unknown bot is a 422 (issue 14)."""

from __future__ import annotations

import time

import anyio
import pytest

from services.sdk import Gateway, GatewayError


def test_two_server_bots_joined_over_http_finish_a_game(gateway):
    """A bot seat gets no token (before: its join returned the seat's token, so the caller read
    the bot's hand and could play for it); the create's owner token starts the game of bots only
    and does nothing a seat does."""
    async def main():
        gw = Gateway(gateway.url)
        try:
            g = await gw.create("orion_duel", 2, {"clock": "move", "move_seconds": 60})
            a = await gw.join(g.game_id, seat=0, bot="greedy")
            b = await gw.join(g.game_id, seat=1, bot="random")
            assert a.name == "greedy bot" and a.token == "" and b.token == ""
            for bad in ("", g.owner_token):  # no token reads a bot's view or moves for it
                with pytest.raises(GatewayError) as exc:
                    await gw.seat(g.game_id, 0, bad).view()
                assert exc.value.status in (401, 403), exc.value.code
                with pytest.raises(GatewayError) as exc:
                    await gw.seat(g.game_id, 0, bad).submit({"type": "abandon"})
                assert exc.value.status in (401, 403), exc.value.code
            with pytest.raises(GatewayError) as exc:
                await gw.join((await gw.create("orion_duel", 2)).game_id, seat=0, bot="deep-blue")
            assert exc.value.status == 422 and exc.value.code == "unknown_bot"
            other = await gw.create("orion_duel", 2)
            with pytest.raises(GatewayError) as exc:  # one game's owner token starts no other game
                await gw.start(other.game_id, g.owner_token)
            assert (exc.value.status, exc.value.code) == (403, "token_wrong_game")
            human = await gw.join(other.game_id, "Ann", seat=0)
            with pytest.raises(GatewayError) as exc:  # a seat token is not the owner's
                await gw.start(other.game_id, human.token)
            assert (exc.value.status, exc.value.code) == (403, "not_owner")
            started = await gw.start(g.game_id, g.owner_token)
            deadline = time.monotonic() + 120
            while True:
                try:
                    v = await gw.spectator_view(g.game_id, min_version=started.version)
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
