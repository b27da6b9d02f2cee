"""Adversarial tests: bad input at the worker, forged and misrouted commands, stale caches,
poison entries, secrets. Real Redis (fixtures), seeded, bounded; waits poll conditions.
"""

from __future__ import annotations

import anyio
import msgspec

from schemas.envelope import Accepted, CommandEnvelope, JoinSeat, Rejected, StartGame
from services.adapters import ended
from services.adapters.client import BusClient
from services.adapters.redis_store import ENC, EventStore, GroupReader, connect
from services.kernel import codec, fold, get_title
from services.kernel.hashing import GENESIS, event_hash
from services.runtime.serve import services_running
from tests.toygame import Add

FAST = {"min_idle_ms": 200}


async def until(cond, timeout: float = 20.0, what: str = "condition") -> None:
    deadline = anyio.current_time() + timeout
    while not await cond():
        assert anyio.current_time() < deadline, f"timed out waiting for {what}"
        await anyio.sleep(0.02)


async def chain_ok(r, settings, title: str, gid: str) -> list:
    """Events of a game: versions 1..n without gap, each hash valid and chained."""
    events = await EventStore(r, settings).read_events(codec(title), gid)
    prev = GENESIS
    for i, e in enumerate(events, start=1):
        assert e.version == i, f"gap or duplicate at {i}: {e.version}"
        assert e.prev_hash == prev, f"hash chain broken at version {i}"
        assert e.hash == event_hash(e), f"bad hash at version {i}"
        prev = e.hash
    return events


def _env(**kw) -> dict:
    base = {"command_id": "c1", "game_id": "g1", "title": "toy", "body": {"type": "toy.add", "n": 1}, "seat": 0}
    base.update(kw)
    return base


def test_bad_envelopes_get_a_rejection_or_are_parked_and_nothing_is_appended(settings):
    """Malformed, oversized and forged entries on a title's stream: a stable code or the dead
    letters; the worker keeps serving; no event is appended to the game."""
    async def main():
        async with services_running(settings, titles=["toy"], worker_kwargs=FAST) as s:
            r = s["redis"]
            c = BusClient(r, settings, timeout=10)
            k = settings.keys
            gid, v = await c.setup("toy", 2, {"target": 50})
            p = k.partition(gid)
            stream = k.commands(p, "toy")
            other = next(g for g in (f"other{i}" for i in range(100)) if k.partition(g) != p)
            await c.create("toy", 1, {"target": 5}, game_id=other)
            cases = {  # command id -> (_, envelope, expected rejection code); outcome under the envelope's game
                "b-other-partition": ("rej", _env(command_id="b-other-partition", game_id=other), "bad_command"),
                "b-neg-seat": ("rej", _env(command_id="b-neg-seat", game_id=gid, seat=-1), "not_seated"),
                "b-huge-seat": ("rej", _env(command_id="b-huge-seat", game_id=gid, seat=2**62), "not_seated"),
                "b-none-seat": ("rej", _env(command_id="b-none-seat", game_id=gid, seat=None), "not_seated"),
                "b-neg-ev": ("rej", _env(command_id="b-neg-ev", game_id=gid, expected_version=-1), "stale_version"),
                "b-huge-name": ("rej", _env(command_id="b-huge-name", game_id=gid, body={"type": "join", "name": "x" * 1_000_000}), "not_in_lobby"),
                "b-other-title-body": ("rej", _env(command_id="b-other-title-body", game_id=gid, body={"type": "questeros.bid", "bid": 1}), "bad_command"),
                "b-unknown-field": ("rej", _env(command_id="b-unknown-field", game_id=gid, body={"type": "toy.add", "n": 1, "x": 1}), "bad_command"),
                "b-body-int": ("rej", _env(command_id="b-body-int", game_id=gid, body=7), "bad_command"),
                # client strings echoed by a rejection are cut (the outcome is stored for good)
                "b-huge-field": ("rej", _env(command_id="b-huge-field", game_id=gid, body={"type": "toy.add", "n": 1, "f" * 100_000: 1}), "bad_command"),
                "b-huge-tag": ("rej", _env(command_id="b-huge-tag", game_id=gid, body={"type": "t" * 100_000}), "bad_command"),
                "b-huge-title": ("rej", _env(command_id="b-huge-title", game_id=gid, title="t" * 100_000), "bad_command"),
                "b-unknown-title": ("rej", _env(command_id="b-unknown-title", game_id=gid, title="nope"), "bad_command"),
            }
            for _cid, (_, env, _) in cases.items():
                await r.xadd(stream, {"c": ENC.encode(env)})
            parked = [
                {"c": b'{"command_id": "j", "game_id": "' + gid.encode() + b'"}'},  # JSON, not msgpack
                {"c": ENC.encode(_env(command_id="b-seat-str", game_id=gid, seat="0"))},
                {"c": ENC.encode({"game_id": gid, "title": "toy"})},  # missing fields
                {"x": b"no c field"},
                {"c": ENC.encode(_env(command_id="b-bad-gid", game_id="a" * 65))},
                {"c": ENC.encode(_env(command_id="b-gid-newline", game_id=gid + "\n"))},
                {"c": ENC.encode(_env(command_id="b-gid-brace", game_id="{p0}x"))},
                # no key may be named after a command id that is not one (unbounded, any bytes)
                {"c": ENC.encode(_env(command_id="x" * 10_000, game_id=gid))},
                {"c": ENC.encode(_env(command_id="b-cid-newline\n", game_id=gid))},
                {"c": ENC.encode(_env(command_id="", game_id=gid))},
            ]
            for f in parked:
                await r.xadd(stream, f)
            for cid, (_, env, code) in cases.items():
                out = await c.bus.wait(env["game_id"], cid, timeout=10)
                assert isinstance(out, Rejected), (cid[:40], out)
                assert out.code == code, (cid[:40], out)
                assert out.message and out.message.endswith(".") and len(out.message) <= 300, out.message[:100]
            dead = k.dead(p, "toy")
            await until(lambda: _eq(r.xlen(dead), len(parked)), what="every undecodable entry parked")
            for _, f in await r.xrange(dead):
                assert f[b"error"]
            await until(lambda: _eq(GroupReader(r, stream, "worker:toy", "probe").pending_count(), 0), what="no pending")
            assert await r.xlen(k.game(gid, "events")) == v
            assert await r.xlen(k.game(other, "events")) == 1
            assert await r.xlen(k.game(gid + "\n", "events")) == 0
            assert not [key async for key in r.scan_iter(match=f"{settings.namespace}:*b-cid-newline*")]
            assert not [key async for key in r.scan_iter(match=f"{settings.namespace}:*xxxxxxxxxxxxxxxx*")]
            out = await c.submit("toy", gid, Add(n=1), 0)  # the worker still serves
            assert isinstance(out, Accepted) and out.version == v + 1
            await chain_ok(r, settings, "toy", gid)

    anyio.run(main)


