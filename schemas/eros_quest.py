"""Wire contract of Ero's Quest, the Questeros deck's solitaire adventure: options, commands,
events and views.

Card ids are Questeros' (docs/games/questeros.md): ``b1``..``b14``, ``s1``..``s14``, ``o1``..``o14``,
``c1``..``c14`` and ``e0``..``e21``. Tags are ``eros_quest.<verb>`` (commands) and
``eros_quest.<past_tense>`` (events), never renamed.
Source: rulebooks/questeros.txt "Ero's Quest (Solitaire Adventure)"; RULINGS.md "Questeros";
docs/games/eros_quest.md.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from schemas.base import Command, Event, Options, Record

# ---------------------------------------------------------------------------------------------
# Options


class Practice(Options):
    """A practice start (E9): the adventure begins at Epic ``epic`` with this play area and hand;
    the Epics before it count as completed; every other Class card is shuffled into the deck.
    For learning one Encounter and for the rulebook's Combat Example; the result says "practice"."""

    epic: str
    blades: list[str] = msgspec.field(default_factory=lambda: ["b1"])
    staves: list[str] = msgspec.field(default_factory=lambda: ["s1"])
    orbs: list[str] = msgspec.field(default_factory=lambda: ["o1", "o2", "o3"])
    used: list[str] = []
    """Play-area cards that start Used (Cups 1-10 included)."""
    hand: list[str] = []
    allies: list[str] = []


class ErosQuestOptions(Options):
    """Game options (one seat)."""

    difficulty: Literal[0, 1, 2] = 0
    """Rulebook "Difficulty": 1 shuffles the 3 of Orbs into the deck, 2 the 3 and the 2 of Orbs."""
    practice: Practice | None = None
    """A practice start (ignores ``difficulty``); None for the adventure as the rulebook sets it up."""


# ---------------------------------------------------------------------------------------------
# Commands (the seven Turn Actions, the choices they need, and the Combat steps)


class Develop(Command, tag="eros_quest.develop"):
    """DEVELOP: place ``card`` from the hand on its Blades, Staves or Orbs stack (next number).
    Also the bonus Develop of a card just gained outside LEARN (that card only)."""

    card: str


class Purchase(Command, tag="eros_quest.purchase"):
    """PURCHASE: Use the Unused Orb ``orb`` of the play area and look at that many deck cards."""

    orb: str


class Choose(Command, tag="eros_quest.choose"):
    """After a look (PURCHASE, or an Encounter that lets you look): take ``card`` into the hand;
    ``bottom`` is every other looked-at card, in the order they go under the deck."""

    card: str
    bottom: list[str] = []


class Forget(Command, tag="eros_quest.forget"):
    """FORGET: discard ``cards`` (at least one) from the hand."""

    cards: list[str]


class Learn(Command, tag="eros_quest.learn"):
    """LEARN: draw until the hand holds 5 cards."""


class Encounter(Command, tag="eros_quest.encounter"):
    """ENCOUNTER: face the next Epic card, meeting its requirement with these choices.

    ``cards``: cards of the hand to Give (or to place as an Ally); ``orbs``: Unused Orbs of the
    play area to Use; ``deter``: meet a deterrence instead of fighting (where the Encounter
    offers one). Which fields count is the Encounter's (docs/games/eros_quest.md)."""

    cards: list[str] = []
    orbs: list[str] = []
    deter: bool = False


class Recover(Command, tag="eros_quest.recover"):
    """RECOVER: Destroy the 11-14 ``card`` from the hand to turn the Used ``target`` of the same
    Class (value at most 2-5) back to Unused."""

    card: str
    target: str


class Rest(Command, tag="eros_quest.rest"):
    """REST: end the turn (the top deck card is discarded)."""


class TakeHit(Command, tag="eros_quest.take_hit"):
    """Combat step 1: Use ``card`` (an Unused Cups card; also Blades/Staves against the Death
    Knight) to absorb the Epic's hit. Repeated until the hit is covered."""

    card: str


