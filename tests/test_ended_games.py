"""An ended game keeps less in Redis (issue 13): no feed is stored (each is derived from the game's
events when read: from its stream while it runs, from its packed record once it ended, the same
entries byte for byte) and its accepted outcomes expire after ``QUESTHALL_ENDED_OUTCOME_TTL``
(real Redis)."""

from __future__ import annotations

import dataclasses
import random

import anyio

from schemas.envelope import Accepted
from services.adapters import ended
from services.adapters.client import BusClient
from services.runtime import feeds
from services.runtime.serve import services_running
from tests.toygame import Add, Roll


def test_an_ended_game_derives_its_feeds_and_lets_its_outcomes_expire(settings):
    settings = dataclasses.replace(settings, ended_outcome_ttl=600)

    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            r, k = s["redis"], settings.keys
            c = BusClient(r, settings)
            rng = random.Random(4)
            gid, version = await c.setup("toy", 2, {"target": 12})
            stored: dict = {}
            ids = []
            turn = 0
            while True:
                out = await c.submit("toy", gid, rng.choice([Add(n=rng.randint(1, 3)), Roll()]), turn)
                assert isinstance(out, Accepted), out
                ids.append(out.command_id)
                await c.wait_projected(gid, out.version)
                if out.events > 1:  # finished: game_finished + seed_revealed
                    break
                for seat in (0, 1, None):  # derived from the running game's stream, a read from the last one on
                    assert not await r.exists(k.feed(gid, seat))  # never stored
                    seen = stored.setdefault(seat, [])
                    seen += await feeds.read(r, k, gid, seat, seen[-1][0] if seen else 0, None)
                    assert [v for v, _ in seen] == list(range(1, out.version + 1))
                    assert await r.ttl(k.outcome(gid, out.command_id)) == -1  # kept while the game runs
                turn = (turn + 1) % 2
            for seat in (0, 1, None):
                assert not await r.exists(k.feed(gid, seat))
                derived = await feeds.read(r, k, gid, seat, 0, None)  # the ended game's, from its packed record
                assert derived[:len(stored[seat])] == stored[seat]  # byte for byte
                assert [v for v, _ in derived] == list(range(1, out.version + 1))
                assert await feeds.read(r, k, gid, seat, out.version - 1, 1) == derived[-1:]
            hidden = [e for e in await c.feed(gid, 1) if e["body"]["type"] == "toy.cards_dealt"][0]
            assert hidden["body"]["cards"][0] == -1  # still redacted for the other seat
            with anyio.fail_after(30):  # settled right after the ending projection (its streams packed)
                while not await ended.is_settled(r, k, gid):
                    await anyio.sleep(0.02)
            for cid in ids:  # set with the packing: the record gives them back, so a minute's grace
                assert 0 < await r.ttl(k.outcome(gid, cid)) <= min(600, ended.GRACE_S)

    anyio.run(main)