async def _eq(aw, n):
    return await aw == n


def test_a_command_of_another_title_never_touches_a_game(settings):
    """A questeros command naming a toy game (on the questeros stream of the right partition) is
    refused: it must not append lifecycle events to a game of another title."""
    async def main():
        async with services_running(settings, titles=["toy", "questeros"]) as s:
            r = s["redis"]
            c = BusClient(r, settings, timeout=10)
            gid = await c.create("toy", 2, {"target": 50})
            out = await c.submit("questeros", gid, JoinSeat(name="Mallory"), 0)
            assert isinstance(out, Rejected) and out.code == "wrong_title", out
            gid2, v = await c.setup("toy", 2, {"target": 50})
            out = await c.submit("questeros", gid2, StartGame(), 0)
            assert isinstance(out, Rejected) and out.code == "wrong_title", out
            out = await c.submit("toy", gid2, Add(n=1), 0)
            assert isinstance(out, Accepted) and out.version == v + 1
            await chain_ok(r, settings, "toy", gid)
            await chain_ok(r, settings, "toy", gid2)
            assert await r.xlen(settings.keys.game(gid, "events")) == 1
            from schemas.envelope import CreateGame

            for n in range(5):  # create racing create of the same id by two titles: one game, one title
                gid3 = f"titlerace{n}"
                outs = {}

                async def create(t, gid3=gid3, outs=outs):
                    outs[t] = await c.submit(t, gid3, CreateGame(seats=2, options={}), None)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(create, "toy")
                    tg.start_soon(create, "questeros")
                won = [t for t, o in outs.items() if isinstance(o, Accepted)]
                assert len(won) == 1, outs
                lost = [o for o in outs.values() if isinstance(o, Rejected)]
                assert [o.code for o in lost] == ["wrong_title"], outs
                assert (await r.hget(settings.keys.game(gid3, "meta"), "title")).decode() == won[0]
                await chain_ok(r, settings, won[0], gid3)

    anyio.run(main)


async def _feed(w, r, settings, env: CommandEnvelope) -> None:
    """Put ``env`` on its stream and let worker ``w`` handle it directly (deterministic replica choice)."""
    k = settings.keys
    stream = k.commands(k.partition(env.game_id), env.title)
    mid = await r.xadd(stream, {"c": ENC.encode(env)})
    await w.handle(stream, mid.decode(), {b"c": ENC.encode(env)})


async def _two_replicas(r, settings):
    from services.runtime.worker import Worker

    ws = [Worker(r, settings, "toy", consumer=f"replica-{i}") for i in range(2)]
    for p in range(settings.partitions):
        await GroupReader(r, settings.keys.commands(p, "toy"), "worker:toy", "x").ensure_group()
    return ws


