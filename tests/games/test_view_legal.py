"""Legal commands in every seat's view for every title (issue 19), Orion Duel compact.

Bot games of every title in memory: at every step the view of the seat to move lists its legal
commands (Orion Duel: ``legal`` in the setup, ``placements`` per tile and orientation in
play, which expand to exactly the title's ``legal_commands``); every expanded Orion placement
is accepted by ``decide``; spectators and waiting seats get none.
"""

from __future__ import annotations

import json
import random

import msgspec
import pytest

from schemas.orion_duel import PlaceTile
from services.games.orion_duel.rules import decide as orion_decide
from services.games.orion_duel.views import expand
from services.kernel import game as lifecycle
from services.kernel import titles
from services.kernel.errors import Rejection

TITLES = ("eros_quest", "fate_deck", "orange_quest", "orion_duel", "questeros", "quests_over_coffee", "reventure_orbtale")


def _play(name: str, seed: int, options: dict, check) -> int:
    from services.kernel.runner import LocalGame

    t = titles()[name]
    g = LocalGame(t, seed=seed.to_bytes(32, "big"))
    g.create_and_start(min(max(t.min_seats, 2), t.max_seats), options)
    rng = random.Random(seed)
    bot = next(iter(t.bots.values()))
    steps = 0
    while g.game.status == "active" and steps < 400:
        st = g.game.rules
        movers = t.to_move(st)
        seat = lifecycle.to_move(t, g.game)[0]  # the kernel's: a seat that made its secret choice is not waited for
        check(t, st, seat, movers)
        out = g.submit(bot(t.view(st, seat), seat, rng), seat)
        assert type(out).__name__ == "Accepted", out
        steps += 1
    return steps


def test_orion_placements_expand_to_the_legal_commands():
    seen = {"setup": 0, "play": 0, "checked": 0}

    def check(t, st, seat, movers):
        v = t.view(st, seat)
        legal = t.legal_commands(st, seat)
        assert t.view(st, None).placements == [] and t.view(st, None).legal == []
        assert t.view(st, 1 - seat).placements == [] and t.view(st, 1 - seat).legal == []
        if st.phase == "play":
            seen["play"] += 1
            assert v.legal == []
            got = expand(v.placements)
            assert got == legal and len(got) == len(set(got))
            for g in v.placements if seen["play"] % 3 == 1 else []:  # the shape given is where the hexes land
                for a in g.anchors[:2]:
                    evs = orion_decide(st, seat, PlaceTile(tile=g.tile, anchor=tuple(a), rotation=g.rotation, mirror=g.mirror))
                    assert sorted(map(tuple, evs[0].hexes)) == sorted((a[0] + dq, a[1] + dr, c) for dq, dr, c in g.hexes)
                    seen["checked"] += 1
        else:
            seen["setup"] += 1
            assert v.placements == [] and v.legal == legal

    for seed, setup in ((1, "manual"), (2, "symmetric_1")):
        _play("orion_duel", seed, {"setup": setup}, check)
    assert seen["play"] > 20 and seen["setup"] > 10 and seen["checked"] > 100
    # compact: the opening's ~1,300 placements in far fewer groups, a small JSON
    from services.kernel.runner import LocalGame

    t = titles()["orion_duel"]
    g = LocalGame(t, seed=(3).to_bytes(32, "big"))
    g.create_and_start(2, {"setup": "symmetric_1", "first_seat": 0})
    v = t.view(g.game.rules, 0)
    n = sum(len(p.anchors) for p in v.placements)
    assert n == len(t.legal_commands(g.game.rules, 0)) > 1000
    assert len(v.placements) < n / 10
    assert len(msgspec.json.encode(v.placements)) < 60 * n


def test_every_registered_title_is_covered():
    assert {n for n, t in titles().items() if type(t).__module__.startswith("services.games")} == set(TITLES)


@pytest.mark.parametrize("name", [n for n in TITLES if n != "orion_duel"])  # Orion Duel: its compact form, above
def test_every_title_view_lists_the_movers_legal_commands(name):
    counts = {"steps": 0}

    def check(t, st, seat, movers):
        v = msgspec.to_builtins(t.view(st, seat))
        assert v.get("legal"), f"{name}: the view of seat {seat} (to move) lists no legal command"
        legal = [json.loads(msgspec.json.encode(c)) for c in t.legal_commands(st, seat)]
        for c in v["legal"]:
            assert c in legal or name == "quests_over_coffee", c  # QoC's accept is a sample (its docs)
        counts["steps"] += 1

    _play(name, 5, {}, check)
    assert counts["steps"] > 3


def test_orion_decide_refuses_outside_the_placements():
    """A placement not in the view is refused (sampled around the listed anchors)."""
    from services.kernel.runner import LocalGame

    t = titles()["orion_duel"]
    g = LocalGame(t, seed=(4).to_bytes(32, "big"))
    g.create_and_start(2, {"setup": "symmetric_2", "first_seat": 1})
    st = g.game.rules
    v = t.view(st, 1)
    listed = set(expand(v.placements))
    rng = random.Random(4)
    refused = 0
    for grp in rng.sample(v.placements, min(20, len(v.placements))):
        for dq, dr in ((1, 0), (0, 1), (-1, 1), (5, 5)):
            a = grp.anchors[0]
            cmd = PlaceTile(tile=grp.tile, anchor=(a[0] + dq, a[1] + dr), rotation=grp.rotation, mirror=grp.mirror)
            if cmd in listed:
                continue
            try:
                evs = orion_decide(st, 1, cmd)
            except Rejection:
                refused += 1
                continue
            # accepted: then it covers the same coloured cells as a listed one (a symmetric duplicate)
            cells = sorted(map(tuple, evs[0].hexes))
            assert any(sorted((b[0] + x, b[1] + y, c) for x, y, c in p.hexes) == cells for p in v.placements for b in p.anchors)
    assert refused > 10
