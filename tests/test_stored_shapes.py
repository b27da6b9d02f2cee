"""What older code left in Redis is never misread (issue 12).

- A snapshot carries the fingerprint of the state type and the title's rules version; one
  written by other code (an older state type, another rules version, the old bare format) is
  ignored and rewritten, so load always equals a full replay.
- A stored event with a field its type does not know is refused (``CorruptEvent`` naming game
  and version) unless an upcaster says how to read it; never read with a default.
- The projector parks an event it cannot read after a few tries; ``questhall replay`` and
  ``questhall audit`` answer a corrupt stream with one line naming game and version, exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys

import anyio
import msgspec
import pytest

from services.adapters.client import BusClient
from services.adapters.redis_store import ENC, EventStore, GroupReader
from services.kernel import codec, fold, get_title
from services.kernel import game as lifecycle
from services.kernel.errors import CorruptEvent
from services.runtime.projector import GROUP
from services.runtime.serve import services_running
from tests.buses import bus_client
from tests.procs import ROOT
from tests.toygame import Add, Rolled


async def until(cond, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = anyio.current_time() + timeout
    while not await cond():
        assert anyio.current_time() < deadline, f"timed out waiting for {what}"
        await anyio.sleep(0.02)


async def _game_with_moves(c: BusClient, moves: int) -> tuple[str, int]:
    gid, v = await c.setup("toy", 2, {"target": 1000})
    for i in range(moves):
        out = await c.submit("toy", gid, Add(n=3), i % 2)
        v = out.version
    return gid, v


def test_an_old_snapshot_of_a_changed_state_type_is_ignored_and_rewritten(settings):
    async def main():
        k = settings.keys
        toy = codec("toy")
        async with bus_client(settings) as (r, c):
            store = EventStore(r, settings)
            async with services_running(settings, titles=["toy"], projector=False, r=r):
                gid, v = await _game_with_moves(c, 7)  # 12 events: snapshots at 5 and 10
            full = fold(get_title("toy"), await store.read_events(toy, gid))
            assert full.rules.total == 21
            # what older code wrote: its state type had no ``total`` (a field added since, with a
            # default), in the bare format without a fingerprint
            old = msgspec.to_builtins(full)
            del old["rules"]["total"]
            await r.set(k.game(gid, "snap"), msgspec.msgpack.encode(old))
            loaded = await store.load(toy, gid)
            assert loaded == full  # not total=0 mixed in from the old snapshot
            snap = await store.read_snapshot(toy, gid)  # rewritten by the current code
            assert snap is not None and snap == full
            # a snapshot with this shape but another title rules version's fingerprint
            other = lifecycle.Snapshot(fingerprint=lifecycle.snapshot_fingerprint(get_title("toy"), rules_version="0"),
                                       game=msgspec.msgpack.encode(msgspec.structs.replace(full, rules=msgspec.structs.replace(full.rules, total=3))))
            await r.set(k.game(gid, "snap"), msgspec.msgpack.encode(other))
            assert await store.load(toy, gid) == full
            assert await store.read_snapshot(toy, gid) == full

    anyio.run(main)


def test_the_fingerprint_changes_with_the_state_type_and_the_rules_version():
    toy = get_title("toy")
    fp = lifecycle.snapshot_fingerprint(toy)
    assert fp == lifecycle.snapshot_fingerprint(toy)
    assert fp != lifecycle.snapshot_fingerprint(toy, rules_version=toy.rules_version + "x")

    class Toy2(type(toy)):
        state_type = msgspec.defstruct("ToyState", [("seats", int), ("target", int), ("total", int, 0), ("extra", int, 0)],
                                       frozen=True, kw_only=True)

    assert fp != lifecycle.snapshot_fingerprint(Toy2())


async def _stored_event(r, settings, gid: str, version: int, body: dict) -> None:
    """Append a raw event body at ``version`` (as other code would have written it) and log it."""
    k = settings.keys
    (_, fields), = await r.xrange(k.game(gid, "events"), f"{version - 1}-0", f"{version - 1}-0")
    env = msgspec.msgpack.decode(fields[b"e"])
    env.update(version=version, body=body, prev_hash=env["hash"])
    await r.xadd(k.game(gid, "events"), {"e": ENC.encode(env)}, id=f"{version}-0")
    await r.hset(k.game(gid, "meta"), "version", version)
    await r.xadd(k.log(k.partition(gid)), {"g": gid, "t": "toy", "v": str(version), "e": ENC.encode(env)})


def test_a_stored_event_with_a_field_it_does_not_know_is_refused_not_defaulted(settings):
    async def main():
        async with bus_client(settings) as (r, c):
            store = EventStore(r, settings)
            async with services_running(settings, titles=["toy"], projector=False, r=r):
                gid, v = await c.setup("toy", 2, {"target": 1000})
            # a newer writer renamed ``n`` to ``amount`` and kept ``n`` with its old meaning: no upcaster
            await _stored_event(r, settings, gid, v + 1, {"type": "toy.added", "seat": 0, "n": 1, "amount": 1, "total": 1})
            with pytest.raises(CorruptEvent, match=rf"game '{gid}' version {v + 1}.*amount"):
                await store.read_events(codec("toy"), gid)

    anyio.run(main)


def test_a_renamed_field_with_an_upcaster_is_upcast(settings):
    async def main():
        async with bus_client(settings) as (r, c):
            store = EventStore(r, settings)
            async with services_running(settings, titles=["toy"], projector=False, r=r):
                gid, v = await c.setup("toy", 2, {"target": 1000})
            # rules version 0 called the die ``dice`` (tests/toygame.py has the upcaster)
            await _stored_event(r, settings, gid, v + 1, {"type": "toy.rolled", "seat": 0, "dice": 2, "total": 2})
            events = await store.read_events(codec("toy"), gid)
            assert events[-1].body == Rolled(seat=0, die=2, total=2)

    anyio.run(main)


def _cli(settings, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "REDIS_URL": settings.url, "QUESTHALL_NAMESPACE": settings.namespace,
           "QUESTHALL_PARTITIONS": str(settings.partitions), "QUESTHALL_EXTRA_TITLES": "tests.toygame",
           "PYTHONPATH": str(ROOT), "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "services.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_a_corrupt_event_is_parked_by_the_projector_and_replay_and_audit_answer_one_line(settings):
    async def main():
        k = settings.keys
        async with bus_client(settings) as (r, c):
            async with services_running(settings, titles=["toy"], r=r):
                gid, v = await c.setup("toy", 2, {"target": 1000})
                await c.wait_projected(gid, v)
            async with services_running(settings, titles=["toy"], projector=False, r=r):
                healthy, hv = await c.setup("toy", 2, {"target": 1000})
            await _stored_event(r, settings, gid, v + 1, {"type": "toy.unheard_of", "seat": 0})
            p = k.partition(gid)
            async with services_running(settings, titles=[], projector_kwargs={"min_idle_ms": 100}, r=r) as s:
                await c.wait_projected(healthy, hv)  # the others are not held up

                async def parked():
                    return await r.xlen(k.log_dead(p)) >= 1 and await GroupReader(r, k.log(p), GROUP, "probe").pending_count() == 0

                await until(parked, what="the unreadable log entry to be parked")
                assert s["projector"].parked_entries == 1
            (_, dead), = await r.xrange(k.log_dead(p))
            assert f"version {v + 1}".encode() in dead[b"error"] and gid.encode() in dead[b"error"]
            assert await c.applied(gid) == v  # its read models stay at the last readable version
            return gid, v + 1

    gid, bad = anyio.run(main)
    for args in (("replay", gid), ("audit", gid)):
        out = _cli(settings, *args)
        lines = [ln for ln in (out.stdout + out.stderr).splitlines() if ln.strip()]
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert len(lines) == 1 and "Traceback" not in out.stderr, (args, lines)
        assert gid in lines[0] and f"version {bad}" in lines[0], (args, lines)


def test_an_old_snapshot_without_the_choice_change_count_is_rewritten_from_the_stream(settings):
    """Secret choices count each seat's changes (``Game.choices.changes``, services/kernel/secret.py):
    a snapshot older code wrote without that field is ignored and rewritten, so the count (the
    bound a seat's changes are held to) always comes from the stored ChoiceMade events."""
    async def main():
        k = settings.keys
        orb = get_title("reventure_orbtale")
        async with bus_client(settings) as (r, c):
            store = EventStore(r, settings)
            async with services_running(settings, titles=["reventure_orbtale"], projector=False, r=r):
                gid, _ = await c.setup("reventure_orbtale", 2, {})
                game = fold(orb, await store.read_events(codec("reventure_orbtale"), gid))
                picks = orb.legal_commands(game.rules, 0)[:3]
                for pick in picks:  # a choice, then two changes
                    out = await c.submit("reventure_orbtale", gid, pick, 0)
                    assert out.version > 0, out
                again = await c.submit("reventure_orbtale", gid, picks[-1], 0)
                assert again.code == "choice_unchanged", again
            full = fold(orb, await store.read_events(codec("reventure_orbtale"), gid))
            assert full.choices is not None and full.choices.changes == (2,)
            old = msgspec.to_builtins(full, builtin_types=(bytes,))
            del old["choices"]["changes"]  # the shape older code stored, in the bare format
            await r.set(k.game(gid, "snap"), msgspec.msgpack.encode(old))
            loaded = await store.load(codec("reventure_orbtale"), gid)
            assert loaded == full and loaded.choices.changes == (2,)
            assert await store.read_snapshot(codec("reventure_orbtale"), gid) == full  # rewritten

    anyio.run(main)
