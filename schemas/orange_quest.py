"""Orange Quest wire contract: options, commands, events and the view.

Source: rulebooks/orange-quest.txt and RULINGS.md "Orange Quest"; docs/games/orange_quest.md
lists every card and every ruling. Tags are stable forever.

Card ids are ``<design id><n>`` (``gvozdar1``..``gvozdar4``); hero, boss and location ids are
the content ids. Zones (in :class:`Moved`): ``deck``, ``discard``, ``table`` (face up in the
middle: played cards, reward pools), ``hand:N``, ``stash:N`` (the candy stash: face down, seen
by nobody, the owner included), ``equip:N``, ``curse:N``, ``aside:N`` (cards only seat N looks
at: a Treasure share). ``redact`` empties the ``cards`` of a move the seat may not see; counts
stay public. Simultaneous secret choices (Fog of Generosity, Chaos, rock-paper-scissors,
"I take what I want") go through the kernel (``services/kernel/secret.py``).
"""

from __future__ import annotations

from typing import Literal

from schemas.base import ChoiceMade, ChoicesRevealed, Command, Event, Options, Record

Sharing = Literal["peaceable", "rps", "take", "agree"]
Shape = Literal["rock", "paper", "scissors"]


class OrangeQuestOptions(Options):
    """Game options (bounds: ``bad_options`` outside them)."""

    days: int = 6
    """Game days, 4-6 (rulebook "Game Process"); the boss deck holds one boss per day."""
    sharing: Sharing = "peaceable"
    """How participants share a boss reward (rulebook "Additional Rules"): ``peaceable``
    (random even deal, surplus discarded), ``rps`` (rock-paper-scissors, secret throws),
    ``take`` (I take what I want: staged secret picks), ``agree`` (We had better agree)."""
    window_seconds: int = 30
    """The deadline of a response window (0-600 s; 0: no deadline, it closes when all pass)."""
    agree_seconds: int = 30
    """The deadline of "We had better agree" (rulebook: 30 s; 5-600)."""
    half_health: bool = True
    """Two players: every boss has half health (rulebook "Two-Player Game")."""
    strengthening: Literal["auto", "on", "off"] = "auto"
    """The boss strengthening card: ``auto`` = on for 5-6 players (rulebook), ``on``, ``off``."""


# ---------------------------------------------------------------------------------------------
# Commands


class Play(Command, tag="orange_quest.play"):
    """Play an action card from hand. ``target``: the player a card names (a curse, a mischief,
    a damage reduction); ``item``: for a Block outside a response window, the equipment card to
    destroy (it belongs to ``target``)."""

    card: str
    target: int | None = None
    item: str | None = None


class Pass(Command, tag="orange_quest.pass"):
    """Pass: decline to Block in a response window, or end your turn in a fight, party or duel
    (a pass when you played nothing this turn)."""


class Convert(Command, tag="orange_quest.convert"):
    """Hand limit 7: put exactly the surplus ``cards`` from your hand into your candy stash."""

    cards: list[str]


class UseAbility(Command, tag="orange_quest.use_ability"):
    """Use your hero's once-per-day ability (``card``: Mia's discard)."""

    card: str | None = None


class UseEquipment(Command, tag="orange_quest.use_equipment"):
    """Use an attached equipment card (once per day)."""

    card: str


class Challenge(Command, tag="orange_quest.challenge"):
    """On your party turn: challenge ``target`` to a duel."""

    target: int


class Distribute(Command, tag="orange_quest.distribute"):
    """Hand out cards you distribute (Treasure share, the others' reward): ``to[i]`` is the seat
    that gets the i-th card (your aside cards or the table pool, in their listed order)."""

    to: list[int]


class Propose(Command, tag="orange_quest.propose"):
    """We had better agree: propose ``to[i]`` = the participant that gets the i-th pool card."""

    to: list[int]


class Accept(Command, tag="orange_quest.accept"):
    """We had better agree: accept the proposal on the table."""


class GiveCandies(Command, tag="orange_quest.give_candies"):
    """After a duel you won: give ``count`` of the candies you won in it to ``to``, a player who
    helped you in it (RULINGS.md duels: a promise to a helper is not enforced). Send it again for
    another helper; ``pass`` when you are done (or to give nothing)."""

    to: int
    count: int


class GiveCard(Command, tag="orange_quest.give_card"):
    """Secret choice (Fog of Generosity): the card from your hand to pass to your neighbour."""

    card: str


class PutIn(Command, tag="orange_quest.put_in"):
    """Secret choice (Chaos): the two cards from your hand (all, if fewer) to the centre."""

    cards: list[str]


class Throw(Command, tag="orange_quest.throw"):
    """Secret choice (rock-paper-scissors sharing): your shape and the pool card you take if you win."""

    shape: Shape
    card: str


class Pick(Command, tag="orange_quest.pick"):
    """Secret choice (I take what I want): the pool card you point at."""

    card: str


OQChoice = GiveCard | PutIn | Throw | Pick


# ---------------------------------------------------------------------------------------------
# Events


