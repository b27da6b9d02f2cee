"""Reventure: Orbtale, 2-4 players (rulebooks/reventure-orbtale.txt, 2021 rules update).

Modules in reading order: ``content`` (the house content pack in ``content/*.toml``),
``state`` (state and shared queries), ``evolve``, ``flow`` (event builder, chapter sequence),
``effects`` (named handlers chosen by the data), ``rules`` (setup, decide, secret choices,
legal commands, status), ``views`` (view, redact), ``bots``. Docs: docs/games/reventure_orbtale.md.
"""

from __future__ import annotations

from schemas.base import Command, Event
from schemas.envelope import Result
from schemas.reventure_orbtale import (
    Attack,
    AttackDeclared,
    AttackSkipped,
    CardsDiscarded,
    CardsDrawn,
    CardsStolen,
    ChapterDecksShuffled,
    ChapterEnded,
    ChapterRuleApplied,
    ChapterStarted,
    Chosen,
    CombatEnded,
    DamageDealt,
    DeckReshuffled,
    GameSetUp,
    GameWon,
    Healed,
    HeroEliminated,
    HeroesSwapped,
    HeroReincarnated,
    OrbtaleOptions,
    OrbtaleView,
    Organize,
    PickHero,
    PlayCard,
    ReincarnationPending,
    Revealed,
    RoundResolved,
    SkillsAttached,
    Skip,
)
from services.games.reventure_orbtale import bots, rules, views
from services.games.reventure_orbtale.evolve import evolve
from services.games.reventure_orbtale.state import OState
from services.kernel import Rejection, Title, register
from services.kernel.secret import SecretChoice


class ReventureOrbtale(Title[OState]):
    """The Reventure: Orbtale Decider."""

    name = "reventure_orbtale"
    display_name = "Reventure: Orbtale"
    rules_version = "1"
    min_seats = 2
    max_seats = 4
    options_type = OrbtaleOptions
    state_type = OState
    view_type = OrbtaleView
    command_types = (PickHero, Organize, Attack, Skip, PlayCard)
    event_types = (GameSetUp, Chosen, Revealed, ChapterDecksShuffled, ChapterStarted, CardsDrawn, DeckReshuffled,
                   CardsDiscarded, AttackDeclared, AttackSkipped, RoundResolved, DamageDealt, Healed, CardsStolen,
                   HeroesSwapped, SkillsAttached, CombatEnded, HeroEliminated, ReincarnationPending,
                   HeroReincarnated, ChapterRuleApplied, ChapterEnded, GameWon)
    choice_types = (PickHero, Organize, PlayCard)
    choice_made_type = Chosen
    choices_revealed_type = Revealed

    def check_options(self, options: OrbtaleOptions, seats: int) -> None:
        if not 1 <= options.chapter_limit <= 200:
            raise Rejection("bad_options", "chapter_limit must be 1 to 200.")

    def initial_state(self, options: OrbtaleOptions, seats: int) -> OState:
        return rules.initial_state(seats, options.chapter_limit)

    def setup(self, options: OrbtaleOptions, seats: int, chance) -> list[Event]:
        return rules.setup(seats, chance)

    def decide(self, state: OState, seat: int, command: Command, chance) -> list[Event]:
        return rules.decide(state, seat, command, chance)

    def evolve(self, state: OState, event: Event) -> OState:
        return evolve(state, event)

    def view(self, state: OState, seat: int | None) -> OrbtaleView:
        return views.view(state, seat)

    def redact(self, event: Event, seat: int | None) -> Event | None:
        return views.redact(event, seat)

    def legal_commands(self, state: OState, seat: int) -> list[Command]:
        return rules.legal_commands(state, seat)

    def status(self, state: OState) -> Result | None:
        return rules.status(state)

    def to_move(self, state: OState) -> list[int]:
        return rules.to_move(state)

    def secret_choice(self, state: OState) -> SecretChoice | None:
        return rules.secret_choice(state)

    def check_choice(self, state: OState, seat: int, command: Command) -> None:
        rules.check_choice(state, seat, command)

    def resolve_choices(self, state: OState, choices: dict[int, Command], chance) -> list[Event]:
        return rules.resolve_choices(state, choices, chance)


ReventureOrbtale.bots = {"random": bots.random_bot, "orb_hunter": bots.orb_hunter}
ReventureOrbtale.best_bot = "orb_hunter"
REVENTURE_ORBTALE = register(ReventureOrbtale())
