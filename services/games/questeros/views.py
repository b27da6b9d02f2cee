"""What a seat or a spectator may see of Questeros: ``view`` and ``redact``.

Public (RULINGS.md): bids, the table, XP, card counts, Quests won, the set-aside Epics, the
scorepad. Secret: other seats' hands, the deck order, the won piles' contents. The Mentor's
look is shown only to the seat that looked.
"""

from __future__ import annotations

from schemas.base import Event
from schemas.questeros import (
    HandLookedAt,
    HandsDealt,
    LastTurn,
    LookSeen,
    MentorLook,
    PlayView,
    QuesterosView,
    RoundLine,
)
from services.games.questeros.rules import QState, canonical, legal_commands, preferred, to_move


def view(s: QState, seat: int | None) -> QuesterosView:
    """The view of ``s`` for ``seat`` (None: spectator)."""
    mine = seat is not None and 0 <= seat < s.seats
    look = s.looks[seat] if mine else None
    return QuesterosView(
        round=s.round, turn=s.turn, phase=s.phase if s.phase != "scored" else "playing",  # type: ignore[arg-type]
        dealer=s.dealer, initiative=s.initiative, to_move=to_move(s),
        hand=canonical(s.hands[seat]) if mine else [],
        hand_counts=[len(h) for h in s.hands],
        bids=list(s.bids),
        table=[PlayView(seat=p.seat, card=p.card, paid_xp=p.paid_xp, ability=p.ability) for p in s.table],
        preferred=preferred(s),
        quests_won=list(s.quests), xp=list(s.xp), set_aside=list(s.set_aside),
        deck_count=len(s.deck), discarded=list(s.discarded),
        history=[RoundLine(round=h.round, bids=list(h.bids), quests=list(h.quests), gains=list(h.gains),
                           xp=list(h.xp), questeros=h.questeros, paid=list(h.paid)) for h in s.history],
        mentor_pending=s.mentor,
        mentor_look=MentorLook(target=look.target, cards=list(look.cards), round=look.round, turn=look.turn)
        if look is not None else None,
        looks=[LookSeen(seat=i, target=lk.target, round=lk.round, turn=lk.turn) for i, lk in enumerate(s.looks) if lk is not None],
        last_turn=LastTurn(round=s.last.round, turn=s.last.turn, winner=s.last.winner,
                           plays=[PlayView(seat=p.seat, card=p.card, paid_xp=p.paid_xp, ability=p.ability) for p in s.last.plays])
        if s.last is not None else None,
        legal=legal_commands(s, seat) if mine else [],
    )


def redact(ev: Event, seat: int | None) -> Event | None:
    """``ev`` as ``seat`` may see it: a dealt hand only to its seat, the deck order never,
    the Mentor's look only to its player."""
    if isinstance(ev, HandsDealt):
        hands = [h if i == seat else [] for i, h in enumerate(ev.hands)]
        return HandsDealt(round=ev.round, dealer=ev.dealer, hands=hands, deck=[], deck_count=ev.deck_count)
    if isinstance(ev, HandLookedAt) and ev.seat != seat:
        return HandLookedAt(seat=ev.seat, target=ev.target, cards=[])
    return ev