class Attack(Command, tag="eros_quest.attack"):
    """Combat step 2: Use one Unused Blades card and/or one Unused Staves card ("" for none)."""

    blade: str = ""
    staff: str = ""


class Support(Command, tag="eros_quest.support"):
    """Combat step 2, the support after an attack that did not defeat the Epic: one 11-14 Blades
    or Staves card from the hand (``bonus``, Destroyed) and/or one Ally (``ally``, Destroyed);
    both "" to call none and end the round."""

    bonus: str = ""
    ally: str = ""


ErosQuestCommand = Develop | Purchase | Choose | Forget | Learn | Encounter | Recover | Rest | TakeHit | Attack | Support


# ---------------------------------------------------------------------------------------------
# Events


class AdventureSetUp(Event, tag="eros_quest.adventure_set_up"):
    """Solo Game Setup. ``deck`` (top first) is secret: redacted to [] in every feed. The
    practice fields are empty for a rulebook setup."""

    orbs: list[str]
    hand: list[str]
    deck: list[str]
    deck_count: int
    blades: list[str] = msgspec.field(default_factory=lambda: ["b1"])
    staves: list[str] = msgspec.field(default_factory=lambda: ["s1"])
    used: list[str] = []
    allies: list[str] = []
    completed: list[str] = []


class CardDeveloped(Event, tag="eros_quest.card_developed"):
    card: str
    stack: str
    bonus: bool = False
    """True for a bonus Develop (does not spend the DEVELOP action)."""


class OrbUsed(Event, tag="eros_quest.orb_used"):
    """PURCHASE: ``orb`` turned Used; ``looked`` are the top deck cards (seen by the player only)."""

    orb: str
    looked: list[str]


class CardsLooked(Event, tag="eros_quest.cards_looked"):
    """An Encounter's look at the top deck cards (seen by the player only)."""

    looked: list[str]


class CardChosen(Event, tag="eros_quest.card_chosen"):
    """The looked-at ``card`` went to the hand, ``bottom`` under the deck in this order."""

    card: str
    bottom: list[str]


class CardsForgotten(Event, tag="eros_quest.cards_forgotten"):
    cards: list[str]


class CardsDrawn(Event, tag="eros_quest.cards_drawn"):
    """Cards from the deck top into the hand. ``learn``: by LEARN (no bonus Develop)."""

    cards: list[str]
    learn: bool = False


class EncounterFaced(Event, tag="eros_quest.encounter_faced"):
    """ENCOUNTER: ``epic`` faced with these choices (``cards`` Given or placed, ``orbs`` Used)."""

    epic: str
    cards: list[str] = []
    orbs: list[str] = []
    deter: bool = False


class AllyPlaced(Event, tag="eros_quest.ally_placed"):
    card: str


class CardsRecovered(Event, tag="eros_quest.cards_recovered"):
    """Used play-area cards turned Unused (by an Encounter's reward)."""

    cards: list[str]


class CardsRecalled(Event, tag="eros_quest.cards_recalled"):
    """An Encounter's reward took these Discard pile cards back into the hand (public: the
    Discard pile is face up)."""

    cards: list[str]


class DiscardReturned(Event, tag="eros_quest.discard_returned"):
    """An Encounter's reward put Discard pile cards under the deck (``cards``, in this order).
    ``shuffled``: the whole Discard pile was shuffled into the deck (then the new deck order
    is secret: redacted to []); ``count`` is public."""

    cards: list[str]
    count: int
    shuffled: bool = False


class CardDestroyed(Event, tag="eros_quest.card_destroyed"):
    """A card removed from the game (``where``: ``deck`` top, by an Encounter's ability)."""

    card: str
    where: str


class CardRecovered(Event, tag="eros_quest.card_recovered"):
    """RECOVER: ``card`` (11-14) Destroyed, ``target`` Unused again."""

    card: str
    target: str


class CombatStarted(Event, tag="eros_quest.combat_started"):
    epic: str
    value: int


