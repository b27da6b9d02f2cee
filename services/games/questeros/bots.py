"""Questeros bots: ``fn(view, seat, rng) -> Command``; each sees only its seat's view.

- ``random``: a uniformly random command from ``view.legal``.
- ``bidder``: bids its hand strength; then plays to win Quests while short of its bid and
  to lose them once the bid is made; never pays XP unless it must; the Mentor looks left.
"""

from __future__ import annotations

import random

from schemas.base import Command
from schemas.questeros import Bid, LookAtHand, PlayCard, QuesterosView
from services.games.questeros.rules import CARDS


def random_bot(view: QuesterosView, seat: int, rng: random.Random) -> Command:
    """A random legal command. Raises IndexError if the seat has nothing to do."""
    return rng.choice(view.legal)


def strength(card: str) -> float:
    """How likely ``card`` is to win a Quest, 0..1 (a rough estimate)."""
    c = CARDS[card]
    if c.kind == "god":
        return 0.95
    if c.kind == "epic":
        return 0.4 + 0.5 * c.value / 21
    return max(0.0, (c.value - 8) / 8)


def _rank(card: str) -> float:
    c = CARDS[card]
    return 100.0 if c.kind == "god" else 30.0 + c.value if c.kind == "epic" else float(c.value)


def _would_win(view: QuesterosView, card: str) -> bool:
    table = [p.card for p in view.table]
    if not table:
        return strength(card) > 0.6
    c = CARDS[card]
    if any(CARDS[t].kind == "god" for t in table):
        return False
    if c.kind == "god":
        return True
    epics = [CARDS[t].value for t in table if CARDS[t].kind == "epic"]
    if c.kind == "epic":
        return not epics or c.value > max(epics)
    if epics:
        return False
    pref = CARDS[table[0]].suit
    return c.suit == pref and c.value > max(CARDS[t].value for t in table if CARDS[t].suit == pref)


def bidder_bot(view: QuesterosView, seat: int, rng: random.Random) -> Command:
    """Bid from hand strength, then play to make the bid exactly."""
    legal = view.legal
    bids = [c for c in legal if isinstance(c, Bid)]
    if bids:
        want = round(sum(strength(c) for c in view.hand))
        return Bid(quests=min(max(1, want), len(view.hand)))
    looks = [c for c in legal if isinstance(c, LookAtHand)]
    if looks:
        target = (seat + 1) % len(view.xp)
        return next((c for c in looks if c.target == target), looks[0])
    plays = [c for c in legal if isinstance(c, PlayCard)]
    free = [c for c in plays if not c.pay_xp] or plays
    need = (view.bids[seat] or 0) > view.quests_won[seat]
    winners = [c for c in free if _would_win(view, c.card)]
    if need and winners:
        return min(winners, key=lambda c: _rank(c.card))
    losers = [c for c in free if not _would_win(view, c.card)] or free
    if need:
        return min(losers, key=lambda c: _rank(c.card))
    return max(losers, key=lambda c: _rank(c.card))
