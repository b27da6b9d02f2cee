"""Wire contract of Questeros: options, commands, events and views.

Card ids (docs/games/questeros.md): ``b1``..``b14`` Blades, ``s1``..``s14`` Staves,
``o1``..``o14`` Orbs, ``c1``..``c14`` Cups (11 Page, 12 Knight, 13 Queen, 14 King),
``e0``..``e21`` Epic cards, ``adwanis`` and ``nekradis`` the Gods.
Tags are ``questeros.<verb>`` (commands) and ``questeros.<past_tense>`` (events), never renamed.
Source: rulebooks/questeros.txt (multi-player game) and RULINGS.md "Questeros".
"""

from __future__ import annotations

from typing import Literal

from schemas.base import Command, Event, Options, Record

# ---------------------------------------------------------------------------------------------
# Options


class QuesterosOptions(Options):
    """Game options. The player count is the seat count (2-6, RULINGS.md)."""

    alternative_god_rule: bool = False
    """Rulebook "Alternative Rule": a God on the table negates end-of-turn abilities and the
    abilities of cards played after it. Off by default (RULINGS.md)."""


# ---------------------------------------------------------------------------------------------
# Commands


class Bid(Command, tag="questeros.bid"):
    """Announce how many Quests you expect to win this round (1 to the cards in hand)."""

    quests: int


class PlayCard(Command, tag="questeros.play_card"):
    """Play ``card`` from your hand. ``pay_xp``: pay 1 XP to play an Epic (never a God) while
    holding the Class led, or any card that is not an Epic (a God included) while holding an
    Epic when Epics are preferred (RULINGS.md "Questeros", Gods)."""

    card: str
    pay_xp: bool = False


class LookAtHand(Command, tag="questeros.look_at_hand"):
    """The Mentor's ability: look at ``target``'s hand, or ``target = None`` to decline."""

    target: int | None = None


QuesterosCommand = Bid | PlayCard | LookAtHand


# ---------------------------------------------------------------------------------------------
# Events


class DealerChosen(Event, tag="questeros.dealer_chosen"):
    """Setup: the random first dealer (who also holds the Initiative); the Epics 10-15 set aside."""

    dealer: int
    set_aside: list[str]


class EpicAdded(Event, tag="questeros.epic_added"):
    """Round end (rounds 2-7): the top set-aside Epic goes into the deck."""

    card: str


class HandsDealt(Event, tag="questeros.hands_dealt"):
    """A round starts: the shuffled deck dealt, 10 cards a seat.

    Redacted: a seat sees only its own hand (the others empty), spectators no hand; the
    deck order is never shown (``deck`` empty, ``deck_count`` public).
    """

    round: int
    dealer: int
    hands: list[list[str]]
    deck: list[str]
    deck_count: int


class BidMade(Event, tag="questeros.bid_made"):
    seat: int
    quests: int


class CardPlayed(Event, tag="questeros.card_played"):
    seat: int
    card: str
    paid_xp: bool = False
    ability: str = ""
    """The on-play ability this card triggered (e.g. ``mentor_look``); empty for none."""


class HandLookedAt(Event, tag="questeros.hand_looked_at"):
    """The Mentor's look. ``cards`` is shown only to ``seat``; redacted to [] for everyone else."""

    seat: int
    target: int | None
    cards: list[str]


class QuestWon(Event, tag="questeros.quest_won"):
    """A turn ended. ``winner`` None: both Gods were played, the cards are discarded."""

    turn: int
    winner: int | None
    cards: list[str]


class RoundScored(Event, tag="questeros.round_scored"):
    round: int
    quests: list[int]
    gains: list[int]
    xp: list[int]
    questeros: int | None
    """The single seat that won no Quest (+10 XP, takes the Initiative), or None."""
    initiative: int


QuesterosEvent = DealerChosen | EpicAdded | HandsDealt | BidMade | CardPlayed | HandLookedAt | QuestWon | RoundScored


# ---------------------------------------------------------------------------------------------
# Views


class PlayView(Record):
    seat: int
    card: str
    paid_xp: bool = False
    ability: str = ""
    """The ability the card triggered when played (e.g. ``mentor_look``); "" for rank only."""


class LookSeen(Record):
    """A Mentor look this round as every seat and spectator sees it: who looked, at whom (None:
    the look was declined), when; never the cards."""

    seat: int
    target: int | None
    round: int
    turn: int


class LastTurn(Record):
    """The last finished turn (its cards face up and its winner) until the next turn starts."""

    round: int
    turn: int
    plays: list[PlayView]
    winner: int | None
    """None: both Gods were played and nobody won it."""


class MentorLook(Record):
    target: int | None
    cards: list[str]
    round: int
    turn: int


class RoundLine(Record):
    """One round's line of the scorepad."""

    round: int
    bids: list[int]
    quests: list[int]
    gains: list[int]
    xp: list[int]
    questeros: int | None
    paid: list[int] = []
    """XP each seat paid this round to play outside the Preferred Class, so that the scoresheet
    adds up: xp = previous xp - paid + gains."""


Phase = Literal["setup", "bidding", "playing", "mentor", "over"]


class QuesterosView(Record):
    """What one seat (or a spectator, ``seat`` None) sees. Hands other than the seat's own,
    the deck order and the won piles' contents are never in it (RULINGS.md)."""

    round: int
    turn: int
    phase: Phase
    dealer: int
    initiative: int
    to_move: list[int]
    hand: list[str]
    """The seat's own hand (canonical order); empty for spectators."""
    hand_counts: list[int]
    bids: list[int | None]
    table: list[PlayView]
    preferred: str | None
    """``blades``/``staves``/``orbs``/``cups``/``epic``, or None (no lead yet, or a God led)."""
    quests_won: list[int]
    """Quests won this round (the won piles' sizes in quests)."""
    xp: list[int]
    set_aside: list[str]
    """The set-aside Epics still out of the deck, top first (face up)."""
    deck_count: int
    discarded: list[str]
    """Cards of turns cancelled by both Gods this round (played face up)."""
    history: list[RoundLine]
    mentor_pending: int | None
    mentor_look: MentorLook | None = None
    """Only the seat's own Mentor look, this round."""
    looks: list[LookSeen] = []
    """Every Mentor look of this round (who and whom, not the cards), in every view."""
    last_turn: LastTurn | None = None
    """The last finished turn until the next turn's first card is played."""
    legal: list[QuesterosCommand] = []
    """Every command this seat may send now (empty for spectators)."""
