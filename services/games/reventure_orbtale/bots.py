"""Orbtale bots: ``fn(view, seat, rng) -> Command``; each sees only its seat's view.

- ``random``: a random legal command; in the organization phase a random hand (up to the
  hand limit) and random discards from its inventory.
- ``orb_hunter``: values orbs (keeps every orb, plays them to activate them), keeps its
  inventory small (discards every other card it does not take in hand) and attacks the
  weakest hero in play (least health, then fewest hand cards).
"""

from __future__ import annotations

import random

from schemas.base import Command
from schemas.reventure_orbtale import Attack, OrbtaleView, Organize, PickHero, PlayCard, Skip
from services.games.reventure_orbtale.content import CARDS

HERO_RANK = ("hoarder", "juggler", "the_mimic", "bandit", "duelist", "barbarian", "knight", "monk",
             "berserker", "alchemist", "explorer", "cartographer")
"""The orb hunter's hero preference (small inventories and big hands first)."""
KIND_RANK = {"orb": 0, "attack": 1, "strategy": 2, "defense": 3}


def random_bot(view: OrbtaleView, seat: int, rng: random.Random) -> Command:
    """A random legal command. Raises IndexError if the seat has nothing to do."""
    if view.phase == "organization":
        inv = list(view.inventory)
        rng.shuffle(inv)
        k = rng.randint(0, min(view.hand_limit, len(inv)))
        rest = inv[k:]
        return Organize(hand=inv[:k], discard=[c for c in rest if rng.random() < 0.3])
    return rng.choice(view.legal)


def orb_hunter(view: OrbtaleView, seat: int, rng: random.Random) -> Command:
    """Orbs first, a small inventory, attack the weakest (see the module docstring)."""
    legal = view.legal
    picks = [c for c in legal if isinstance(c, PickHero)]
    if picks:
        return min(picks, key=lambda c: HERO_RANK.index(c.hero) if c.hero in HERO_RANK else 99)
    if view.phase == "organization":
        inv = sorted(view.inventory, key=lambda c: (KIND_RANK[CARDS[c].kind], c))
        hand = inv[:view.hand_limit]
        return Organize(hand=hand, discard=[c for c in inv[len(hand):] if CARDS[c].kind != "orb"])
    plays = [c for c in legal if isinstance(c, PlayCard)]
    if plays:
        orbs = [c for c in plays if CARDS[c.card].kind == "orb"]
        return orbs[0] if orbs else rng.choice(plays)
    attacks = [c for c in legal if isinstance(c, Attack)]
    if attacks:
        by = {p.seat: p for p in view.players}
        return min(attacks, key=lambda c: (by[c.target].health, by[c.target].hand_count, c.target))
    skips = [c for c in legal if isinstance(c, Skip)]
    return skips[0] if skips else rng.choice(legal)
