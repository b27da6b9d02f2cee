"""The clock service on a real Redis: deadlines fire through the bus, once, across a SIGKILLed
clock service and a Redis restart; the games' audits stay valid (issue 14)."""

from __future__ import annotations

import dataclasses
import time

import anyio

from services.adapters.client import BusClient
from services.adapters.redis_store import EventStore, connect
from services.audit.store import audit_game
from services.kernel import codec, fold, get_title
from services.runtime.clock import GROUP
from services.runtime.serve import services_running
from tests.procs import kill9, spawn, stop

FORFEIT = {"clock": "move", "move_seconds": 1, "on_timeout": "forfeit", "setup": "symmetric_1", "first_seat": 0}
DEFAULT = {"clock": "move", "move_seconds": 1, "absent_after": 0, "setup": "symmetric_1", "first_seat": 0}


async def until(cond, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not await cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await anyio.sleep(0.05)


async def events_of(r, settings, gid):
    return await EventStore(r, settings).read_events(codec("orion_duel"), gid)


async def all_finished(r, settings, games) -> bool:
    try:
        return [await r.hget(settings.keys.game(g, "meta"), "status") for g in games] == [b"finished"] * len(games)
    except Exception:  # Redis restarting
        return False


def timeouts(events) -> list:
    return [e.body for e in events if e.body.__struct_config__.tag == "timed_out"]


def test_deadlines_fire_through_the_bus_and_a_move_in_time_wins(settings):
    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings)
        async with services_running(settings, titles=["orion_duel"], r=r, clock=True, clock_kwargs={"tick": 0.05}):
            gid, _ = await c.setup("orion_duel", 2, FORFEIT)
            quick, _ = await c.setup("orion_duel", 2, FORFEIT)
            game = fold(get_title("orion_duel"), await events_of(r, settings, quick))
            move = get_title("orion_duel").legal_commands(game.rules, 0)[0]
            await c.submit("orion_duel", quick, move, 0)  # in time: seat 1 now waits

            await until(lambda: all_finished(r, settings, [gid, quick]), what="both games to end by forfeit")
            for g, loser in ((gid, 0), (quick, 1)):
                evs = await events_of(r, settings, g)
                [to] = timeouts(evs)
                assert to.seat == loser and to.action == "forfeit"
                assert fold(get_title("orion_duel"), evs).result.winners == [1 - loser]
        await r.aclose()

    anyio.run(main)


def test_sigkilled_clock_and_restarted_redis_every_deadline_fires_exactly_once(own_server, settings, tmp_path):
    settings = dataclasses.replace(settings, url=own_server.url)

    async def main():
        r = connect(settings.url)
        c = BusClient(r, settings, timeout=60)
        k = settings.keys
        clock = spawn(settings, "clock", "--tick", "0.05", "--min-idle-ms", "500", log=tmp_path / "clock1.log")
        try:
            async with services_running(settings, titles=["orion_duel"], r=r, worker_kwargs={"min_idle_ms": 500},
                                        projector_kwargs={"min_idle_ms": 500}):
                async def groups_made() -> bool:
                    for p in range(settings.partitions):
                        try:
                            names = [g["name"] for g in await r.xinfo_groups(k.log(p))]
                        except Exception:  # no log stream yet
                            return False
                        if GROUP.encode() not in names and GROUP not in names:
                            return False
                    return True

                await until(groups_made, what="the clock service's consumer groups")
                forfeits = [(await c.setup("orion_duel", 2, FORFEIT))[0] for _ in range(8)]
                chains = [(await c.setup("orion_duel", 2, DEFAULT))[0] for _ in range(2)]
                kill9(clock)  # deadlines pending, none due yet (1 s)
                t_due = time.time() + 1.2

                async def due() -> bool:
                    return time.time() > t_due

                await until(due, what="the deadlines to be due")
                await anyio.to_thread.run_sync(own_server.restart)
                clock = spawn(settings, "clock", "--tick", "0.05", "--min-idle-ms", "500", log=tmp_path / "clock2.log")

                await until(lambda: all_finished(r, settings, forfeits), timeout=90, what="every forfeit game to end by its one timeout")

                async def chains_moved() -> bool:
                    counts = [len(timeouts(await events_of(r, settings, g))) for g in chains]
                    return min(counts) >= 3

                await until(chains_moved, timeout=90, what="the default-move games to time out again and again")
                stop(clock)
                for g in forfeits:
                    evs = await events_of(r, settings, g)
                    assert len(timeouts(evs)) == 1, g
                    assert (await audit_game(r, settings, g)).status == "valid"
                for g in chains:
                    evs = await events_of(r, settings, g)
                    fired = [(t.seat, t.deadline) for t in timeouts(evs)]
                    assert len(fired) == len(set(fired)), "a deadline fired twice"
                    # only timeouts move these games: every clock_updated after the start's
                    # came from the one timeout of the deadline before it, none was skipped
                    updates = [e for e in evs if e.body.__struct_config__.tag == "clock_updated"]
                    assert len(fired) == len(updates) - 1
                    for prev, nxt in zip(updates, updates[1:], strict=False):
                        [d] = prev.body.deadlines
                        assert nxt.body.deadlines[0].since == d.at  # the next decision starts at the deadline
        finally:
            stop(clock)
            await r.aclose()

    anyio.run(main)


