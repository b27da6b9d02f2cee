"""Reventure: Orbtale over the real gateway and Redis: every payload a seat's socket delivered is
exactly the kernel's redaction for that seat at that version.

Feed entries must equal ``lifecycle.redact(title, event, seat)`` and views must equal
``lifecycle.view(title, game at that version, seat)``, byte for byte as JSON; the in-memory leak
capture (tests/games/test_reventure_orbtale.py, tests/test_secret_choices.py) shows those never
carry another seat's hand, inventory, reserve or an unrevealed secret choice, so neither does the
wire (``my_choice`` in a view is the seat's own pending choice only).
"""

from __future__ import annotations

import random

import anyio
import msgspec

from services.kernel import codec
from services.kernel import game as lifecycle
from services.sdk import Gateway, play_bot_game

TITLE = "reventure_orbtale"


def test_every_socket_payload_is_the_seats_redaction(gateway):
    async def main():
        async with Gateway(gateway.url) as gw:
            gid, final, stats = await play_bot_game(gw, TITLE, 3, random.Random(11), options={"chapter_limit": 4}, capture=True)
            assert final["status"] == "finished"
            return gid, stats, await gw.bundle(gid)

    gid, stats, bundle = anyio.run(main)
    c = codec(TITLE)
    t = c.title
    envs = [c.convert_event(e) for e in bundle["events"]]
    games = [lifecycle.new_game(gid, TITLE)]
    for env in envs:
        games.append(lifecycle.evolve(t, games[-1], env))
    enc = msgspec.json.Encoder()
    checked = 0
    for seat, msgs in stats.messages.items():
        for m in msgs:
            if m["type"] == "feed":
                want = lifecycle.redact(t, envs[m["version"] - 1], seat)
                assert want is not None and msgspec.json.decode(enc.encode(want)) == m["entry"], (seat, m["version"])
                checked += 1
            elif m["type"] == "view":
                v = m["view"]["version"]
                want_view = msgspec.json.decode(enc.encode(lifecycle.view(t, games[v], seat)))
                assert {k: x for k, x in want_view.items() if k != "deadlines"} == {k: x for k, x in m["view"].items() if k != "deadlines"}, (seat, v)
                checked += 1
    assert checked > 50
