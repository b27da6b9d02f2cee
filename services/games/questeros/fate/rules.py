"""Fate Deck rules: state, setup, decide, evolve, legal commands, status.

Seat 0 is the GM, seats 1.. the players. Source: rulebooks/questeros.txt "Fate Deck
(Roleplaying Game Option)" and "God Card Meanings"; RULINGS.md "Questeros" (Fate Deck
rulings); rulings taken here are numbered F1.. in docs/games/fate_deck.md.

Chance: setup draws one ``shuffle`` of the 80 cards in canonical order (the deck, top first);
whenever a drawing finds the deck empty it draws one ``shuffle`` of the handed-in pile in
canonical order (the new deck). Every drawing is written into its event (the resulting deck
order too, secret), so replay never draws.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from schemas.base import Event, Record
from schemas.envelope import Result
from schemas.fate_deck import (
    Award,
    CardAwarded,
    CardsHandedIn,
    DieRolled,
    Drawing,
    EndSession,
    FateAssigned,
    FateRevealed,
    HandIn,
    Read,
    ReadingDrawn,
    Reveal,
    Roll,
    SessionEnded,
    SessionOpened,
)
from services.games.questeros.fate.meanings import ORDER
from services.kernel import Rejection

INDEX = {c: i for i, c in enumerate(ORDER)}
GODS = ("adwanis", "nekradis")
MAX_ACTS = 500
"""F5: a session takes at most this many GM acts (award, reveal, roll, read); then only
``end_session``. Bounds the stream of one session."""
MAX_READING = 10
KEEP = 10
"""Readings and rolls kept in the state (and the views), newest last."""
D20 = 20


class FState(Record):
    """The whole state of a session. The deck order is secret from everyone; the players'
    FATE cards are the GM's until revealed; acquired cards are the holder's and the GM's."""

    seats: int
    phase: str = "setup"
    """``setup``, ``open``, ``over``."""
    deck: tuple[str, ...] = ()
    pile: tuple[str, ...] = ()
    """The GM's face-up pile: handed-in cards, readings' cards, set-aside Gods."""
    fates: tuple[str | None, ...] = ()
    revealed: tuple[bool, ...] = ()
    acquired: tuple[tuple[str, ...], ...] = ()
    readings: tuple[Drawing, ...] = ()
    rolls: tuple[tuple[int, int, int | None], ...] = ()
    acts: int = 0


def initial_state(seats: int) -> FState:
    """The state before setup: the GM (seat 0) and ``seats - 1`` players."""
    return FState(seats=seats, fates=(None,) * seats, revealed=(False,) * seats, acquired=((),) * seats)


def canonical(cards: Sequence[str]) -> list[str]:
    return sorted(cards, key=INDEX.__getitem__)


def tone(gods: Sequence[str]) -> str:
    """``positive`` (Adwanis), ``negative`` (Nekradis), ``turmoil`` (both), or ``""`` (rulebook
    "God Card Meanings")."""
    g = set(gods)
    return "turmoil" if len(g) == 2 else "positive" if "adwanis" in g else "negative" if g else ""


def draw(s: FState, k: int, chance) -> tuple[Drawing, list[str]]:
    """One act of drawing ``k`` cards with the God rules (RULINGS.md: a God drawn is set aside
    and its position redrawn; both Gods: both set aside, turmoil). F2: an empty deck is rebuilt
    from the handed-in pile (one shuffle); the Gods set aside in this drawing stay apart until it
    ends, so they are never redrawn in it. Returns ``(drawing, the deck afterwards)``."""
    deck, pile = list(s.deck), list(s.pile)
    cards: list[str] = []
    gods: list[str] = []
    rebuilt = 0
    short = False
    while len(cards) < k:
        if not deck:
            if not pile:
                short = True
                break
            deck, pile = chance.shuffle(canonical(pile)), []
            rebuilt += 1
        c = deck.pop(0)
        (gods if c in GODS else cards).append(c)
    return Drawing(cards=cards, gods=gods, tone=tone(gods), short=short, rebuilt=rebuilt), deck


def setup(seats: int, chance) -> list[Event]:
    """Shuffle all 80 cards; the GM draws one secret FATE card per player (one reading)."""
    deck = chance.shuffle(list(ORDER))
    s = evolve(initial_state(seats), SessionOpened(deck=deck, deck_count=len(deck)))
    d, after = draw(s, seats - 1, chance)
    return [SessionOpened(deck=deck, deck_count=len(deck)), FateAssigned(drawing=d, deck_count=len(after), deck=after)]


def _player(s: FState, p: int | None) -> int:
    if p is None or not 1 <= p < s.seats:
        raise Rejection("no_such_player", f"Players are seats 1 to {s.seats - 1}.")
    return p


def _can_draw(s: FState) -> None:
    if not s.deck and not s.pile:
        raise Rejection("deck_empty", "The FATE deck is empty and nothing was handed in to rebuild it (F2).")


