"""GET /lobby's status: the stored statuses (what lobby entries carry) and their aliases (real gateway, real Redis)."""

from __future__ import annotations

import anyio
import pytest

from services.sdk import Gateway, GatewayError


def test_lobby_status_takes_the_stored_status_and_its_alias(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            g = await gw.create("eros_quest", 1)
            gid = g.game_id

            async def listed(status: str) -> bool:
                return gid in [e.game_id for e in await gw.lobby("eros_quest", status)]

            # the projector writes a lobby entry before the projection of the same version, so a
            # view read at that version finds the entry there (no polling)
            await gw.spectator_view(gid, min_version=g.version)
            assert await listed("lobby") and await listed("open")
            assert not await listed("active") and not await listed("running")
            seat = await gw.join(gid, "Ero")
            out = await seat.start()
            await seat.view(min_version=out.version)
            assert await listed("active")
            entries = [e for e in await gw.lobby("eros_quest", "running") if e.game_id == gid]
            assert [e.status for e in entries] == ["active"]  # the alias lists the entries of the stored status
            assert not await listed("lobby") and not await listed("open")
            with pytest.raises(GatewayError) as refused:
                await gw.lobby("eros_quest", "started")
            assert (refused.value.status, refused.value.code) == (400, "bad_status"), refused.value
            assert "lobby (or open), active (or running), finished, abandoned" in refused.value.message

    anyio.run(main)
