"""Attacks on the worker's create path (a4b0ba3): a ``CreateGame`` of a game not cached is
decided on the empty game without a read; a taken id must still be refused, and a retried
create must still answer its first outcome."""

from __future__ import annotations

import anyio
import msgspec

from schemas.envelope import Accepted, CommandEnvelope, CreateGame, JoinSeat, Rejected, StartGame
from services.adapters.client import BusClient
from services.adapters.redis_store import connect
from services.runtime.serve import services_running
from tests.test_core_redis import _play_toy


def _env(gid: str, cid: str, body, title: str = "toy", seat: int | None = None) -> CommandEnvelope:
    return CommandEnvelope(command_id=cid, game_id=gid, title=title, body=body, seat=seat)


async def _state(r, settings, gid: str) -> tuple:
    k = settings.keys
    return (await r.hgetall(k.game(gid, "meta")), await r.xlen(k.game(gid, "events")),
            await r.exists(k.game(gid, "packed")), await r.hget(k.game(gid, "secret"), "seed"))


def test_creates_of_taken_ids_on_fresh_workers_are_refused_and_retries_answer_the_first_outcome(settings):
    async def main():
        r = connect(settings.url)
        k = settings.keys
        async with services_running(settings, titles=["toy"], r=r):
            c = BusClient(r, settings)
            ended_gid, v = await _play_toy(c, seed=2)  # ended, packed once projected
            await c.wait_projected(ended_gid, v)
            lobby_gid = await c.create("toy", 2)
        from services.adapters import ended

        assert await ended.settle(r, settings, ended_gid) in ("ok", "packed already")
        assert await r.exists(k.game(ended_gid, "packed"))
        outs = await r.keys(k.game(ended_gid, "out:*"))
        before_ended = await _state(r, settings, ended_gid)
        before_lobby = await _state(r, settings, lobby_gid)
        # the original create's outcome: the first stored outcome of the game
        first = None
        for key in outs:
            o = msgspec.msgpack.decode(await r.get(key), type=Accepted | Rejected)
            if isinstance(o, Accepted) and o.version == 1:
                first = (key.decode().rsplit("out:", 1)[1], o)
        assert first is not None
        cid1, out1 = first

        async with services_running(settings, titles=["toy", "orion_duel"], r=r):  # fresh caches
            c = BusClient(r, settings)
            o = await c.bus.submit(_env(ended_gid, "brk-new", CreateGame(seats=2)), 30)
            assert isinstance(o, Rejected) and o.code == "game_exists", o
            o = await c.bus.submit(_env(ended_gid, cid1, CreateGame(seats=2)), 30)
            assert o == out1, (o, out1)
            o = await c.bus.submit(_env(ended_gid, "brk-other", CreateGame(seats=2), title="orion_duel"), 30)
            assert isinstance(o, Rejected) and o.code == "wrong_title", o
            o = await c.bus.submit(_env(lobby_gid, "brk-lobby", CreateGame(seats=3)), 30)
            assert isinstance(o, Rejected) and o.code == "game_exists", o
            # the create's stored outcome gone (expired after the packing's grace): the packed record answers
            await r.delete(k.outcome(ended_gid, cid1))
        async with services_running(settings, titles=["toy"], r=r):
            c = BusClient(r, settings)
            o = await c.bus.submit(_env(ended_gid, cid1, CreateGame(seats=2)), 30)
            assert o == out1, (o, out1)
        # create + joins + start of a taken id (a lobby game) in one batch, on a fresh worker
        envs = [_env(lobby_gid, "brk-b-create", CreateGame(seats=2)),
                _env(lobby_gid, "brk-b-j0", JoinSeat(name="a"), seat=0),
                _env(lobby_gid, "brk-b-j1", JoinSeat(name="b"), seat=1),
                _env(lobby_gid, "brk-b-start", StartGame(), seat=0)]
        c = BusClient(r, settings)
        for e in envs:  # all on the stream before a worker reads: one batch
            await r.xadd(k.commands(k.partition(lobby_gid), "toy"), {"c": msgspec.msgpack.encode(e)})
        async with services_running(settings, titles=["toy"], r=r):
            got = [await c.bus.wait(e.game_id, e.command_id, timeout=30) for e in envs]
        assert isinstance(got[0], Rejected) and got[0].code == "game_exists", got[0]
        assert [type(o) for o in got[1:]] == [Accepted] * 3, got
        assert [o.version for o in got[1:]] == [2, 3, 5] or got[3].version > 3, got
        assert await _state(r, settings, ended_gid) == before_ended
        after_lobby = await _state(r, settings, lobby_gid)
        assert after_lobby[3] == before_lobby[3]  # the seed is the first create's
        await r.aclose()

    anyio.run(main)