def decide(s: FState, seat: int, cmd, chance) -> list[Event]:
    """Events for ``cmd`` by ``seat``. Raises Rejection (codes in docs/games/fate_deck.md)."""
    if s.phase == "over":
        raise Rejection("game_over", "The session is over.")
    if isinstance(cmd, HandIn):
        if seat == 0:
            raise Rejection("players_only", "Only a player hands FATE cards to the GM.")
        if not cmd.cards or len(set(cmd.cards)) != len(cmd.cards) or any(c not in s.acquired[seat] for c in cmd.cards):
            raise Rejection("card_not_acquired", "Hand in one or more of the FATE cards you were awarded, each once.")
        return [CardsHandedIn(player=seat, cards=list(cmd.cards))]
    if not isinstance(cmd, (Award, Reveal, Roll, Read, EndSession)):
        raise Rejection("unknown_command", "The Fate Deck knows award, reveal, roll, read, hand_in and end_session.")
    if seat != 0:
        raise Rejection("gm_only", "Only the GM (seat 0) does that.")
    if isinstance(cmd, EndSession):
        return [SessionEnded()]
    if s.acts >= MAX_ACTS:
        raise Rejection("session_full", f"A session takes at most {MAX_ACTS} GM acts; end it and open another.")
    if isinstance(cmd, Award):
        p = _player(s, cmd.player)
        _can_draw(s)
        d, after = draw(s, 1, chance)
        return [CardAwarded(player=p, drawing=d, deck_count=len(after), deck=after)]
    if isinstance(cmd, Reveal):
        p = _player(s, cmd.player)
        if s.fates[p] is None:
            raise Rejection("no_fate_card", f"Seat {p} holds no secret FATE card.")
        if s.revealed[p]:
            raise Rejection("already_revealed", f"Seat {p}'s FATE card is already revealed.")
        return [FateRevealed(player=p, card=s.fates[p])]  # type: ignore[arg-type]
    if isinstance(cmd, Roll):
        p = None if cmd.player is None else _player(s, cmd.player)
        return [DieRolled(sides=D20, value=chance.die(D20), player=p)]
    if not 1 <= cmd.cards <= MAX_READING:
        raise Rejection("bad_reading_size", f"A reading draws 1 to {MAX_READING} cards.")
    _can_draw(s)
    d, after = draw(s, cmd.cards, chance)
    return [ReadingDrawn(drawing=d, deck_count=len(after), deck=after)]


def _after_draw(s: FState, d: Drawing, deck: list[str], extra_pile: Sequence[str] = ()) -> dict:
    pile = (() if d.rebuilt else s.pile) + tuple(d.gods) + tuple(extra_pile)
    return {"deck": tuple(deck), "pile": pile}


def _set(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


def evolve(s: FState, ev: Event) -> FState:
    """Fold one event. Pure and total: only sets fields, never validates."""
    rep = msgspec.structs.replace
    if isinstance(ev, SessionOpened):
        return rep(s, phase="open", deck=tuple(ev.deck))
    if isinstance(ev, FateAssigned):
        fates = (None,) + tuple(ev.drawing.cards) + (None,) * (s.seats - 1 - len(ev.drawing.cards))
        return rep(s, fates=fates[:s.seats], **_after_draw(s, ev.drawing, ev.deck))
    if isinstance(ev, CardAwarded) and 0 < ev.player < s.seats:
        acq = _set(s.acquired, ev.player, s.acquired[ev.player] + tuple(ev.drawing.cards))
        return rep(s, acquired=acq, acts=s.acts + 1, **_after_draw(s, ev.drawing, ev.deck))
    if isinstance(ev, FateRevealed) and 0 < ev.player < s.seats:
        return rep(s, revealed=_set(s.revealed, ev.player, True), acts=s.acts + 1)
    if isinstance(ev, DieRolled):
        return rep(s, rolls=(s.rolls + ((ev.sides, ev.value, ev.player),))[-KEEP:], acts=s.acts + 1)
    if isinstance(ev, CardsHandedIn) and 0 < ev.player < s.seats:
        left = tuple(c for c in s.acquired[ev.player] if c not in ev.cards)
        return rep(s, acquired=_set(s.acquired, ev.player, left), pile=s.pile + tuple(ev.cards))
    if isinstance(ev, ReadingDrawn):
        return rep(s, readings=(s.readings + (ev.drawing,))[-KEEP:], acts=s.acts + 1,
                   **_after_draw(s, ev.drawing, ev.deck, ev.drawing.cards))
    if isinstance(ev, SessionEnded):
        return rep(s, phase="over")
    return s


def legal_commands(s: FState, seat: int) -> list:
    """The commands ``decide`` accepts from ``seat`` now. F6: ``hand_in`` is listed for each
    single acquired card and for all of them; any other subset is accepted too; ``read`` for
    1, 3 and 10 cards (any 1-10 is accepted)."""
    if s.phase != "open" or not 0 <= seat < s.seats:
        return []
    if seat > 0:
        acq = canonical(s.acquired[seat])
        return [HandIn(cards=[c]) for c in acq] + ([HandIn(cards=acq)] if len(acq) > 1 else [])
    out: list = []
    if s.acts < MAX_ACTS:
        can = bool(s.deck or s.pile)
        players = range(1, s.seats)
        out += [Award(player=p) for p in players] if can else []
        out += [Reveal(player=p) for p in players if s.fates[p] is not None and not s.revealed[p]]
        out += [Roll()] + [Roll(player=p) for p in players]
        out += [Read(cards=k) for k in (1, 3, 10)] if can else []
    return out + [EndSession()]


def to_move(s: FState) -> list[int]:
    """F7: the session waits only for the GM (a player may hand in cards at any time, but
    nothing waits for it)."""
    return [0] if s.phase == "open" else []


def status(s: FState) -> Result | None:
    """The GM ended the session: a result with no winner."""
    if s.phase != "over":
        return None
    return Result(winners=[], scores=[], summary=f"The GM ended the session after {s.acts} acts.")


def all_cards(s: FState) -> list[str]:
    """Every one of the 80 cards somewhere (cards-conserved property)."""
    return [*s.deck, *s.pile, *(f for f in s.fates if f), *(c for a in s.acquired for c in a)]
