"""Seeded in-memory games of every title as audit bundles, long enough to reach every chance
derivation the titles have (deck reshuffles, the Fate Deck rebuild, random discards and
thefts, coin flips, reward deals), and a tampered roll of each. Shared by the browser
verifier's agreement tests (tests/test_audit_viewer.py in node, tests/browser/test_audit_agreement.py
in Chromium). Pure: LocalGame, no Redis.
"""

from __future__ import annotations

import copy
import random

from schemas.envelope import RequestUndo
from schemas.fate_deck import EndSession, HandIn, Read
from services.audit.verify import bundle_of
from services.kernel import game as lifecycle
from services.kernel import get_title
from services.kernel.runner import Accepted, LocalGame
from tests.signed_games import reseal

MAX_STEPS = 6000

LONG_GAMES = [  # (title, seats, options, seed): each reaches the draws named beside it
    ("orange_quest", 2, {"days": 4}, 3),                                  # coins, random picks, Chaos
    ("orange_quest", 4, {"days": 6}, 2),                                  # + reshuffles, peaceable deals, a tied distributor
    ("orange_quest", 5, {"days": 6, "sharing": "rps"}, 2),                # rock-paper-scissors, its peaceable fallback
    ("orange_quest", 6, {"days": 6}, 1),                                  # the strengthening side, 5 reshuffles
    ("reventure_orbtale", 3, {"chapter_limit": 12}, 11),                   # + deck reshuffles, thefts
    ("reventure_orbtale", 2, {}, 12),                                      # random discards
    ("fate_deck", 3, {}, 13),                                              # the deck rebuilt (F2)
    ("questeros", 3, {}, 14),
    ("eros_quest", 1, {}, 15),
    ("quests_over_coffee", 2, {"mode": "coop", "quest_board": True, "environments": True, "companions": True}, 16),
    ("orion_duel", 2, {}, 17),
    ("quests_over_coffee", 2, {"undo": "own_move"}, 18),                   # moves taken back (undone)
]


def _fate_move(g: LocalGame, rng: random.Random):
    """The Fate Deck driven to rebuild its deck: big readings, players handing in, 120 GM acts."""
    t = g.title
    s = g.game.rules
    if rng.random() < 0.3:
        for p in range(1, s.seats):
            if s.acquired[p]:
                return HandIn(cards=list(s.acquired[p])), p
    legal = t.legal_commands(s, 0)
    if s.acts >= 120:
        return EndSession(), 0
    reads = [c for c in legal if isinstance(c, Read) and c.cards == 10]
    if reads and rng.random() < 0.4:
        return reads[0], 0
    return rng.choice([c for c in legal if not isinstance(c, EndSession)] or legal), 0


def play(name: str, seats: int, options: dict, seed: int) -> dict:
    """A finished game of the title's bots (seat i plays bot i mod the bots), as a bundle.

    Raises AssertionError if it does not finish within MAX_STEPS commands."""
    t = get_title(name)
    g = LocalGame(t, game_id=f"{name}-l{seed}", seed=random.Random(seed).randbytes(32))
    g.create_and_start(seats, options)
    rng = random.Random(seed)
    bots = list(t.bots.values())
    for _ in range(MAX_STEPS):
        if g.game.status != "active":
            break
        if name == "fate_deck":
            body, seat = _fate_move(g, rng)
        else:
            waiting = lifecycle.to_move(t, g.game)
            seat = waiting[rng.randrange(len(waiting))]
            body = bots[seat % len(bots)](t.view(g.game.rules, seat), seat, rng)
        out = g.submit(body, seat)
        assert isinstance(out, Accepted), (name, out)
        if options.get("undo") and rng.random() < 0.3:  # take it back when the rules let it (else refused)
            g.submit(RequestUndo(), seat)
    assert g.game.status == "finished", (name, options, seed)
    return bundle_of(g.game.game_id, g.events, g.commands)


def long_bundles() -> list[dict]:
    """One bundle per LONG_GAMES entry."""
    return [play(*spec) for spec in LONG_GAMES]


ROLLS = {  # an event type per title carrying a chance outcome, and how to change it
    "orange_quest.coin_flipped": lambda b: b.update(heads=not b["heads"]),
    "orange_quest.reshuffled": lambda b: _swap(b["deck"]),
    "reventure_orbtale.deck_reshuffled": lambda b: _swap(b["deck"]),
    "reventure_orbtale.game_set_up": lambda b: _swap(b["deck"]),
    "fate_deck.die_rolled": lambda b: b.update(value=b["value"] % b["sides"] + 1),
    "questeros.dealer_chosen": lambda b: b.update(dealer=(b["dealer"] + 1) % 3),
    "eros_quest.adventure_set_up": lambda b: _swap(b["deck"]),
    "qoc.rolled": lambda b: _bump(b["pool"][0] if b["pool"] else b["base"]),
    "orion_duel.roles_assigned": lambda b: b.update(galaxy_seat=1 - b["galaxy_seat"]),
    "orion_duel.tokens_placed": lambda b: b.update(galaxies=[b["black_holes"][0], *b["galaxies"][1:]],
                                                   black_holes=[b["galaxies"][0], *b["black_holes"][1:]]),
}
DRAWN = {  # of those, the ones that are not always drawn
    "orion_duel.roles_assigned": lambda b: b.get("by_chance"),
    "orion_duel.tokens_placed": lambda b: b.get("mode") == "random",
}


def _swap(xs: list) -> None:
    xs[0], xs[1] = xs[1], xs[0]


def _bump(dice: list) -> None:
    dice[0] = dice[0] % 6 + 1


def tamper_roll(bundle: dict, rng: random.Random) -> tuple[dict, int] | None:
    """A copy with one chance outcome changed (a random one of the kinds in ROLLS, past the
    middle of the game when there is one) and the chain re-sealed; with the changed version."""
    spots = [i for i, e in enumerate(bundle["events"]) if e["body"]["type"] in ROLLS
             and DRAWN.get(e["body"]["type"], bool)(e["body"])]
    if not spots:
        return None
    late = [i for i in spots if i >= len(bundle["events"]) // 2]
    i = rng.choice(late or spots)
    t = copy.deepcopy(bundle)
    body = t["events"][i]["body"]
    ROLLS[body["type"]](body)
    return reseal(t), i + 1
