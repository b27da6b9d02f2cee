"""The Fate Deck over the real gateway: every payload a player gets (its socket's views and feed
entries, its HTTP feed and view, its refused commands) holds no trace of its secret FATE card
until the GM reveals it (issue 17 "Must show"; RULINGS.md "Questeros", Fate Deck)."""

from __future__ import annotations

import functools
import json
import random

import anyio

from schemas.fate_deck import HandIn, Reveal
from services.kernel import get_title
from services.sdk import BotStats, Gateway, GatewayError, play_seat
from tests.gateway.test_adversarial_gateway import _seated, _true_states


def test_every_payload_to_a_player_hides_its_fate_card_until_revealed(gateway):
    title = "fate_deck"
    t = get_title(title)
    refused: list[str] = []

    async def main():
        async with Gateway(gateway.url) as gw:
            gid, clients = await _seated(gw, title, 3, start=False)
            stats = BotStats()
            async with anyio.create_task_group() as tg:
                for i in (1, 2):  # players only listen (and capture); nothing waits for them
                    tg.start_soon(functools.partial(play_seat, clients[i], t.bots["storyteller"], t.view_type,
                                                    random.Random(i), stats, capture=True))
                await anyio.sleep(0)
                out = await clients[0].start()
                await clients[1].wait_view(out.version)
                for cmd in (Reveal(player=1), HandIn(cards=["adwanis"])):  # a player's refused commands
                    try:
                        await clients[1].submit(cmd)
                    except GatewayError as exc:
                        refused.append(json.dumps({"code": exc.code, "message": str(exc)}))
                tg.start_soon(functools.partial(play_seat, clients[0], t.bots["storyteller"], t.view_type,
                                                random.Random(0), stats))
            feed = await clients[1].feed(limit=1000)
            view = (await gw.http.get(f"/games/{gid}/seats/1/view",
                                      headers={"Authorization": f"Bearer {clients[1].token}"})).json()
            return gid, stats.messages[1], feed, view

    gid, messages, feed, view = anyio.run(main)
    states, _, _ = anyio.run(_true_states, gateway.settings, title, gid)
    last = states[max(states)].rules
    secret = last.fates[1]
    revealed_at = next((v for v, g in sorted(states.items()) if g.rules is not None and g.rules.revealed[1]), None)
    checked = 0
    payloads = [(m["version"], m) for m in messages] + [(e["version"], e) for e in feed]
    for v, p in payloads:
        if revealed_at is None or v < revealed_at:
            assert f'"{secret}"' not in json.dumps(p), f"seat 1 saw its FATE card {secret} at v{v}"
            checked += 1
    for text in refused:
        assert secret not in text
    if revealed_at is None:
        assert f'"{secret}"' not in json.dumps(view)
    assert checked > 5 and len(refused) == 2
