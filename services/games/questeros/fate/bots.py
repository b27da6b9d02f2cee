"""Fate Deck bots: ``fn(view, seat, rng) -> Command``; each sees only its seat's view. Each bot
plays any seat: the GM (seat 0) or a player.

- ``storyteller``: as GM, a dozen random acts (award, reveal, d20, reading), then ends the
  session; as a player, hands in every acquired card at once.
- ``random``: a uniformly random entry of ``view.legal``.
"""

from __future__ import annotations

import random

from schemas.base import Command
from schemas.fate_deck import EndSession, FateDeckView, HandIn

SESSION_ACTS = 12


def random_bot(view: FateDeckView, seat: int, rng: random.Random) -> Command:
    """A random legal command. Raises IndexError if the seat has nothing to do."""
    return rng.choice(view.legal)


def storyteller_bot(view: FateDeckView, seat: int, rng: random.Random) -> Command:
    """The ``storyteller`` policy described in the module docstring."""
    if seat != 0:
        hand = [c for c in view.legal if isinstance(c, HandIn)]
        return max(hand, key=lambda c: len(c.cards))
    acts = [c for c in view.legal if not isinstance(c, EndSession)]
    if view.acts >= SESSION_ACTS or not acts:
        return EndSession()
    return rng.choice(acts)
