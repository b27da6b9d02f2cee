"""Bots of Orion Duel: ``fn(view, seat, rng) -> Command``, seeing only the (public) view.

- ``random``: a uniformly random command among :func:`legal_commands` of the view.
- ``greedy``: one ply. Takes an immediate win; never makes a placement that loses at once if
  another exists; if the opponent has winning placements now, prefers the placement that
  occupies cells of the most of them (an overlap approximation of blocking); otherwise prefers
  placements that grow its own chains (size, galaxies, sides reached) and feed black holes to
  the opponent's colour. Setup commands are random (it picks itself to start).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from schemas.base import Command
from schemas.orion_duel import ChooseStarter, OrionView, PlaceTile
from services.games.orion_duel.geometry import NEIGHBOURS_OF, PAIR_MASKS, SIDE_MASK
from services.games.orion_duel.rules import conditions_of, legal_commands, placements


def random_bot(view: OrionView, seat: int, rng: random.Random) -> Command:
    """A random legal command. Raises IndexError if the seat has none (not its turn)."""
    return rng.choice(legal_commands(view, seat))


class _Analysis:
    """Single-colour groups of a position, for cheap evaluation of one placement."""

    def __init__(self, view: OrionView) -> None:
        self.occ = {(h[0], h[1]): h[2] for h in view.hexes}
        self.gal = {tuple(c) for c in view.galaxies}
        self.bh = {tuple(c) for c in view.black_holes}
        self.comp: dict[tuple[int, int], int] = {}
        self.stats: list[tuple[int, int, int, int, int]] = []  # colour, mask, galaxies, black holes, size
        for start, colour in self.occ.items():
            if start in self.comp:
                continue
            cid = len(self.stats)
            self.comp[start] = cid
            todo, mask, ng, nb, n = [start], 0, 0, 0, 0
            while todo:
                cur = todo.pop()
                n += 1
                mask |= SIDE_MASK.get(cur, 0)
                ng += cur in self.gal
                nb += cur in self.bh
                for nb_cell in NEIGHBOURS_OF[cur]:
                    if nb_cell not in self.comp and self.occ.get(nb_cell) == colour:
                        self.comp[nb_cell] = cid
                        todo.append(nb_cell)
            self.stats.append((colour, mask, ng, nb, n))
        gs = [s[:4] for s in self.stats]
        self.flags = (conditions_of(gs, 0), conditions_of(gs, 1))

    def merged(self, hexes: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int, int, int]]:
        """Groups touched by the new hexes after placing them (colour, mask, gal, bh, size)."""
        mine = {(q, r): c for q, r, c in hexes}
        parent: dict[object, object] = {}

        def find(x: object) -> object:
            while parent.setdefault(x, x) != x:
                x = parent[x]
            return x

        for cell, colour in mine.items():
            for n in NEIGHBOURS_OF[cell]:
                if mine.get(n) == colour:
                    parent[find(n)] = find(cell)
                elif self.occ.get(n) == colour:
                    parent[find(("c", self.comp[n]))] = find(cell)
            find(cell)
        acc: dict[object, list[int]] = {}
        done: set[int] = set()
        for key in list(parent):
            root = find(key)
            a = acc.setdefault(root, [-1, 0, 0, 0, 0])
            if isinstance(key, tuple) and key and key[0] == "c":
                if key[1] in done:
                    continue
                done.add(key[1])
                colour, mask, g, b, n = self.stats[key[1]]
            else:
                colour = mine[key]  # type: ignore[index]
                mask = SIDE_MASK.get(key, 0)  # type: ignore[arg-type]
                g, b, n = int(key in self.gal), int(key in self.bh), 1
            a[0] = colour
            a[1] |= mask
            a[2] += g
            a[3] += b
            a[4] += n
        return [tuple(a) for a in acc.values()]  # type: ignore[misc]

    def scores_after(self, merged: list[tuple[int, int, int, int, int]]) -> tuple[int, int]:
        gs = [m[:4] for m in merged]
        out = []
        for seat in (0, 1):
            new = conditions_of(gs, seat)
            out.append(sum(a or b for a, b in zip(self.flags[seat], new, strict=True)))
        return out[0], out[1]


def _growth(merged: list[tuple[int, int, int, int, int]], seat: int) -> float:
    v = 0.0
    for colour, mask, g, b, n in merged:
        sides = max(bin(mask & pm).count("1") for pm in PAIR_MASKS)
        if colour == seat:
            v += n + 4 * min(g, 4) + 3 * sides - 3 * b
        else:
            v += 3 * b - 3 * g - 2 * sides
    return v


def greedy_bot(view: OrionView, seat: int, rng: random.Random) -> Command:
    """One-ply greedy player (see the module docstring). Raises IndexError with no legal command."""
    if view.phase != "play":
        if view.phase == "choose_starter":
            return ChooseStarter(seat=seat)
        return random_bot(view, seat, rng)
    an = _Analysis(view)
    opp = 1 - seat
    threats = []
    for _t, _r, _m, _a, hs in placements(view, opp):
        sc = an.scores_after(an.merged(hs))
        if sc[opp] > sc[seat]:
            threats.append({(q, r) for q, r, _c in hs})
    best: tuple | None = None
    moves = list(placements(view, seat))
    rng.shuffle(moves)
    for t, rot, mir, a, hs in moves:
        merged = an.merged(hs)
        sc = an.scores_after(merged)
        if sc[seat] > sc[opp]:
            return PlaceTile(tile=t, anchor=a, rotation=rot, mirror=mir)
        cells = {(q, r) for q, r, _c in hs}
        safe = sc[opp] <= sc[seat]
        blocked = sum(1 for th in threats if th & cells)
        key = (safe, blocked, _growth(merged, seat))
        if best is None or key > best[0]:
            best = (key, PlaceTile(tile=t, anchor=a, rotation=rot, mirror=mir))
    if best is None:
        raise IndexError("no legal placement")
    return best[1]


BOTS = {"random": random_bot, "greedy": greedy_bot}
