"""The same code on a real 3-master Redis Cluster (redis-py's cluster client).

A local cluster of ``redis-server`` children (``--cluster-enabled yes``, joined with
``redis-cli --cluster create``) runs every title's worker and the projector while bots play games
of every title concurrently. Checks: no error at all (a CROSSSLOT would surface as a failed
command or a handling failure), every game finishes, replay equals the read models, a full
rebuild gives byte-identical read models, and a command put on another partition's stream is
still answered with a rejection (that path used to write keys of two slots in one script).
"""

from __future__ import annotations

import random
import shutil
import time

import anyio
import pytest

from schemas.envelope import CommandEnvelope, Rejected
from services.adapters.client import BusClient
from services.adapters.redis_store import ENC, Settings, connect
from services.kernel import titles
from services.local.demo import (
    TitleStats,
    default_seats_for,
    dump_read_models,
    play_bot_game,
    verify_replay,
)
from services.local.embedded_cluster import LocalCluster
from services.runtime.projector import rebuild
from services.runtime.serve import services_running
from tests.toygame import Add

pytestmark = pytest.mark.skipif(shutil.which("redis-cli") is None or shutil.which("redis-server") is None,
                                reason="needs redis-server and redis-cli on PATH")

GAMES_PER_TITLE = 4


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("cluster")) as c:
        yield c


def test_bot_games_of_every_title_on_a_three_master_cluster(cluster):
    settings = Settings(url=cluster.url, namespace="clu", partitions=16)
    names = sorted(titles())
    stats = {n: TitleStats() for n in names}
    started = time.monotonic()

    async def main():
        r = connect(settings.url)
        await r.initialize()  # the partitions really are spread over the three masters
        nodes = {r.get_node_from_key(settings.keys.log(p)).port for p in range(settings.partitions)}
        assert len(nodes) == 3, nodes
        async with services_running(settings, r=r, worker_kwargs={"min_idle_ms": 2000}):
            c = BusClient(r, settings)

            async def play(name, n):
                await play_bot_game(c, name, default_seats_for(name, n), random.Random(n), stats[name])

            async with anyio.create_task_group() as tg:
                for name in names:
                    for n in range(GAMES_PER_TITLE):
                        tg.start_soon(play, name, n)

            # a command put on the stream of a partition that is not its game's
            gid = await c.create("toy", 2, {"target": 30})
            k = settings.keys
            wrong = k.commands((k.partition(gid) + 1) % settings.partitions, "toy")
            env = CommandEnvelope(command_id="wrong-stream", game_id=gid, title="toy", body=Add(n=1), seat=0)
            await r.xadd(wrong, {"c": ENC.encode(env)})
            out = await c.bus.wait(gid, "wrong-stream", timeout=20)
            assert isinstance(out, Rejected) and out.code == "bad_command", out
            for name in names:
                await verify_replay(r, settings, name, stats[name])
            dead = [await r.xlen(k.dead(p, t)) for p in range(settings.partitions) for t in names]
            assert sum(dead) == 0, "a command was parked: a handling error (CROSSSLOT?)"
        before = await dump_read_models(r, settings)
        assert await rebuild(r, settings) == len(names) * GAMES_PER_TITLE + 1
        after = await dump_read_models(r, settings)
        await r.aclose()
        return before, after

    before, after = anyio.run(main)
    for name in names:
        s = stats[name]
        assert not s.failures, s.failures
        assert s.games == s.finished == s.replay_ok == GAMES_PER_TITLE, (name, s)
    assert len(before) > 50 and before == after
    # the projector's readiness probe works through the synchronous cluster client
    from services.runtime.health import Health

    k = settings.keys
    probe = Health(object(), kind="projector", streams=[k.log(p) for p in range(settings.partitions)], group="projector",
                   url=cluster.url)
    assert probe.ready()
    assert not Health(object(), kind="worker", streams=[k.log(0)], group="nope", url=cluster.url).ready()
    print(f"cluster: {sum(s.accepted for s in stats.values())} commands in {time.monotonic() - started:.1f} s")
