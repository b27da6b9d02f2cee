"""Orion Duel: a 2-player connection game of hex tiles (rulebooks/orion-duel.txt).

Seats: exactly 2. Seat 0 plays Blue, seat 1 plays Orange. Content in ``content/``; rules in
``rules.py``; views and the text board in ``views.py``; bots in ``bots.py``.
Docs: docs/games/orion_duel.md.
"""

from __future__ import annotations

from schemas.base import Command, Event
from schemas.envelope import Result
from schemas.orion_duel import (
    ChooseStarter,
    GameDecided,
    OrionOptions,
    OrionView,
    PlaceTile,
    PlaceToken,
    PlayerBlocked,
    RolesAssigned,
    StarterChosen,
    TilePlaced,
    TokenPlaced,
    TokensPlaced,
)
from services.games.orion_duel import rules
from services.games.orion_duel.bots import BOTS
from services.games.orion_duel.rules import COLOUR_NAMES, OrionState
from services.games.orion_duel.views import render_board, view
from services.kernel import Rejection, Title, register

__all__ = ["ORION_DUEL", "OrionDuel", "render_board"]


class OrionDuel(Title[OrionState]):
    """The Orion Duel decider (see rules.py for the rules and rejection codes)."""

    name = "orion_duel"
    display_name = "Orion Duel"
    rules_version = "1"
    min_seats = 2
    max_seats = 2
    options_type = OrionOptions
    state_type = OrionState
    view_type = OrionView
    command_types = (PlaceToken, ChooseStarter, PlaceTile)
    undoable = (PlaceToken, ChooseStarter, PlaceTile)
    default_move_text = "places a legal tile (the first legal placement; in setup the first legal token)"
    event_types = (RolesAssigned, TokensPlaced, TokenPlaced, StarterChosen, TilePlaced, PlayerBlocked, GameDecided)
    bots = BOTS

    def check_options(self, options: OrionOptions, seats: int) -> None:
        """Raises Rejection ``bad_options`` for a seat option other than 0 or 1."""
        for name in ("galaxy_seat", "first_seat"):
            v = getattr(options, name)
            if v is not None and v not in (0, 1):
                raise Rejection("bad_options", f"{name} must be 0, 1 or absent.")

    def initial_state(self, options: OrionOptions, seats: int) -> OrionState:
        return rules.initial_state(options)

    def setup(self, options: OrionOptions, seats: int, chance) -> list[Event]:
        return rules.setup_events(options, chance)

    def decide(self, state: OrionState, seat: int, command: Command, chance) -> list[Event]:
        return rules.decide(state, seat, command)

    def evolve(self, state: OrionState, event: Event) -> OrionState:
        return rules.evolve(state, event)

    def view(self, state: OrionState, seat: int | None) -> OrionView:
        return view(state, seat)

    def legal_commands(self, state: OrionState, seat: int) -> list[Command]:
        return rules.legal_commands(state, seat)

    def status(self, state: OrionState) -> Result | None:
        if state.phase != "over" or state.winners is None:
            return None
        sc = list(state.scores)
        if state.reason == "score":
            summary = f"{COLOUR_NAMES[state.winners[0]]} wins {max(sc)} victory conditions to {min(sc)}."
        elif state.reason == "blocked":
            summary = f"{COLOUR_NAMES[1 - state.winners[0]]} cannot place a tile; {COLOUR_NAMES[state.winners[0]]} wins."
        elif state.reason == "tiebreak":
            summary = f"All tiles placed; {COLOUR_NAMES[state.winners[0]]} wins the tie-break {max(state.tiebreak)} to {min(state.tiebreak)}."
        else:
            summary = f"All tiles placed; draw (tie-break {state.tiebreak[0]} each)." if state.tiebreak else "Draw."
        return Result(winners=list(state.winners), scores=[float(x) for x in sc], summary=summary)

    def to_move(self, state: OrionState) -> list[int]:
        return [] if state.phase == "over" else [state.turn]


ORION_DUEL = register(OrionDuel())