class HitTaken(Event, tag="eros_quest.hit_taken"):
    """One card Used to absorb the Epic's hit; ``remaining`` of the hit still to cover."""

    card: str
    remaining: int


class Attacked(Event, tag="eros_quest.attacked"):
    """An attack: ``cards`` Used (stack cards) or Destroyed (bonus, ally); ``damage`` this time,
    ``dealt`` in total this Combat."""

    cards: list[str]
    damage: int
    dealt: int
    support: bool = False


class EncounterCompleted(Event, tag="eros_quest.encounter_completed"):
    """The Epic is done: ``pile`` ``aside`` (kept with its cards) or ``completed``;
    ``defeated``: beaten in Combat or deterred."""

    epic: str
    pile: str
    defeated: bool = False


class Rested(Event, tag="eros_quest.rested"):
    """REST: ``burned`` (the deck top) went to the Discard pile; a new turn begins."""

    burned: str
    turn: int


class QuestEnded(Event, tag="eros_quest.quest_ended"):
    """The end: ``won`` (the Dragon is defeated); else ``reason`` ``ero_fell`` (the Cups could not
    take a hit) or ``deck_empty`` (the deck ran out)."""

    won: bool
    reason: str


ErosQuestEvent = (AdventureSetUp | CardDeveloped | OrbUsed | CardsLooked | CardChosen | CardsForgotten | CardsDrawn
                  | EncounterFaced | AllyPlaced | CardsRecalled | CardsRecovered | DiscardReturned | CardDestroyed | CardRecovered
                  | CombatStarted | HitTaken | Attacked | EncounterCompleted | Rested | QuestEnded)
COMMAND_TYPES = (Develop, Purchase, Choose, Forget, Learn, Encounter, Recover, Rest, TakeHit, Attack, Support)
EVENT_TYPES = (AdventureSetUp, CardDeveloped, OrbUsed, CardsLooked, CardChosen, CardsForgotten, CardsDrawn,
               EncounterFaced, AllyPlaced, CardsRecalled, CardsRecovered, DiscardReturned, CardDestroyed, CardRecovered,
               CombatStarted, HitTaken, Attacked, EncounterCompleted, Rested, QuestEnded)


# ---------------------------------------------------------------------------------------------
# Views


class PlayCard(Record):
    """A play-area card and whether it is Used (rotated 90 degrees)."""

    card: str
    used: bool = False


class CombatView(Record):
    epic: str
    value: int
    dealt: int
    """Damage dealt to the Epic so far (cumulative)."""
    step: Literal["hit", "attack", "support"]
    hit_remaining: int
    """Of the Epic's current hit, what is still to be absorbed (step ``hit``)."""
    round: int


class EncounterInfo(Record):
    """The next Epic and its Encounter card (the house pack's text, or the rulebook's)."""

    epic: str
    name: str
    text: str
    source: str


ErosPhase = Literal["turn", "look", "combat", "over"]


class ErosQuestView(Record):
    """What the player (seat 0) or a spectator sees. Never shown: the deck order; to spectators
    also the hand and looked-at cards."""

    turn: int
    phase: ErosPhase
    hand: list[str]
    hand_count: int
    deck_count: int
    discard: list[str]
    destroyed_count: int
    blades: list[PlayCard]
    staves: list[PlayCard]
    orbs: list[PlayCard]
    cups: list[PlayCard]
    """Health, 1 on top."""
    allies: list[str]
    next_encounter: EncounterInfo | None
    epics_left: int
    completed: list[str]
    defeated: list[str]
    """Necromancer, Succubus, Assassin, Death Knight, Demon, Dragon beaten or deterred so far."""
    aside: list[str]
    """Cards set aside with the Warlock."""
    actions_done: list[str]
    bonus: list[str]
    """Cards just gained outside LEARN that a bonus Develop may place now."""
    looking: list[str]
    combat: CombatView | None = None
    won: bool | None = None
    end_reason: str = ""
    legal: list[ErosQuestCommand] = []
