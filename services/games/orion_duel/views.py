"""Views and the text rendering of Orion Duel (no hidden information: every seat sees all).

``render_board(state_or_view) -> str`` draws the 85-cell hex grid in monospace: each cell is
two characters, colour then token:

- colour: ``B`` Blue hex, ``O`` Orange hex, ``.`` no tile;
- token: ``*`` galaxy, ``@`` black hole, blank for none.

Rows are ``r = -5..5`` (labelled on the left), each row lists ``q`` from its first to its
last cell (labelled on the right); cell ``(q, r)`` starts at column ``4q + 2r + 20`` of the
grid, so that each row is shifted half a cell from the next, as on the playmat. Side names are printed under the grid.
"""

from __future__ import annotations

from typing import Any

from schemas.orion_duel import MatchGame, OrionView, PlaceTile, TilePlacements
from services.games.orion_duel.geometry import BOARD, CELLS, TILE_IDS
from services.games.orion_duel.rules import (
    OrionState,
    conditions_of,
    groups,
    legal_commands,
    placements,
)


def compact_placements(state: OrionState, seat: int) -> list[TilePlacements]:
    """The legal placements of ``seat`` grouped by tile and orientation, in the order
    :func:`~services.games.orion_duel.rules.placements` yields them; expanding every anchor
    gives exactly the ``place_tile`` commands of ``legal_commands`` (docs/games/orion_duel.md)."""
    out: dict[tuple[str, int, bool], TilePlacements] = {}
    for tile, rot, mir, (aq, ar), hexes in placements(state, seat):
        g = out.get((tile, rot, mir))
        if g is None:
            g = out[(tile, rot, mir)] = TilePlacements(tile=tile, rotation=rot, mirror=mir, anchors=[],
                                                       hexes=[[q - aq, r - ar, c] for q, r, c in hexes])
        g.anchors.append([aq, ar])
    return list(out.values())


def expand(groups_: list[TilePlacements]) -> list[PlaceTile]:
    """The ``place_tile`` commands of a view's ``placements`` (the inverse of :func:`compact_placements`)."""
    return [PlaceTile(tile=g.tile, anchor=(a[0], a[1]), rotation=g.rotation, mirror=g.mirror) for g in groups_ for a in g.anchors]


def view(state: OrionState, seat: int | None) -> OrionView:
    """The public view (identical for both seats and spectators), plus the legal commands of
    the seat to move in its own view (``legal`` in the setup, ``placements`` in play)."""
    over = state.phase == "over"
    mine = seat is not None and not over and state.turn == seat
    legal = legal_commands(state, seat) if mine and state.phase != "play" else []
    compact = compact_placements(state, seat) if mine and state.phase == "play" else []
    gs = groups(state.hexes, state.galaxies, state.black_holes)
    names = ("link", "galaxies", "black_holes")
    conds = [[n for n, ok in zip(names, conditions_of(gs, s), strict=True) if ok] for s in (0, 1)]
    return OrionView(
        phase=state.phase,  # type: ignore[arg-type]
        turn=None if over else state.turn,
        galaxy_seat=state.galaxy_seat,
        starter=state.starter,
        galaxies=[list(c) for c in state.galaxies],
        black_holes=[list(c) for c in state.black_holes],
        hexes=[list(h) for h in state.hexes],
        used=[list(u) for u in state.used],
        remaining=[[t for t in TILE_IDS if t not in u] for u in state.used],
        scores=list(state.scores),
        conditions=conds,
        winners=list(state.winners) if state.winners is not None else None,
        reason=state.reason,
        tiebreak=list(state.tiebreak),
        match_games=state.match_games,
        game_no=state.game_no,
        match_wins=list(state.match_wins),
        match_history=[MatchGame(game=g, winners=list(w), reason=r, scores=list(sc), galaxy_seat=gs, starter=st)
                       for g, w, r, sc, gs, st in state.match_history],
        match_winners=list(state.match_winners) if state.match_winners is not None else None,
        legal=legal,  # type: ignore[arg-type]
        placements=compact,
    )


def render_board(pos: Any) -> str:
    """Monospace drawing of the board of a state or a view (see the module docstring)."""
    occ = {(h[0], h[1]): h[2] for h in pos.hexes}
    gal = {tuple(c) for c in pos.galaxies}
    bh = {tuple(c) for c in pos.black_holes}
    R = BOARD.radius
    lines = []
    for r in range(-R, R + 1):
        qs = [q for q in range(-R, R + 1) if (q, r) in CELLS]
        chars = [" "] * (8 * R + 2)
        for q in qs:
            x = 4 * q + 2 * r + 4 * R
            chars[x] = "." if (q, r) not in occ else "BO"[occ[(q, r)]]
            chars[x + 1] = "*" if (q, r) in gal else "@" if (q, r) in bh else " "
        lines.append(f"r={r:+d}  " + "".join(chars) + f"  q={qs[0]:+d}..{qs[-1]:+d}")
    lines.append("")
    lines.append("B Blue  O Orange  . empty  * galaxy  @ black hole")
    lines.append("sides: " + "; ".join(f"{s.name} {' '.join(f'({q},{r})' for q, r in s.cells)}" for s in BOARD.sides))
    return "\n".join(lines)