def test_a_move_sent_before_its_deadline_is_in_time_when_a_worker_handles_it_late(settings):
    # A move that entered its command stream before the deadline, handled only after it (the
    # worker that read it was killed and another reclaimed it 30 s later, or the workers lag):
    # its time is when it was received (the stream entry's time), not when a worker got to it.
    # Before, the worker stamped its own "now" and refused the in-time move out_of_time
    # (found by the breaker session).
    from schemas.envelope import Accepted, CommandEnvelope
    from services.adapters.redis_store import ENC, CommandBus
    from services.runtime.clock import now_ms

    title = get_title("orion_duel")

    async def main():
        r = connect(settings.url)
        bus = CommandBus(r, settings)
        opts = {"clock": "move", "move_seconds": 3, "setup": "symmetric_1", "first_seat": 0}
        async with services_running(settings, titles=["orion_duel"], r=r, projector=False):
            gid, _ = await BusClient(r, settings).setup("orion_duel", 2, opts)
        game = fold(title, await events_of(r, settings, gid))
        d = game.clock.deadline_of(0)
        env = CommandEnvelope(command_id="handled-late", game_id=gid, title="orion_duel", seat=0,
                              body=title.legal_commands(game.rules, 0)[0])
        stream = settings.keys.commands(settings.keys.partition(gid), "orion_duel")
        await r.xadd(stream, {"c": ENC.encode(env), "r": bus.inbox.name}, id=f"{d.at - 1}-0")  # received 1 ms in time
        while now_ms() <= d.at + 50:  # no worker runs until the deadline has passed
            await anyio.sleep(0.05)
        async with services_running(settings, titles=["orion_duel"], r=r, projector=False):
            out = await bus.wait(gid, "handled-late", 30)
        assert isinstance(out, Accepted) and out.events > 0, out
        evs = await events_of(r, settings, gid)
        assert not timeouts(evs)
        await r.aclose()

    anyio.run(main)


def test_an_unreadable_log_entry_is_parked_by_the_clock_not_retried_for_ever(settings):
    """A partition log entry the clock cannot handle (here: a ``clock_updated`` whose deadlines
    are not readable, and an entry with no version) is tried ``max_failures`` times, then parked
    in ``<tag>:log-dead`` with the clock's error and acknowledged in the group ``clock`` (before:
    it stayed pending and was reclaimed for ever, a traceback each time)."""
    import msgspec

    from services.adapters.redis_store import GroupReader

    async def main():
        r = connect(settings.url)
        k = settings.keys
        p = k.partition("gbad")
        async with services_running(settings, titles=[], projector=False, r=r, clock=True,
                                    clock_kwargs={"tick": 0.05, "min_idle_ms": 50, "max_failures": 3}):
            bad = msgspec.msgpack.encode({"body": {"type": "clock_updated", "deadlines": [{"seat": 0}]}})
            ids = [await r.xadd(k.log(p), {"g": "gbad", "t": "orion_duel", "v": "3", "e": bad}),
                   await r.xadd(k.log(p), {"g": "gbad", "t": "orion_duel", "e": bad})]

            async def parked():
                return len(await r.xrange(k.log_dead(p))) >= 2

            await until(parked, what="both entries to be parked")
            dead = await r.xrange(k.log_dead(p))
            assert sorted(f[b"id"] for _, f in dead) == sorted(ids)
            assert all(f[b"error"].startswith(b"clock: handling failed 3 times") for _, f in dead)
            assert await GroupReader(r, k.log(p), GROUP, "probe").pending_count() == 0
            assert not await r.exists(k.failures(k.log(p) + ":clock"))
        await r.aclose()

    anyio.run(main)
