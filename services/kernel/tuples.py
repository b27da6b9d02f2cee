"""Helpers for the immutable tuples titles keep their states in (pure).

Shared by the titles whose states are tuples of cards and per-seat tuples (Orange Quest,
Reventure Orbtale): ``evolve`` builds each new state from the old one with these.
"""

from __future__ import annotations


def put(t: tuple, i: int, v) -> tuple:
    """``t`` with item ``i`` replaced by ``v``."""
    return t[:i] + (v,) + t[i + 1:]


def without(cards: tuple[str, ...], gone) -> tuple[str, ...]:
    """``cards`` minus every card in ``gone`` (each at most once)."""
    rest = list(cards)
    for c in gone:
        if c in rest:
            rest.remove(c)
    return tuple(rest)
