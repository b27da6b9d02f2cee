"""Reventure: Orbtale wire contract: options, commands, events and the view.

Source: rulebooks/reventure-orbtale.txt (2021 rules update) and RULINGS.md "Reventure: Orbtale";
docs/games/reventure_orbtale.md lists every effect and ruling. Tags are stable forever.

Card ids are ``<kind id><n>`` for treasure copies (``sword1``..``sword6``) and the bare id for
orbs (``orb_life``); hero ids are the content ids (``the_mimic``). Secret parts of events (the
deck order, dealt heroes, inventories, hands, drawn and stolen cards, the chapter decks) are
emptied by the title's ``redact`` for every seat that may not see them; counts stay public.
Simultaneous secret choices (hero pick, organization, both face-down combat cards,
reincarnation) go through the kernel (``services/kernel/secret.py``).
"""

from __future__ import annotations

from typing import Literal

from schemas.base import ChoiceMade, ChoicesRevealed, Command, Event, Options, Record


class OrbtaleOptions(Options):
    """Game options."""

    chapter_limit: int = 40
    """House bound (1-200): a game still going after this many chapters ends; the seats owning
    most orbs, then most health, share the win (docs/games/reventure_orbtale.md)."""


# ---------------------------------------------------------------------------------------------
# Commands


class PickHero(Command, tag="reventure_orbtale.pick_hero"):
    """Secret choice: at setup, the current hero among the 3 dealt; at reincarnation, a reserve hero."""

    hero: str


class Organize(Command, tag="reventure_orbtale.organize"):
    """Secret choice of the organization phase: up to 3 (hand limit) inventory cards to the
    hand; ``discard``: inventory cards to discard (an orb goes on top of the deck)."""

    hand: list[str] = []
    discard: list[str] = []


class Attack(Command, tag="reventure_orbtale.attack"):
    """Combat phase, on your turn: attack the hero of seat ``target``."""

    target: int


class Skip(Command, tag="reventure_orbtale.skip"):
    """Combat phase, on your turn: make no attack."""


class PlayCard(Command, tag="reventure_orbtale.play_card"):
    """Secret choice in a combat round: the face-down card from your hand."""

    card: str


OrbtaleChoice = PickHero | Organize | PlayCard


# ---------------------------------------------------------------------------------------------
# Events


class GameSetUp(Event, tag="reventure_orbtale.game_set_up"):
    """Setup: the treasure deck (orbs in the top half), 3 inventory cards and 3 heroes each,
    the two chapter decks and the turn token. Secret lists are emptied by ``redact``."""

    token: int
    deck: list[str]
    deck_count: int
    inventories: list[list[str]]
    heroes: list[list[str]]
    """The 3 heroes dealt to each seat (only the seat's own are visible to it)."""
    chapter_decks: list[list[str]]
    """The two chapter decks, top first (secret to everyone)."""


class Chosen(ChoiceMade, tag="reventure_orbtale.chosen"):
    """A seat made its secret choice (kernel): ``choice`` only in the chooser's own feed."""

    choice: PickHero | Organize | PlayCard | None = None


class Revealed(ChoicesRevealed, tag="reventure_orbtale.revealed"):
    """Every awaited seat has chosen: the choices together (organization: only your own)."""

    choices: list[Chosen] = []


class ChapterDecksShuffled(Event, tag="reventure_orbtale.chapter_decks_shuffled"):
    """A chapter deck ran out: its revealed cards were shuffled into a new deck (ruling)."""

    deck: int
    """0: the first deck, 1: the second."""
    order: list[str]
    """Secret (emptied by ``redact``)."""
    count: int


class ChapterStarted(Event, tag="reventure_orbtale.chapter_started"):
    """Chapter start: one card of each chapter deck revealed; read together, the chapter rule
    (applied at the end of the chapter)."""

    chapter: int
    who: str
    what: str


class CardsDrawn(Event, tag="reventure_orbtale.cards_drawn"):
    """``seat`` drew ``count`` treasure cards from the deck into its inventory (``cards``
    only for that seat)."""

    seat: int
    cards: list[str]
    count: int
    reason: str
    """``exploration``, ``setup``, a card effect, a chapter rule or an orb."""


class DeckReshuffled(Event, tag="reventure_orbtale.deck_reshuffled"):
    """The deck ran out: the discard pile was shuffled into a new deck (order secret)."""

    deck: list[str]
    count: int


class CardsDiscarded(Event, tag="reventure_orbtale.cards_discarded"):
    """``seat`` discarded ``cards`` (public) from ``source``; orbs among them went on top of the
    deck instead (FAQ)."""

    seat: int
    cards: list[str]
    source: Literal["inventory", "hand"]
    reason: str


class AttackDeclared(Event, tag="reventure_orbtale.attack_declared"):
    attacker: int
    defender: int


class AttackSkipped(Event, tag="reventure_orbtale.attack_skipped"):
    seat: int