async def _lose_last_append(r, settings, gid: str, cid: str) -> None:
    """What an fsync-everysec Redis that died just after an append leaves: the append never happened."""
    k = settings.keys
    events = await EventStore(r, settings).read_events(codec("toy"), gid)
    last = events[-1]
    assert last.command_id == cid
    for key in (k.game(gid, "events"), k.game(gid, "commands")):  # a stream without its top entry
        rows = await r.xrange(key, "-", f"({last.version}-0")
        await r.delete(key)
        for mid, fields in rows:
            await r.xadd(key, fields, id=mid)
    await r.hset(k.game(gid, "meta"), mapping={"version": last.version - 1, "hash": last.prev_hash})
    await r.delete(k.outcome(gid, cid))
    snap = await r.get(k.game(gid, "snap"))  # written after the append: lost with it
    if snap is not None and msgspec.msgpack.decode(msgspec.msgpack.decode(snap)["game"])["version"] >= last.version:
        await r.delete(k.game(gid, "snap"))


def test_a_replica_with_a_cache_from_lost_writes_never_forks_the_hash_chain(settings):
    """Replica A cached a state whose last append Redis lost; replica B appended another event
    at that version. A must not append on its cached state (the version matches, the history
    does not): the chain stays intact and A's command is decided on the stored state."""
    async def main():
        r = connect(settings.url)
        a, b = await _two_replicas(r, settings)
        gid = "fork1"
        env = lambda cid, body, seat: CommandEnvelope(command_id=cid, game_id=gid, title="toy", body=body, seat=seat)  # noqa: E731
        from schemas.envelope import CreateGame

        await _feed(a, r, settings, env("c0", CreateGame(seats=1, options={"target": 500}), None))
        await _feed(a, r, settings, env("c1", JoinSeat(name="A"), 0))
        await _feed(a, r, settings, env("c2", StartGame(), 0))
        await _feed(a, r, settings, env("c3", Add(n=1), 0))
        await _lose_last_append(r, settings, gid, "c3")
        await _feed(b, r, settings, env("c4", Add(n=3), 0))  # B loads from Redis: total 3
        await _feed(a, r, settings, env("c5", Add(n=2), 0))  # A's cache says total 1
        events = await chain_ok(r, settings, "toy", gid)
        assert fold(get_title("toy"), events).rules.total == 5
        out = await EventStore(r, settings).outcome(gid, "c5")
        assert isinstance(out, Accepted) and out.version == len(events)
        await r.aclose()

    anyio.run(main)


def test_a_replica_with_a_cache_from_lost_writes_never_stores_a_wrong_rejection(settings):
    """Same as above in the lobby: A's lost history has seat 0 taken, the stored one seat 1. A must
    not refuse seat 1's leave (seat_open) on its cached state at the same version."""
    async def main():
        r = connect(settings.url)
        a, b = await _two_replicas(r, settings)
        gid = "fork2"
        env = lambda cid, body, seat: CommandEnvelope(command_id=cid, game_id=gid, title="toy", body=body, seat=seat)  # noqa: E731
        from schemas.envelope import CreateGame, LeaveSeat

        await _feed(a, r, settings, env("c0", CreateGame(seats=2, options={"target": 500}), None))
        await _feed(a, r, settings, env("c1", JoinSeat(name="A"), 0))
        await _lose_last_append(r, settings, gid, "c1")
        await _feed(b, r, settings, env("c2", JoinSeat(name="B"), 1))
        await _feed(a, r, settings, env("c3", LeaveSeat(), 1))
        out = await EventStore(r, settings).outcome(gid, "c3")
        assert isinstance(out, Accepted) and out.version == 3, out
        await chain_ok(r, settings, "toy", gid)
        await r.aclose()

    anyio.run(main)


async def _wipe_namespace(r, settings) -> None:
    """What a Redis restarted without data leaves of this namespace (the shared server is never flushed)."""
    async for key in r.scan_iter(match=f"{settings.namespace}:*"):
        await r.delete(key)
    for p in range(settings.partitions):
        await GroupReader(r, settings.keys.commands(p, "toy"), "worker:toy", "x").ensure_group()