class GameSetUp(Event, tag="orange_quest.game_set_up"):
    """Setup: heroes (public), first player, the shuffled decks (secret: emptied by ``redact``)."""

    heroes: list[str]
    first: int
    days: int
    deck: list[str]
    locations: list[str]
    bosses: list[str]
    strengthening: str = ""
    """The strengthening side in use (``five``, ``six``) or ""."""


class Moved(Event, tag="orange_quest.moved"):
    """``count`` cards moved from zone ``frm`` to zone ``to`` (``cards`` only for seats that may see them)."""

    frm: str
    to: str
    cards: list[str]
    count: int
    reason: str


class Reshuffled(Event, tag="orange_quest.reshuffled"):
    """The action deck ran out: the discard pile became the new deck (order secret; ruling)."""

    deck: list[str]
    count: int


class CoinFlipped(Event, tag="orange_quest.coin_flipped"):
    """The coin (the chance source): ``heads`` or tails, flipped by ``seat`` for ``reason``."""

    seat: int
    heads: bool
    reason: str


class DayStarted(Event, tag="orange_quest.day_started"):
    """Morning: day ``day`` with first player ``first``; heroes and equipment turned back."""

    day: int
    first: int


class LocationRevealed(Event, tag="orange_quest.location_revealed"):
    location: str
    signposts: list[str]


class SignpostApplied(Event, tag="orange_quest.signpost_applied"):
    """A signpost carried out (``value``: Rage's bonus, or the coin's direction +1 left / -1 right)."""

    signpost: str
    value: int = 0


class HeroTurned(Event, tag="orange_quest.hero_turned"):
    """A hero card turned (ability used, or Powerlessness)."""

    seat: int
    reason: str


class AbilityUsed(Event, tag="orange_quest.ability_used"):
    seat: int
    hero: str


class EquipmentUsed(Event, tag="orange_quest.equipment_used"):
    seat: int
    card: str


class CardPlayed(Event, tag="orange_quest.card_played"):
    """``seat`` played ``card`` from hand onto the table (a quick card opens or extends a response
    window; ``helps``: in a duel, the duellist a helper's combat card counts for)."""

    seat: int
    card: str
    target: int | None = None
    item: str | None = None
    helps: int | None = None


class Passed(Event, tag="orange_quest.passed"):
    """``seat`` passed (a response window) or ended its turn (``played``: it had played this turn)."""

    seat: int
    played: bool = False


class ChainResolved(Event, tag="orange_quest.chain_resolved"):
    """The response window closed: ``applies[i]`` says whether the i-th card of the chain (bottom
    first) takes effect (a chain resolves from the top: each Block that applies cancels the card below)."""

    cards: list[str]
    applies: list[bool]


class Modified(Event, tag="orange_quest.modified"):
    """An auxiliary card on ``seat``'s last damage card: ``amount`` more damage."""

    seat: int
    amount: int
    reason: str


class CurseTriggered(Event, tag="orange_quest.curse_triggered"):
    seat: int
    card: str


class CandiesKept(Event, tag="orange_quest.candies_kept"):
    """Joy's ability kept ``seat``'s candies (the hero card turns)."""

    seat: int
    count: int


class BossRevealed(Event, tag="orange_quest.boss_revealed"):
    """Evening: the boss, its health (half for two players, Rage bonus, strengthening) and the fight begins."""

    boss: str
    health: int
    turn: int


class FightEnded(Event, tag="orange_quest.fight_ended"):
    """``won``; ``damage[seat]`` net damage; ``leader`` (None: nobody, or a tie);
    ``participants``: the other players who dealt damage (all of them on a tie)."""

    won: bool
    damage: list[int]
    leader: int | None
    participants: list[int]
    others: list[int]
    distributor: int | None = None


class TrophyTaken(Event, tag="orange_quest.trophy_taken"):
    seat: int
    boss: str


class SharingStarted(Event, tag="orange_quest.sharing_started"):
    """The participants' pool (face up on the table) is shared by ``variant`` among ``seats``."""

    variant: str
    seats: list[int]
    pool: list[str]
    stage: int = 1
    """The stage (rock-paper-scissors round, "I take what I want" stage), from 1."""
    undecided: int = 0
    """Rock-paper-scissors rounds without a single winner so far (3: the rest is dealt peaceably)."""


class Stage(Event, tag="orange_quest.stage"):
    """The day's program moves on: ``step`` (popped from the agenda, "" for none) begins and the
    game is in ``phase`` ("" while steps run without input)."""

    step: str = ""
    phase: str = ""


class OthersReward(Event, tag="orange_quest.others_reward"):
    """The others' reward cards lie on the table; ``distributor`` hands them out to ``seats``."""

    distributor: int
    seats: list[int]
    pool: list[str]


class TreasureStarted(Event, tag="orange_quest.treasure_started"):
    """Treasure: ``givers`` look at their aside cards and hand them to other players."""

    givers: list[int]


class Proposed(Event, tag="orange_quest.proposed"):
    seat: int
    to: list[int]


