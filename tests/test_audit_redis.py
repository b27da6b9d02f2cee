"""The audit through Redis: games of every title played on the bus pass; the seed of an
unfinished game is in no view, feed, key or export; CLI ``audit GAME_ID`` / ``export``."""

from __future__ import annotations

import random

import anyio
import msgspec
import pytest
from typer.testing import CliRunner

from schemas.envelope import AbandonGame, Accepted
from services.adapters.client import BusClient
from services.adapters.redis_store import EventStore
from services.audit.store import (
    GameNotFound,
    NotFinished,
    audit_game,
    export_bundle,
    public_audit,
    public_bundle,
)
from services.audit.verify import audit_bundle, encode_bundle
from services.cli import app
from services.local.demo import TitleStats, play_bot_game
from services.runtime.serve import services_running
from tests.toygame import Add, Roll

LANDED = ["questeros", "orion_duel", "quests_over_coffee", "eros_quest", "fate_deck", "reventure_orbtale", "orange_quest"]
SEATS = {"eros_quest": 1, "fate_deck": 3}


@pytest.fixture
def cli_env(settings, monkeypatch):
    monkeypatch.setenv("REDIS_URL", settings.url)
    monkeypatch.setenv("QUESTHALL_NAMESPACE", settings.namespace)
    monkeypatch.setenv("QUESTHALL_PARTITIONS", str(settings.partitions))
    return CliRunner()


def test_games_of_every_title_played_on_the_bus_pass_the_audit(settings, cli_env, tmp_path):
    async def main():
        async with services_running(settings, titles=LANDED) as s:
            c = BusClient(s["redis"], settings)
            out = {}
            for i, name in enumerate(LANDED):
                stats = TitleStats()
                await play_bot_game(c, name, SEATS.get(name, 2), random.Random(i), stats)
                assert stats.finished == 1 and not stats.failures, stats.failures
                gid = stats.game_ids[0]
                v = await audit_game(s["redis"], settings, gid)
                assert v.ok and v.replayed == v.commands > 0, v.summary()
                assert (await public_audit(s["redis"], settings, gid)).ok
                out[name] = gid
            with pytest.raises(GameNotFound):
                await audit_game(s["redis"], settings, "no-such-game")
            return out

    games = anyio.run(main)
    for name, gid in games.items():
        res = cli_env.invoke(app, ["audit", gid])
        assert res.exit_code == 0, res.output
        assert f"VALID {name}" in res.output
        path = tmp_path / f"{name}.json"
        res = cli_env.invoke(app, ["export", gid, "--out", str(path)])
        assert res.exit_code == 0, res.output
        assert cli_env.invoke(app, ["audit", "--file", str(path)]).exit_code == 0
    assert cli_env.invoke(app, ["audit", "no-such-game"]).exit_code == 2
    assert cli_env.invoke(app, ["export", "no-such-game"]).exit_code == 2


async def _dump_namespace(r, settings, skip: str) -> dict[bytes, bytes]:
    """Every key of the namespace but ``skip`` with its whole content as bytes."""
    out: dict[bytes, bytes] = {}
    async for key in r.scan_iter(match=f"{settings.namespace}:*", count=1000):
        if key.decode() == skip:
            continue
        t = (await r.type(key)).decode()
        if t == "string":
            val = await r.get(key)
        elif t == "stream":
            val = repr(await r.xrange(key)).encode()
        elif t == "hash":
            val = repr(await r.hgetall(key)).encode()
        elif t == "set":
            val = repr(await r.smembers(key)).encode()
        elif t == "zset":
            val = repr(await r.zrange(key, 0, -1, withscores=True)).encode()
        elif t == "list":
            val = repr(await r.lrange(key, 0, -1)).encode()
        else:
            val = t.encode()
        out[key] = val
    return out


def test_the_seed_of_an_unfinished_game_is_in_no_view_feed_key_or_export(settings, cli_env, tmp_path, capfd):
    async def play():
        async with services_running(settings, titles=["toy"]) as s:
            r = s["redis"]
            c = BusClient(r, settings)
            gid, v = await c.setup("toy", 3, {"target": 900})
            for i in range(7):
                out = await c.submit("toy", gid, Roll() if i % 2 else Add(n=2), i % 3)
                assert isinstance(out, Accepted)
                v = out.version
            await c.wait_projected(gid, v)
            seed = await EventStore(r, settings).seed(gid)
            assert seed is not None and len(seed) == 32
            secrets = [seed.hex().encode(), seed.hex().upper().encode(), seed]
            secret_key = settings.keys.game(gid, "secret")
            # every view, every feed, and every other key of the namespace (snapshots, logs,
            # command records, outcomes, lobby)
            for seat in (0, 1, 2, None):
                assert (await c.view(gid, seat))["status"] == "active"
                assert await c.feed(gid, seat)
            dump = await _dump_namespace(r, settings, skip=secret_key)
            assert any(b":rm:" in k for k in dump) and any(b"snap" in k for k in dump)
            for key, val in dump.items():
                for sec in secrets:
                    assert sec not in val, f"seed found in {key!r}"
            bundle = await export_bundle(r, settings, gid)
            assert bundle["seed"] is None and bundle["status"] == "active"
            data = encode_bundle(bundle)
            assert not any(sec in data for sec in secrets[:2])
            assert audit_bundle(bundle).status == "pending"
            with pytest.raises(NotFinished):
                await public_bundle(r, settings, gid)
            with pytest.raises(NotFinished):
                await public_audit(r, settings, gid)
            return gid, secrets

    gid, secrets = anyio.run(play)
    res = cli_env.invoke(app, ["export", gid])
    assert res.exit_code == 0 and msgspec.json.decode(res.output)["seed"] is None
    assert not any(sec in res.output.encode() for sec in secrets[:2])
    res = cli_env.invoke(app, ["audit", gid])
    assert res.exit_code == 3 and "PENDING" in res.output, res.output
    captured = capfd.readouterr()
    assert not any(sec.decode() in captured.out + captured.err for sec in secrets[:2])

    async def finish():
        async with services_running(settings, titles=["toy"]) as s:
            c = BusClient(s["redis"], settings)
            out = await c.submit("toy", gid, AbandonGame(reason="tea time"), 1)
            assert isinstance(out, Accepted)
            bundle = await public_bundle(s["redis"], settings, gid)
            assert bundle["status"] == "finished" and bundle["seed"].encode() == secrets[0]  # a forfeit
            v = await public_audit(s["redis"], settings, gid)
            assert v.ok and v.seed_verified, v.summary()

    anyio.run(finish)
    assert cli_env.invoke(app, ["audit", gid]).exit_code == 0