def test_a_game_id_used_again_after_data_loss_never_reuses_a_cached_seed(settings):
    """Replica A remembers the seed of a game that Redis lost (and that was revealed at its end).
    The game id is created again: its new seed must be fresh, and A must use the stored seed of
    the new game (the one its commitment names), never its cached old one."""
    import hashlib

    from schemas.envelope import CreateGame, GameCreated, SeedRevealed

    async def main():
        r = connect(settings.url)
        a, b = await _two_replicas(r, settings)
        env = lambda gid, cid, body, seat: CommandEnvelope(command_id=cid, game_id=gid, title="toy", body=body, seat=seat)  # noqa: E731
        for gid in ("seed1", "seed2"):
            await _feed(a, r, settings, env(gid, "c0", CreateGame(seats=1, options={"target": 1}), None))
            await _feed(a, r, settings, env(gid, "c1", JoinSeat(name="A"), 0))
            await _feed(a, r, settings, env(gid, "c2", StartGame(), 0))
            await _feed(a, r, settings, env(gid, "c3", Add(n=1), 0))
        old = {gid: (await EventStore(r, settings).read_events(codec("toy"), gid))[-1].body.seed for gid in ("seed1", "seed2")}
        await _wipe_namespace(r, settings)
        # seed1 created again through A (which cached the old, revealed seed)
        await _feed(a, r, settings, env("seed1", "d0", CreateGame(seats=1, options={"target": 1}), None))
        # seed2 created again through B; A plays it to its end
        await _feed(b, r, settings, env("seed2", "d0", CreateGame(seats=1, options={"target": 1}), None))
        for gid in ("seed1", "seed2"):
            await _feed(a, r, settings, env(gid, "d1", JoinSeat(name="A"), 0))
            await _feed(a, r, settings, env(gid, "d2", StartGame(), 0))
            await _feed(a, r, settings, env(gid, "d3", Add(n=1), 0))
            events = await chain_ok(r, settings, "toy", gid)
            created = [e.body for e in events if isinstance(e.body, GameCreated)][0]
            revealed = [e.body for e in events if isinstance(e.body, SeedRevealed)][0]
            assert revealed.seed != old[gid], f"{gid}: the seed of the lost game was used again"
            assert hashlib.sha256(bytes.fromhex(revealed.seed)).hexdigest() == created.seed_commitment, gid
        await r.aclose()

    anyio.run(main)


def test_a_poison_log_entry_does_not_hold_up_the_entries_behind_it(settings):
    """A partition-log entry the projector cannot apply (unregistered title, missing field) stays
    pending; the other games' entries read or reclaimed with it are projected."""
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings, timeout=10)
        k = settings.keys
        async with services_running(settings, titles=["toy"], projector=False, r=r):
            gid = await c.create("toy", 1, {"target": 50}, game_id="poison-victim")
            p = k.partition(gid)
            await r.xadd(k.log(p), {"g": "ghost", "t": "no-such-title", "v": "1", "e": b"x"})
            await r.xadd(k.log(p), {"junk": "1"})
            await c.submit("toy", gid, JoinSeat(name="A"), 0)
            out = await c.submit("toy", gid, StartGame(), 0)
            async with services_running(settings, titles=[], r=r, projector_kwargs=FAST):
                await c.wait_projected(gid, out.version, timeout=10)
                rd = GroupReader(r, k.log(p), "projector", "probe")
                await until(lambda: _eq(rd.pending_count(), 2), what="only the two poison entries pending")
        await r.aclose()

    anyio.run(main)


