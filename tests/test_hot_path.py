"""The worker's and projector's hot path (issue 11), on a real Redis: one read over every
partition, the in-flight records sent with the scripts, the one-round-trip sender, uvloop."""

from __future__ import annotations

import anyio
import msgspec
import pytest
import uvloop
from redis.exceptions import NoScriptError, ResponseError

from schemas.envelope import Accepted, CommandEnvelope, Rejected
from services.adapters.pipeline import send_all
from services.adapters.redis_store import GroupReader, connect
from services.runtime.consumer import ReadGroup, read_groups, read_loops
from services.runtime.worker import Worker
from tests.buses import bus_client, ids_by_partition, setup_toy
from tests.toygame import Add


def test_one_read_takes_the_new_entries_of_every_partition(settings):
    async def main():
        r = connect(settings.url)
        k = settings.keys
        try:
            streams = [k.commands(p, "toy") for p in range(settings.partitions)]
            readers = [GroupReader(r, s, "worker:toy", "c1") for s in streams]
            for rd in readers:
                await rd.ensure_group()
            (group,) = read_groups(r, readers, 1)  # one Redis, one loop: all of them in one XREADGROUP
            assert group == readers
            for i, s in enumerate(streams[1:]):
                await r.xadd(s, {"c": b"x", "n": i})
            got = await ReadGroup(group).read()
            assert sorted(rd.stream for rd, _ in got) == streams[1:]  # every stream that had entries, one call
            assert all(len(entries) == 1 for _, entries in got)
            assert await ReadGroup(group).read() == []  # nothing new (after BLOCK)
            await r.delete(*streams)  # NOGROUP on the next read: every group made again, nothing lost
            await r.xadd(streams[0], {"c": b"y"})
            assert await ReadGroup(group).read() == []
            got = await ReadGroup(group).read()
            assert [(rd.stream, len(e)) for rd, e in got] == [(streams[0], 1)]
        finally:
            await r.aclose()

    anyio.run(main)


def test_read_loops_deal_the_partitions_round_robin(settings, monkeypatch):
    r = connect(settings.url)
    readers = [GroupReader(r, f"s{p}", "g", "c") for p in range(8)]
    assert [[rd.stream for rd in g] for g in read_groups(r, readers, 3)] == [
        ["s0", "s3", "s6"], ["s1", "s4", "s7"], ["s2", "s5"]]
    assert len(read_groups(r, readers[:1], 2)) == 1  # never more loops than streams
    monkeypatch.delenv("QUESTHALL_READ_LOOPS", raising=False)
    monkeypatch.delenv("QUESTHALL_PROJECTOR_READ_LOOPS", raising=False)
    assert read_loops() == 8 and len(read_groups(r, readers)) == 8
    assert read_loops("projector") == 1 and len(read_groups(r, readers, role="projector")) == 1
    monkeypatch.setenv("QUESTHALL_READ_LOOPS", "2")
    assert len(read_groups(r, readers)) == 2
    assert len(read_groups(r, readers, role="projector")) == 1  # each role has its own setting
    monkeypatch.setenv("QUESTHALL_PROJECTOR_READ_LOOPS", " 3 ")
    assert len(read_groups(r, readers, role="projector")) == 3 and len(read_groups(r, readers)) == 2
    for name, role in (("QUESTHALL_READ_LOOPS", "worker"), ("QUESTHALL_PROJECTOR_READ_LOOPS", "projector")):
        for bad in ("0", "two", "-1"):
            monkeypatch.setenv(name, bad)
            with pytest.raises(ValueError, match=name):
                read_loops(role)
        monkeypatch.setenv(name, "")
        assert read_loops(role) == (8 if role == "worker" else 1)  # blank: the default


@pytest.mark.parametrize("loops", [1, 2])
def test_a_batch_over_every_partition_is_one_pipeline_and_every_command_gets_its_outcome(settings, monkeypatch, loops):
    monkeypatch.setenv("QUESTHALL_READ_LOOPS", str(loops))

    async def main():
        k = settings.keys
        async with bus_client(settings) as (r, c):
            games = [g for g, _ in await setup_toy(settings, r, c, [ids[0] for ids in ids_by_partition(settings, "hp")])]
            envs = [CommandEnvelope(command_id=f"hp{i}-{j}", game_id=g, title="toy", body=Add(n=1), seat=j % 2)
                    for i, g in enumerate(games) for j in range(3)]
            async with r.pipeline(transaction=False) as pipe:  # all on the streams before the worker reads
                for e in envs:
                    pipe.xadd(k.commands(k.partition(e.game_id), "toy"), {"c": msgspec.msgpack.encode(e)})
                await pipe.execute()
            w = Worker(r, settings, "toy", consumer="one")
            sent = []
            real = w._run_plan

            async def counted(plan, failed):
                sent.append(len(plan))
                return await real(plan, failed)

            w._run_plan = counted  # type: ignore[method-assign]
            async with anyio.create_task_group() as tg:
                await tg.start(w.run)
                outs = [await c.bus.wait(e.game_id, e.command_id, timeout=30) for e in envs]
                tg.cancel_scope.cancel()
            assert all(isinstance(o, Accepted) for o in outs), outs
            # every partition's commands in the first batch's one pipeline (a loop's: each loop reads
            # its share of the partitions in one XREADGROUP)
            assert sum(sent[:loops]) == len(envs) and len(sent) == loops
            for i in range(0, len(envs), 3):  # each game's commands in stream order, one version each
                first = outs[i].version
                assert [o.version for o in outs[i:i + 3]] == [first, first + 1, first + 2]

    anyio.run(main)


