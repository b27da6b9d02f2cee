"""Wire contract of the Fate Deck, the Questeros deck's GM-guided role-playing option.

Seat 0 is the GM; seats 1.. are the players. Card ids are Questeros' (docs/games/questeros.md).
Tags are ``fate_deck.<verb>`` / ``fate_deck.<past_tense>``, never renamed.
Source: rulebooks/questeros.txt "Fate Deck (Roleplaying Game Option)", "God Card Meanings",
"Epic Card Meanings", "Class Card Concepts (Fate Deck)"; RULINGS.md "Questeros" (Fate Deck
rulings); docs/games/fate_deck.md.
"""

from __future__ import annotations

from typing import Literal

from schemas.base import Command, Event, Options, Record


class FateDeckOptions(Options):
    """Game options: none (the seat count is the GM plus the players)."""


# ---------------------------------------------------------------------------------------------
# Commands


class Award(Command, tag="fate_deck.award"):
    """GM: the player ``player`` has earned a FATE card (drawn now, seen by that player and the GM)."""

    player: int


class Reveal(Command, tag="fate_deck.reveal"):
    """GM: reveal ``player``'s secret FATE card to everyone."""

    player: int


class Roll(Command, tag="fate_deck.roll"):
    """GM: ask for a d20 roll (for ``player``, or for the table with ``player`` None)."""

    player: int | None = None


class Read(Command, tag="fate_deck.read"):
    """GM: a reading of ``cards`` cards (1-10), with the God rules."""

    cards: int = 3


class HandIn(Command, tag="fate_deck.hand_in"):
    """Player: hand acquired FATE ``cards`` to the GM to trigger a FATE event."""

    cards: list[str]


class EndSession(Command, tag="fate_deck.end_session"):
    """GM: the session is over."""


FateDeckCommand = Award | Reveal | Roll | Read | HandIn | EndSession


# ---------------------------------------------------------------------------------------------
# Events


class Drawing(Record):
    """One act of drawing (a reading): ``cards`` kept, in position order; ``gods`` drawn and set
    aside (each position redrawn); ``tone`` ``positive`` (Adwanis), ``negative`` (Nekradis),
    ``turmoil`` (both) or ``""``; ``short``: the deck and the handed-in pile ran out first."""

    cards: list[str]
    gods: list[str] = []
    tone: str = ""
    short: bool = False
    rebuilt: int = 0
    """How many times the deck was rebuilt from the handed-in pile during this drawing."""


class SessionOpened(Event, tag="fate_deck.session_opened"):
    """All 80 cards shuffled into the FATE deck (``deck``, top first, is secret)."""

    deck: list[str]
    deck_count: int


class FateAssigned(Event, tag="fate_deck.fate_assigned"):
    """The GM drew one secret FATE card per player: ``drawing.cards[i]`` is seat ``i + 1``'s.
    Only the GM's feed carries the cards; every other feed gets ``drawing`` emptied."""

    drawing: Drawing
    deck_count: int
    deck: list[str] = []
    """The deck after the drawing when it was rebuilt (secret: always redacted)."""


class CardAwarded(Event, tag="fate_deck.card_awarded"):
    """``player`` earned a FATE card (seen by that player and the GM; others see the seat only)."""

    player: int
    drawing: Drawing
    deck_count: int
    deck: list[str] = []


class FateRevealed(Event, tag="fate_deck.fate_revealed"):
    player: int
    card: str


class DieRolled(Event, tag="fate_deck.die_rolled"):
    """A recorded d20 roll."""

    sides: int
    value: int
    player: int | None = None


class CardsHandedIn(Event, tag="fate_deck.cards_handed_in"):
    """``player`` handed ``cards`` to the GM: a FATE event (the cards go to the handed-in pile)."""

    player: int
    cards: list[str]


class ReadingDrawn(Event, tag="fate_deck.reading_drawn"):
    """A public reading."""

    drawing: Drawing
    deck_count: int
    deck: list[str] = []


class SessionEnded(Event, tag="fate_deck.session_ended"):
    pass


COMMAND_TYPES = (Award, Reveal, Roll, Read, HandIn, EndSession)
EVENT_TYPES = (SessionOpened, FateAssigned, CardAwarded, FateRevealed, DieRolled, CardsHandedIn, ReadingDrawn, SessionEnded)


# ---------------------------------------------------------------------------------------------
# Views


class FateCard(Record):
    """A card served with its meaning (docs/games/fate_deck.md "Meanings")."""

    card: str
    name: str
    meaning: str
    source: str


class PlayerView(Record):
    seat: int
    fate: FateCard | None = None
    """The secret FATE card: shown to the GM always, to everyone once revealed; never to its
    holder before."""
    has_fate: bool = False
    revealed: bool = False
    acquired: list[FateCard] = []
    """Awarded cards: shown to the holder and the GM."""
    acquired_count: int = 0


class ReadingView(Record):
    cards: list[FateCard]
    gods: list[FateCard]
    tone: str
    short: bool


class RollView(Record):
    sides: int
    value: int
    player: int | None


FateRole = Literal["gm", "player", "spectator"]


class FateDeckView(Record):
    role: FateRole
    open: bool
    acts: int
    """GM acts so far (bounded: docs/games/fate_deck.md)."""
    deck_count: int
    handed_in: list[FateCard]
    """The GM's pile: handed-in cards, readings' cards and set-aside Gods (face up)."""
    players: list[PlayerView]
    readings: list[ReadingView]
    """The last readings, newest last (at most 10)."""
    rolls: list[RollView]
    """The last d20 rolls, newest last (at most 10)."""
    legal: list[FateDeckCommand] = []