def test_worker_and_projector_sigkilled_at_random_moments_every_command_one_outcome(settings, tmp_path):
    """Bot games while a seeded killer SIGKILLs the worker or the projector subprocess at random
    moments and starts a new one. Clients resend the same command id until an outcome comes.
    After: one outcome per command id, gap-free intact hash chains, read models equal replay,
    nothing left pending."""
    import random
    import time

    from services.adapters.client import NoOutcome
    from services.kernel import game as lifecycle
    from services.runtime.projector import projection
    from tests.procs import kill9, spawn, stop

    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings, timeout=2)
        k = settings.keys
        rng = random.Random(20261130)
        procs = {"worker": None, "projector": None}
        args = {"worker": ("worker", "--title", "toy", "--min-idle-ms", "300"), "projector": ("projector", "--min-idle-ms", "300")}
        for name in procs:
            procs[name] = spawn(settings, *args[name], log=tmp_path / f"{name}.log")
        outcomes: dict[tuple[str, str], list] = {}
        done = anyio.Event()

        async def submit(gid, body, seat, cid):
            while True:  # resend the same command id until an outcome comes
                try:
                    out = await c.submit("toy", gid, body, seat, command_id=cid)
                except NoOutcome:
                    continue
                outcomes.setdefault((gid, cid), []).append(out)
                return out

        async def player(i):
            prng = random.Random(i)
            gid = f"kill{i}"
            from schemas.envelope import CreateGame

            await submit(gid, CreateGame(seats=2, options={"target": 25}), None, "create")
            await submit(gid, JoinSeat(name="A"), 0, "j0")
            await submit(gid, JoinSeat(name="B"), 1, "j1")
            await submit(gid, StartGame(), 0, "start")
            n = 0
            while True:
                n += 1
                seat = (n - 1) % 2
                out = await submit(gid, Add(n=prng.randint(1, 3)), seat, f"m{n}")
                assert isinstance(out, Accepted), out
                if out.events > 1:
                    return gid

        async def killer():
            kills = 0
            while not done.is_set() and kills < 8:
                await anyio.sleep(rng.uniform(0.1, 0.6))
                name = rng.choice(["worker", "worker", "projector"])
                kill9(procs[name])
                procs[name] = spawn(settings, *args[name], log=tmp_path / f"{name}.log")
                kills += 1

        try:
            t0 = time.monotonic()
            games = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(killer)

                async def run_players():
                    async with anyio.create_task_group() as tg2:
                        for i in range(4):
                            tg2.start_soon(lambda i=i: _append(games, player(i)))
                    done.set()

                tg.start_soon(run_players)
            assert time.monotonic() - t0 < 40
            for (gid, cid), outs in outcomes.items():
                stored = await EventStore(r, settings).outcome(gid, cid)
                assert all(o == stored for o in outs), (gid, cid, outs, stored)
            title = get_title("toy")
            for gid in games:
                events = await chain_ok(r, settings, "toy", gid)
                game = fold(title, events)
                assert game.status == "finished"
                await c.wait_projected(gid, game.version, timeout=20)
                views = projection(title, game)
                for seat, raw in views:
                    assert ended.view_json(await r.get(k.view(gid, seat))) == raw, (gid, seat)
                for seat in (0, 1, None):
                    feed = await c.feed(gid, seat)
                    assert [e["version"] for e in feed] == [e.version for e in events if lifecycle.redact(title, e, seat) is not None]
            streams = [k.commands(p, "toy") for p in range(settings.partitions)]
            logs_ = [k.log(p) for p in range(settings.partitions)]

            async def settled():
                n = 0
                for s in streams:
                    n += await GroupReader(r, s, "worker:toy", "probe").pending_count()
                for s in logs_:
                    n += await GroupReader(r, s, "projector", "probe").pending_count()
                return n == 0

            await until(settled, timeout=20, what="no pending entries")
        finally:
            for p in procs.values():
                stop(p)
            await r.aclose()

    anyio.run(main)


async def _append(acc, aw):
    acc.append(await aw)


def test_redis_down_for_seconds_services_wait_without_spinning_and_lose_nothing(own_server, settings):
    """Redis stopped for a few seconds mid-game: the services back off (little CPU), a command
    sent during the outage is handled once Redis is back, and the game goes on."""
    import dataclasses
    import time

    settings = dataclasses.replace(settings, url=own_server.url)

    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings, timeout=30)
        async with services_running(settings, titles=["toy"], r=r, worker_kwargs=FAST, projector_kwargs=FAST):
            gid, v = await c.setup("toy", 2, {"target": 100})
            await anyio.to_thread.run_sync(own_server.stop)
            cpu0 = time.process_time()
            late: list = []

            async def send_during_outage():
                late.append(await c.submit("toy", gid, Add(n=2), 0, command_id="during-outage"))

            async with anyio.create_task_group() as tg:
                tg.start_soon(send_during_outage)
                await anyio.sleep(4)  # the outage itself (not a wait for a result)
                cpu = time.process_time() - cpu0
                await anyio.to_thread.run_sync(own_server.start)
            assert cpu < 1.0, f"{cpu:.2f} s of CPU in a 4 s outage: the services spin"
            assert isinstance(late[0], Accepted) and late[0].version == v + 1, late
            out = await c.submit("toy", gid, Add(n=1), 1)
            assert isinstance(out, Accepted) and out.version == v + 2
            await c.wait_projected(gid, out.version, timeout=20)
            assert (await c.view(gid, None))["view"]["total"] == 3
            await chain_ok(r, settings, "toy", gid)
        await r.aclose()

    anyio.run(main)


