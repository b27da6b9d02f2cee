"""Adversarial tests: bad input at the worker, forged and misrouted commands, stale caches,
poison entries, secrets. Real Redis (fixtures), seeded, bounded; waits poll conditions.
"""

from __future__ import annotations

import anyio
import msgspec

from schemas.envelope import Accepted, CommandEnvelope, JoinSeat, Rejected, StartGame
from services.adapters.redis_store import ENC, EventStore, GroupReader, connect
from services.client import BusClient
from services.kernel import codec, fold, get_title
from services.kernel.hashing import GENESIS, event_hash
from services.runtime import services_running
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
            cases = {  # command id -> expected rejection code (None: parked, no reply)
                "b-neg-seat": ("rej", _env(command_id="b-neg-seat", game_id=gid, seat=-1), "not_seated"),
                "b-huge-seat": ("rej", _env(command_id="b-huge-seat", game_id=gid, seat=2**62), "not_seated"),
                "b-none-seat": ("rej", _env(command_id="b-none-seat", game_id=gid, seat=None), "not_seated"),
                "b-neg-ev": ("rej", _env(command_id="b-neg-ev", game_id=gid, expected_version=-1), "stale_version"),
                "b-huge-name": ("rej", _env(command_id="b-huge-name", game_id=gid, body={"type": "join", "name": "x" * 1_000_000}), "not_in_lobby"),
                "b-other-title-body": ("rej", _env(command_id="b-other-title-body", game_id=gid, body={"type": "questeros.bid", "bid": 1}), "bad_command"),
                "b-unknown-field": ("rej", _env(command_id="b-unknown-field", game_id=gid, body={"type": "toy.add", "n": 1, "x": 1}), "bad_command"),
                "b-body-int": ("rej", _env(command_id="b-body-int", game_id=gid, body=7), "bad_command"),
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
            for cid, (_, _, code) in cases.items():
                out = await c.bus.wait(gid, cid, timeout=10)
                assert isinstance(out, Rejected), (cid[:40], out)
                assert out.code == code, (cid[:40], out)
                assert out.message and out.message.endswith("."), out
            dead = k.dead(p, "toy")
            await until(lambda: _eq(r.xlen(dead), len(parked)), what="every undecodable entry parked")
            for _, f in await r.xrange(dead):
                assert f[b"error"]
            await until(lambda: _eq(GroupReader(r, stream, "worker:toy", "probe").pending_count(), 0), what="no pending")
            assert await r.xlen(k.game(gid, "events")) == v
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

    anyio.run(main)
