"""Board geometry and tile orientations of Orion Duel, built once from the content files.

Axial coordinates ``(q, r)``, pointy-top hexes, r grows downwards; neighbours
``(+1,0) (+1,-1) (0,-1) (-1,0) (-1,+1) (0,+1)``. 85 cells (radius 5 minus the six corners),
24 rim cells in six sides of four, three opposite pairs (RULINGS.md "Orion Duel", Geometry).

A tile orientation (ruling, this title): mirror first (``(q, r) -> (r, q)``), then turn
``rotation`` x 60 degrees clockwise (``(q, r) -> (-r, q + r)`` per step); the tile's first hex
(offset ``(0, 0)``) lands on the anchor cell.
"""

from __future__ import annotations

from services.games.orion_duel.content import (
    NEIGHBOURS,
    Board,
    Preset,
    TileSpec,
    load_board,
    load_presets,
    load_tiles,
)

Cell = tuple[int, int]

BOARD: Board = load_board()
TILES: tuple[TileSpec, ...] = load_tiles()
PRESETS: dict[str, Preset] = load_presets(BOARD)

CELLS: frozenset[Cell] = BOARD.cells
CELL_LIST: tuple[Cell, ...] = tuple(sorted(CELLS, key=lambda c: (c[1], c[0])))
"""Every cell, row by row (r, then q)."""
TILE_BY_ID: dict[str, TileSpec] = {t.id: t for t in TILES}
TILE_IDS: tuple[str, ...] = tuple(t.id for t in TILES)
SIDE_NAMES: tuple[str, ...] = tuple(s.name for s in BOARD.sides)
SIDE_MASK: dict[Cell, int] = {}
"""Rim cell -> bit mask of the side(s) it belongs to (bit i = ``BOARD.sides[i]``)."""
for _i, _s in enumerate(BOARD.sides):
    for _c in _s.cells:
        SIDE_MASK[_c] = SIDE_MASK.get(_c, 0) | (1 << _i)
OPPOSITE_PAIRS: tuple[tuple[int, int], ...] = tuple(
    (i, SIDE_NAMES.index(s.opposite)) for i, s in enumerate(BOARD.sides) if i < SIDE_NAMES.index(s.opposite)
)
"""Index pairs of opposite sides, e.g. ``(0, 1)`` for Monoceros <-> Taurus."""
PAIR_MASKS: tuple[int, ...] = tuple((1 << a) | (1 << b) for a, b in OPPOSITE_PAIRS)
NEIGHBOURS_OF: dict[Cell, tuple[Cell, ...]] = {
    c: tuple(n for n in ((c[0] + dq, c[1] + dr) for dq, dr in NEIGHBOURS) if n in CELLS) for c in CELLS
}


def distance(a: Cell, b: Cell) -> int:
    """Hex distance between two axial cells (number of steps)."""
    dq, dr = a[0] - b[0], a[1] - b[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def is_rim(c: Cell) -> bool:
    """True for the 24 cells of the outer ring (distance 5 from the centre)."""
    return c in CELLS and distance(c, (0, 0)) == BOARD.radius


def orient(hexes: tuple[tuple[int, int, bool], ...], rotation: int, mirror: bool) -> tuple[tuple[int, int, bool], ...]:
    """The tile's hexes ``(dq, dr, own)`` mirrored (if ``mirror``), then turned ``rotation`` x 60 deg clockwise."""
    out = []
    for q, r, own in hexes:
        if mirror:
            q, r = r, q
        for _ in range(rotation % 6):
            q, r = -r, q + r
        out.append((q, r, own))
    return tuple(out)


def _normal(hexes: tuple[tuple[int, int, bool], ...]) -> frozenset[tuple[int, int, bool]]:
    mq = min(h[0] for h in hexes)
    mr = min(h[1] for h in hexes if h[0] == mq)
    return frozenset((q - mq, r - mr, own) for q, r, own in hexes)


def distinct_orientations(tile: TileSpec) -> tuple[tuple[int, bool, tuple[tuple[int, int, bool], ...]], ...]:
    """``(rotation, mirror, hexes)`` for each distinct coloured shape of ``tile`` (first found kept)."""
    seen: set[frozenset] = set()
    out = []
    for mirror in (False, True):
        for rot in range(6):
            hs = orient(tile.hexes, rot, mirror)
            key = _normal(hs)
            if key not in seen:
                seen.add(key)
                out.append((rot, mirror, hs))
    return tuple(out)


ORIENTATIONS: dict[str, tuple[tuple[int, bool, tuple[tuple[int, int, bool], ...]], ...]] = {
    t.id: distinct_orientations(t) for t in TILES
}

Placement = tuple[int, bool, Cell, tuple[tuple[int, int, bool], ...]]
"""``(rotation, mirror, anchor, ((q, r, own), ...))``: one tile orientation at one anchor, on the board."""

PLACEMENTS: dict[str, tuple[Placement, ...]] = {}
"""Tile id -> every distinct placement that fits on the empty board (precomputed once)."""
for _t in TILES:
    _ps: list[Placement] = []
    for _rot, _mir, _hs in ORIENTATIONS[_t.id]:
        for _a in CELL_LIST:
            _abs = tuple((_a[0] + q, _a[1] + r, own) for q, r, own in _hs)
            if all((q, r) in CELLS for q, r, _own in _abs):
                _ps.append((_rot, _mir, _a, _abs))
    PLACEMENTS[_t.id] = tuple(_ps)
