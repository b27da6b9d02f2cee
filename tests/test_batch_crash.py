"""SIGKILL with half a batch's pipeline applied (worker and projector), on a real Redis.

The doomed process runs with ``QUESTHALL_FAULTS=half_pipeline``: of the first batch it
handles, the worker sends only the first half of the scripts of its pipeline and the projector
projects only the first half of the batch's games, then it hangs until it is SIGKILLed. A rescuer started after it must give every command exactly one outcome (the
applied half is not applied again, the other half is), and every read model must end equal to
a full rebuild. Waiting is for conditions with deadlines, never a fixed sleep.
"""

from __future__ import annotations

import anyio

from schemas.envelope import Accepted, CommandEnvelope
from services.adapters.client import BusClient
from services.adapters.redis_store import EventStore, connect
from services.kernel import codec, fold, get_title
from services.local.demo import dump_read_models
from services.runtime.projector import rebuild
from services.runtime.serve import services_running
from tests.procs import kill9, spawn, stop
from tests.test_crash_recovery import pending_total, until
from tests.toygame import Add

GAMES = 4
MOVES = 3  # per game, seats alternating: a batch holds a chain of commands per game


def _ids_of_one_partition(settings, prefix: str) -> list[str]:
    """``GAMES`` game ids of partition 0: one read of one stream holds all their commands."""
    ids = (f"{prefix}{i}" for i in range(10_000))
    return [g for g in ids if settings.keys.partition(g) == 0][:GAMES]


async def _count(r, keys: list[str]) -> int:
    return sum([await r.exists(k) for k in keys])


async def half_a_pipeline_then_kill9(settings, r, outcome_keys: list[str], tmp_path) -> None:
    """A worker started with the ``half_pipeline`` fault applies half of its first batch's
    scripts (some of ``outcome_keys`` exist, not all) and is SIGKILLed there."""
    doomed = spawn(settings, "worker", "--title", "toy", faults="half_pipeline", log=tmp_path / "doomed.log")
    try:
        async def half_applied() -> bool:
            n = await _count(r, outcome_keys)
            return 0 < n < len(outcome_keys) and "fault_half_pipeline" in (tmp_path / "doomed.log").read_text()

        await until(half_applied, what="the doomed worker to apply half a pipeline")
    finally:
        kill9(doomed)


def test_worker_sigkilled_with_half_a_batch_applied_every_command_one_outcome(settings, tmp_path):
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        k = settings.keys
        async with services_running(settings, titles=["toy"], projector=False, r=r):
            games = [await c.setup("toy", 2, {"target": 100}, game_id=g) for g in _ids_of_one_partition(settings, "hw")]
        envs = [CommandEnvelope(command_id=f"m{g}-{i}", game_id=gid, title="toy", body=Add(n=i + 1), seat=i % 2)
                for g, (gid, _) in enumerate(games) for i in range(MOVES)]
        async with r.pipeline(transaction=False) as pipe:  # all in the stream before the worker reads: one batch
            for e in envs:
                pipe.xadd(k.commands(k.partition(e.game_id), "toy"), {"c": msgspec_encode(e)})
            await pipe.execute()
        outcome_keys = [k.outcome(e.game_id, e.command_id) for e in envs]
        streams = [k.commands(p, "toy") for p in range(settings.partitions)]
        await half_a_pipeline_then_kill9(settings, r, outcome_keys, tmp_path)
        partial = await _count(r, outcome_keys)
        assert 0 < partial < len(envs)
        rescuer = spawn(settings, "worker", "--title", "toy", "--min-idle-ms", "300", log=tmp_path / "rescuer.log")
        try:
            outs = [await c.bus.wait(e.game_id, e.command_id, timeout=30) for e in envs]
            assert all(isinstance(o, Accepted) for o in outs), outs
            store = EventStore(r, settings)
            for gid, v in games:
                mine = [o for e, o in zip(envs, outs, strict=True) if e.game_id == gid]
                assert [o.version for o in mine] == [v + i + 1 for i in range(MOVES)], mine  # in order, once each
                events = await store.read_events(codec("toy"), gid)
                assert len(events) == v + MOVES
                assert fold(get_title("toy"), events).rules.total == sum(range(1, MOVES + 1))
            for e, o in zip(envs, outs, strict=True):  # sent again: the first outcome, nothing appended
                assert await c.submit("toy", e.game_id, e.body, e.seat, command_id=e.command_id) == o
            await until(lambda: _is(pending_total(r, streams, "worker:toy"), 0), what="no pending commands")
        finally:
            stop(rescuer)
            await r.aclose()

    anyio.run(main)


def test_projector_sigkilled_with_half_a_batch_applied_read_models_equal_a_rebuild(settings, tmp_path):
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        k = settings.keys
        logs = [k.log(p) for p in range(settings.partitions)]
        games = []
        async with services_running(settings, titles=["toy"], projector=False, r=r):
            for g in _ids_of_one_partition(settings, "hp"):
                gid, v = await c.setup("toy", 2, {"target": 100}, game_id=g)
                for i in range(MOVES):
                    v = (await c.submit("toy", gid, Add(n=1), i % 2)).version
                games.append((gid, v))
        doomed = spawn(settings, "projector", faults="half_pipeline", log=tmp_path / "doomed.log")
        rescuer = None
        try:
            async def half_applied() -> bool:
                return "fault_half_pipeline" in (tmp_path / "doomed.log").read_text()

            await until(half_applied, what="the doomed projector to apply half a pipeline")
            kill9(doomed)
            applied = [await c.applied(gid) for gid, _ in games]
            assert any(a == v for a, (_, v) in zip(applied, games, strict=True)), applied  # half went through
            assert any(a < v for a, (_, v) in zip(applied, games, strict=True)), applied  # the other half did not
            rescuer = spawn(settings, "projector", "--min-idle-ms", "300", log=tmp_path / "rescuer.log")
            for gid, v in games:
                await c.wait_projected(gid, v, timeout=30)
            await until(lambda: _is(pending_total(r, logs, "projector"), 0), what="no pending log entries")
            for gid, v in games:
                assert [e["version"] for e in await c.feed(gid, None)] == list(range(1, v + 1))
                assert (await c.view(gid, None))["view"]["total"] == MOVES
            live = await dump_read_models(r, settings)
            stop(rescuer)
            rescuer = None
            await rebuild(r, settings)
            assert await dump_read_models(r, settings) == live
        finally:
            stop(doomed)
            if rescuer is not None:
                stop(rescuer)
            await r.aclose()

    anyio.run(main)


def msgspec_encode(env: CommandEnvelope) -> bytes:
    import msgspec

    return msgspec.msgpack.encode(env)


async def _is(aw, n):
    return await aw == n
