"""Attacks on the reply inbox under a Redis restart while the outcomes of many partitions flow
(the reader's pops name the partitions' lists round robin)."""

from __future__ import annotations

import anyio

from services.adapters import inbox as inbox_module
from services.adapters.redis_store import connect


def _late_gid(settings) -> str:
    k = settings.keys
    return next(g for g in (f"g-late-{i}" for i in range(1000)) if k.partition(g) == settings.partitions - 1)


def test_a_redis_restart_while_outcomes_of_16_partitions_flow_loses_and_doubles_nothing(own_server, settings):
    """40 games on 16 partitions, each playing 12 moves concurrently through one bus client
    (outcomes arrive on many lists at once: pops and drains), Redis stopped and started again
    (AOF) after the first 100 outcomes: every submit answers, each answer is the stored outcome,
    each game's stream holds each accepted move once, and a rebuild gives the same read models."""
    import dataclasses

    from schemas.envelope import Rejected
    from services.adapters.client import BusClient
    from services.local.demo import dump_read_models
    from services.runtime.projector import rebuild
    from services.runtime.serve import services_running
    from tests.toygame import Add

    settings = dataclasses.replace(settings, url=own_server.url, partitions=16)

    async def main():
        r = connect(settings.url)
        k = settings.keys
        answers: dict[str, list] = {}
        done = anyio.Event()
        count = [0]
        async with services_running(settings, titles=["toy"], r=r):
            c = BusClient(r, settings, timeout=60)

            async def play(i: int) -> None:
                gid, sv = await c.setup("toy", 2, {"target": 1000}, game_id=f"rs{i}")
                outs = answers.setdefault(gid, [sv])
                for m in range(12):
                    out = await c.submit("toy", gid, Add(n=1), m % 2, command_id=f"rs{i}-m{m}")
                    outs.append(out)
                    count[0] += 1
                    if count[0] == 100:
                        done.set()

            async def restart() -> None:
                await done.wait()
                await anyio.to_thread.run_sync(own_server.stop)
                await anyio.to_thread.run_sync(own_server.start)

            async with anyio.create_task_group() as tg:
                tg.start_soon(restart)
                for i in range(40):
                    tg.start_soon(play, i)
            for gid, (sv, *outs) in answers.items():
                assert len(outs) == 12
                for out in outs:
                    assert not isinstance(out, Rejected), out
                    stored = await r.get(k.outcome(gid, out.command_id))
                    assert stored is not None, (gid, out)
                    assert inbox_module._DECODER.decode(stored) == out
                version = int(await r.hget(k.game(gid, "meta"), "version"))
                assert version == outs[-1].version == sv + 12, (gid, version, outs[-1])
                assert await r.xlen(k.game(gid, "events")) == version
                assert [o.version for o in outs] == list(range(sv + 1, sv + 13))
                await c.wait_projected(gid, version)
        before = await dump_read_models(r, settings)
        await rebuild(r, settings)
        assert await dump_read_models(r, settings) == before
        await r.aclose()

    anyio.run(main)
