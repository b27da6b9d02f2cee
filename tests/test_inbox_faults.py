"""Attacks on the reply inbox's drain (a8aa6fa): after a pop that found outcomes every partition
list is drained with ``LPOP key count`` in one round trip on the reader's connection."""

from __future__ import annotations

import anyio
from redis.exceptions import ConnectionError as RedisConnectionError

from schemas.envelope import Accepted
from services.adapters import inbox as inbox_module
from services.adapters.redis_store import ENC, CommandBus, connect
from tests.test_inbox import inbox_logs


def _late_gid(settings) -> str:
    k = settings.keys
    return next(g for g in (f"g-late-{i}" for i in range(1000)) if k.partition(g) == settings.partitions - 1)


def test_a_drain_cut_after_redis_popped_the_lists_still_answers_from_the_stored_outcome(settings, monkeypatch):
    """The connection lost after the drain's LPOPs ran (the outcomes popped, the replies never
    read): the waiter whose outcome went that way is answered from its stored outcome, and the
    next pops run on a fresh connection (an outcome pushed after is delivered from the inbox)."""
    real = inbox_module.read_replies
    cut = []

    async def read_then_cut(conn, n):
        if not cut:
            cut.append(n)
            await real(conn, n)  # Redis ran every LPOP: what they popped is gone from the lists
            raise RedisConnectionError("cut after the drain ran")
        return await real(conn, n)

    monkeypatch.setattr(inbox_module, "read_replies", read_then_cut)

    async def main():
        r = connect(settings.url)
        admin = connect(settings.url)
        bus = CommandBus(r, settings)
        k = settings.keys
        try:
            with inbox_logs(monkeypatch) as logs:
                gid = _late_gid(settings)
                g0 = next(g for g in (f"g-first-{i}" for i in range(1000)) if k.partition(g) == 0)
                first = Accepted(command_id="c-first", game_id=g0, version=1, events=1)
                late = Accepted(command_id="c-late", game_id=gid, version=1, events=1)
                await admin.set(k.outcome(gid, "c-late"), ENC.encode(late))
                await admin.rpush(k.inbox(k.partition(g0), bus.inbox.name), ENC.encode(first))
                await admin.rpush(k.inbox(k.partition(gid), bus.inbox.name), ENC.encode(late))
                # both lists filled before the reader starts: one BLMPOP (the first list), then the drain
                f1 = bus.inbox.expect(g0, "c-first")
                f2 = bus.inbox.expect(gid, "c-late")
                with anyio.fail_after(20):
                    assert await f1 == first
                    assert await f2 == late
                assert cut, "the drain ran"
                assert await admin.llen(k.inbox(k.partition(gid), bus.inbox.name)) == 0
                assert bus.inbox.fallbacks == 1
                after = Accepted(command_id="c-after", game_id=gid, version=2, events=1)
                f3 = bus.inbox.expect(gid, "c-after")
                await admin.rpush(k.inbox(k.partition(gid), bus.inbox.name), ENC.encode(after))
                with anyio.fail_after(20):
                    assert await f3 == after
                assert bus.inbox.delivered == 2
            assert not any(e["event"] == "inbox_unavailable" for e in logs)
        finally:
            await bus.aclose()
            await r.aclose()
            await admin.aclose()

    anyio.run(main)


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
