"""Wire contract of Orion Duel: options, commands, events and the view.

Seats: exactly 2. Seat 0 plays Blue, seat 1 plays Orange (colour index = seat index).
Cells are axial coordinates ``[q, r]`` (docs/games/orion_duel.md "Geometry").
Tags: commands ``orion_duel.<verb>``, events ``orion_duel.<past_tense>``; never renamed.
Source: rulebooks/orion-duel.txt and RULINGS.md "Orion Duel".
"""

from __future__ import annotations

from typing import Literal

import msgspec

from schemas.base import Command, Event, Options, Record

Cell = tuple[int, int]
"""An axial cell ``(q, r)``; on the wire a 2-item array ``[q, r]``."""

SetupMode = Literal["random", "manual", "symmetric_1", "symmetric_2"]
Phase = Literal["galaxies", "black_holes", "choose_starter", "play", "over"]


class OrionOptions(Options):
    """Game options of Orion Duel (defaults for every field)."""

    setup: SetupMode = "random"
    """How the 15 tokens are placed: ``random`` (drawn by the server from chance), ``manual``
    (rulebook page 2: the galaxy player places 8 galaxies, the other 7 black holes, the galaxy
    player picks who starts), or a preset symmetric setup (rulebook page 2)."""
    galaxy_seat: int | None = None
    """Manual setup only: the seat placing the galaxies. None: a coin from chance decides."""
    first_seat: int | None = None
    """Non-manual setups only: the seat placing the first tile. None: a coin from chance decides."""
    match_games: int = 1
    """A match of N games (1-9; rulebook page 2: "When playing multiple games, for example best
    out of 5 games, the placement of GALAXY tokens & BLACK HOLE tokens alternate and thus the
    decision of the starting player"). The roles alternate every game; the match ends when a
    seat can no longer be caught; its result is the series. 1: a single game."""


# ---------------------------------------------------------------------------------------------
# Commands


class PlaceToken(Command, tag="orion_duel.place_token"):
    """Manual setup: place the next galaxy (galaxy player) or black hole (other player) on ``cell``."""

    cell: Cell


class ChooseStarter(Command, tag="orion_duel.choose_starter"):
    """Manual setup: the galaxy player names the seat that places the first tile."""

    seat: int


class PlaceTile(Command, tag="orion_duel.place_tile"):
    """Place one of your tiles: its first hex goes on ``anchor``; the shape is mirrored first
    (``mirror``: reflect q <-> r) and then turned ``rotation`` x 60 degrees clockwise (0-5)."""

    tile: str
    anchor: Cell
    rotation: int = 0
    mirror: bool = False


# ---------------------------------------------------------------------------------------------
# Events


class RolesAssigned(Event, tag="orion_duel.roles_assigned"):
    """Manual setup began: ``galaxy_seat`` places the galaxies (``by_chance``: drawn by a coin)."""

    galaxy_seat: int
    by_chance: bool


class TokensPlaced(Event, tag="orion_duel.tokens_placed"):
    """A non-manual setup placed all tokens at once (``mode``: random or a preset name)."""

    mode: str
    galaxies: list[Cell]
    black_holes: list[Cell]
    draws: list[int] = []
    """Random setup: the chance draws (indices into the candidate lists) that produced it."""


class TokenPlaced(Event, tag="orion_duel.token_placed"):
    """Manual setup: ``seat`` placed a ``galaxy`` or ``black_hole`` token on ``cell``."""

    seat: int
    kind: Literal["galaxy", "black_hole"]
    cell: Cell


class StarterChosen(Event, tag="orion_duel.starter_chosen"):
    """``seat`` places the first tile. ``chooser``: the galaxy player's seat, or None for a coin."""

    seat: int
    chooser: int | None = None


class TilePlaced(Event, tag="orion_duel.tile_placed"):
    """``seat`` placed ``tile``; ``hexes``: ``[q, r, colour]`` per hex (colour 0 Blue, 1 Orange);
    ``scores``: victory conditions met per seat after the placement (0-3 each)."""

    seat: int
    tile: str
    anchor: Cell
    rotation: int
    mirror: bool
    hexes: list[tuple[int, int, int]]
    scores: list[int]


