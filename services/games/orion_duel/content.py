"""Content of Orion Duel: the playmat, the tile set and the preset setups, loaded from TOML.

Files in ``content/`` (every entry carries ``source``: rulebook section, ruling or house):

- ``board.toml``: ``radius``, ``corners`` (cells removed), six ``side`` entries (``name``,
  four rim ``cells``, ``opposite`` side name).
- ``tiles.toml``: 14 ``tile`` entries (``id``, ``kind``, ``hexes`` = ``[dq, dr, own|other]``
  with the first hex at ``(0, 0)``, connected).
- ``setups.toml``: preset ``setup`` entries (``name``, 8 ``galaxies``, 7 ``black_holes``).

Loaded and validated once at import; a bad file raises :class:`services.kernel.ContentError`
naming the file and the field. Spacing of the presets is checked by the tests, not here.
Source: RULINGS.md "Orion Duel" and "Content packs".
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.kernel import ContentError

CONTENT_DIR = Path(__file__).resolve().parent / "content"
NEIGHBOURS: tuple[tuple[int, int], ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
"""Axial directions, clockwise starting east (pointy-top hexes, r grows downwards)."""


@dataclass(frozen=True)
class Side:
    name: str
    cells: tuple[tuple[int, int], ...]
    opposite: str


@dataclass(frozen=True)
class Board:
    radius: int
    cells: frozenset[tuple[int, int]]
    sides: tuple[Side, ...]


@dataclass(frozen=True)
class TileSpec:
    id: str
    kind: str
    hexes: tuple[tuple[int, int, bool], ...]
    """``(dq, dr, own)`` per hex; ``own`` True for the owner's colour."""


@dataclass(frozen=True)
class Preset:
    name: str
    galaxies: tuple[tuple[int, int], ...]
    black_holes: tuple[tuple[int, int], ...]


def _read(name: str, directory: Path) -> dict[str, Any]:
    path = directory / name
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ContentError(f"{name}: cannot read: {exc}") from None


def _need(file: str, where: str, entry: dict, key: str, typ: type | tuple[type, ...]) -> Any:
    if key not in entry:
        raise ContentError(f"{file}: {where}.{key}: missing")
    val = entry[key]
    if not isinstance(val, typ) or isinstance(val, bool) and typ is int:
        raise ContentError(f"{file}: {where}.{key}: expected {getattr(typ, '__name__', typ)}, got {val!r}")
    return val


def _cell(file: str, where: str, val: Any) -> tuple[int, int]:
    if not (isinstance(val, list) and len(val) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in val)):
        raise ContentError(f"{file}: {where}: expected a cell [q, r], got {val!r}")
    return (val[0], val[1])


def _source(file: str, where: str, entry: dict) -> None:
    src = _need(file, where, entry, "source", str)
    if src.split(":")[0].strip() not in ("rulebook", "ruling", "house"):
        raise ContentError(f"{file}: {where}.source: must start with rulebook, ruling or house, got {src!r}")


def load_board(directory: Path = CONTENT_DIR) -> Board:
    """Load ``board.toml``. Raises ContentError (file and field) on any defect."""
    f = "board.toml"
    doc = _read(f, directory)
    _source(f, "board", doc)
    radius = _need(f, "board", doc, "radius", int)
    if radius < 1:
        raise ContentError(f"{f}: radius: must be >= 1")
    corners = {_cell(f, f"corners[{i}]", c) for i, c in enumerate(_need(f, "board", doc, "corners", list))}
    cells = frozenset(
        (q, r) for q in range(-radius, radius + 1) for r in range(-radius, radius + 1)
        if max(abs(q), abs(r), abs(q + r)) <= radius and (q, r) not in corners
    )
    sides: list[Side] = []
    raw = _need(f, "board", doc, "side", list)
    for i, s in enumerate(raw):
        w = f"side[{i}]"
        _source(f, w, s)
        name = _need(f, w, s, "name", str)
        cs = tuple(_cell(f, f"{w}.cells[{j}]", c) for j, c in enumerate(_need(f, w, s, "cells", list)))
        for j, c in enumerate(cs):
            if c not in cells or max(abs(c[0]), abs(c[1]), abs(c[0] + c[1])) != radius:
                raise ContentError(f"{f}: {w}.cells[{j}]: {list(c)} is not a rim cell of the board")
        sides.append(Side(name=name, cells=cs, opposite=_need(f, w, s, "opposite", str)))
    names = [s.name for s in sides]
    for i, s in enumerate(sides):
        if s.opposite not in names or s.opposite == s.name:
            raise ContentError(f"{f}: side[{i}].opposite: {s.opposite!r} is not another side")
        if sides[names.index(s.opposite)].opposite != s.name:
            raise ContentError(f"{f}: side[{i}].opposite: {s.opposite!r} does not name {s.name!r} back")
    return Board(radius=radius, cells=cells, sides=tuple(sides))


