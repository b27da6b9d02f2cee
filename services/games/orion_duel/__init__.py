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
    MatchDecided,
    NextGame,
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
    event_types = (RolesAssigned, TokensPlaced, TokenPlaced, StarterChosen, TilePlaced, PlayerBlocked, GameDecided,
                   NextGame, MatchDecided)
    bots = BOTS
    best_bot = "greedy"

    def check_options(self, options: OrionOptions, seats: int) -> None:
        """Raises Rejection ``bad_options`` for a seat option other than 0 or 1, or a match
        length outside 1..9 (``rules.MAX_MATCH_GAMES``)."""
        for name in ("galaxy_seat", "first_seat"):
            v = getattr(options, name)
            if v is not None and v not in (0, 1):
                raise Rejection("bad_options", f"{name} must be 0, 1 or absent.")
        if not 1 <= options.match_games <= rules.MAX_MATCH_GAMES:
            raise Rejection("bad_options", f"match_games is 1 to {rules.MAX_MATCH_GAMES}.")

    def initial_state(self, options: OrionOptions, seats: int) -> OrionState:
        return rules.initial_state(options)

    def setup(self, options: OrionOptions, seats: int, chance) -> list[Event]:
        return rules.setup_events(options, chance)

    def decide(self, state: OrionState, seat: int, command: Command, chance) -> list[Event]:
        return rules.decide(state, seat, command, chance)

    def evolve(self, state: OrionState, event: Event) -> OrionState:
        return rules.evolve(state, event)

    def view(self, state: OrionState, seat: int | None) -> OrionView:
        return view(state, seat)

    def legal_commands(self, state: OrionState, seat: int) -> list[Command]:
        return rules.legal_commands(state, seat)

    def view_legal(self, view: OrionView, seat: int) -> list[Command]:
        """The seat's legal commands from its view (the rules work on a view: same field names).
        The view's ``legal`` list holds the manual setup's moves only; in play they are its
        ``placements``, one ``place_tile`` per anchor (rules.legal_commands expands them)."""
        return rules.legal_commands(view, seat)

    def status(self, state: OrionState) -> Result | None:
        """The result: of the game, or (option ``match_games`` > 1) of the series once decided."""
        if state.phase != "over" or state.winners is None:
            return None
        if state.match_games > 1:
            if state.match_winners is None:
                return None
            w = list(state.match_wins)
            who = (f"{COLOUR_NAMES[state.match_winners[0]]} wins the match" if state.match_winners
                   else "The match is drawn")
            return Result(winners=list(state.match_winners), scores=[float(x) for x in w],
                          summary=f"{who} {w[0]}-{w[1]} (Blue-Orange) after {len(state.match_history)} of "
                                  f"{state.match_games} games.")
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

    def lobby_note(self, state: OrionState) -> str:
        """One line for the lobby: the series so far of a match ("" for a single game)."""
        if state.match_games <= 1:
            return ""
        w = state.match_wins
        if state.match_winners is not None:
            head = f"{COLOUR_NAMES[state.match_winners[0]]} won the match" if state.match_winners else "Match drawn"
            return f"{head} {w[0]}-{w[1]} (best of {state.match_games})"
        return f"Game {state.game_no} of {state.match_games}: Blue {w[0]}, Orange {w[1]}"

    def to_move(self, state: OrionState) -> list[int]:
        return [] if state.phase == "over" else [state.turn]


ORION_DUEL = register(OrionDuel())