def test_two_replicas_racing_creates_of_the_same_ids_make_one_game_each(settings):
    """200 ids, each sent two creates of different command ids and one of them twice (a resend),
    read by two fresh workers at once: one create accepted per id, the other refused
    ``game_exists``, the resend answered with the first outcome, one seed and one event stream."""
    from services.adapters import scripts
    from services.runtime.worker import Worker

    async def main():
        r = connect(settings.url)
        k = settings.keys
        for script in (scripts.APPEND, scripts.REJECT):
            await r.script_load(script)
        gids = [f"race{i}" for i in range(200)]
        envs = []
        for gid in gids:
            envs += [_env(gid, f"{gid}-a", CreateGame(seats=2)), _env(gid, f"{gid}-b", CreateGame(seats=3)),
                     _env(gid, f"{gid}-a", CreateGame(seats=2))]
        c = BusClient(r, settings)
        w1, w2 = Worker(r, settings, "toy", consumer="one"), Worker(r, settings, "toy", consumer="two")
        async with anyio.create_task_group() as tg:
            await tg.start(w1.run)
            await tg.start(w2.run)
            async with r.pipeline(transaction=False) as pipe:
                for e in envs:
                    pipe.xadd(k.commands(k.partition(e.game_id), "toy"), {"c": msgspec.msgpack.encode(e)})
                await pipe.execute()
            outs = {}
            for e in envs:
                outs.setdefault((e.game_id, e.command_id), await c.bus.wait(e.game_id, e.command_id, timeout=30))
            tg.cancel_scope.cancel()
        for gid in gids:
            a, b = outs[(gid, f"{gid}-a")], outs[(gid, f"{gid}-b")]
            assert sorted(type(o).__name__ for o in (a, b)) == ["Accepted", "Rejected"], (a, b)
            assert [o.code for o in (a, b) if isinstance(o, Rejected)] == ["game_exists"]
            for cid, o in ((f"{gid}-a", a), (f"{gid}-b", b)):
                assert msgspec.msgpack.decode(await r.get(k.outcome(gid, cid)), type=Accepted | Rejected) == o
            won = a if isinstance(a, Accepted) else b
            assert int(await r.hget(k.game(gid, "meta"), "version")) == won.version
            assert await r.xlen(k.game(gid, "events")) == won.version
        took = [w.handled + w.rejected + w.duplicates + w.conflicts for w in (w1, w2)]
        assert all(took), took  # both replicas took part (appends, refusals or conflicts: who wins a race is the scheduler's)
        await r.aclose()

    anyio.run(main)


def test_a_create_retried_after_its_game_was_archived_is_refused_and_the_game_restores(settings):
    """Archive deletes the game's metadata and outcomes (services/audit/archive.py) but leaves its
    archived marker in the game's slot: a retry of its create's command id, decided on the empty
    game (the worker's fast path for a create not cached) conflicts in the append script, and the
    load refuses it (``game_archived``); so does a fresh create of that id and a move. Nothing is
    written to the game's slot (no second game), and ``restore`` brings the first game back whole
    (before the marker: two outcomes for one command id, and restore refused the game)."""
    from schemas.envelope import EndGame
    from services.audit.archive import archive, restore
    from tests.toygame import Add

    async def main():
        r = connect(settings.url)
        k = settings.keys
        async with services_running(settings, titles=["toy"], r=r):
            c = BusClient(r, settings)
            gid = "arch1"
            o1 = await c.bus.submit(_env(gid, "arch-create", CreateGame(seats=1)), 30)
            assert isinstance(o1, Accepted)
            o = await c.bus.submit(_env(gid, "arch-end", EndGame(reason="x")), 30)
            assert isinstance(o, Accepted), o
            await c.wait_projected(gid, o.version)
        await archive(r, settings, gid)
        assert not await r.exists(k.game(gid, "meta"))
        async with services_running(settings, titles=["toy"], r=r):
            c = BusClient(r, settings)
            outs = [await c.bus.submit(_env(gid, cid, body, seat=seat), 30)
                    for cid, body, seat in (("arch-create", CreateGame(seats=1), None),
                                            ("arch-create-2", CreateGame(seats=2), None),
                                            ("arch-move", Add(n=1), 0))]
        for out in outs:
            assert isinstance(out, Rejected) and out.code == "game_archived", out
        assert not await r.exists(k.game(gid, "meta"), k.game(gid, "events"), k.game(gid, "commands"))
        assert await restore(r, settings, gid) == o.version
        assert int(await r.hget(k.game(gid, "meta"), "version")) == o.version
        assert not await r.exists(k.game(gid, "archived"))
        await r.aclose()

    anyio.run(main)