def load_tiles(directory: Path = CONTENT_DIR) -> tuple[TileSpec, ...]:
    """Load ``tiles.toml``. Raises ContentError (file and field) on any defect."""
    f = "tiles.toml"
    doc = _read(f, directory)
    out: list[TileSpec] = []
    seen: set[str] = set()
    for i, t in enumerate(_need(f, "tiles", doc, "tile", list)):
        w = f"tile[{i}]"
        _source(f, w, t)
        tid = _need(f, w, t, "id", str)
        if tid in seen:
            raise ContentError(f"{f}: {w}.id: duplicate id {tid!r}")
        seen.add(tid)
        hexes: list[tuple[int, int, bool]] = []
        for j, h in enumerate(_need(f, w, t, "hexes", list)):
            if not (isinstance(h, list) and len(h) == 3 and h[2] in ("own", "other")):
                raise ContentError(f"{f}: {w}.hexes[{j}]: expected [dq, dr, own|other], got {h!r}")
            dq, dr = _cell(f, f"{w}.hexes[{j}]", h[:2])
            hexes.append((dq, dr, h[2] == "own"))
        if not hexes or hexes[0][:2] != (0, 0):
            raise ContentError(f"{f}: {w}.hexes: the first hex must be at [0, 0]")
        pos = {(h[0], h[1]) for h in hexes}
        if len(pos) != len(hexes):
            raise ContentError(f"{f}: {w}.hexes: two hexes on one cell")
        reach, todo = {(0, 0)}, [(0, 0)]
        while todo:
            q, r = todo.pop()
            for dq, dr in NEIGHBOURS:
                n = (q + dq, r + dr)
                if n in pos and n not in reach:
                    reach.add(n)
                    todo.append(n)
        if reach != pos:
            raise ContentError(f"{f}: {w}.hexes: the hexes are not connected")
        out.append(TileSpec(id=tid, kind=_need(f, w, t, "kind", str), hexes=tuple(hexes)))
    return tuple(out)


def load_presets(board: Board, directory: Path = CONTENT_DIR) -> dict[str, Preset]:
    """Load ``setups.toml`` (8 galaxies, 7 black holes, all on the board, all distinct)."""
    f = "setups.toml"
    doc = _read(f, directory)
    out: dict[str, Preset] = {}
    for i, s in enumerate(_need(f, "setups", doc, "setup", list)):
        w = f"setup[{i}]"
        _source(f, w, s)
        name = _need(f, w, s, "name", str)
        g = tuple(_cell(f, f"{w}.galaxies[{j}]", c) for j, c in enumerate(_need(f, w, s, "galaxies", list)))
        b = tuple(_cell(f, f"{w}.black_holes[{j}]", c) for j, c in enumerate(_need(f, w, s, "black_holes", list)))
        if len(g) != 8:
            raise ContentError(f"{f}: {w}.galaxies: expected 8 cells, got {len(g)}")
        if len(b) != 7:
            raise ContentError(f"{f}: {w}.black_holes: expected 7 cells, got {len(b)}")
        for field, cs in (("galaxies", g), ("black_holes", b)):
            for j, c in enumerate(cs):
                if c not in board.cells:
                    raise ContentError(f"{f}: {w}.{field}[{j}]: {list(c)} is off the board")
        if len(set(g) | set(b)) != 15:
            raise ContentError(f"{f}: {w}: two tokens on one cell")
        out[name] = Preset(name=name, galaxies=g, black_holes=b)
    return out
