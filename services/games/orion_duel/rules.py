"""Orion Duel rules: state, decide, evolve, victory, legal moves.

Seat 0 is Blue, seat 1 is Orange; a hex's colour is the index of the seat whose colour it is.
Phases: ``galaxies`` -> ``black_holes`` -> ``choose_starter`` (manual setup only) -> ``play``
-> ``over``. Rejection codes (stable): ``not_your_turn``, ``setup_not_done``, ``wrong_phase``,
``unknown_tile``, ``tile_already_used``, ``bad_rotation``, ``off_board``, ``cell_taken``,
``token_cover_without_chain``, ``galaxy_too_close``, ``black_hole_too_close``,
``black_hole_near_galaxy``, ``setup_dead_end``, ``bad_seat``, ``unknown_command``.
Matches (option ``match_games``): after a game is decided, ``next_game`` and the next game's
setup follow in the same command, with the roles swapped; ``match_decided`` ends the match.
Source: rulebooks/orion-duel.txt pages 2-4; RULINGS.md "Orion Duel".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from schemas.base import Command, Event, Record
from schemas.orion_duel import (
    ChooseStarter,
    GameDecided,
    MatchDecided,
    NextGame,
    OrionOptions,
    PlaceTile,
    PlaceToken,
    PlayerBlocked,
    RolesAssigned,
    StarterChosen,
    TilePlaced,
    TokenPlaced,
    TokensPlaced,
)
from services.games.orion_duel.geometry import (
    CELL_LIST,
    CELLS,
    NEIGHBOURS_OF,
    PAIR_MASKS,
    PLACEMENTS,
    PRESETS,
    SIDE_MASK,
    TILE_BY_ID,
    TILE_IDS,
    TILES,
    Cell,
    distance,
    orient,
)
from services.kernel import Rejection

BLUE, ORANGE = 0, 1
COLOUR_NAMES = ("Blue", "Orange")
GALAXIES, BLACK_HOLES = 8, 7
GALAXY_SPACING, BLACK_HOLE_SPACING, BLACK_HOLE_GALAXY_SPACING = 3, 3, 2
"""Minimum hex distances (ruling: RULINGS.md Orion Duel, Setup)."""


class OrionState(Record):
    """The whole (public) state. ``hexes``: placed ``(q, r, colour)`` in placement order."""

    setup: str = "random"
    phase: str = "galaxies"
    turn: int = 0
    """Seat whose input the game waits for (setup or play)."""
    galaxy_seat: int | None = None
    starter: int | None = None
    galaxies: tuple[Cell, ...] = ()
    black_holes: tuple[Cell, ...] = ()
    hexes: tuple[tuple[int, int, int], ...] = ()
    used: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    scores: tuple[int, int] = (0, 0)
    winners: tuple[int, ...] | None = None
    reason: str = ""
    tiebreak: tuple[int, ...] = ()
    match_games: int = 1
    game_no: int = 1
    match_wins: tuple[int, int] = (0, 0)
    match_history: tuple[tuple[int, tuple[int, ...], str, tuple[int, int], int | None, int | None], ...] = ()
    """Finished games: (game, winners, reason, scores, galaxy seat, starter)."""
    match_winners: tuple[int, ...] | None = None


MAX_MATCH_GAMES = 9
"""Bound of option ``match_games`` (a match is one game of the server: its events are bounded)."""


def initial_state(options: OrionOptions) -> OrionState:
    """The state before the setup events."""
    return OrionState(setup=options.setup, match_games=options.match_games)


# ---------------------------------------------------------------------------------------------
# Setup


def token_problem(galaxies: Sequence[Cell], black_holes: Sequence[Cell], kind: str, cell: Cell) -> tuple[str, str] | None:
    """Why ``cell`` cannot take the next ``kind`` token (code, sentence), or None if it can.

    Ruling (RULINGS.md Orion Duel, Setup): galaxies >= 3 apart, black holes >= 3 apart and
    >= 2 from every galaxy.
    """
    if cell not in CELLS:
        return "off_board", f"{list(cell)} is not a space of the board."
    if cell in galaxies or cell in black_holes:
        return "cell_taken", f"{list(cell)} already holds a token."
    if kind == "galaxy":
        if any(distance(cell, g) < GALAXY_SPACING for g in galaxies):
            return "galaxy_too_close", f"Galaxies must be at least {GALAXY_SPACING} spaces apart."
    else:
        if any(distance(cell, b) < BLACK_HOLE_SPACING for b in black_holes):
            return "black_hole_too_close", f"Black holes must be at least {BLACK_HOLE_SPACING} spaces apart."
        if any(distance(cell, g) < BLACK_HOLE_GALAXY_SPACING for g in galaxies):
            return "black_hole_near_galaxy", f"A black hole must be at least {BLACK_HOLE_GALAXY_SPACING} spaces from every galaxy."
    return None


def token_cells(galaxies: Sequence[Cell], black_holes: Sequence[Cell], kind: str) -> list[Cell]:
    """Every cell (row order) that may take the next ``kind`` token."""
    return [c for c in CELL_LIST if token_problem(galaxies, black_holes, kind, c) is None]


_BALL: dict[int, dict[Cell, frozenset[Cell]]] = {
    d: {c: frozenset(x for x in CELLS if distance(c, x) < d) for c in CELLS} for d in (2, 3)
}


def completable(galaxies: Sequence[Cell], black_holes: Sequence[Cell], budget: int = 5000) -> bool:
    """True if the remaining tokens (8 galaxies, 7 black holes in all) can still all be placed
    within the spacing rules after ``galaxies`` and ``black_holes``.

    Ruling (this title): a manual token placement that makes the setup impossible to complete
    is refused (``setup_dead_end``), so that neither player can be stuck in the setup. Bounded
    depth-first search over at most ``budget`` nodes; running out of budget counts as not
    completable (the player then chooses another cell).
    """
    taken = set(map(tuple, galaxies)) | set(map(tuple, black_holes))
    gc = set(CELLS) - taken
    bc = set(CELLS) - taken
    for g in galaxies:
        gc -= _BALL[GALAXY_SPACING][tuple(g)]
        bc -= _BALL[BLACK_HOLE_GALAXY_SPACING][tuple(g)]
    for b in black_holes:
        bc -= _BALL[BLACK_HOLE_SPACING][tuple(b)]
        gc.discard(tuple(b))
    nodes = [budget]

    def go(gc: set[Cell], bc: set[Cell], ng: int, nb: int) -> bool:
        nodes[0] -= 1
        if nodes[0] < 0:
            return False
        if ng:
            for c in sorted(gc):
                if go(gc - _BALL[GALAXY_SPACING][c], bc - _BALL[BLACK_HOLE_GALAXY_SPACING][c], ng - 1, nb):
                    return True
                if nodes[0] < 0:
                    return False
            return False
        if nb:
            if len(bc) < nb:
                return False
            for c in sorted(bc):
                if go(gc, bc - _BALL[BLACK_HOLE_SPACING][c], 0, nb - 1):
                    return True
                if nodes[0] < 0:
                    return False
            return False
        return True

    return go(gc, bc, GALAXIES - len(galaxies), BLACK_HOLES - len(black_holes))


def random_tokens(chance: Any) -> tuple[list[Cell], list[Cell], list[int]]:
    """A legal random token placement drawn from ``chance``: galaxies, black holes, the draws.

    Each token is drawn uniformly among the cells still legal for it; a dead end (no legal cell
    left) restarts the drawing (bounded: raises RuntimeError after 100 restarts, never seen).
    """
    draws: list[int] = []
    for _ in range(100):
        g: list[Cell] = []
        b: list[Cell] = []
        ok = True
        for kind, n, lst in (("galaxy", GALAXIES, g), ("black_hole", BLACK_HOLES, b)):
            for _i in range(n):
                cand = token_cells(g, b, kind)
                if not cand:
                    ok = False
                    break
                k = chance.randbelow(len(cand))
                draws.append(k)
                lst.append(cand[k])
            if not ok:
                break
        if ok:
            return g, b, draws
    raise RuntimeError("no legal random token placement found")  # pragma: no cover


def setup_events(options: OrionOptions, chance: Any) -> list[Event]:
    """Setup events. Manual: roles (galaxy seat from the option or a coin). Otherwise the tokens
    (random from chance, or a preset) and the starting seat (option ``first_seat`` or a coin)."""
    if options.setup == "manual":
        if options.galaxy_seat is not None:
            return [RolesAssigned(galaxy_seat=options.galaxy_seat, by_chance=False)]
        return [RolesAssigned(galaxy_seat=int(chance.coin()), by_chance=True)]
    if options.setup == "random":
        g, b, draws = random_tokens(chance)
        placed = TokensPlaced(mode="random", galaxies=g, black_holes=b, draws=draws)
    else:
        p = PRESETS[options.setup]
        placed = TokensPlaced(mode=p.name, galaxies=list(p.galaxies), black_holes=list(p.black_holes))
    if options.first_seat is not None:
        return [placed, StarterChosen(seat=options.first_seat)]
    return [placed, StarterChosen(seat=int(chance.coin()))]


# ---------------------------------------------------------------------------------------------
# Placement legality


def _occupied(hexes: Sequence[Sequence[int]]) -> dict[Cell, int]:
    return {(h[0], h[1]): h[2] for h in hexes}


def chained(new: Sequence[tuple[int, int, int]], cell: Cell, occ: dict[Cell, int]) -> bool:
    """True if the new hex on ``cell`` joins, by an unbroken chain of its colour (through the new
    tile's own hexes), a hex of that colour from an earlier tile (``occ``: cell -> colour).

    Source: rulebook page 4 (tiles placement on tokens); RULINGS.md Orion Duel.
    """
    mine = {(q, r): c for q, r, c in new}
    colour = mine[cell]
    group, todo = {cell}, [cell]
    while todo:
        cur = todo.pop()
        for n in NEIGHBOURS_OF[cur]:
            if occ.get(n) == colour:
                return True
            if mine.get(n) == colour and n not in group:
                group.add(n)
                todo.append(n)
    return False


def _colours(seat: int, hs: Sequence[tuple[int, int, bool]]) -> tuple[tuple[int, int, int], ...]:
    return tuple((q, r, seat if own else 1 - seat) for q, r, own in hs)


def placement_problem(pos: Any, seat: int, hexes: Sequence[tuple[int, int, int]]) -> tuple[str, str] | None:
    """Why these absolute coloured hexes cannot be placed on ``pos`` (code, sentence), or None.

    ``pos``: anything with ``hexes``, ``galaxies``, ``black_holes`` (a state or a view).
    """
    occ = _occupied(pos.hexes)
    tokens = {tuple(c) for c in pos.galaxies} | {tuple(c) for c in pos.black_holes}
    for q, r, _c in hexes:
        if (q, r) not in CELLS:
            return "off_board", f"[{q}, {r}] is not a space of the board."
    for q, r, _c in hexes:
        if (q, r) in occ:
            return "cell_taken", f"[{q}, {r}] already holds a tile; tiles never go on tiles."
    for q, r, _c in hexes:
        if (q, r) in tokens and not chained(hexes, (q, r), occ):
            return ("token_cover_without_chain",
                    f"The hex on the token at [{q}, {r}] must join an earlier tile's hex of its colour by an unbroken chain.")
    return None


def placements(pos: Any, seat: int, first: bool = False) -> Iterator[tuple[str, int, bool, Cell, tuple[tuple[int, int, int], ...]]]:
    """Every distinct legal placement of ``seat`` on ``pos``: ``(tile, rotation, mirror, anchor, hexes)``.

    Identical tiles (same ``kind``) are offered once, by the first unused id; orientations giving
    the same coloured cells are offered once. ``first``: stop after the first one.
    """
    occ = _occupied(pos.hexes)
    tokens = {tuple(c) for c in pos.galaxies} | {tuple(c) for c in pos.black_holes}
    used = set(pos.used[seat])
    kinds: set[str] = set()
    for t in TILES:
        if t.id in used or t.kind in kinds:
            continue
        kinds.add(t.kind)
        for rot, mir, anchor, hs in PLACEMENTS[t.id]:
            if any((q, r) in occ for q, r, _o in hs):
                continue
            coloured = _colours(seat, hs)
            if any((q, r) in tokens for q, r, _o in hs) and not all(
                chained(coloured, (q, r), occ) for q, r, _o in hs if (q, r) in tokens
            ):
                continue
            yield t.id, rot, mir, anchor, coloured
            if first:
                return


def can_place(pos: Any, seat: int) -> bool:
    """True if ``seat`` has at least one legal placement on ``pos``."""
    return next(placements(pos, seat, first=True), None) is not None


# ---------------------------------------------------------------------------------------------
# Victory


def groups(hexes: Sequence[Sequence[int]], galaxies: Sequence[Cell], black_holes: Sequence[Cell]) -> list[tuple[int, int, int, int]]:
    """Connected single-colour groups as ``(colour, side_mask, galaxies, black_holes)``."""
    occ = _occupied(hexes)
    gal = {tuple(c) for c in galaxies}
    bh = {tuple(c) for c in black_holes}
    seen: set[Cell] = set()
    out = []
    for start, colour in occ.items():
        if start in seen:
            continue
        seen.add(start)
        todo, mask, ng, nb = [start], 0, 0, 0
        while todo:
            cur = todo.pop()
            mask |= SIDE_MASK.get(cur, 0)
            ng += cur in gal
            nb += cur in bh
            for n in NEIGHBOURS_OF[cur]:
                if n not in seen and occ.get(n) == colour:
                    seen.add(n)
                    todo.append(n)
        out.append((colour, mask, ng, nb))
    return out


def conditions_of(gs: Sequence[tuple[int, int, int, int]], seat: int) -> tuple[bool, bool, bool]:
    """The three victory conditions of ``seat`` over groups ``gs`` (rulebook page 3):
    (1) own group touching both sides of an opposite pair, (2) own group with >= 4 galaxies,
    (3) opponent-colour group with >= 3 black holes."""
    link = any(c == seat and any(m & pm == pm for pm in PAIR_MASKS) for c, m, _g, _b in gs)
    gal = any(c == seat and g >= 4 for c, _m, g, _b in gs)
    bh = any(c != seat and b >= 3 for c, _m, _g, b in gs)
    return link, gal, bh


def scores(pos: Any) -> tuple[int, int]:
    """Victory conditions met per seat (each counted once: 0-3; ruling RULINGS.md Orion Duel)."""
    gs = groups(pos.hexes, pos.galaxies, pos.black_holes)
    return sum(conditions_of(gs, 0)), sum(conditions_of(gs, 1))


def tiebreak(pos: Any) -> tuple[int, int]:
    """Per seat: galaxies on its colour minus black holes on its colour (rulebook page 4)."""
    occ = _occupied(pos.hexes)
    out = []
    for seat in (0, 1):
        g = sum(1 for c in pos.galaxies if occ.get(tuple(c)) == seat)
        b = sum(1 for c in pos.black_holes if occ.get(tuple(c)) == seat)
        out.append(g - b)
    return out[0], out[1]


# ---------------------------------------------------------------------------------------------
# decide / evolve


def next_game_setup(state: OrionState, chance: Any) -> list[Event]:
    """The setup of the next game of a match: the roles of the game just decided, swapped.

    Manual setup: the other seat places the galaxies (and so chooses the starter); preset or
    random setups: the other seat places the first tile (ruling, docs/games/orion_duel.md M2).
    """
    if state.setup == "manual":
        prev = state.galaxy_seat if state.galaxy_seat is not None else 0
        return [RolesAssigned(galaxy_seat=1 - prev, by_chance=False)]
    if state.setup == "random":
        g, b, draws = random_tokens(chance)
        placed = TokensPlaced(mode="random", galaxies=g, black_holes=b, draws=draws)
    else:
        p = PRESETS[state.setup]
        placed = TokensPlaced(mode=p.name, galaxies=list(p.galaxies), black_holes=list(p.black_holes))
    prev = state.starter if state.starter is not None else 0
    return [placed, StarterChosen(seat=1 - prev)]


def match_events(state: OrionState, decided: GameDecided, chance: Any) -> list[Event]:
    """After ``decided`` ends a game of a match: ``match_decided``, or ``next_game`` and its setup.

    The match is over after its last game or as soon as the trailing seat cannot catch up
    (its deficit exceeds the games left); more game wins take the match, equal is a draw.
    """
    if state.match_games <= 1:
        return []
    wins = list(state.match_wins)
    for w in decided.winners:
        wins[w] += 1
    left = state.match_games - state.game_no
    if left <= 0 or abs(wins[0] - wins[1]) > left:
        winners = [] if wins[0] == wins[1] else [0 if wins[0] > wins[1] else 1]
        return [MatchDecided(winners=winners, wins=wins, games=state.game_no)]
    nxt = NextGame(game=state.game_no + 1, wins=wins)
    return [nxt, *next_game_setup(state, chance)]


def decide(state: OrionState, seat: int, cmd: Command, chance: Any = None) -> list[Event]:
    """Events for ``cmd`` by ``seat``. Raises Rejection (codes in the module docstring).

    ``chance`` draws the next game's random setup of a match (unused otherwise).
    """
    if isinstance(cmd, PlaceTile):
        events = _place_tile(state, seat, cmd)
        decided = next((e for e in events if isinstance(e, GameDecided)), None)
        return events + match_events(state, decided, chance) if decided is not None else events
    if isinstance(cmd, PlaceToken):
        if state.phase not in ("galaxies", "black_holes"):
            raise Rejection("wrong_phase", "Tokens are placed only during a manual setup.")
        if seat != state.turn:
            raise Rejection("not_your_turn", f"Seat {state.turn} places the tokens now.")
        kind = "galaxy" if state.phase == "galaxies" else "black_hole"
        cell = (cmd.cell[0], cmd.cell[1])
        why = token_problem(state.galaxies, state.black_holes, kind, cell)
        if why:
            raise Rejection(*why)
        g = (*state.galaxies, cell) if kind == "galaxy" else state.galaxies
        b = (*state.black_holes, cell) if kind == "black_hole" else state.black_holes
        if not completable(g, b):
            raise Rejection("setup_dead_end", "After this token the remaining tokens could not all be placed within the spacing rules.")
        return [TokenPlaced(seat=seat, kind=kind, cell=cell)]
    if isinstance(cmd, ChooseStarter):
        if state.phase != "choose_starter":
            raise Rejection("wrong_phase", "The starting seat is chosen after the tokens are placed in a manual setup.")
        if seat != state.galaxy_seat:
            raise Rejection("not_your_turn", "The galaxy player chooses who starts.")
        if cmd.seat not in (0, 1):
            raise Rejection("bad_seat", "The starting seat is 0 or 1.")
        return [StarterChosen(seat=cmd.seat, chooser=seat)]
    raise Rejection("unknown_command", "Orion Duel knows place_token, choose_starter and place_tile.")


def _place_tile(state: OrionState, seat: int, cmd: PlaceTile) -> list[Event]:
    if state.phase in ("galaxies", "black_holes", "choose_starter"):
        raise Rejection("setup_not_done", "Tiles are placed once the setup is done.")
    if state.phase != "play":
        raise Rejection("wrong_phase", "The game is over.")
    if seat != state.turn:
        raise Rejection("not_your_turn", f"It is seat {state.turn}'s turn.")
    tile = TILE_BY_ID.get(cmd.tile)
    if tile is None:
        raise Rejection("unknown_tile", f"There is no tile {cmd.tile!r}; tiles are {', '.join(TILE_IDS)}.")
    if cmd.tile in state.used[seat]:
        raise Rejection("tile_already_used", f"Tile {cmd.tile!r} is already on the board.")
    if not 0 <= cmd.rotation <= 5:
        raise Rejection("bad_rotation", "The rotation is 0 to 5 (steps of 60 degrees clockwise).")
    hs = orient(tile.hexes, cmd.rotation, cmd.mirror)
    new = tuple((cmd.anchor[0] + q, cmd.anchor[1] + r, seat if own else 1 - seat) for q, r, own in hs)
    why = placement_problem(state, seat, new)
    if why:
        raise Rejection(*why)
    used = list(state.used)
    used[seat] = (*used[seat], cmd.tile)
    after = msgspec.structs.replace(state, hexes=state.hexes + new, used=(used[0], used[1]))
    sc = scores(after)
    events: list[Event] = [TilePlaced(seat=seat, tile=cmd.tile, anchor=(cmd.anchor[0], cmd.anchor[1]),
                                      rotation=cmd.rotation, mirror=cmd.mirror, hexes=list(new), scores=list(sc))]
    if sc[0] != sc[1]:
        events.append(GameDecided(winners=[0 if sc[0] > sc[1] else 1], reason="score", scores=list(sc)))
    elif all(len(u) == len(TILES) for u in after.used):
        tb = tiebreak(after)
        winners = [] if tb[0] == tb[1] else [0 if tb[0] > tb[1] else 1]
        events.append(GameDecided(winners=winners, reason="tiebreak" if winners else "draw", scores=list(sc), tiebreak=list(tb)))
    elif not can_place(after, 1 - seat):
        events += [PlayerBlocked(seat=1 - seat), GameDecided(winners=[seat], reason="blocked", scores=list(sc))]
    return events


def evolve(state: OrionState, ev: Event) -> OrionState:
    """Fold one event; only sets fields (the phase follows the token counts)."""
    rep = msgspec.structs.replace
    if isinstance(ev, RolesAssigned):
        return rep(state, phase="galaxies", galaxy_seat=ev.galaxy_seat, turn=ev.galaxy_seat)
    if isinstance(ev, TokensPlaced):
        return rep(state, galaxies=tuple(tuple(c) for c in ev.galaxies),
                   black_holes=tuple(tuple(c) for c in ev.black_holes), phase="choose_starter")
    if isinstance(ev, TokenPlaced):
        if ev.kind == "galaxy":
            g = (*state.galaxies, tuple(ev.cell))
            done = len(g) >= GALAXIES
            return rep(state, galaxies=g, phase="black_holes" if done else state.phase,
                       turn=1 - ev.seat if done else state.turn)
        b = (*state.black_holes, tuple(ev.cell))
        done = len(b) >= BLACK_HOLES
        return rep(state, black_holes=b, phase="choose_starter" if done else state.phase,
                   turn=state.galaxy_seat if done and state.galaxy_seat is not None else state.turn)
    if isinstance(ev, StarterChosen):
        return rep(state, phase="play", starter=ev.seat, turn=ev.seat)
    if isinstance(ev, TilePlaced):
        used = list(state.used)
        used[ev.seat] = (*used[ev.seat], ev.tile)
        return rep(state, hexes=state.hexes + tuple(tuple(h) for h in ev.hexes), used=(used[0], used[1]),
                   scores=(ev.scores[0], ev.scores[1]), turn=1 - ev.seat)
    if isinstance(ev, GameDecided):
        line = (state.game_no, tuple(ev.winners), ev.reason, (ev.scores[0], ev.scores[1]) if len(ev.scores) == 2 else (0, 0),
                state.galaxy_seat, state.starter)
        wins = tuple(w + ev.winners.count(i) for i, w in enumerate(state.match_wins))
        return rep(state, phase="over", winners=tuple(ev.winners), reason=ev.reason, tiebreak=tuple(ev.tiebreak),
                   match_history=state.match_history + (line,), match_wins=(wins[0], wins[1]))
    if isinstance(ev, NextGame):
        return OrionState(setup=state.setup, match_games=state.match_games, game_no=ev.game,
                          match_wins=state.match_wins, match_history=state.match_history)
    if isinstance(ev, MatchDecided):
        return rep(state, match_winners=tuple(ev.winners))
    return state


def legal_commands(state: Any, seat: int) -> list[Command]:
    """Every distinct command ``decide`` accepts from ``seat`` now (see :func:`placements`).

    Works on a state or a view (same field names).
    """
    if state.phase == "over" or seat != state.turn:
        return []
    if state.phase in ("galaxies", "black_holes"):
        kind = "galaxy" if state.phase == "galaxies" else "black_hole"
        out = []
        for c in token_cells(state.galaxies, state.black_holes, kind):
            g = (*state.galaxies, c) if kind == "galaxy" else state.galaxies
            b = (*state.black_holes, c) if kind == "black_hole" else state.black_holes
            if completable(g, b):
                out.append(PlaceToken(cell=c))
        return out
    if state.phase == "choose_starter":
        return [ChooseStarter(seat=0), ChooseStarter(seat=1)]
    return [PlaceTile(tile=t, anchor=a, rotation=rot, mirror=mir) for t, rot, mir, a, _h in placements(state, seat)]