@pytest.mark.parametrize("loops", [None, 2])
def test_a_projector_reads_every_partition_log_in_its_read_loops_and_projects_every_game(settings, monkeypatch, loops):
    """QUESTHALL_PROJECTOR_READ_LOOPS: one loop by default, each loop one read over its share of
    the partition logs; every game's read models reach its last version either way."""
    from services.runtime.projector import Projector

    if loops is None:
        monkeypatch.delenv("QUESTHALL_PROJECTOR_READ_LOOPS", raising=False)
    else:
        monkeypatch.setenv("QUESTHALL_PROJECTOR_READ_LOOPS", str(loops))
    monkeypatch.setenv("QUESTHALL_READ_LOOPS", "3")  # the worker's setting is not the projector's

    async def main():
        k = settings.keys
        async with bus_client(settings) as (r, c):
            games = await setup_toy(settings, r, c, [ids[0] for ids in ids_by_partition(settings, "pl")])
            p = Projector(r, settings, consumer="one")
            reads = []
            real = p.apply_batches

            async def counted(batches):
                reads.append(sorted(stream for stream, _ in batches))
                return await real(batches)

            p.apply_batches = counted  # type: ignore[method-assign]
            async with anyio.create_task_group() as tg:
                await tg.start(p.run)
                for gid, version in games:
                    with anyio.fail_after(30):
                        while int(await r.get(k.rm(gid, "applied")) or 0) < version:
                            await anyio.sleep(0.02)
                tg.cancel_scope.cancel()
            logs = sorted(k.log(q) for q in range(settings.partitions))
            first = reads[:loops or 1]  # every log had entries before the projector started
            assert sorted(s for read in first for s in read) == logs
            assert len(first) == (loops or 1) and all(first)

    anyio.run(main)


async def _unloadable(r, settings, gid: str, version: int) -> None:
    """Append to game ``gid`` (at ``version``) an event no code can read: loading it fails (CorruptEvent)."""
    key = settings.keys.game(gid, "events")
    (_, fields), = await r.xrange(key, f"{version}-0", f"{version}-0")
    data = msgspec.msgpack.decode(fields[b"e"])
    data["body"]["type"] = "toy.unheard_of"
    await r.xadd(key, {"e": msgspec.msgpack.encode(data)}, id=f"{version + 1}-0")


async def _answered_lost(r, settings, c, stream: str, mid: str, gid: str, command_id: str) -> None:
    """An operator deletes the stuck pending entry ``mid``; another worker reclaims it and its
    caller is answered ``lost`` (from the entry's in-flight record)."""
    await r.xdel(stream, mid)
    async with anyio.create_task_group() as tg:
        rescuer = Worker(r, settings, "toy", consumer="rescuer", min_idle_ms=200, partitions=[settings.keys.partition(gid)])
        await tg.start(rescuer.run)
        out = await c.bus.wait(gid, command_id, timeout=30)
        tg.cancel_scope.cancel()
    assert isinstance(out, Rejected) and out.code == "lost", out


def test_a_command_left_pending_by_a_failed_handling_keeps_its_in_flight_record(settings):
    async def main():
        k = settings.keys
        async with bus_client(settings) as (r, c):
            (gid, v), = await setup_toy(settings, r, c, [None])
            await _unloadable(r, settings, gid, v)
            stream = k.commands(k.partition(gid), "toy")
            env = CommandEnvelope(command_id="kept", game_id=gid, title="toy", body=Add(n=1), seat=0)
            await r.xadd(stream, {"c": msgspec.msgpack.encode(env), "r": "i-test"})
            w = Worker(r, settings, "toy", consumer="t")
            rd = GroupReader(r, stream, w.group, "t")
            (got,) = await ReadGroup([rd]).read()
            await w.tracker.read(rd, got[1])
            mid = got[1][0][0]
            assert await r.hget(k.inflight(stream), mid) is None  # kept for the pipeline of the batch's scripts
            await w.handle_batches([(stream, [(mid, f, 1) for mid, f in got[1]])])
            assert await rd.pending_count() == 1  # failed: left pending (reclaimed, parked after 5 tries)
            rec = await r.hget(k.inflight(stream), mid)
            assert rec is not None and msgspec.msgpack.decode(rec) == [gid, "kept", "i-test"]

    anyio.run(main)


