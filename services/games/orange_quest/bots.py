"""Orange Quest bots: ``fn(view, seat, rng) -> Command``; each sees only its seat's view.

- ``random``: a random legal command of its view, passing half of the time it may (so games end).
- ``leader``: fights for leadership (plays its damage cards in a boss fight while they can make
  it the top damage dealer, else passes), Blocks cards that harm it (a mischief or curse naming
  it, a reduction of its damage), duels the player with most candies at the party (when it holds
  a damage card), keeps the candies it won in a duel (gives its helpers nothing: a promise is not
  enforced, RULINGS.md), and otherwise plays like ``random`` without the mischief against nobody.

``random`` after a duel it won with help gives its helpers a random number of the candies won
or passes (its legal commands).
"""

from __future__ import annotations

import random

from schemas.base import Command
from schemas.orange_quest import Challenge, OrangeQuestView, Pass, Play
from services.games.orange_quest.content import CARDS


def random_bot(view: OrangeQuestView, seat: int, rng: random.Random) -> Command:
    """A random legal command (half of the time a pass when one is legal). Raises IndexError
    if the seat has nothing to do."""
    legal = view.legal
    passes = [c for c in legal if isinstance(c, Pass)]
    if passes and rng.random() < 0.5:
        return passes[0]
    return rng.choice(legal)


def _harms_me(view: OrangeQuestView, seat: int) -> bool:
    if not view.chain:
        return False
    top = view.chain[-1]
    card = CARDS.get(top.card)
    if card is None:
        return False
    if card.effect == "block":  # a Block of my own card
        return len(view.chain) >= 2 and view.chain[-2].seat == seat
    return top.target == seat and card.icon in ("mischief", "curse")


def leader_bot(view: OrangeQuestView, seat: int, rng: random.Random) -> Command:
    """Leadership, Blocks and duels (see the module docstring)."""
    legal = view.legal
    plays = [c for c in legal if isinstance(c, Play)]
    passes = [c for c in legal if isinstance(c, Pass)]
    if view.chain:
        blocks = [c for c in plays if CARDS[c.card].effect == "block"]
        if blocks and _harms_me(view, seat):
            return blocks[0]
        return passes[0] if passes else rng.choice(legal)
    if view.phase == "gift" and view.gift_giver == seat and passes:
        return passes[0]
    me = view.players[seat]
    if view.phase in ("fight", "duel") and view.turn == seat:
        damage = sorted((c for c in plays if CARDS[c.card].effect == "damage"), key=lambda c: -CARDS[c.card].value)
        top_other = max((p.damage for i, p in enumerate(view.players) if i != seat), default=0)
        mine = me.damage + sum(CARDS[c.card].value for c in damage)
        if damage and (mine > top_other or view.phase == "duel"):
            return damage[0]
        reduce = [c for c in plays if CARDS[c.card].effect == "reduce" and c.target is not None and c.target != seat
                  and view.players[c.target].damage >= me.damage]
        if reduce:
            return reduce[0]
        if passes:
            return passes[0]
    if view.phase == "party" and view.turn == seat:
        duels = [c for c in legal if isinstance(c, Challenge)]
        if duels and any(CARDS[h].effect == "damage" for h in view.hand):
            return max(duels, key=lambda c: (view.players[c.target].candies, -c.target))
        good = [c for c in plays if CARDS[c.card].icon in ("neutral", "equipment") or c.target is not None]
        if good and rng.random() < 0.5:
            return rng.choice(good)
        if passes:
            return passes[0]
    safe = [c for c in legal if not (isinstance(c, Play) and CARDS[c.card].effect == "block")]
    passes_ok = [c for c in safe if isinstance(c, Pass)]
    if passes_ok and rng.random() < 0.6:
        return passes_ok[0]
    return rng.choice(safe or legal)
