"""Slow handling is not failure (issue 12): entries a worker is working on are not claimed away.

Workers reach Redis through a delay proxy on loopback, so handling one command takes longer
than the claim min-idle and a read batch much longer. Each replica refreshes the idle time
of the entries in hand; a command is parked only after recorded handling failures; a second
handling that finds the stored outcome is a ``command_duplicate``.
"""

from __future__ import annotations

import anyio
import msgspec

from schemas.envelope import Accepted, CommandEnvelope, Rejected
from services.adapters.redis_store import GroupReader, connect
from services.runtime.serve import services_running
from services.runtime.worker import Worker
from tests.buses import bus_client, ids_by_partition, setup_toy
from tests.delayproxy import DelayProxy
from tests.toygame import Add


async def until(cond, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = anyio.current_time() + timeout
    while not await cond():
        assert anyio.current_time() < deadline, f"timed out waiting for {what}"
        await anyio.sleep(0.02)


def test_handling_slower_than_min_idle_on_several_replicas_parks_nothing_and_applies_each_once(settings):
    async def main():
        from urllib.parse import urlparse

        k = settings.keys
        u = urlparse(settings.url)
        proxy = DelayProxy(u.hostname, u.port, delay=0.05)  # 100 ms a round trip: a command takes > 200 ms
        clients = []
        async with bus_client(settings, timeout=90) as (r, c):
            games = [g for g, _ in await setup_toy(settings, r, c, [None] * 24)]
            try:
                async with anyio.create_task_group() as tg:
                    await tg.start(proxy.serve)
                    workers = []
                    for i in range(3):
                        wr = connect(proxy.url)
                        clients.append(wr)
                        w = Worker(wr, settings, "toy", consumer=f"slow-{i}", min_idle_ms=200, max_failures=2)
                        workers.append(w)
                        await tg.start(w.run)
                    for seat in (0, 1):  # two rounds of one valid move per game, sent all at once
                        envs = [CommandEnvelope(command_id=f"m{seat}-{g}", game_id=g, title="toy", body=Add(n=1), seat=seat)
                                for g in games]
                        for e in envs:
                            await c.bus.send(e)
                        outs = [await c.bus.wait(e.game_id, e.command_id, timeout=90) for e in envs]
                        assert all(isinstance(o, Accepted) for o in outs), [o for o in outs if not isinstance(o, Accepted)]
                    streams = [k.commands(p, "toy") for p in range(settings.partitions)]

                    async def all_done():  # every entry acknowledged, every append's reply back at its worker
                        pending = sum([await GroupReader(r, s, "worker:toy", "probe").pending_count() for s in streams])
                        return pending == 0 and sum(w.handled for w in workers) == 2 * len(games)

                    await until(all_done, what="every entry acknowledged")
                    tg.cancel_scope.cancel()
                parked = sum([await r.xlen(k.dead(p, "toy")) for p in range(settings.partitions)])
                assert parked == 0, f"{parked} valid commands parked"
                for g in games:  # each move applied once: setup (5 events) + 2 moves
                    assert await r.xlen(k.game(g, "events")) == 7
                assert proxy.connections >= 3
            finally:
                for wr in clients:
                    await wr.aclose()

    anyio.run(main)


def test_a_second_handling_that_finds_the_stored_outcome_is_a_duplicate_not_a_rejection(settings):
    async def main():
        k = settings.keys
        async with bus_client(settings) as (r, c):
            async with services_running(settings, titles=["toy"], projector=False, r=r):
                gid, _ = await c.setup("toy", 2, {"target": 100})
                first = await c.submit("toy", gid, Add(n=1), 0, command_id="once")
            assert isinstance(first, Accepted)
            stream = k.commands(k.partition(gid), "toy")
            (mid, fields), = (await r.xrevrange(stream, "+", "-", count=1))
            # a replica handles the same entry again (a reclaim after its first handling appended)
            w = Worker(r, settings, "toy", consumer="second")
            await w.handle(stream, mid.decode(), fields)
            assert w.duplicates == 1 and w.rejected == 0
            assert await c.bus.wait(gid, "once", timeout=5) == first
            assert await r.xlen(k.game(gid, "events")) == 6

    anyio.run(main)


def test_pending_commands_trimmed_or_deleted_behind_the_groups_back_are_answered_lost(settings):
    async def main():
        k = settings.keys
        async with bus_client(settings) as (r, c):
            first, *others = ids_by_partition(settings, "lost-", each=2)  # two games on one partition, one on three others
            games = [g for g, _ in await setup_toy(settings, r, c, first + [ids[0] for ids in others[:3]])]
            envs = [CommandEnvelope(command_id=f"t{i}", game_id=g, title="toy", body=Add(n=1), seat=0) for i, g in enumerate(games)]
            streams = sorted({k.commands(k.partition(g), "toy") for g in games})

            async def pending():
                return sum([await GroupReader(r, s, "worker:toy", "probe").pending_count() for s in streams])

            for e in envs:
                await c.bus.send(e)
            async with anyio.create_task_group() as tg:  # a worker that reads the commands and stalls
                hung = Worker(r, settings, "toy", consumer="hung", faults={"hang_after_read"})
                await tg.start(hung.run)
                await until(lambda: _is(pending(), len(envs)), what="the stalled worker to hold every command")
                tg.cancel_scope.cancel()  # it dies holding them
            # an operator trims one stream to nothing and deletes one more entry of another
            first = k.commands(k.partition(games[0]), "toy")
            gone = {e.command_id for e in envs if k.commands(k.partition(e.game_id), "toy") == first}
            await r.xtrim(first, maxlen=0, approximate=False)
            other = next((e for e in envs if e.command_id not in gone), None)
            if other is not None:
                ostream = k.commands(k.partition(other.game_id), "toy")
                for mid, f in await r.xrange(ostream):
                    if f[b"c"] and other.command_id.encode() in f[b"c"]:
                        await r.xdel(ostream, mid)
                        gone.add(other.command_id)
            assert gone and len(gone) < len(envs)
            async with anyio.create_task_group() as tg:
                rescuer = Worker(r, settings, "toy", consumer="rescuer", min_idle_ms=200)
                await tg.start(rescuer.run)
                outs = {e.command_id: await c.bus.wait(e.game_id, e.command_id, timeout=15) for e in envs}

                async def settled():  # nothing pending, none of these commands left in the in-flight index
                    left = [rec for s in streams for rec in (await r.hgetall(k.inflight(s))).values()
                            if msgspec.msgpack.decode(rec)[1] in outs]
                    return await pending() == 0 and not left

                await until(settled, what="every entry handled and unindexed")
                tg.cancel_scope.cancel()
            assert all(o is not None for o in outs.values()), outs  # every caller answered
            for e in envs:
                o = outs[e.command_id]
                if e.command_id in gone:
                    assert isinstance(o, Rejected) and o.code == "lost", o
                    assert await r.xlen(k.game(e.game_id, "events")) == 5  # nothing applied
                else:
                    assert isinstance(o, Accepted), o
            assert rescuer.lost == len(gone)
            from services.runtime.health import Health

            metrics = {m.name: m.samples[0].value for m in Health(rescuer, kind="worker", streams=streams, group="worker:toy",
                                                                   url=settings.url).collect()}
            assert metrics["questhall_commands_lost"] == len(gone)

    anyio.run(main)


async def _is(aw, n):
    return await aw == n
