"""The core on a real Redis: bus, worker, projector, idempotency, races, snapshots, rebuild."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from schemas.envelope import Accepted, CommandEnvelope, Rejected
from services.adapters.client import BusClient
from services.adapters.redis_store import ENC, EventStore, GroupReader, connect
from services.kernel import codec, fold, get_title
from services.kernel.errors import CorruptEvent
from services.local.demo import dump_read_models
from services.runtime.serve import services_running
from tests.toygame import Add, Roll

FAST = {"min_idle_ms": 200}


async def _play_toy(c: BusClient, target: int = 15, seats: int = 2, seed: int = 0) -> tuple[str, int]:
    import random

    rng = random.Random(seed)
    gid, version = await c.setup("toy", seats, {"target": target})
    turn = 0
    while True:
        body = rng.choice([Add(n=rng.randint(1, 3)), Roll()])
        out = await c.submit("toy", gid, body, turn)
        assert isinstance(out, Accepted), out
        version = out.version
        turn = (turn + 1) % seats
        view = await c.view(gid, None)
        if out.events > 1:  # finished: game_finished + seed_revealed follow
            return gid, version
        del view


def test_game_end_to_end_views_feeds_and_lobby(settings):
    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            c = BusClient(s["redis"], settings)
            gid, version = await _play_toy(c)
            await c.wait_projected(gid, version)
            spec = await c.view(gid, None)
            assert spec["status"] == "finished" and spec["version"] == version
            assert spec["view"]["my_card"] is None
            s0 = await c.view(gid, 0)
            assert s0["view"]["my_card"] is not None
            feed1 = await c.feed(gid, 1)
            dealt = [e for e in feed1 if e["body"]["type"] == "toy.cards_dealt"][0]
            assert dealt["body"]["cards"][0] == -1 and dealt["body"]["cards"][1] > 0
            assert [e["version"] for e in feed1] == list(range(1, version + 1))
            k = settings.keys
            assert await s["redis"].zscore(k.lobby_index("toy", "finished"), gid) is not None
            assert await s["redis"].zscore(k.lobby_index("toy", "lobby"), gid) is None
            assert msgspec.json.decode(await s["redis"].get(k.result(gid)))["winners"]
            # replay equals the worker's live state
            store = EventStore(s["redis"], settings)
            replayed = fold(get_title("toy"), await store.read_events(codec("toy"), gid))
            assert replayed == s["workers"]["toy"].cache[gid]
            cmds = await store.read_commands(codec("toy"), gid)
            assert [c.body.__struct_config__.tag for _, _, c in cmds][:4] == ["create", "join", "join", "start"]
            assert cmds[-1][1] == version and all(a < b for a, b, _ in cmds)

    anyio.run(main)


def test_same_command_twice_gives_one_set_of_events_and_the_first_outcome(settings):
    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            c = BusClient(s["redis"], settings)
            gid, v = await c.setup("toy", 2, {"target": 50})
            first = await c.submit("toy", gid, Add(n=2), 0, command_id="same")
            second = await c.submit("toy", gid, Add(n=2), 0, command_id="same")
            assert first == second and isinstance(first, Accepted) and first.version == v + 1
            rejected = await c.submit("toy", gid, Add(n=9), 1, command_id="bad")
            again = await c.submit("toy", gid, Add(n=1), 1, command_id="bad")  # a different body, same id
            assert isinstance(rejected, Rejected) and again == rejected
            assert await s["redis"].xlen(settings.keys.game(gid, "events")) == v + 1

    anyio.run(main)


def test_redelivery_after_append_but_before_ack_keeps_the_first_outcome(settings):
    """A worker died between append and acknowledgement: the reclaimed entry changes nothing."""
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        k = settings.keys
        async with services_running(settings, titles=["toy"], r=r, worker_kwargs=FAST):
            gid, v = await c.setup("toy", 2, {"target": 50})
        # no worker now: send a command, read it as a doomed consumer, append without ack
        env = CommandEnvelope(command_id="c-doomed", game_id=gid, title="toy", body=Add(n=1), seat=0)
        await c.bus.send(env)
        p = k.partition(gid)
        rd = GroupReader(r, k.commands(p, "toy"), "worker:toy", "doomed")
        (mid, fields), = await rd.read()
        from services.runtime.worker import Worker

        w = Worker(r, settings, "toy", consumer="doomed")
        store = w.store
        game = await store.load(codec("toy"), gid)
        from services.kernel import game as lifecycle
        from services.kernel.runner import stamp

        seed = await store.seed(gid)
        bodies = lifecycle.decide(get_title("toy"), game, msgspec.structs.replace(env, body=Add(n=1)), lifecycle.chance_for(game, seed), seed)
        envs = stamp(game, bodies, env.command_id, 1)
        after = lifecycle.fold(get_title("toy"), envs, game)
        out = Accepted(command_id=env.command_id, game_id=gid, version=after.version, events=1)
        tag, _ = await store.append(before=game, after=after, events=envs, outcome=out, stream=rd.stream, group=rd.group, msg_id="", seed=seed, command=msgspec.structs.replace(env, body=Add(n=1)))
        assert tag == "ok" and await rd.pending_count() == 1
        async with services_running(settings, titles=["toy"], r=r, worker_kwargs=FAST):
            deadline = anyio.current_time() + 20
            while await rd.pending_count():
                assert anyio.current_time() < deadline, "pending entry never reclaimed"
                await anyio.sleep(0.05)
        assert await store.outcome(gid, "c-doomed") == out
        assert await r.xlen(k.game(gid, "events")) == v + 1
        await r.aclose()

    anyio.run(main)


def test_two_commands_racing_at_the_same_expected_version_append_exactly_one(settings):
    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            c = BusClient(s["redis"], settings)
            gid, v = await c.setup("toy", 2, {"target": 50})
            results = []

            async def go(cid):
                results.append(await c.submit("toy", gid, Add(n=1), 0, command_id=cid, expected_version=v))

            async with anyio.create_task_group() as tg:
                tg.start_soon(go, "race-a")
                tg.start_soon(go, "race-b")
            acc = [o for o in results if isinstance(o, Accepted)]
            rej = [o for o in results if isinstance(o, Rejected)]
            assert len(acc) == 1 and len(rej) == 1 and rej[0].code == "stale_version"
            assert await s["redis"].xlen(settings.keys.game(gid, "events")) == v + 1

    anyio.run(main)


def test_two_workers_racing_re_decide_on_the_new_state(settings):
    """Two replicas of a title, many commands on one game without expected versions: no version is used twice."""
    async def main():
        r = connect(settings.url)
        async with services_running(settings, titles=["toy"], r=r), services_running(settings, titles=["toy"], projector=False, r=r):
            c = BusClient(r, settings)
            gid, v = await c.setup("toy", 1, {"target": 1000})
            outs = []

            async def go(i):
                outs.append(await c.submit("toy", gid, Add(n=1), 0, command_id=f"n{i}"))

            async with anyio.create_task_group() as tg:
                for i in range(30):
                    tg.start_soon(go, i)
            assert all(isinstance(o, Accepted) for o in outs), [o for o in outs if not isinstance(o, Accepted)]
            assert sorted(o.version for o in outs) == list(range(v + 1, v + 31))
            store = EventStore(r, settings)
            g = fold(get_title("toy"), await store.read_events(codec("toy"), gid))
            assert g.rules.total == 30
        await r.aclose()

    anyio.run(main)


def test_snapshot_plus_tail_equals_full_replay(settings):
    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            c = BusClient(s["redis"], settings)
            gid, _ = await _play_toy(c, target=40)
            r = s["redis"]
            store = EventStore(r, settings)
            assert await r.exists(settings.keys.game(gid, "snap"))
            snap_version = (await store.read_snapshot(codec("toy"), gid)).version  # of this code's fingerprint
            full = fold(get_title("toy"), await store.read_events(codec("toy"), gid))
            assert 0 < snap_version <= full.version
            assert await store.load(codec("toy"), gid) == full

    anyio.run(main)


def test_rebuild_gives_byte_identical_read_models(settings):
    from services.runtime.projector import rebuild

    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            c = BusClient(s["redis"], settings)
            last = []
            for seed in range(4):
                last.append(await _play_toy(c, seed=seed))
            gid, _ = await c.create("toy", 3), None
            last.append((gid, 1))
            for g, v in last:
                await c.wait_projected(g, v)
        r = connect(settings.url)
        before = await dump_read_models(r, settings)
        assert len(before) > 20
        assert await rebuild(r, settings) == 5
        after = await dump_read_models(r, settings)
        assert after == before
        await r.aclose()

    anyio.run(main)


def test_unknown_event_type_in_a_stream_is_an_explicit_error_naming_game_and_version(settings):
    async def main():
        async with services_running(settings, titles=["toy"], worker_kwargs={"min_idle_ms": 100, "max_failures": 2}) as s:
            r = s["redis"]
            c = BusClient(r, settings)
            gid, v = await c.setup("toy", 2, {"target": 50})
            key = settings.keys.game(gid, "events")
            (mid, fields), = await r.xrange(key, f"{v}-0", f"{v}-0")
            data = msgspec.msgpack.decode(fields[b"e"])
            data["body"]["type"] = "toy.unheard_of"
            await r.xadd(key, {"e": ENC.encode(data)}, id=f"{v + 1}-0")
            store = EventStore(r, settings)
            with pytest.raises(CorruptEvent, match=rf"game '{gid}' version {v + 1}"):
                await store.read_events(codec("toy"), gid)
            s["workers"]["toy"].cache.clear()
            await r.hset(settings.keys.game(gid, "meta"), "version", v + 1)
            out = await c.submit("toy", gid, Add(n=1), 0)
            assert isinstance(out, Rejected) and out.code == "handling_failed"
            dead = await r.xrange(settings.keys.dead(settings.keys.partition(gid), "toy"))
            assert len(dead) == 1 and f"version {v + 1}".encode() in dead[0][1][b"error"]

    anyio.run(main)


def test_script_flush_mid_run_changes_nothing(settings):
    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            c = BusClient(s["redis"], settings)
            gid, v = await c.setup("toy", 2, {"target": 100})
            await s["redis"].script_flush()
            out = await c.submit("toy", gid, Add(n=1), 0)
            assert isinstance(out, Accepted) and out.version == v + 1
            await s["redis"].script_flush()
            await c.wait_projected(gid, out.version)
            assert (await c.view(gid, None))["view"]["total"] == 1

    anyio.run(main)


def test_read_models_only_show_the_state_after_a_whole_command(settings):
    """A log entry for the first event of a command projects the whole command (atomic append)."""
    from services.runtime.projector import Projector

    async def main():
        r = connect(settings.url)
        async with services_running(settings, titles=["toy"], projector=False, r=r):
            c = BusClient(r, settings)
            gid, v = await c.setup("toy", 2, {"target": 50})  # start appended game_started (v-1) and cards_dealt (v)
        proj = Projector(r, settings, consumer="t")
        assert await proj.apply(gid, "toy", v - 1) == "ok"
        assert await BusClient(r, settings).applied(gid) == v
        assert (await BusClient(r, settings).view(gid, 0))["view"]["my_card"] is not None
        assert await proj.apply(gid, "toy", v) == "skip"
        await r.aclose()

    anyio.run(main)


def test_a_new_game_is_projected_from_its_log_entries_alone(settings):
    """A game the projector has not cached whose entries start at version 1 is projected from the
    payloads its log entries carry (no read of its stream or of ``applied``: ``slow`` stays 0),
    to the same bytes a rebuild writes; a second projector handed the same entries answers from
    the script's compare-and-set (a skip, nothing written twice)."""
    from services.runtime.projector import Projector, rebuild

    async def main():
        r = connect(settings.url)
        k = settings.keys
        async with services_running(settings, titles=["toy"], projector=False, r=r):
            c = BusClient(r, settings)
            gids = [(await c.setup("toy", 2, {"target": 50}))[0] for _ in range(3)]
            for gid in gids:
                await c.submit("toy", gid, Add(n=2), 0)
        batches = []
        for p in range(settings.partitions):
            rows = await r.xrange(k.log(p))
            if rows:
                await r.xgroup_create(k.log(p), "projector", id="0", mkstream=True)
                await r.xreadgroup("projector", "t", {k.log(p): ">"})
                batches.append((k.log(p), [(mid.decode(), f, 1) for mid, f in rows]))
        assert sum(len(rows) for _, rows in batches) >= 3 * 5
        from services.adapters import scripts

        await r.script_load(scripts.PROJECT)  # as a running projector has (after NOSCRIPT it takes the stream path)
        proj = Projector(r, settings, consumer="t")
        await proj.apply_batches(batches)
        assert proj.slow == 0 and proj.applied == 3
        for gid in gids:
            assert await c.applied(gid) == int(await r.hget(k.game(gid, "meta"), "version"))
        projected = await dump_read_models(r, settings)
        late = Projector(r, settings, consumer="late")
        await late.apply_batches(batches)
        assert await dump_read_models(r, settings) == projected
        await rebuild(r, settings)
        assert await dump_read_models(r, settings) == projected
        await r.aclose()

    anyio.run(main)
