"""``POST .../commands?dry_run=true`` answers accept/refuse and appends nothing (issue 19)."""

from __future__ import annotations

import anyio
import pytest
import redis.asyncio as aioredis

from services.sdk import Gateway, GatewayError


async def _stream(r, settings, gid: str) -> tuple[int, list, bytes | None]:
    k = settings.keys
    return (await r.xlen(k.game(gid, "events")), await r.xrange(k.log(k.partition(gid))),
            await r.get(k.view(gid, None)))


def test_dry_run_answers_without_appending(gateway):
    async def run() -> None:
        r = aioredis.from_url(gateway.settings.url)
        try:
            async with Gateway(gateway.url) as gw:
                g = await gw.create("questeros", 3)
                seats = [await gw.join(g.game_id, f"P{i}", seat=i) for i in range(3)]
                started = await seats[0].start()
                views = [await s.wait_view(started.version) for s in seats]
                (mover,) = [i for i, v in enumerate(views) if v["view"]["legal"]]
                legal = views[mover]["view"]["legal"][0]
                before = await _stream(r, gateway.settings, g.game_id)

                ok = await seats[mover].submit(legal, command_id="probe-1", dry_run=True)
                assert ok.dry_run and ok.events == 0 and ok.version == started.version
                other = (mover + 1) % 3
                with pytest.raises(GatewayError) as e:  # not this seat's turn
                    await seats[other].submit(legal, dry_run=True)
                assert (e.value.status, e.value.code) == (409, "not_your_turn")
                with pytest.raises(GatewayError) as e:  # another title's command: malformed for this game
                    await seats[mover].submit({"type": "orion_duel.choose_starter", "seat": 0}, dry_run=True)
                assert (e.value.status, e.value.code) == (422, "bad_command")
                with pytest.raises(GatewayError) as e:
                    await seats[mover].submit(legal, expected_version=started.version - 1, dry_run=True)
                assert e.value.code == "stale_version"
                with pytest.raises(GatewayError) as e:
                    await seats[mover].submit(legal, dry_run=True, command_id="bad id!")
                assert e.value.code == "bad_command_id"
                assert await _stream(r, gateway.settings, g.game_id) == before  # nothing appended anywhere

                # the probe's id was not used up: the real command with it is accepted once
                real = await seats[mover].submit(legal, command_id="probe-1")
                assert not real.dry_run and real.events >= 1 and real.version > started.version
                again = await seats[mover].submit(legal, command_id="probe-1")
                assert again.version == real.version
                assert (await _stream(r, gateway.settings, g.game_id))[0] == real.version
        finally:
            await r.aclose()

    anyio.run(run)
