"""Chat grammar of Orion Duel: ``place triangle at 2,-1 rot 3 [mirror]``, ``token at 0,4``, ``starter 1``."""

from __future__ import annotations

from typing import Any

from schemas.base import Command
from schemas.orion_duel import ChooseStarter, PlaceTile, PlaceToken
from services.frontends.chat.common import ChatError, cell, integer

HELP = """Orion Duel (seat 0 Blue, seat 1 Orange; cells are q,r):
  place TILE at Q,R [rot N] [mirror]   TILE: an id (triangle_2) or a kind (single, pair, pair_mixed,
                                       line, bent, triangle: the first one you have left); rot 0-5
  token at Q,R                         manual setup: your next galaxy / black hole
  starter SEAT                         manual setup: who places the first tile
  board                                the board as text"""

KINDS = ("single", "pair_mixed", "pair", "line", "bent", "triangle")


def parse(words: list[str], view: dict | None, seat: int | None) -> Command:
    """An Orion Duel command from the words of a chat line. Raises ChatError."""
    head, rest = words[0], words[1:]
    if head == "place":
        if len(rest) < 3 or rest[1] != "at":
            raise ChatError("Write `place TILE at Q,R [rot N] [mirror]`, e.g. `place triangle at 2,-1 rot 3`.")
        tile = _tile(rest[0], view, seat)
        anchor = cell(rest[2])
        rot, mirror, i = 0, False, 3
        while i < len(rest):
            if rest[i] in ("rot", "rotation") and i + 1 < len(rest):
                rot = integer(rest[i + 1], "A rotation", 0, 5)
                i += 2
            elif rest[i] in ("mirror", "mirrored", "flip"):
                mirror = True
                i += 1
            else:
                raise ChatError(f"Unexpected {rest[i]!r}: after the cell come `rot N` and `mirror`.")
        return PlaceTile(tile=tile, anchor=anchor, rotation=rot, mirror=mirror)
    if head in ("token", "galaxy", "hole", "blackhole"):
        if len(rest) != 2 or rest[0] != "at":
            raise ChatError("Write `token at Q,R`, e.g. `token at 0,4`.")
        return PlaceToken(cell=cell(rest[1]))
    if head == "starter":
        if len(rest) != 1:
            raise ChatError("Write `starter SEAT` (0 Blue, 1 Orange).")
        return ChooseStarter(seat=integer(rest[0], "A seat", 0, 1))
    raise ChatError(f"Unknown word {head!r} for Orion Duel: try place, token, starter or help.")


def _tile(word: str, view: dict | None, seat: int | None) -> str:
    if word in KINDS:
        left = view["remaining"][seat] if view and seat is not None else []
        for t in left:
            if t == word or t.rsplit("_", 1)[0] == word:
                return t
        raise ChatError(f"You have no {word} tile left." if view else f"Name the tile exactly, e.g. {word}_1.")
    base = word.rsplit("_", 1)[0]
    if word == "single" or word == "pair" or (base in KINDS and word[-1] in "123"):
        return word
    raise ChatError(f"No tile {word!r}: tiles are single, pair, pair_mixed_1..3, line_1..3, bent_1..3, triangle_1..3.")


def format(cmd: Command) -> str:
    """The chat line of an Orion Duel command."""
    if isinstance(cmd, PlaceTile):
        q, r = cmd.anchor
        return f"place {cmd.tile} at {q},{r} rot {cmd.rotation}" + (" mirror" if cmd.mirror else "")
    if isinstance(cmd, PlaceToken):
        return f"token at {cmd.cell[0]},{cmd.cell[1]}"
    if isinstance(cmd, ChooseStarter):
        return f"starter {cmd.seat}"
    raise ChatError(f"Not an Orion Duel command: {cmd!r}")


def render_view(v: dict, seat: int | None, names: list[str]) -> str:
    """Phase, scores, tiles left (the board itself with the ``board`` word)."""
    left = " | ".join(f"{names[s]} ({'Blue' if s == 0 else 'Orange'}): {len(v['remaining'][s])} tiles, "
                      f"score {v['scores'][s]} {'/'.join(v['conditions'][s]) if v.get('conditions') else ''}".rstrip()
                      for s in (0, 1))
    mine = f"\nyour tiles: {' '.join(v['remaining'][seat])}" if seat is not None else ""
    return f"{v['phase']}; {left}{mine}"


def render_board(v: dict) -> str:
    """The board as monospace text (the title's own renderer)."""
    from types import SimpleNamespace

    from services.games.orion_duel.views import render_board as draw

    return draw(SimpleNamespace(hexes=v["hexes"], galaxies=v["galaxies"], black_holes=v["black_holes"]))


def render_event(b: dict, who: Any) -> str:
    """One Orion Duel event as a short sentence."""
    t = b["type"].removeprefix("orion_duel.")
    if t == "tile_placed":
        q, r = b["anchor"]
        return f"{who(b['seat'])} places {b['tile']} at {q},{r} rot {b['rotation']}{' mirrored' if b['mirror'] else ''}; scores {b['scores'][0]}-{b['scores'][1]}"
    if t == "tokens_placed":
        return f"tokens placed ({b['mode']}): {len(b['galaxies'])} galaxies, {len(b['black_holes'])} black holes"
    if t == "token_placed":
        return f"{who(b['seat'])} places a {b['kind'].replace('_', ' ')} at {b['cell'][0]},{b['cell'][1]}"
    if t == "starter_chosen":
        return f"{who(b['seat'])} places the first tile"
    if t == "roles_assigned":
        return f"{who(b['galaxy_seat'])} places the galaxies"
    if t == "player_blocked":
        return f"{who(b['seat'])} cannot place a tile"
    if t == "game_decided":
        return f"decided ({b['reason']}): winners {', '.join(who(w) for w in b['winners']) or 'none'}"
    return t.replace("_", " ")