def test_the_seed_appears_nowhere_but_its_key_until_the_game_ends(settings, capsys):
    """Mid-game (after a poisoned command, a rejection, a parked entry): the secret seed is in no
    key but ``:secret`` (views, feeds, outcomes, replies, dead letters, lobby, snapshots, events)
    and in no log line; seat 1's view and feed never show seat 0's card."""
    async def main():
        async with services_running(settings, titles=["toy"], worker_kwargs={"min_idle_ms": 100, "max_failures": 1}) as s:
            r = s["redis"]
            c = BusClient(r, settings, timeout=10)
            k = settings.keys
            gid, v = await c.setup("toy", 2, {"target": 500})
            await c.submit("toy", gid, Add(n=9), 0)  # rejected
            await r.xadd(k.commands(k.partition(gid), "toy"), {"c": b"\xc1"})  # parked
            out = await c.submit("toy", gid, Add(n=1), 0)
            await c.wait_projected(gid, out.version)
            seed = (await EventStore(r, settings).seed(gid)).hex()
            card0 = (await c.view(gid, 0))["view"]["my_card"]
            hits = []
            async for key in r.scan_iter(match=f"{settings.namespace}:*"):
                if key.endswith(b":secret"):
                    continue
                t = (await r.type(key)).decode()
                if t == "string":
                    blobs = [await r.get(key)]
                elif t == "stream":
                    blobs = [b"".join(f.values()) for _, f in await r.xrange(key)]
                elif t == "hash":
                    blobs = [b"".join(a + b for a, b in (await r.hgetall(key)).items())]
                elif t == "list":
                    blobs = await r.lrange(key, 0, -1)
                elif t == "zset":
                    blobs = [b"".join(m for m in await r.zrange(key, 0, -1))]
                else:
                    blobs = []
                for b in blobs:
                    if seed.encode() in b or bytes.fromhex(seed) in b:
                        hits.append(key)
            assert not hits, hits
            for e in await c.feed(gid, 1):
                if e["body"]["type"] == "toy.cards_dealt":
                    assert e["body"]["cards"][0] == -1
            assert b'"my_card":%d' % card0 not in (await c.view_raw(gid, None))
            return seed

    seed = anyio.run(main)
    logs = capsys.readouterr()
    assert seed not in logs.err and seed not in logs.out


def test_races_between_two_replicas_one_outcome_each_and_one_winner(settings):
    """Two worker replicas; for each of several games, at once: create racing create, the same
    command id with different bodies from several clients, join racing join on one seat, start
    racing leave. One outcome per command id, one winner per race, intact chains."""
    from schemas.envelope import CreateGame, LeaveSeat

    async def main():
        r = connect(settings.url)
        cs = [BusClient(r, settings, timeout=15) for _ in range(3)]
        async with services_running(settings, titles=["toy"], r=r), services_running(settings, titles=["toy"], projector=False, r=r):
            async def race(*calls):
                outs = [None] * len(calls)

                async def one(i, call):
                    outs[i] = await call()

                async with anyio.create_task_group() as tg:
                    for i, call in enumerate(calls):
                        tg.start_soon(one, i, call)
                return outs

            for n in range(6):
                gid = f"race{n}"
                outs = await race(*[lambda c=c, i=i, gid=gid: c.submit("toy", gid, CreateGame(seats=2, options={"target": 10 + i}), None)
                                    for i, c in enumerate(cs)])
                assert sum(isinstance(o, Accepted) for o in outs) == 1, outs
                assert {o.code for o in outs if isinstance(o, Rejected)} <= {"game_exists"}, outs
                # the same command id, different bodies, three clients
                outs = await race(*[lambda c=c, i=i, gid=gid: c.submit("toy", gid, JoinSeat(name=f"P{i}"), i % 2, command_id="same")
                                    for i, c in enumerate(cs)])
                assert outs[0] == outs[1] == outs[2], outs
                taken = outs[0].events if isinstance(outs[0], Accepted) else 0
                # join racing join on the open seat
                open_seat = 1 if (await EventStore(r, settings).load(codec("toy"), gid)).seats[0].name else 0
                outs = await race(*[lambda c=c, i=i, gid=gid, seat=open_seat: c.submit("toy", gid, JoinSeat(name=f"Q{i}"), seat) for i, c in enumerate(cs)])
                assert sum(isinstance(o, Accepted) for o in outs) == 1, outs
                assert {o.code for o in outs if isinstance(o, Rejected)} <= {"seat_taken"}, outs
                # start racing leave
                outs = await race(lambda gid=gid: cs[0].submit("toy", gid, StartGame(), 0), lambda gid=gid: cs[1].submit("toy", gid, LeaveSeat(), 1))
                acc = [o for o in outs if isinstance(o, Accepted)]
                assert len(acc) == 1, outs
                rej = [o for o in outs if isinstance(o, Rejected)][0]
                assert rej.code in ("not_in_lobby", "seats_open"), outs
                events = await chain_ok(r, settings, "toy", gid)
                assert len(events) == acc[0].version and taken == 1
        await r.aclose()

    anyio.run(main)


def test_projection_script_never_fails_halfway_on_a_feed_that_is_ahead(settings):
    """The applied-version record is gone while the feeds are not (a rebuild racing a projector,
    an evicted key): the projection script must not die after writing the views (a script keeps
    the writes made before an error); it converges to the same read models."""
    async def main():
        async with services_running(settings, titles=["toy"], projector_kwargs=FAST) as s:
            r = s["redis"]
            c = BusClient(r, settings, timeout=10)
            k = settings.keys
            gid, v = await c.setup("toy", 2, {"target": 100})
            await c.wait_projected(gid, v)
            feeds = {seat: await c.feed(gid, seat) for seat in (0, 1, None)}
            await r.delete(k.rm(gid, "applied"))
            out = await c.submit("toy", gid, Add(n=2), 0)
            await c.wait_projected(gid, out.version)
            for seat, before in feeds.items():
                after = await c.feed(gid, seat)
                assert after[:len(before)] == before
                assert [e["version"] for e in after] == [e["version"] for e in before] + [out.version]
            assert (await c.view(gid, None))["view"]["total"] == 2

    anyio.run(main)


