"""A full game of every title played over HTTP and WebSocket by SDK clients (real gateway, real Redis)."""

from __future__ import annotations

import random

import anyio
import pytest

from services.sdk import Gateway, play_bot_game

CASES = [("questeros", 2, {}), ("questeros", 3, {}), ("orion_duel", 2, {}), ("quests_over_coffee", 1, {}),
         ("quests_over_coffee", 2, {"mode": "coop"}), ("eros_quest", 1, {}), ("fate_deck", 3, {}),
         ("reventure_orbtale", 4, {"chapter_limit": 6}), ("orange_quest", 3, {"days": 4})]


@pytest.mark.parametrize(("title", "seats", "options"), CASES, ids=[f"{t}-{s}" for t, s, _ in CASES])
def test_full_game_over_http_and_websocket(gateway, title, seats, options):
    async def main():
        async with Gateway(gateway.url) as gw:
            gid, final, stats = await play_bot_game(gw, title, seats, random.Random(7), options=options, capture=True)
            assert final["status"] == "finished", final["status"]
            result = await gw.result(gid)
            assert result.summary
            # every seat's socket delivered its feed in strictly increasing versions, ending at the end
            for seat, msgs in stats.messages.items():
                versions = [m["version"] for m in msgs if m["type"] == "feed"]
                assert versions == sorted(set(versions)), f"seat {seat}: out of order or twice"
                http_feed = await gw.request("GET", f"/games/{gid}/feed", params={"limit": 1000})
                all_versions = [e["version"] for e in http_feed]
                assert versions == all_versions[: len(versions)] and versions[-1] >= all_versions[-1] - 1
            assert stats.accepted > 0
            finished = await gw.lobby(title, "finished")
            assert gid in [g.game_id for g in finished]
            # the finished game audits as valid through the public endpoint, and its bundle verifies offline
            verdict = await gw.audit(gid)
            assert verdict["status"] == "valid" and verdict["seed_verified"], verdict
            from services.audit.verify import audit_bundle

            assert audit_bundle(await gw.bundle(gid)).ok

    anyio.run(main)
