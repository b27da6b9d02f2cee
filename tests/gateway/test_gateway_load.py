"""What the gateway spends per socket and per refused request (issue 13 flood, issue 11 sockets).

- The spectators of one game share what they read: a socket's catch-up (its view, whether that
  view is settled, its feed after its cursor) is one pipelined read, shared by every socket of
  the same game and reader until the game changes (services/gateway/fanout.py); before, each
  socket made three round trips of its own at every wake-up.
- A create past the per-address limit, once the process knows the limit is reached, is refused
  without a round trip to Redis (and so is a command past the seat's rate).
Redis commands are counted server side (``INFO commandstats``), so these hold whatever the client.
"""

from __future__ import annotations

import json
import uuid

import anyio
import pytest

from services.adapters.redis_store import Settings, connect
from services.sdk import Gateway, GatewayError
from tests.gateway.conftest import make_config, run_gateway


async def _calls(r, command: str) -> int:
    stats = await r.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


async def _metric(gw: Gateway, url: str, name: str) -> dict[str, float]:
    text = (await gw.http.get(url + "/metrics")).text
    return {ln.split("{", 1)[1].split("}", 1)[0]: float(ln.rsplit(" ", 1)[1])
            for ln in text.splitlines() if ln.startswith(name + "{")}


def test_spectators_of_one_game_share_their_reads(gateway, redis_url):
    from websockets.asyncio.client import connect as ws_connect

    n = 150

    async def main():
        r = connect(redis_url)
        async with Gateway(gateway.url) as gw:
            g = await gw.create("questeros", 2)
            seats = [await gw.join(g.game_id, "a", seat=0), await gw.join(g.game_id, "b", seat=1)]
            started = await seats[0].start()
            view = await seats[0].view(min_version=started.version)
            xr0 = await _calls(r, "xrange")
            socks = [await ws_connect(f"{gw.ws_url}/v1/games/{g.game_id}/ws?since=0") for _ in range(n)]

            async def until_view(ws, version: int) -> list[int]:
                got = []
                while True:
                    m = json.loads(await ws.recv())
                    got.append(m["version"])
                    if m["type"] == "view" and m["version"] >= version:
                        return got

            with anyio.fail_after(60):
                for ws in socks:  # each gets the whole feed, then the view
                    assert await until_view(ws, started.version) == [*range(1, started.version + 1), started.version]
                mover = seats[view["to_move"][0]]
                moved = await mover.submit({"type": "questeros.bid", "quests": 1})
                for ws in socks:  # and the move, once
                    got = await until_view(ws, moved.version)
                    assert got[-1] == moved.version and got[:-1] == list(range(started.version + 1, moved.version + 1))
            xr = await _calls(r, "xrange") - xr0
            reads = await _metric(gw, gateway.url, "questhall_gateway_socket_reads")
            for ws in socks:
                await ws.close()
        await r.aclose()
        # 150 sockets x 2 catch-ups read 600 times with XRANGE before (feed and settled check)
        assert xr < 100, xr
        assert reads.get('source="shared"', 0) >= n, reads

    anyio.run(main)


def test_refusals_past_a_known_limit_cost_no_round_trip(redis_url):
    settings = Settings(url=redis_url, namespace=f"gl{uuid.uuid4().hex[:10]}", partitions=2)
    tight = make_config(admit_creates=3, rate_per_seat=3, rate_window=60)

    async def main(url: str):
        r = connect(redis_url)
        async with Gateway(url) as gw:
            games = [await gw.create("questeros", 2) for _ in range(3)]
            incr0 = await _calls(r, "incrby")
            for _ in range(30):
                with pytest.raises(GatewayError) as exc:
                    await gw.create("questeros", 2)
                assert exc.value.status == 429 and exc.value.code == "rate_limited"
            assert await _calls(r, "incrby") - incr0 <= 2  # a window boundary crossed meanwhile: one more count
            a = await gw.join(games[0].game_id, "a", seat=0)
            await gw.join(games[0].game_id, "b", seat=1)
            await a.start()
            for _ in range(10):  # up to the rate (3 commands, accepted or refused by the rules), then 429
                try:
                    await a.submit({"type": "questeros.bid", "quests": 1})
                except GatewayError as exc:
                    if exc.code == "rate_limited":
                        break
            incr0 = await _calls(r, "incrby")
            for _ in range(30):
                with pytest.raises(GatewayError) as exc:
                    await a.submit({"type": "questeros.bid", "quests": 1})
                assert exc.value.status == 429 and exc.value.code == "rate_limited"
            assert await _calls(r, "incrby") - incr0 <= 2
        await r.aclose()

    for running in run_gateway(settings, tight):
        anyio.run(main, running.url)
