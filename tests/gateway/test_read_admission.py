"""Read admission (issue 13, a breaker run): 1,500 anonymous view and feed reads from one address
exhausted the gateway's Redis pool (503) and another client's p50 went to 4.7 s. Reads are now
admitted per client address (a token bucket and a cap on reads in flight, in the gateway's
memory): past them a read is answered 429 ``rate_limited`` with ``Retry-After``, costs no round
trip to Redis and logs at most one line; another address is served as before (real gateway,
real Redis, real sockets; the flood itself: tests/flood.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import anyio
import httpx
import pytest

from services.adapters.redis_store import Settings
from services.sdk import Gateway
from tests.gateway.conftest import Running, make_config, run_gateway

OTHER = "127.0.0.2"
"""Another client address on loopback (Linux routes all of 127/8 to lo)."""


@pytest.fixture
def reads_bounded(redis_url: str, monkeypatch) -> Iterator[Running]:
    """A gateway with small read limits: 4 reads at once after a pause, then one per 10 s; at most
    two in flight per address; a ``min_version`` wait of 1.5 s. Proxies: 127.0.0.1 is trusted."""
    monkeypatch.setenv("QUESTHALL_FORWARDED_ALLOW_IPS", "127.0.0.1")
    settings = Settings(url=redis_url, namespace=f"gr{uuid.uuid4().hex[:10]}", partitions=2)
    yield from run_gateway(settings, make_config(read_rate=0.1, read_burst=4, reads_in_flight=2, read_wait=1.5))


def _client(url: str, address: str | None = None) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=address) if address else None
    return httpx.AsyncClient(base_url=url, transport=transport, timeout=30)


def test_a_read_flood_from_one_address_is_refused_429_and_another_address_is_served(reads_bounded):
    from websockets.asyncio.client import connect as ws_connect
    from websockets.exceptions import InvalidStatus

    async def main():
        async with Gateway(reads_bounded.url) as gw:
            g = await gw.create("questeros", 2)
        path = f"/v1/games/{g.game_id}/view"
        async with _client(reads_bounded.url, OTHER) as flood, _client(reads_bounded.url) as other:
            got = [(await flood.get(path)) for _ in range(12)]
            assert [r.status_code for r in got[:4]] == [200] * 4  # the burst
            refused = got[4:]
            assert {r.status_code for r in refused} == {429}, [r.status_code for r in got]
            assert {r.json()["code"] for r in refused} == {"rate_limited"}
            assert all(int(r.headers["retry-after"]) >= 1 for r in refused)
            assert (await flood.get("/v1/lobby")).status_code == 429  # every read of /v1 counts, not one path
            assert (await flood.post("/v1/games", json={"title": "questeros", "seats": 2})).status_code == 201  # a write: its own limit
            # another address: its own bucket
            assert [(await other.get(path)).status_code for _ in range(3)] == [200] * 3
            assert (await other.get("/v1/lobby")).status_code == 200
            # a trusted proxy's X-Forwarded-For names the client (QUESTHALL_FORWARDED_ALLOW_IPS), so each
            # client behind it has its own bucket; from an untrusted peer the header is ignored
            fwd = {"X-Forwarded-For": "203.0.113.5"}
            assert [(await other.get("/v1/lobby", headers=fwd)).status_code for _ in range(5)] == [200] * 4 + [429]
            assert (await other.get("/v1/lobby", headers={"X-Forwarded-For": "203.0.113.6"})).status_code == 200
            assert (await flood.get("/v1/lobby", headers={"X-Forwarded-For": "203.0.113.77"})).status_code == 429
        # a socket whose first read would hit Redis counts as a read too: refused 4429 from the spent address
        async with Gateway(reads_bounded.url) as gw:
            g2 = await gw.create("questeros", 2)
        with pytest.raises(Exception) as e:
            async with ws_connect(f"{reads_bounded.url.replace('http', 'ws')}/v1/games/{g2.game_id}/ws?since=0",
                                  additional_headers={"X-Forwarded-For": "203.0.113.5"}) as ws:
                await ws.recv()
        assert not isinstance(e.value, InvalidStatus)
        assert getattr(e.value, "rcvd", None) is not None and e.value.rcvd.code == 4429, e.value
        assert "rate_limited" in e.value.rcvd.reason

    anyio.run(main)


def test_reads_waiting_for_a_projection_hold_a_slot_and_the_slots_are_bounded(reads_bounded):
    """Two reads of one address wait for a version never projected (``min_version``): a third is
    refused 429 at once while they wait (before: unbounded, each one polling Redis for
    ``QUESTHALL_READ_WAIT`` s); another address reads meanwhile; once they ended (504), the
    address reads again."""

    async def main():
        async with Gateway(reads_bounded.url) as gw:
            g = await gw.create("questeros", 2)
        path = f"/v1/games/{g.game_id}/feed"
        async with _client(reads_bounded.url, OTHER) as flood, _client(reads_bounded.url) as other:
            waited: list[int] = []

            async def wait_far() -> None:
                waited.append((await flood.get(path, params={"min_version": 10_000})).status_code)

            async with anyio.create_task_group() as tg:
                tg.start_soon(wait_far)
                tg.start_soon(wait_far)
                with anyio.fail_after(10):
                    while _in_flight((await other.get(reads_bounded.url + "/metrics")).text) < 2:
                        await anyio.sleep(0.02)
                r = await flood.get(path)
                assert r.status_code == 429 and r.json()["code"] == "rate_limited" and r.headers["retry-after"] == "1"
                assert "at once" in r.json()["message"]
                assert (await other.get(path)).status_code == 200
            assert waited == [504, 504]
            assert (await flood.get(path)).status_code == 200  # its slots are free again (the bucket had 4)

    anyio.run(main)


def _in_flight(metrics: str) -> float:
    return next(float(ln.rsplit(" ", 1)[1]) for ln in metrics.splitlines() if ln.startswith("questhall_gateway_reads_in_flight "))


def test_a_refused_read_costs_no_round_trip_and_logs_one_line(redis_url, capfd):
    """Every pool connection held by the test: an admitted read would wait for one and be answered
    503; the refused ones are answered 429 at once (no connection asked for), and ten refusals
    write one ``gateway_reads_refused`` line, no traceback."""
    from litestar.testing import TestClient

    from services.gateway.app import create_app

    settings = Settings(url=redis_url, namespace=f"gq{uuid.uuid4().hex[:8]}", partitions=1)
    app = create_app(settings, make_config(redis_connections=1, pool_wait=0.3, read_rate=0.01, read_burst=1))
    with TestClient(app) as c:
        assert c.get("/v1/games/g1").json()["code"] == "game_not_found"  # the bucket's one read
        pool = app.state.gw.r.connection_pool
        held = c.blocking_portal.call(pool.get_connection)
        try:
            for _ in range(10):
                got = c.get("/v1/games/g1/view")
                assert (got.status_code, got.json()["code"]) == (429, "rate_limited")
                assert int(got.headers["retry-after"]) >= 1
        finally:
            c.blocking_portal.call(pool.release, held)
        metrics = c.get("/metrics").text
    assert 'questhall_gateway_reads_refused_total{reason="rate"} 10.0' in metrics
    out = capfd.readouterr()
    assert (out.out + out.err).count("gateway_reads_refused") == 1 and "Traceback" not in out.out + out.err


def test_spectator_sockets_opening_at_once_share_the_first_read_and_are_not_refused(reads_bounded):
    """30 spectator sockets of one game open at once from one address whose bucket holds 4 reads:
    the first socket's read is shared by the others (it is counted right before it is made, and
    a read being made is shared), so every socket gets the view; counted at connect, before that
    read was registered, sockets of the first burst were closed 4429 (298 of 5,000 in a make flood)."""
    import json

    from websockets.asyncio.client import connect as ws_connect

    async def main():
        async with Gateway(reads_bounded.url) as gw:
            g = await gw.create("questeros", 2)
            a, b = await gw.join(g.game_id, "A", seat=0), await gw.join(g.game_id, "B", seat=1)
            started = await a.start()
            await b.view(min_version=started.version)  # the sockets below come from 203.0.113.9 (a trusted proxy's header)
        url = f"{reads_bounded.url.replace('http', 'ws')}/v1/games/{g.game_id}/ws?since=0"
        got: list[int] = []

        async def one() -> None:
            async with ws_connect(url, additional_headers={"X-Forwarded-For": "203.0.113.9"}) as ws:
                with anyio.fail_after(30):
                    while (m := json.loads(await ws.recv()))["type"] != "view":
                        pass
                got.append(m["version"])

        async with anyio.create_task_group() as tg:
            for _ in range(30):
                tg.start_soon(one)
        assert len(got) == 30 and min(got) >= started.version

    anyio.run(main)