class ProposalAccepted(Event, tag="orange_quest.proposal_accepted"):
    seat: int


class AgreementFailed(Event, tag="orange_quest.agreement_failed"):
    """We had better agree: the deadline passed without an accepted proposal: all discarded."""

    seat: int


class Chosen(ChoiceMade, tag="orange_quest.chosen"):
    """A seat made its secret choice (kernel): ``choice`` only in the chooser's own feed."""

    choice: GiveCard | PutIn | Throw | Pick | None = None


class Revealed(ChoicesRevealed, tag="orange_quest.revealed"):
    """Every awaited seat has chosen: the choices together (Fog and Chaos: only your own)."""

    choices: list[Chosen] = []


class PartyStarted(Event, tag="orange_quest.party_started"):
    turn: int


class TurnStarted(Event, tag="orange_quest.turn_started"):
    """The turn passes to ``seat`` (fight, party or duel)."""

    seat: int


class DuelStarted(Event, tag="orange_quest.duel_started"):
    challenger: int
    challenged: int


class DuelEnded(Event, tag="orange_quest.duel_ended"):
    """``winner`` None: a draw. ``damage``: (challenger's, challenged's) net damage; ``taken``:
    candies the winner took; ``refills[seat]``: combat cards each spent (drawn again)."""

    challenger: int
    challenged: int
    damage: list[int]
    winner: int | None
    taken: int
    refills: list[int]


class GivingOpened(Event, tag="orange_quest.giving_opened"):
    """After a duel it won, ``winner`` may give the players who helped it (``helpers``) up to
    ``count`` of the candies it won (``cards``: which ones; emptied by ``redact`` for every seat,
    the winner included: candy stays unknown)."""

    winner: int
    helpers: list[int]
    count: int
    cards: list[str]


class CandiesGiven(Event, tag="orange_quest.candies_given"):
    """The duel's winner ``seat`` gave ``count`` of the candies it won to its helper ``to`` (the
    cards move by a ``moved`` event from stash to stash: unknown to everyone)."""

    seat: int
    to: int
    count: int


class GivingClosed(Event, tag="orange_quest.giving_closed"):
    """The winner is done giving (it passed, or gave every candy it won): ``given`` candies in all."""

    winner: int
    given: int


class PartyEnded(Event, tag="orange_quest.party_ended"):
    pass


class GameEnded(Event, tag="orange_quest.game_ended"):
    """Final scoring: ``scores[seat]`` = candies (hand and equipment put into the stash) + trophies."""

    scores: list[int]
    winners: list[int]


# ---------------------------------------------------------------------------------------------
# The view


class PlayerView(Record):
    hero: str
    hero_turned: bool
    hand_count: int
    candies: int
    equipment: list[str]
    equipment_used: list[str]
    curses: list[str]
    trophies: list[str]
    damage: int = 0
    """Net damage in the current fight or duel (public)."""


class ChainView(Record):
    seat: int
    card: str
    target: int | None = None
    item: str | None = None


class OrangeQuestView(Record):
    """What one seat (or a spectator, ``seat`` None) sees."""

    phase: str
    """``fog``, ``chaos``, ``treasure``, ``fight``, ``share``, ``others``, ``party``, ``duel``, ``gift``, ``over``."""
    day: int
    days: int
    first: int
    turn: int | None
    players: list[PlayerView]
    deck_count: int
    discard_count: int
    table: list[str]
    location: str | None
    signposts: list[str]
    boss: str | None
    boss_health: int
    bosses_left: int
    hand: list[str] = []
    """Your own hand (empty for a spectator)."""
    aside: list[str] = []
    """Cards only you look at (your Treasure share)."""
    chain: list[ChainView] = []
    """The open response window's chain, bottom first (empty: no window)."""
    window_waiting: list[int] = []
    convert: list[int] = []
    """Seats that must convert cards to candy now (hand over 7)."""
    sharing: str = ""
    share_seats: list[int] = []
    pool: list[str] = []
    proposal: list[int] = []
    proposer: int | None = None
    accepted: list[int] = []
    distributor: int | None = None
    duel: list[int] = []
    """(challenger, challenged) of the duel being fought."""
    duels_started: list[int] = []
    attacked: list[int] = []
    gift_giver: int | None = None
    """After a duel: the winner who may give helpers candies it won (phase ``gift``)."""
    gift_helpers: list[int] = []
    """The players who helped ``gift_giver`` in that duel (they may receive)."""
    gift_left: int = 0
    """How many of the candies it won ``gift_giver`` may still give (a count: candy stays unknown)."""
    sacred_place: bool = False
    breakage: bool = False
    powerlessness: bool = False
    scores: list[int] = []
    winners: list[int] = []
    legal: list[Play | Pass | Convert | UseAbility | UseEquipment | Challenge | Distribute | Propose | Accept
                | GiveCandies | GiveCard | PutIn | Throw | Pick] = []
    """Your legal commands now (a bounded list; empty when the game does not wait for you)."""