@pytest.mark.parametrize("loops", [1, 8])
def test_through_the_read_loop_a_command_left_pending_keeps_its_record_and_its_caller_is_answered_lost(
        settings, monkeypatch, loops):
    """The read loop's ``done`` takes every id of the batch: the records of commands left pending
    (handling failed) stay, so once such an entry is deleted behind the group's back its caller is
    still answered ``lost`` (a breaker's finding: the loop deleted them with the handled ones)."""
    monkeypatch.setenv("QUESTHALL_READ_LOOPS", str(loops))

    async def main():
        k = settings.keys
        async with bus_client(settings) as (r, c):
            (ga, va), (gb, _) = await setup_toy(settings, r, c, ids_by_partition(settings, "lp", each=2)[0])
            await _unloadable(r, settings, ga, va)
            stream = k.commands(k.partition(ga), "toy")
            async with anyio.create_task_group() as tg:
                w = Worker(r, settings, "toy", consumer="w1", min_idle_ms=60_000)  # never reclaims it itself
                await tg.start(w.run)
                await c.bus.send(CommandEnvelope(command_id="cmdA", game_id=ga, title="toy", body=Add(n=1), seat=0))
                with anyio.fail_after(20):
                    while not await r.hlen(k.failures(stream)):
                        await anyio.sleep(0.02)
                (p,) = await r.xpending_range(stream, w.group, "-", "+", 10)
                mid = p["message_id"].decode()
                # a later batch on the same stream: its pipeline deletes the records of the commands handled before
                out = await c.submit("toy", gb, Add(n=1), 0)
                assert isinstance(out, Accepted), out
                rec = await r.hget(k.inflight(stream), mid)
                tg.cancel_scope.cancel()
            assert rec is not None and msgspec.msgpack.decode(rec)[:2] == [ga, "cmdA"]
            await _answered_lost(r, settings, c, stream, mid, ga, "cmdA")

    anyio.run(main)


def test_send_all_answers_in_order_with_errors_as_exceptions(settings):
    async def main():
        r = connect(settings.url)
        key = f"{settings.namespace}:sa"
        try:
            sha = await r.script_load("return {'ok', ARGV[1]}")
            out = await send_all(r, [("SET", key, "1"), ("EVALSHA", sha, 0, "x"), ("EVALSHA", "0" * 40, 0),
                                     ("HSET", key, "f", "v"), ("GET", key)])
            assert out[0] == b"OK" and out[1] == [b"ok", b"x"] and out[4] == b"1"
            assert isinstance(out[2], NoScriptError)  # NOSCRIPT, as redis-py's pipeline gives it
            assert isinstance(out[3], ResponseError) and "WRONGTYPE" in str(out[3])
            assert await send_all(r, []) == []
            assert await r.ping()  # the connection went back to the pool with nothing unread
        finally:
            await r.delete(key)
            await r.aclose()

    anyio.run(main)


@pytest.mark.parametrize(("env", "default", "on_uvloop"), [(None, True, True), ("0", True, False), (None, False, False),
                                                          ("1", False, True)])
def test_the_worker_and_log_services_run_on_uvloop_unless_switched_off(monkeypatch, env, default, on_uvloop):
    """uvloop is a direct dependency (pyproject.toml); the expectation is not named ``uvloop``,
    which would be the module's name in this test."""
    import asyncio

    from services import cli

    if env is None:
        monkeypatch.delenv("QUESTHALL_UVLOOP", raising=False)
    else:
        monkeypatch.setenv("QUESTHALL_UVLOOP", env)

    async def loop_type() -> type:
        return type(asyncio.get_running_loop())

    assert (anyio.run(loop_type, **cli._loop_options(default)) is uvloop.Loop) is on_uvloop