def test_a_projector_with_a_cache_from_lost_writes_folds_the_stored_history(settings):
    """Projector A cached a game at a version whose events Redis lost; projector B applied the
    rewritten history to that version. A must not fold the next event onto its cached state."""
    from services.runtime.projector import Projector

    async def main():
        r = connect(settings.url)
        w, w2 = await _two_replicas(r, settings)
        pa, pb = Projector(r, settings, consumer="pa"), Projector(r, settings, consumer="pb")
        gid = "pfork"
        env = lambda cid, body, seat: CommandEnvelope(command_id=cid, game_id=gid, title="toy", body=body, seat=seat)  # noqa: E731
        from schemas.envelope import CreateGame

        await _feed(w, r, settings, env("c0", CreateGame(seats=2, options={"target": 500}), None))
        await _feed(w, r, settings, env("c1", JoinSeat(name="A"), 0))
        assert await pa.apply(gid, "toy", 2) == "ok"  # A caches: seat 0 is A's
        await _lose_last_append(r, settings, gid, "c1")
        await r.set(settings.keys.rm(gid, "applied"), 1)  # the projection of v2 was lost too (feeds are derived)
        await _feed(w2, r, settings, env("c2", JoinSeat(name="B"), 1))
        assert await pb.apply(gid, "toy", 2) == "ok"
        await _feed(w2, r, settings, env("c3", JoinSeat(name="C"), 0))
        assert await pa.apply(gid, "toy", 3) == "ok"
        view = msgspec.json.decode(ended.view_json(await r.get(settings.keys.view(gid, None))))
        assert [s.get("name") for s in view["seats"]] == ["C", "B"], view
        await r.aclose()

    anyio.run(main)


def test_command_streams_are_trimmed_below_the_oldest_pending_entry_only(settings):
    """Command streams do not grow forever; an entry still pending (a dead consumer's) and every
    entry after it survive the trim and are still handled."""
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings, timeout=10)
        k = settings.keys
        async with services_running(settings, titles=["toy"], projector=False, r=r):
            gid, v = await c.setup("toy", 1, {"target": 1000})
            for _i in range(10):
                await c.submit("toy", gid, Add(n=1), 0)
        stream = k.commands(k.partition(gid), "toy")
        rd = GroupReader(r, stream, "worker:toy", "doomed")
        n0 = await r.xlen(stream)
        assert await rd.trim_acked() == n0 - 1 and await r.xlen(stream) == 1  # the last delivered stays
        await c.bus.send(CommandEnvelope(command_id="held", game_id=gid, title="toy", body=Add(n=2), seat=0))
        assert len(await rd.read()) == 1  # now pending with a consumer that dies
        await c.bus.send(CommandEnvelope(command_id="after", game_id=gid, title="toy", body=Add(n=3), seat=0))
        assert await rd.trim_acked() == 1 and await r.xlen(stream) == 2
        async with services_running(settings, titles=["toy"], projector=False, r=r, worker_kwargs=FAST):
            held = await c.bus.wait(gid, "held", timeout=10)
            after = await c.bus.wait(gid, "after", timeout=10)
            assert isinstance(held, Accepted) and isinstance(after, Accepted)
        assert await rd.pending_count() == 0
        assert await rd.trim_acked() >= 1
        events = await chain_ok(r, settings, "toy", gid)
        assert fold(get_title("toy"), events).rules.total == 15
        await r.aclose()

    anyio.run(main)