class PlayerBlocked(Event, tag="orion_duel.player_blocked"):
    """``seat`` had to move and could place none of its tiles: it loses (rulebook page 4)."""

    seat: int


class NextGame(Event, tag="orion_duel.next_game"):
    """A match continues: game ``game`` (1-based) begins on an empty board; ``wins``: games won
    per seat so far. The new game's setup events follow in the same command."""

    game: int
    wins: list[int]


class MatchDecided(Event, tag="orion_duel.match_decided"):
    """The match is over: ``winners`` of the series ([] for a drawn match), ``wins`` per seat."""

    winners: list[int]
    wins: list[int]
    games: int


class GameDecided(Event, tag="orion_duel.game_decided"):
    """The game ended. ``reason``: ``score``, ``blocked``, ``tiebreak`` or ``draw``;
    ``tiebreak``: galaxies minus black holes on each seat's colour (end of tiles only)."""

    winners: list[int]
    reason: str
    scores: list[int]
    tiebreak: list[int] = []


# ---------------------------------------------------------------------------------------------
# View


class MatchGame(Record):
    """One finished game of a match: its number, winners ([] a draw), reason, final scores, and
    who had the galaxy role (manual setup) and who placed the first tile."""

    game: int
    winners: list[int]
    reason: str
    scores: list[int]
    galaxy_seat: int | None
    starter: int | None


class TilePlacements(Record):
    """The legal placements of one tile in one orientation (compact ``view.placements``).

    Expand each anchor ``[q, r]`` to ``PlaceTile(tile, anchor=[q, r], rotation, mirror)``;
    ``hexes`` is the tile's shape in this orientation, ``[dq, dr, colour]`` relative to the
    anchor (colour 0 Blue, 1 Orange; add the anchor to get the board cells).
    """

    tile: str
    rotation: int
    mirror: bool
    hexes: list[list[int]]
    anchors: list[list[int]]


class OrionView(Record):
    """Everything public (Orion Duel has no hidden information); the same for every seat, except
    the seat whose turn it is also gets its legal commands (``legal`` in the setup phases,
    ``placements`` in play; spectators and the waiting seat get neither)."""

    phase: Phase
    turn: int | None
    """Seat whose input the game waits for; None once over."""
    galaxy_seat: int | None
    starter: int | None
    galaxies: list[list[int]]
    """Galaxy cells ``[q, r]``."""
    black_holes: list[list[int]]
    """Black hole cells ``[q, r]``."""
    hexes: list[list[int]]
    """Placed hexes ``[q, r, colour]`` (colour 0 Blue, 1 Orange), in placement order."""
    used: list[list[str]]
    """Tile ids already placed, per seat."""
    remaining: list[list[str]]
    """Tile ids still in hand, per seat."""
    scores: list[int]
    conditions: list[list[str]] = []
    """Victory conditions met per seat: ``link`` (opposite sides), ``galaxies`` (4 on one own
    group), ``black_holes`` (3 on one group of the opponent's colour)."""
    winners: list[int] | None = None
    reason: str = ""
    tiebreak: list[int] = []
    match_games: int = 1
    """Games in the match (1: a single game)."""
    game_no: int = 1
    """The game being played (1-based)."""
    match_wins: list[int] = msgspec.field(default_factory=lambda: [0, 0])
    """Games won per seat in this match so far."""
    match_history: list[MatchGame] = []
    """The match's finished games, in order."""
    match_winners: list[int] | None = None
    """Once the match is over: the series winners ([] for a drawn match)."""
    legal: list[PlaceToken | ChooseStarter] = []
    """The seat to move's legal commands in the manual setup (token cells, starter choice)."""
    placements: list[TilePlacements] = []
    """The seat to move's legal tile placements in play, by tile and orientation (identical
    tiles offered once, by the first unused id; orientations covering the same coloured cells
    once): every anchor expands to one ``orion_duel.place_tile`` command."""
