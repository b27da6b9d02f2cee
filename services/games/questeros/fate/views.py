"""What the GM, a player or a spectator may see of a Fate Deck session: ``view`` and ``redact``.

Secret from everyone: the deck order. A player's FATE card: the GM's alone until revealed (its
holder included, RULINGS.md). Awarded cards: their holder's and the GM's. Public: readings,
rolls, reveals, hand-ins, the GM's pile, every count. Every card served comes with its meaning.
"""

from __future__ import annotations

from schemas.base import Event
from schemas.fate_deck import (
    CardAwarded,
    Drawing,
    FateAssigned,
    FateCard,
    FateDeckView,
    PlayerView,
    ReadingDrawn,
    ReadingView,
    RollView,
    SessionOpened,
)
from services.games.questeros.fate.meanings import MEANINGS
from services.games.questeros.fate.rules import FState, canonical, legal_commands


def served(card: str) -> FateCard:
    """``card`` with its name, meaning and the meaning's source."""
    name, meaning, source = MEANINGS[card]
    return FateCard(card=card, name=name, meaning=meaning, source=source)


def view(s: FState, seat: int | None) -> FateDeckView:
    """The view of ``s`` for ``seat`` (0: the GM; 1..: a player; None: a spectator)."""
    gm = seat == 0
    role = "gm" if gm else "player" if seat is not None and 0 < seat < s.seats else "spectator"
    players = []
    for p in range(1, s.seats):
        f = s.fates[p]
        shown = f is not None and (gm or s.revealed[p])
        mine = gm or seat == p
        players.append(PlayerView(seat=p, fate=served(f) if shown else None, has_fate=f is not None,  # type: ignore[arg-type]
                                  revealed=s.revealed[p], acquired=[served(c) for c in canonical(s.acquired[p])] if mine else [],
                                  acquired_count=len(s.acquired[p])))
    return FateDeckView(
        role=role, open=s.phase == "open", acts=s.acts, deck_count=len(s.deck), handed_in=[served(c) for c in s.pile],  # type: ignore[arg-type]
        players=players,
        readings=[ReadingView(cards=[served(c) for c in d.cards], gods=[served(g) for g in d.gods], tone=d.tone, short=d.short)
                  for d in s.readings],
        rolls=[RollView(sides=a, value=b, player=c) for a, b, c in s.rolls],
        legal=legal_commands(s, seat) if seat is not None and role != "spectator" else [],
    )


_EMPTY = Drawing(cards=[])


def redact(ev: Event, seat: int | None) -> Event | None:
    """``ev`` as ``seat`` may see it: the deck order never; the assignment only to the GM; an
    award only to the GM and its player."""
    if isinstance(ev, SessionOpened):
        return SessionOpened(deck=[], deck_count=ev.deck_count)
    if isinstance(ev, FateAssigned):
        return FateAssigned(drawing=ev.drawing if seat == 0 else _EMPTY, deck_count=ev.deck_count)
    if isinstance(ev, CardAwarded):
        return CardAwarded(player=ev.player, drawing=ev.drawing if seat in (0, ev.player) else _EMPTY, deck_count=ev.deck_count)
    if isinstance(ev, ReadingDrawn):
        return ReadingDrawn(drawing=ev.drawing, deck_count=ev.deck_count)
    return ev
