"""The gateway's shared round trips (services/gateway/roundtrips.py): the requests of many
sockets and commands in flight at once go to Redis together, each gets its own replies, and an
error reply is raised to its own request only.

Before, each command's rate count and each woken socket's read was a round trip (and a pool
connection) of its own: at 1,000 commands/s over sockets the gateway's 48 connections ran out
and sockets were closed 1013 (bench/run.py's gateway open loop)."""

from __future__ import annotations

import asyncio
import uuid

import anyio
from redis.exceptions import ResponseError

from services.adapters.redis_store import connect
from services.gateway.roundtrips import RoundTrips


def test_requests_in_flight_share_round_trips_and_get_their_own_replies(redis_url):
    async def main():
        r = connect(redis_url, max_connections=4)
        ns = f"rt-{uuid.uuid4().hex[:8]}"
        rt = RoundTrips(r)
        got: dict[int, list] = {}
        try:
            async def one(i: int) -> None:
                got[i] = await rt.run([("INCR", f"{ns}:c:{i % 7}"), ("SET", f"{ns}:k:{i}", i), ("GET", f"{ns}:k:{i}")])

            async with anyio.create_task_group() as tg:
                for i in range(500):
                    tg.start_soon(one, i)
            assert all(got[i][2] == str(i).encode() and got[i][1] in (b"OK", True) for i in range(500))
            counts = sorted(n for n, _, _ in got.values())  # every INCR counted once: 7 counters of 71-72
            assert counts[-1] == 72 and len(counts) == 500
            assert rt.requests == 500 and rt.round_trips < 50, (rt.round_trips, rt.requests)  # not one each

            await r.set(f"{ns}:s", "text")
            bad, good = await asyncio.gather(rt.run([("INCR", f"{ns}:s")]), rt.run([("SET", f"{ns}:k", 1), ("GET", f"{ns}:k")]),
                                             return_exceptions=True)
            assert isinstance(bad, ResponseError), bad  # INCR of a string: raised to that request only,
            assert good[1] == b"1", good  # the other one ran in the same round trip
        finally:
            async for key in r.scan_iter(match=f"{ns}:*"):
                await r.delete(key)
            await r.aclose()

    anyio.run(main)
