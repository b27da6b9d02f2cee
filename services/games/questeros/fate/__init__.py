"""The Fate Deck: the Questeros deck as a GM tool for role-playing games, registered as its own
title ``fate_deck`` (one GM seat, seat 0, and 1-32 player seats).

Why its own title (docs/games/fate_deck.md): it shares only the deck with the multi-player game;
its seats, commands and views differ and it has no winner. Modules: ``meanings`` (every card's
meaning), ``rules``, ``views``, ``bots``. Source: rulebooks/questeros.txt "Fate Deck
(Roleplaying Game Option)".
"""

from __future__ import annotations

from schemas.base import Command, Event
from schemas.envelope import Result
from schemas.fate_deck import COMMAND_TYPES, EVENT_TYPES, FateDeckOptions, FateDeckView
from services.games.questeros.fate import bots, rules, views
from services.games.questeros.fate.rules import FState
from services.kernel import Title, register


class FateDeck(Title[FState]):
    """The Fate Deck Decider (seat 0 the GM; any number of players up to 32)."""

    name = "fate_deck"
    display_name = "Fate Deck"
    rules_version = "1"
    min_seats = 2
    max_seats = 33
    seats_label = "GM + 1-32 players"
    options_type = FateDeckOptions
    state_type = FState
    view_type = FateDeckView
    command_types = COMMAND_TYPES
    event_types = EVENT_TYPES
    off_turn = COMMAND_TYPES
    """A session has no turns, only the GM's role: every command reaches the rules, which judge
    who may send it (``gm_only``; a player hands in cards at any time, F7)."""

    def initial_state(self, options: FateDeckOptions, seats: int) -> FState:
        return rules.initial_state(seats)

    def setup(self, options: FateDeckOptions, seats: int, chance) -> list[Event]:
        return rules.setup(seats, chance)

    def decide(self, state: FState, seat: int, command: Command, chance) -> list[Event]:
        return rules.decide(state, seat, command, chance)

    def evolve(self, state: FState, event: Event) -> FState:
        return rules.evolve(state, event)

    def view(self, state: FState, seat: int | None) -> FateDeckView:
        return views.view(state, seat)

    def redact(self, event: Event, seat: int | None) -> Event | None:
        return views.redact(event, seat)

    def legal_commands(self, state: FState, seat: int) -> list[Command]:
        return rules.legal_commands(state, seat)

    def status(self, state: FState) -> Result | None:
        return rules.status(state)

    def to_move(self, state: FState) -> list[int]:
        return rules.to_move(state)

    default_move_text = "none: a session waits for its GM, and a timeout plays nothing"

    def default_move(self, state: FState, seat: int) -> Command | None:
        """A timeout plays nothing: only the GM decides what happens in a session (F7)."""
        return None

    def forfeit_winners(self, state: FState | None, seat: int, seats: int) -> list[int]:
        """A session has no winner, also when a seat abandons it."""
        return []


FateDeck.bots = {"storyteller": bots.storyteller_bot, "random": bots.random_bot}
FateDeck.best_bot = "storyteller"
FATE_DECK = register(FateDeck())