def test_redis_sigkilled_mid_game_two_replicas_chains_stay_intact_and_read_models_equal_replay(own_server, settings):
    """Redis SIGKILLed while two worker replicas and a projector serve bot games; then started
    again from its append-only file. Every chain is gap-free and intact, and the read models
    equal a fresh replay. (A SIGKILL of the server loses little or nothing that was written to
    the kernel; writes lost in a machine crash are simulated by the fork tests above.)"""
    import dataclasses
    import random

    from services.adapters.client import NoOutcome
    from services.local.demo import dump_read_models
    from services.runtime.projector import rebuild

    settings = dataclasses.replace(settings, url=own_server.url)

    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings, timeout=5)
        games = [f"rk{i}" for i in range(4)]
        killed = anyio.Event()

        async def player(i):
            from schemas.envelope import CreateGame

            rng = random.Random(i)
            gid = games[i]
            for body, seat in [(CreateGame(seats=1, options={"target": 60}), None), (JoinSeat(name="A"), 0), (StartGame(), 0)]:
                while True:
                    try:
                        await c.submit("toy", gid, body, seat)
                        break
                    except NoOutcome:
                        continue
            n = 0
            while True:
                n += 1
                if n == 8 and i == 0:
                    await anyio.to_thread.run_sync(own_server.kill)
                    await anyio.to_thread.run_sync(own_server.start)
                    killed.set()
                try:
                    out = await c.submit("toy", gid, Add(n=rng.randint(1, 3)), 0)
                except NoOutcome:
                    continue
                if isinstance(out, Rejected) and out.code == "game_over" or isinstance(out, Accepted) and out.events > 1:
                    return

        async with services_running(settings, titles=["toy"], r=r, worker_kwargs=FAST, projector_kwargs=FAST), \
                services_running(settings, titles=["toy"], projector=False, r=r, worker_kwargs=FAST):
            async with anyio.create_task_group() as tg:
                for i in range(len(games)):
                    tg.start_soon(player, i)
            assert killed.is_set()
            for gid in games:
                events = await chain_ok(r, settings, "toy", gid)
                await c.wait_projected(gid, len(events), timeout=20)
        live = await dump_read_models(r, settings)
        await rebuild(r, settings)
        assert await dump_read_models(r, settings) == live
        await r.aclose()

    anyio.run(main)


def test_an_embedded_server_started_from_a_thread_outlives_that_thread(tmp_path):
    """PR_SET_PDEATHSIG is tied to the forking thread: a server (re)started through
    anyio.to_thread died when the pooled thread ended."""
    import threading

    from services.local.embedded import ServerProcess

    server = ServerProcess(tmp_path / "srv", prefer_bundled=False)
    t = threading.Thread(target=server.start)
    t.start()
    t.join()
    try:
        import time

        end = time.monotonic() + 1.0
        while time.monotonic() < end:  # it must stay up (not a wait for a result)
            assert server.proc.poll() is None, "the server died with the thread that started it"
            time.sleep(0.05)
    finally:
        server.stop()


def test_a_snapshot_that_does_not_decode_or_does_not_match_the_stream_is_ignored(settings):
    """A snapshot is a cache: one written by an older state type (it no longer decodes) or one
    that is not of this game's stored history (its hash differs from the stored event at its
    version) must not break or mislead the load; the game is folded from its events."""
    async def main():
        async with services_running(settings, titles=["toy"]) as s:
            r = s["redis"]
            c = BusClient(r, settings, timeout=10)
            k = settings.keys
            gid, v = await c.setup("toy", 1, {"target": 1000})
            for _ in range(6):
                out = await c.submit("toy", gid, Add(n=1), 0)
            store = EventStore(r, settings)
            full = fold(get_title("toy"), await store.read_events(codec("toy"), gid))
            from services.kernel import game as lifecycle

            stored = msgspec.msgpack.decode(await r.get(k.game(gid, "snap")), type=lifecycle.Snapshot)
            snap = msgspec.msgpack.decode(stored.game)
            bad_type = dict(snap, rules={"renamed": 1})
            other_history = dict(snap, rules=dict(snap["rules"], total=999), last_hash="ab" * 32)

            def framed(game: dict) -> bytes:  # this code's fingerprint: only the content is wrong
                return msgspec.msgpack.encode(lifecycle.Snapshot(fingerprint=stored.fingerprint, game=msgspec.msgpack.encode(game)))

            for bad in (b"\xc1garbage", framed(bad_type), framed(other_history)):
                await r.set(k.game(gid, "snap"), bad)
                assert await store.load(codec("toy"), gid) == full
            s["workers"]["toy"]._forget()
            out = await c.submit("toy", gid, Add(n=2), 0)
            assert isinstance(out, Accepted) and out.version == full.version + 1, out
            await c.wait_projected(gid, out.version)
            assert (await c.view(gid, None))["view"]["total"] == 8

    anyio.run(main)


def test_reclaimed_entries_report_their_delivery_count_among_many_fresh_pending_ones(settings):
    """The delivery count of reclaimed entries (what parks a poison command) must be read for
    every one of them, also when the consumer holds many younger pending entries between them."""
    async def main():
        r = connect(settings.url)
        stream = settings.keys.commands(0, "toy")
        rd = GroupReader(r, stream, "worker:toy", "me", count=100)
        await rd.ensure_group()
        ids = [(await r.xadd(stream, {"c": b"x"})).decode() for _ in range(40)]
        assert len(await rd.read()) == 40
        old = ids[3::4]  # 10 old entries, 3 young ones between each two
        await r.execute_command("XCLAIM", stream, "worker:toy", "me", 0, *old, "IDLE", 600_000, "RETRYCOUNT", 6)
        got = await rd.claim(300_000)
        assert sorted(m for m, _, _ in got) == sorted(old)
        assert {m: n for m, _, n in got} == dict.fromkeys(old, 7)
        await r.aclose()

    anyio.run(main)