class RoundResolved(Event, tag="reventure_orbtale.round_resolved"):
    """A combat round after the face-down cards were revealed (the cards themselves are in the
    ``revealed`` event just before)."""

    attacker: int
    defender: int
    round: int
    winner: int | None
    """None: a tie (a new round follows, or the combat ends with no winner)."""
    why: str
    """``type`` (the triangle or an orb), ``undefended``, ``inventory`` (fewer cards), a skill
    id (``en_garde``), ``new_round`` or ``no_winner``."""


class DamageDealt(Event, tag="reventure_orbtale.damage_dealt"):
    seat: int
    amount: int
    health: int
    """Health containers left."""
    reason: str


class Healed(Event, tag="reventure_orbtale.healed"):
    seat: int
    amount: int
    health: int
    reason: str


class CardsStolen(Event, tag="reventure_orbtale.cards_stolen"):
    """``thief`` took ``count`` cards at random from ``victim``'s ``source`` (``cards`` only for
    the two of them)."""

    thief: int
    victim: int
    cards: list[str]
    count: int
    source: Literal["inventory", "hand"]
    reason: str


class HeroesSwapped(Event, tag="reventure_orbtale.heroes_swapped"):
    """Soul Swap: the current hero cards changed seats, attached skills with them (FAQ); health
    stays with the players."""

    seat: int
    other: int
    hero: str
    """``seat``'s new hero."""
    other_hero: str


class SkillsAttached(Event, tag="reventure_orbtale.skills_attached"):
    """The Mimic absorbed the skills of a hero it eliminated: they travel with the card."""

    hero: str
    skills: list[str]
    """Every skill now attached to ``hero``."""


class CombatEnded(Event, tag="reventure_orbtale.combat_ended"):
    """The combat is over; the winner's used card went to ``used_to`` (RULINGS: Attack to the
    hand, Defense to the inventory, Strategy to the discard, an orb stays active); every other
    played card is back in its hand."""

    attacker: int
    defender: int
    winner: int | None
    used: str | None
    used_to: str
    """``hand``, ``inventory``, ``discard``, ``active`` or empty (no winner)."""


class HeroEliminated(Event, tag="reventure_orbtale.hero_eliminated"):
    """``seat``'s current hero is out: its hand and active orbs went into its inventory."""

    seat: int
    hero: str
    reserve: int
    """Reserve heroes left (0: the player has no hero left)."""


class ReincarnationPending(Event, tag="reventure_orbtale.reincarnation_pending"):
    """Defeated seats with two reserve heroes now pick one (a secret choice, revealed together)."""

    seats: list[int]


class HeroReincarnated(Event, tag="reventure_orbtale.hero_reincarnated"):
    """End of chapter: ``seat`` brings ``hero`` from its reserve into play with 5 health."""

    seat: int
    hero: str
    health: int


class ChapterRuleApplied(Event, tag="reventure_orbtale.chapter_rule_applied"):
    """End of chapter: the chapter rule hit ``seats`` (its effects follow as events)."""

    chapter: int
    who: str
    what: str
    seats: list[int]


class ChapterEnded(Event, tag="reventure_orbtale.chapter_ended"):
    """Every hand went into its inventory; the turn token passed to ``token``."""

    chapter: int
    token: int


class GameWon(Event, tag="reventure_orbtale.game_won"):
    winners: list[int]
    reason: str
    """``four_orbs``, ``last_hero``, ``no_hero_left`` (nobody wins) or ``chapter_limit``."""


# ---------------------------------------------------------------------------------------------
# View


class PlayerView(Record):
    """Public facts of one seat (contents of hand, inventory and reserve are never here)."""

    seat: int
    hero: str | None
    """Current hero (None before the reveal or while defeated)."""
    skills: list[str]
    """The current hero's skills, attached ones included."""
    health: int
    hand_count: int
    inventory_count: int
    reserve_count: int
    active_orbs: list[str]
    defeated: bool
    """The current hero is out; it reincarnates at the end of the chapter if a reserve is left."""
    out: bool
    """No hero left: out of the game."""


class RuleView(Record):
    who: str
    what: str
    text: str


class CombatView(Record):
    attacker: int
    defender: int
    round: int
    played: list[list[str]]
    """Revealed cards of earlier rounds of this combat: ``[attacker's, defender's]``."""


class OrbtaleView(Record):
    """What one seat (or a spectator) sees."""

    phase: Literal["hero_pick", "organization", "combat", "duel", "reincarnation", "over"]
    chapter: int
    token: int
    rule: RuleView | None
    deck_count: int
    discard: list[str]
    """The discard pile, top last (public)."""
    players: list[PlayerView]
    turn: int | None
    """Seat to attack or skip (combat phase)."""
    combat: CombatView | None
    hand: list[str] = []
    inventory: list[str] = []
    reserve: list[str] = []
    offered: list[str] = []
    """Heroes this seat may pick now (setup: the 3 dealt; reincarnation: the reserve)."""
    hand_limit: int = 3
    legal: list[PickHero | Organize | Attack | Skip | PlayCard] = []
    """Commands this seat may send now (organization: a bounded sample; any valid hand works)."""
    winners: list[int] = []