def test_a_worker_sigkilled_with_half_a_batch_of_creates_joins_starts_and_moves_applied(settings, tmp_path):
    """Three new games, each create + 2 joins + start + 3 moves in one batch of one stream; the
    worker SIGKILLed with half its pipeline applied (some games created, some not); a rescuer
    (nothing cached: every create decided on the empty game) gives each command one outcome:
    the applied creates answered with their first outcome (``dup``), the rest decided once."""
    from services.adapters.redis_store import EventStore
    from services.kernel import codec, fold, get_title
    from tests.procs import spawn, stop
    from tests.test_batch_crash import _ids_of_one_partition, half_a_pipeline_then_kill9
    from tests.test_crash_recovery import pending_total, until
    from tests.toygame import Add

    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        k = settings.keys
        envs = []
        for gid in _ids_of_one_partition(settings, "hc")[:3]:  # 21 commands: the half (10) splits the second game
            envs += [_env(gid, f"{gid}-c", CreateGame(seats=2, options={"target": 100})),
                     _env(gid, f"{gid}-j0", JoinSeat(name="a"), seat=0), _env(gid, f"{gid}-j1", JoinSeat(name="b"), seat=1),
                     _env(gid, f"{gid}-s", StartGame(), seat=0)]
            envs += [_env(gid, f"{gid}-m{i}", Add(n=i + 1), seat=i % 2) for i in range(3)]
        async with r.pipeline(transaction=False) as pipe:
            for e in envs:
                pipe.xadd(k.commands(k.partition(e.game_id), "toy"), {"c": msgspec.msgpack.encode(e)})
            await pipe.execute()
        outcome_keys = [k.outcome(e.game_id, e.command_id) for e in envs]
        from services.adapters import scripts

        for script in (scripts.APPEND, scripts.REJECT):  # as a running worker has (else NOSCRIPT: nothing applied)
            await r.script_load(script)
        await half_a_pipeline_then_kill9(settings, r, outcome_keys, tmp_path)
        first = {e.command_id: await r.get(key) for e, key in zip(envs, outcome_keys, strict=True)}
        rescuer = spawn(settings, "worker", "--title", "toy", "--min-idle-ms", "300", log=tmp_path / "rescuer.log")
        try:
            outs = [await c.bus.wait(e.game_id, e.command_id, timeout=30) for e in envs]
            assert all(isinstance(o, Accepted) for o in outs), [o for o in outs if not isinstance(o, Accepted)]
            for e, o in zip(envs, outs, strict=True):
                if first[e.command_id] is not None:
                    assert msgspec.msgpack.decode(first[e.command_id], type=Accepted | Rejected) == o
            store = EventStore(r, settings)
            for gid in dict.fromkeys(e.game_id for e in envs):
                mine = [o for e, o in zip(envs, outs, strict=True) if e.game_id == gid]
                assert [o.version for o in mine] == sorted({o.version for o in mine}), mine
                events = await store.read_events(codec("toy"), gid)
                assert len(events) == mine[-1].version
                assert fold(get_title("toy"), events).rules.total == 6
            streams = [k.commands(p, "toy") for p in range(settings.partitions)]
            await until(lambda: _zero(pending_total(r, streams, "worker:toy")), what="no pending commands")
        finally:
            stop(rescuer)
            await r.aclose()

    anyio.run(main)


async def _zero(aw) -> bool:
    return await aw == 0
