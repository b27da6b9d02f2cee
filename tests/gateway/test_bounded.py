"""Bounded resources (issue 13): admission limits, socket caps, reads after writes, the public
audit's cache and limit, rejected outcomes that expire, partition logs trimmed, destructive CLI
commands that need a named Redis, deployments that carry their keys (real Redis, real sockets)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import yaml
from typer.testing import CliRunner

from schemas.envelope import Rejected
from services.adapters import ended
from services.adapters.client import BusClient
from services.adapters.redis_store import GroupReader, Settings, connect
from services.cli import app
from services.sdk import Gateway, GatewayError, play_bot_game
from tests.gateway.conftest import Running, finished_bus_game, make_config, run_gateway

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


@pytest.fixture(scope="module")
def tight(redis_url: str) -> Iterator[Running]:
    settings = Settings(url=redis_url, namespace=f"gb{uuid.uuid4().hex[:10]}", partitions=2)
    yield from run_gateway(settings, make_config(admit_creates=4, admit_joins=1000, admit_starts=1000, audit_rate=2,
                                                 ws_per_address=3, ws_max=1000, read_wait=0.3))


def test_admission_limits_sockets_reads_and_the_public_audit(tight):
    import random

    from websockets.asyncio.client import connect as ws_connect
    from websockets.exceptions import ConnectionClosed

    async def main():
        async with Gateway(tight.url) as gw:
            gid, final, _ = await play_bot_game(gw, "orion_duel", 2, random.Random(3))  # creates: 1
            g2 = await gw.create("questeros", 2)
            g3 = await gw.create("questeros", 2)
            await gw.create("questeros", 2)  # creates: 4, the limit
            with pytest.raises(GatewayError) as e:
                await gw.create("questeros", 2)
            assert (e.value.status, e.value.code) == (429, "rate_limited") and e.value.retry_after >= 1
            # a header cannot pick another address (uvicorn trusted X-Forwarded-For from 127.0.0.1; breaker run)
            import httpx

            async with httpx.AsyncClient() as h:
                r = await h.post(f"{tight.url}/v1/games", json={"title": "questeros", "seats": 2, "options": {}},
                                 headers={"X-Forwarded-For": "203.0.113.7"})
            assert r.status_code == 429 and r.json()["code"] == "rate_limited"
            # reads after writes: the reply's version is the one to wait for
            a = await gw.join(g2.game_id, "A")
            b = await gw.join(g2.game_id, "B")
            out = await a.start()
            env = await a.view(min_version=out.version)
            assert env["version"] >= out.version
            assert (await gw.spectator_view(g2.game_id, min_version=out.version))["version"] >= out.version
            with pytest.raises(GatewayError) as e:
                await b.view(min_version=out.version + 1000)
            assert (e.value.status, e.value.code) == (504, "not_projected")
            # sockets: at most 3 per address; the 4th is closed with 4429, no traceback
            url = f"{gw.ws_url}/v1/games/{g3.game_id}/ws"
            opened = [await ws_connect(url) for _ in range(3)]
            extra = await ws_connect(url)
            with pytest.raises(ConnectionClosed) as ce, anyio.fail_after(30):
                while True:
                    await extra.recv()
            assert ce.value.rcvd.code == 4429
            for s in opened:
                await s.close()
            await extra.close()
            with anyio.fail_after(30):  # closed sockets free their places (once the gateway saw the close)
                while True:
                    again = await ws_connect(url)
                    try:
                        await again.send('{"type":"ping"}')
                        while (await again.recv()) != '{"type":"pong"}':
                            pass
                        break
                    except ConnectionClosed:
                        await anyio.sleep(0.05)
                    finally:
                        await again.close()
            # the public audit: cached per finished game, rate-limited per address
            assert final["status"] == "finished"
            v1 = await gw.audit(gid)
            assert v1["status"] == "valid"
            for _ in range(5):  # cached: not counted
                assert await gw.audit(gid) == v1
            await b.submit({"type": "abandon"})  # a forfeit: g2 is finished
            await a.wait_view((await a.head())["version"])
            assert (await gw.audit(g2.game_id))["status"] == "valid"
            g4 = await gw.join(g3.game_id, "C")
            await gw.join(g3.game_id, "D")
            await g4.submit({"type": "abandon"})  # in the lobby: abandoned
            with pytest.raises(GatewayError) as e:
                with anyio.fail_after(10):
                    while True:
                        try:
                            await gw.audit(g3.game_id)
                        except GatewayError as exc:
                            if exc.code == "game_not_over":
                                await anyio.sleep(0.02)
                                continue
                            raise
            assert (e.value.status, e.value.code) == (429, "rate_limited")

    anyio.run(main)


def test_rejections_expire_and_partition_logs_are_trimmed(tight):
    s = tight.settings

    async def main():
        r = connect(s.url)
        try:
            c = BusClient(r, s)
            gid = await c.create("questeros", 2)
            out = await c.submit("questeros", gid, __import__("schemas.envelope", fromlist=["StartGame"]).StartGame(), 0)
            assert isinstance(out, Rejected)
            ttl = await r.ttl(s.keys.outcome(gid, out.command_id))
            assert 0 < ttl <= s.rejected_ttl == 86400
            assert await r.ttl(s.keys.game(gid, "meta")) == -1  # the game itself is kept
            p = s.keys.partition(gid)
            log = s.keys.log(p)
            with anyio.fail_after(10):  # the projector acknowledged the create
                while (await r.xpending(log, "projector"))["pending"] or (await r.xinfo_groups(log))[0].get("lag"):
                    await anyio.sleep(0.02)
            assert await r.xlen(log) >= 1
            await GroupReader(r, log, "projector", "probe").trim_below_groups()
            assert await r.xlen(log) <= 1  # below the last delivered entry: only it is kept
            await c.wait_projected(gid, 1)
        finally:
            await r.aclose()

    anyio.run(main)


def test_rebuild_needs_a_named_redis_and_replicas_need_their_keys(tight, tmp_path, monkeypatch):
    import services.cli as cli

    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setattr(cli, "URL_FILE", tmp_path / "no-url")
    runner = CliRunner()
    res = runner.invoke(app, ["rebuild"])
    assert res.exit_code == 2 and "--redis" in res.output, res.output
    monkeypatch.setenv("QUESTHALL_NAMESPACE", tight.settings.namespace)
    monkeypatch.setenv("QUESTHALL_PARTITIONS", str(tight.settings.partitions))
    res = runner.invoke(app, ["rebuild", "--redis", tight.settings.url])
    assert res.exit_code == 0 and "Rebuilt" in res.output, res.output
    for var in ("QUESTHALL_TOKEN_KEYS", "QUESTHALL_RECEIPT_KEYS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("QUESTHALL_REPLICAS", "2")
    res = runner.invoke(app, ["gateway", "--port", "0"])
    assert res.exit_code == 2 and "QUESTHALL_TOKEN_KEYS" in res.output and "QUESTHALL_RECEIPT_KEYS" in res.output


def test_deployments_set_the_keys_from_a_secret():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    env = compose["services"]["gateway"]["environment"]
    assert env["QUESTHALL_TOKEN_KEYS"].startswith("${QUESTHALL_TOKEN_KEYS:?")
    assert env["QUESTHALL_RECEIPT_KEYS"].startswith("${QUESTHALL_RECEIPT_KEYS:?")
    docs = list(yaml.safe_load_all((DEPLOY / "k8s" / "base" / "gateway.yaml").read_text()))
    dep = next(d for d in docs if d["kind"] == "Deployment")
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert {"secretRef": {"name": "questhall-keys"}} in c["envFrom"]
    assert {"name": "QUESTHALL_REPLICAS", "value": str(dep["spec"]["replicas"])} in c["env"]


def test_finished_games_are_archived_and_restored_byte_for_byte(tight, monkeypatch):

    from services.audit.archive import archive_key, game_bytes
    from services.kernel import get_title

    s = tight.settings

    async def dump(r, gid):
        k = s.keys
        out = {}
        out["events"] = await ended.event_rows(r, k, gid)  # the streams, or their packed record
        out["commands"] = await ended.command_rows(r, k, gid)
        for key in [k.feed(gid, seat) for seat in (0, 1, None)]:
            out[key] = await r.xrange(key)
        for key in (k.game(gid, "meta"), k.game(gid, "secret"), k.lobby_game(gid)):
            out[key] = await r.hgetall(key)
        for key in [k.view(gid, seat) for seat in (0, 1, None)] + [k.rm(gid, "applied"), k.result(gid), ended.key(k, gid)]:
            out[key] = await r.get(key)
        return out

    async def play():  # on the bus (the gateway's create limit is spent by another test)
        gid = await finished_bus_game(s, 11)
        r = connect(s.url)
        try:
            # the projection that ended it settles it (its streams packed into one record) right
            # after the read models are applied: compare from the settled form on (the packing
            # landed between "before" and the archive in 1 of 2 runs)
            with anyio.fail_after(30):
                while not await r.exists(ended.key(s.keys, gid)):
                    await anyio.sleep(0.01)
            return gid
        finally:
            await r.aclose()

    async def measure(gid):
        r = connect(s.url)
        try:
            return await dump(r, gid), await game_bytes(r, s, gid), await r.memory_usage(archive_key(s, gid), samples=0), \
                await r.sismember(s.keys.games(s.keys.partition(gid)), gid)
        finally:
            await r.aclose()

    gid = anyio.run(play)
    before, live, _, _ = anyio.run(measure, gid)
    monkeypatch.setenv("REDIS_URL", s.url)
    monkeypatch.setenv("QUESTHALL_NAMESPACE", s.namespace)
    monkeypatch.setenv("QUESTHALL_PARTITIONS", str(s.partitions))
    res = CliRunner().invoke(app, ["archive", "--game", gid])
    assert res.exit_code == 0, res.output
    _, left, archived, member = anyio.run(measure, gid)
    assert left == 0 and not member and archived < min(live / 4, 4_000), (live, archived)  # live: no feeds, streams packed
    res = CliRunner().invoke(app, ["restore", gid])
    assert res.exit_code == 0, res.output
    after, _, gone, member = anyio.run(measure, gid)
    assert after == before and member and gone is None  # byte for byte
    assert CliRunner().invoke(app, ["audit", gid]).exit_code == 0
    assert get_title("orion_duel")


def test_games_never_started_expire_from_the_lobby(tight):
    from services.runtime.janitor import expire_lobby

    s = tight.settings

    async def main():
        r = connect(s.url)
        try:
            c = BusClient(r, s)
            gid = await c.create("questeros", 2)
            started, sv = await c.setup("questeros", 2)
            await c.wait_projected(gid, 1)
            await c.wait_projected(started, sv)
            with anyio.fail_after(10):  # the lobby read model (its own slot) has seen the start too
                while (await r.hget(s.keys.lobby_game(started), "status")) != b"active":
                    await anyio.sleep(0.02)
            created = int((await r.hget(s.keys.lobby_game(gid), "created_at")).decode())
            assert await expire_lobby(r, s, 86400, now_ms=created + 1000) == []  # not yet
            sent = await expire_lobby(r, s, 86400, now_ms=created + 86_400_000 + 1000)
            assert gid in sent and started not in sent
            await c.wait_projected(gid, 3)
            env = await c.view(gid, None)
            assert env["status"] == "abandoned"
            feed = await c.feed(gid, None)
            assert feed[-2]["body"] == {"type": "game_abandoned", "seat": None, "reason": "expired: not started within 24 h"}
            assert gid not in [m.decode() for m in await r.zrange(s.keys.lobby_index("questeros", "lobby"), 0, -1)]
        finally:
            await r.aclose()

    anyio.run(main)



def test_admission_counts_a_sliding_window_not_a_fixed_one(tight):
    """A burst astride a window boundary is one burst: the previous window's requests still count
    (weighted by how much of it lies in the last ``window`` s), so a fixed window's reset never
    lets ``2 x limit`` through in a moment (this failed before: the previous window was ignored)."""
    import time

    from services.gateway.metrics import Metrics
    from services.gateway.service import ApiError, GatewayService

    s = tight.settings

    async def main():
        r = connect(s.url)
        try:
            gw = GatewayService(r, s, tight.config, Metrics())
            window = 3600
            slot = int(time.time() // window)
            prefix = f"{s.namespace}:{{{s.namespace}:admit}}:create:203.0.113.9"
            for back in (1, 2):  # the window before this one (either, if an hour turns meanwhile) was spent
                await r.set(f"{prefix}:{slot - back}", 1_000_000, ex=60)
            with pytest.raises(ApiError) as e:
                await gw.admit("create", "203.0.113.9", 4, window)
            assert (e.value.status, e.value.code) == (429, "rate_limited")
            await gw.admit("create", "198.51.100.7", 4, window)  # another address: its own count
        finally:
            await r.aclose()

    anyio.run(main)


def test_an_exhausted_redis_pool_is_answered_503_overloaded_without_a_traceback(redis_url, capfd):
    """Every connection of the gateway's pool busy: a request waits ``pool_wait`` s, then gets 503
    ``overloaded`` with ``Retry-After`` and the log one line without a traceback (before: it waited
    20 s in the pool and was answered 503 ``unavailable``); once a connection is free it is served."""
    from litestar.testing import TestClient

    from services.gateway.app import create_app

    settings = Settings(url=redis_url, namespace=f"gp{uuid.uuid4().hex[:8]}", partitions=1)
    app = create_app(settings, make_config(redis_connections=1, pool_wait=0.2))
    with TestClient(app) as c:
        pool = app.state.gw.r.connection_pool
        held = c.blocking_portal.call(pool.get_connection)
        try:
            for _ in range(3):  # three refusals, one log line (a read flood logged one line per refusal)
                got = c.get("/v1/games/g1")
                assert (got.status_code, got.json()["code"], got.headers.get("retry-after")) == (503, "overloaded", "1")
        finally:
            c.blocking_portal.call(pool.release, held)
        assert c.get("/v1/games/g1").json()["code"] == "game_not_found"
    out = capfd.readouterr()
    assert (out.out + out.err).count("gateway_pool_exhausted") == 1 and "Traceback" not in out.out + out.err


def test_a_read_waiting_for_a_version_of_a_game_that_does_not_exist_is_404_not_a_wait(redis_url):
    """``min_version`` on a game id that holds no game: 404 ``game_not_found`` at once, as without it
    (it polled Redis for ``QUESTHALL_READ_WAIT`` s, then answered 504 ``not_projected``, "retry the
    read": a breaker's finding)."""
    from litestar.testing import TestClient

    from services.gateway.app import create_app

    settings = Settings(url=redis_url, namespace=f"gp{uuid.uuid4().hex[:8]}", partitions=1)
    with TestClient(create_app(settings, make_config(read_wait=3))) as c:
        for path in ("/v1/games/gnone/feed", "/v1/games/gnone/view"):
            got = c.get(path, params={"min_version": 1})
            assert (got.status_code, got.json()["code"]) == (404, "game_not_found"), path


def test_lobby_pages_and_metrics_scrapes_cost_a_bounded_number_of_round_trips(tight):
    """Unauthenticated reads: a lobby page of every title costs two round trips whatever its
    length (before: one HGETALL per game, ~3,000 for ``limit=500``), and ``/metrics`` one
    pipelined round trip of XINFO at most every 5 s (before: 56 in a row per scrape)."""
    from services.gateway.metrics import Metrics
    from services.gateway.service import GatewayService

    s = tight.settings

    class Counting:  # a real client that counts the round trips it makes
        def __init__(self, r):
            self.r, self.trips = r, 0

        async def execute_command(self, *a, **kw):
            self.trips += 1
            return await self.r.execute_command(*a, **kw)

        def pipeline(self, *a, **kw):
            pipe, outer = self.r.pipeline(*a, **kw), self
            execute = pipe.execute

            async def counted(*ea, **ekw):
                outer.trips += 1
                return await execute(*ea, **ekw)

            pipe.execute = counted
            return pipe

        def __getattr__(self, name):  # a command method runs on this wrapper, so its round trip counts
            attr = getattr(type(self.r), name, None)
            return attr.__get__(self) if callable(attr) and not isinstance(attr, type) else getattr(self.r, name)

    async def main():
        r = connect(s.url)
        try:
            k = s.keys
            for i in range(60):
                gid = f"lobby{i:03d}"
                await r.hset(k.lobby_game(gid), mapping={"title": "questeros", "status": "lobby", "seats": 3, "taken": 1,
                                                         "names": '["A",null,null]', "created_at": 1_000 + i})
                await r.zadd(k.lobby_index("questeros", "lobby"), {gid: 1_000 + i})
            c = Counting(r)
            gw = GatewayService(c, s, tight.config, Metrics())
            c.trips = 0
            page = await gw.lobby(None, "open", 500)
            assert [g.game_id for g in page[:2]] == ["lobby059", "lobby058"] and len(page) >= 60
            assert c.trips == 2, c.trips
            assert [g.game_id for g in await gw.lobby("questeros", "open", 3)] == ["lobby059", "lobby058", "lobby057"]
            c.trips = 0
            await gw.refresh_lag()
            await gw.refresh_lag()  # within 5 s: the gauges as read
            assert c.trips == 1, c.trips
        finally:
            await r.aclose()

    anyio.run(main)
