"""Ero's Quest: the Questeros deck's solitaire adventure, registered as its own title ``eros_quest``.

Why its own title and not a mode of ``questeros`` (docs/games/eros_quest.md): it shares only
the deck with the multi-player game; its seat count (1), commands, events, state, views and
result are all different, so one title would be two games behind one option.
Modules in reading order: ``encounters`` (the Encounter pack and its handlers), ``rules``,
``views``, ``bots``. Source: rulebooks/questeros.txt "Ero's Quest (Solitaire Adventure)".
"""

from __future__ import annotations

from schemas.base import Command, Event
from schemas.envelope import Result
from schemas.eros_quest import COMMAND_TYPES, EVENT_TYPES, ErosQuestOptions, ErosQuestView
from services.games.questeros.eros import bots, rules, views
from services.games.questeros.eros.rules import EState
from services.kernel import Title, register


class ErosQuest(Title[EState]):
    """The Ero's Quest Decider (solo: one seat)."""

    name = "eros_quest"
    display_name = "Ero's Quest"
    rules_version = "1"
    min_seats = 1
    max_seats = 1
    seats_label = "solo"
    options_type = ErosQuestOptions
    state_type = EState
    view_type = ErosQuestView
    command_types = COMMAND_TYPES
    event_types = EVENT_TYPES

    def check_options(self, options: ErosQuestOptions, seats: int) -> None:
        """Raises Rejection ``bad_options`` for an impossible practice start."""
        if options.practice is not None:
            rules.check_practice(options.practice)

    def initial_state(self, options: ErosQuestOptions, seats: int) -> EState:
        return rules.initial_state(options.practice is not None)

    def setup(self, options: ErosQuestOptions, seats: int, chance) -> list[Event]:
        return rules.setup(options.difficulty, chance, options.practice)

    def decide(self, state: EState, seat: int, command: Command, chance) -> list[Event]:
        return rules.decide(state, seat, command, chance)

    def evolve(self, state: EState, event: Event) -> EState:
        return rules.evolve(state, event)

    def view(self, state: EState, seat: int | None) -> ErosQuestView:
        return views.view(state, seat)

    def redact(self, event: Event, seat: int | None) -> Event | None:
        return views.redact(event, seat)

    def legal_commands(self, state: EState, seat: int) -> list[Command]:
        return rules.legal_commands(state, seat)

    def status(self, state: EState) -> Result | None:
        return rules.status(state)

    def to_move(self, state: EState) -> list[int]:
        return rules.to_move(state)

    default_move_text = "REST in a turn; after a look the first card; in Combat the smallest card absorbing the hit, the strongest attack, no support"

    def default_move(self, state: EState, seat: int) -> Command | None:
        """A timeout's move (rules.default_move)."""
        return rules.default_move(state, seat)


ErosQuest.bots = {"adventurer": bots.adventurer_bot, "random": bots.random_bot}
ErosQuest.best_bot = "adventurer"
EROS_QUEST = register(ErosQuest())