def test_a_create_of_a_new_game_reads_nothing_and_a_taken_id_is_still_refused(settings):
    """A batch's ``CreateGame`` of a game the worker has not cached is decided on the empty game
    without reading it (its append script checks the version); a create of an id a game already
    has conflicts there, and the retry loads the game and refuses it (``game_exists``)."""
    from schemas.envelope import CreateGame, Rejected

    async def main():
        k = settings.keys
        async with bus_client(settings) as (r, c):
            gids = ids_by_partition(settings, "cr")
            envs = [CommandEnvelope(command_id=f"cr{i}", game_id=ids[0], title="toy", body=CreateGame(seats=2, options={}))
                    for i, ids in enumerate(gids)]
            async with r.pipeline(transaction=False) as pipe:
                for e in envs:
                    pipe.xadd(k.commands(k.partition(e.game_id), "toy"), {"c": msgspec.msgpack.encode(e)})
                await pipe.execute()
            from services.adapters import scripts

            for script in (scripts.APPEND, scripts.REJECT):  # as a running worker has (after NOSCRIPT it loads them and reads the games)
                await r.script_load(script)
            w = Worker(r, settings, "toy", consumer="one")
            loads = []
            real = w.store.load_game

            async def load_game(*a, **kw):
                loads.append(a[1])
                return await real(*a, **kw)

            w.store.load_game = load_game  # type: ignore[method-assign]
            async with anyio.create_task_group() as tg:
                await tg.start(w.run)
                outs = [await c.bus.wait(e.game_id, e.command_id, timeout=30) for e in envs]
                assert all(isinstance(o, Accepted) and o.version == 1 for o in outs), outs
                assert loads == []
                w2 = Worker(r, settings, "toy", consumer="two")  # another replica: nothing cached
                w2.store.load_game = load_game  # type: ignore[method-assign]
                again = CommandEnvelope(command_id="cr-again", game_id=envs[0].game_id, title="toy",
                                        body=CreateGame(seats=3, options={}))
                tg.cancel_scope.cancel()
            await c.bus.send(again)
            async with anyio.create_task_group() as tg:
                await tg.start(w2.run)
                out = await c.bus.wait(again.game_id, again.command_id, timeout=30)
                tg.cancel_scope.cancel()
            assert isinstance(out, Rejected) and out.code == "game_exists", out
            assert loads == [again.game_id]  # the conflict's retry read it
            assert int(await r.hget(k.game(again.game_id, "meta"), "version")) == 1

    anyio.run(main)


@pytest.mark.parametrize("interleave", [False, True])
def test_a_read_loop_leaves_the_in_flight_records_another_loop_read_for_that_loop(settings, interleave):
    """Two read loops of one worker: loop B handles its batch while loop A is between its read and
    its pipeline. A's records stay A's: its command, left pending by a failed handling, keeps its
    in-flight record, and once the entry is deleted behind the group's back its caller is answered
    ``lost`` (B took every loop's records and A's caller got nothing: a breaker's finding)."""

    async def main():
        k = settings.keys
        async with bus_client(settings) as (r, c):
            by = ids_by_partition(settings, f"ifr{int(interleave)}")
            (ga, _), (gb, _) = await setup_toy(settings, r, c, [by[0][0], by[1][0]])
            sa, sb = k.commands(k.partition(ga), "toy"), k.commands(k.partition(gb), "toy")
            await r.xadd(k.game(ga, "events"), {"e": b"garbage"})  # loading game A fails: its command stays pending
            w = Worker(r, settings, "toy", consumer="w1", min_idle_ms=60_000)
            rda, rdb = (GroupReader(r, s, w.group, w.consumer) for s in (sa, sb))
            await c.bus.send(CommandEnvelope(command_id="cmdA", game_id=ga, title="toy", body=Add(n=1), seat=0))
            await r.xadd(sb, {"c": b"\x00not msgpack"})  # loop B's one entry: parked at once
            (got_a,) = await ReadGroup([rda]).read()  # loop A has read ...
            await w.tracker.read(*got_a)
            if interleave:  # ... and loop B handles a batch of its own meanwhile
                (got_b,) = await ReadGroup([rdb]).read()
                await w.tracker.read(*got_b)
                await w.handle_batches([(sb, [(m, f, 1) for m, f in got_b[1]])])
            await w.handle_batches([(sa, [(m, f, 1) for m, f in got_a[1]])])
            (mid, _), = got_a[1]
            assert [p["message_id"].decode() for p in await r.xpending_range(sa, w.group, "-", "+", 10)] == [mid]
            assert await r.hget(k.inflight(sa), mid) is not None
            await _answered_lost(r, settings, c, sa, mid, ga, "cmdA")

    anyio.run(main)


@pytest.mark.parametrize("setting", ["QUESTHALL_READ_LOOPS", "QUESTHALL_PROJECTOR_READ_LOOPS"])
@pytest.mark.parametrize("command", [["demo", "--games", "1"], ["worker", "--title", "toy"], ["projector"],
                                     ["scenario", "run", "scenarios/none.toml"]])
def test_a_malformed_read_loops_setting_stops_every_command_that_runs_services_in_one_line(command, setting, monkeypatch):
    from typer.testing import CliRunner

    from services.cli import app

    monkeypatch.setenv(setting, "abc")
    res = CliRunner().invoke(app, command)
    assert res.exit_code == 2, res.output
    assert res.output.splitlines()[-1] == f"questhall: {setting} must be an integer >= 1, not 'abc'", res.output
