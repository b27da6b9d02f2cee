"""The lobby read model carries a title's one-line note: an Orion Duel match's series (issue 18).

Plays scenarios/orion_duel/match_best_of_3.toml's placements through the real bus and reads the
lobby entry the gateway serves."""

from __future__ import annotations

import tomllib
from pathlib import Path

import anyio

from schemas.envelope import Accepted
from schemas.orion_duel import PlaceTile
from services.adapters.client import BusClient
from services.gateway.service import _lobby_game
from services.runtime.serve import services_running

ROOT = Path(__file__).resolve().parent.parent


def test_the_lobby_shows_the_series_of_an_orion_duel_match(settings):
    sc = tomllib.loads((ROOT / "scenarios/orion_duel/match_best_of_3.toml").read_text())
    steps = [s for s in sc["step"] if s.get("expect", "accepted") == "accepted"]

    async def main():
        async with services_running(settings, titles=["orion_duel"]) as s:
            c = BusClient(s["redis"], settings)
            gid, v = await c.setup("orion_duel", 2, sc["options"])
            notes = []
            for i, st in enumerate(steps):
                cmd = {k: v for k, v in st["command"].items() if k != "type"}
                out = await c.submit("orion_duel", gid, PlaceTile(**{**cmd, "anchor": tuple(cmd["anchor"])}), st["seat"])
                assert isinstance(out, Accepted), out
                if i in (0, 9, len(steps) - 1):
                    await c.wait_projected(gid, out.version)
                    entry = _lobby_game(gid, await s["redis"].hgetall(settings.keys.lobby_game(gid)))
                    notes.append((entry.status, entry.note))
            assert notes == [
                ("active", "Game 1 of 3: Blue 0, Orange 0"),
                ("active", "Game 2 of 3: Blue 1, Orange 0"),
                ("finished", "Blue won the match 2-0 (best of 3)"),
            ]

    anyio.run(main)
