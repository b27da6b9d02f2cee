"""Attacks on the projector's new-game path (3ef8c31): entries of version 1 handed to a projector
that has not cached the game are projected from the empty game and the payloads alone."""

from __future__ import annotations

import anyio

from services.adapters import scripts
from services.adapters.client import BusClient
from services.adapters.redis_store import connect
from services.local.demo import dump_read_models
from services.runtime.serve import services_running
from tests.test_core_redis import _play_toy


async def _redeliver_whole_logs(r, settings) -> list:
    """Every partition log's entries handed out again (as after the group is recreated at id 0 on
    NOGROUP, or entries left pending by a killed projector and claimed)."""
    k = settings.keys
    batches = []
    for p in range(settings.partitions):
        rows = await r.xrange(k.log(p))
        if rows:
            await r.xgroup_setid(k.log(p), "projector", id="0")
            await r.xreadgroup("projector", "fresh", {k.log(p): ">"})
            batches.append((k.log(p), [(mid.decode(), f, 2) for mid, f in rows]))
    return batches


def test_an_archived_game_redelivered_from_the_log_is_not_projected_again(settings):
    """An ended game archived (its read models and lobby entry deleted), then its log entries
    delivered again to a fresh projector: the read models stay what a rebuild writes (before
    3ef8c31 the stream path found no events and wrote nothing; the new-game path projects the
    payloads back into views, feeds and the lobby of a game that is gone)."""
    from services.audit.archive import archive
    from services.runtime.projector import Projector, rebuild

    async def main():
        r = connect(settings.url)
        async with services_running(settings, titles=["toy"], r=r):
            c = BusClient(r, settings)
            gid, v = await _play_toy(c, seed=1)
            other, ov = await c.setup("toy", 2, {"target": 50})
            await c.wait_projected(gid, v)
            await c.wait_projected(other, ov)  # all of it: a later projection of it would differ below
        await archive(r, settings, gid)
        before = await dump_read_models(r, settings)
        assert not [key for key in before if gid.encode() in key]
        await r.script_load(scripts.PROJECT)
        await r.script_load(scripts.LOBBY)
        batches = await _redeliver_whole_logs(r, settings)
        fresh = Projector(r, settings, consumer="fresh")
        await fresh.apply_batches(batches)
        after = await dump_read_models(r, settings)
        assert [key for key in after if gid.encode() in key] == []
        assert after == before
        await rebuild(r, settings)
        assert await dump_read_models(r, settings) == after
        await r.aclose()

    anyio.run(main)
