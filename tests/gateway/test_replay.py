"""GET /v1/games/{id}/replay: the spectator view after every version of a finished game (what
/audit shows beside each event), paged, refused while the game runs, counted like an audit."""

from __future__ import annotations

import random

import anyio

from services.sdk import Gateway, play_bot_game


def test_the_replay_gives_the_view_after_every_version_of_a_finished_game(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            running = await gw.create("orion_duel", 2)
            res = await gw.http.get(f"/games/{running.game_id}/replay")
            assert res.status_code == 409 and res.json()["code"] == "game_not_over"
            res = await gw.http.get("/games/no-such-game/replay")
            assert res.status_code == 404 and res.json()["code"] == "no_such_game"

            gid, final, _ = await play_bot_game(gw, "orion_duel", 2, random.Random(3))
            bundle = (await gw.http.get(f"/games/{gid}/bundle")).json()
            n = len(bundle["events"])
            pages = []
            for after in range(0, n, 7):
                res = await gw.http.get(f"/games/{gid}/replay", params={"after": after, "limit": 7})
                assert res.status_code == 200, res.text
                pages += res.json()
            assert [v["version"] for v in pages] == list(range(1, n + 1))
            assert pages[0]["status"] == "lobby" and pages[-1]["status"] == "finished"
            assert pages[-1]["view"] == final["view"]
            assert (await gw.http.get(f"/games/{gid}/replay", params={"after": n})).json() == []
            res = await gw.http.get(f"/games/{gid}/replay", params={"limit": 501})
            assert res.status_code == 400

    anyio.run(main)
