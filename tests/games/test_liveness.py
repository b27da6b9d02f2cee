"""Liveness of every registered title: seeded games of bots never stall and always end.

A game of bots is played in process (``LocalGame``) for every title, every seat count and
the main options, each seat played by one of the title's bots, now and then a legal command of
a seat the game does not wait for (the title's ``off_turn``), and now and then a deadline
falling due (the ``timeout`` the clock service would send) and, in some games, a ``move``
clock. After every command, while the game is active, it must wait for somebody who can act:

- ``lifecycle.to_move`` is not empty (the title's ``to_move``, or, while a secret choice is
  open, its seats that have not chosen yet: services/kernel/secret.py);
- every one of those seats can act: the kernel's legal commands of the seat
  (``lifecycle.legal_commands``: the title's, as the secret choice rules leave them) are not
  empty, and so is the ``legal`` list of the view envelope the projector would write for it
  (``lifecycle.view``; Orion Duel's placements in its play phase), whose ``to_move`` lists it --
  a seat shown to move with nothing to send stalls a client (a Questeros bus game of the
  demo's bot loop stalled once on a seat view with an empty legal list: not reproduced here);
- every legal command a seat the game does not wait for sends is accepted (its legal commands
  are honest: a seat that made its secret choice is offered only a change).

Every game ends within a bound of commands, no bot command is refused and nothing raises.
Found so far: Orange Quest waiting for nobody when the deck and the discard pile were both empty,
at a Treasure (50c9602) and at a boss reward's sharing (7b71fa9).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from schemas.envelope import Accepted, Timeout
from services.kernel import game as lifecycle
from services.kernel import get_title
from services.kernel.registry import titles
from services.kernel.runner import LocalGame


@dataclass(frozen=True)
class Case:
    title: str
    seats: int
    options: dict
    games: int
    max_moves: int


def _cases() -> list[Case]:
    out: list[Case] = []
    for seats in range(2, 7):
        out.append(Case("questeros", seats, {"alternative_god_rule": seats % 2 == 0}, 2, 3000))
    out.append(Case("questeros", 4, {"alternative_god_rule": False, "clock": "move", "move_seconds": 10}, 1, 3000))
    for difficulty in (0, 1, 2):
        out.append(Case("eros_quest", 1, {"difficulty": difficulty}, 3, 3000))
    for seats in (2, 3, 5, 12, 33):
        out.append(Case("fate_deck", seats, {}, 1, 3000))
    for setup in ("random", "manual", "symmetric_1", "symmetric_2"):
        out.append(Case("orion_duel", 2, {"setup": setup}, 2, 400))
    out.append(Case("orion_duel", 2, {"setup": "random", "match_games": 3}, 1, 1200))
    out.append(Case("orion_duel", 2, {"setup": "manual", "match_games": 2, "clock": "move", "move_seconds": 5}, 1, 1200))
    for opts in ({"mode": "solo"}, {"mode": "coop"}, {"mode": "solo", "quest_board": True, "environments": True},
                 {"mode": "coop", "companions": True, "environments": True, "quest_board": True}):
        out.append(Case("quests_over_coffee", 2 if opts["mode"] == "coop" else 1, opts, 2, 1500))
    for seats in (2, 3, 4):
        out.append(Case("reventure_orbtale", seats, {"chapter_limit": 40}, 1, 6000))
    out.append(Case("reventure_orbtale", 2, {"chapter_limit": 1}, 2, 600))
    out.append(Case("reventure_orbtale", 3, {"chapter_limit": 8, "clock": "move", "move_seconds": 5}, 1, 3000))
    sharings = ("peaceable", "rps", "take", "agree")
    for seats in range(2, 7):
        for i, sharing in enumerate(sharings):
            opts = {"days": 4 + (seats + i) % 3, "sharing": sharing}
            if (seats + i) % 4 == 0:
                opts["window_seconds"] = 0
            if seats == 2 and i % 2:
                opts["half_health"] = False
            if seats == 4 and i == 1:
                opts["strengthening"] = "on"
            out.append(Case("orange_quest", seats, opts, 1, 6000))
    out.append(Case("orange_quest", 3, {"days": 4, "sharing": "agree", "clock": "move", "move_seconds": 5}, 1, 6000))
    return out


CASES = _cases()


def _view_legal(title, game, seat: int) -> tuple[list[int], list | None]:
    """The ``to_move`` and the legal list (None: the title's view keeps none) of the view
    envelope of ``seat``, as the projector writes it."""
    env = lifecycle.view(title, game, seat)
    legal = getattr(env.view, "legal", None)
    if title.name == "orion_duel" and game.rules.phase == "play":
        legal = env.view.placements  # the compact form of its placements (docs/games/orion_duel.md)
    return env.to_move, legal


def _waiting(g: LocalGame) -> tuple[list[int], list[int], str]:
    """The seats the active game waits for, those of them with a legal command, and "" if every
    one of them can act (legal commands, and a view that shows it to move with a non-empty legal
    list), else why not."""
    title, game = g.title, g.game
    waiting = lifecycle.to_move(title, game)
    if not waiting:
        return [], [], "no seat to move"
    able = [s for s in waiting if lifecycle.legal_commands(title, game, s)]
    if able != waiting:
        return waiting, able, f"seats {sorted(set(waiting) - set(able))} are to move with no legal command"
    for s in waiting:
        shown, legal = _view_legal(title, game, s)
        if s not in shown or legal == []:
            return waiting, able, f"seat {s}'s view shows to_move {shown} and legal {legal}"
    return waiting, able, ""


def _time_out(g: LocalGame, d) -> None:
    """The time runs to deadline ``d``; its timeout is sent, as the clock service does."""
    g.now_ms = max(g.now_ms, d.at + 1)
    out = g.submit(Timeout(seat=d.seat, version=d.set_at), None, command_id=f"timeout:{d.seat}:{d.set_at}")
    assert isinstance(out, Accepted), out


def _fire_deadline(g: LocalGame, rng: random.Random) -> bool:
    """One pending deadline (a random one) falls due, if there is any."""
    if g.game.clock is None or not g.game.clock.deadlines:
        return False
    _time_out(g, rng.choice(g.game.clock.deadlines))
    return True


def _fire_due(g: LocalGame) -> bool:
    """The first deadline that has passed falls due, if any."""
    due = [d for d in g.game.clock.deadlines if d.at < g.now_ms] if g.game.clock is not None else []
    if due:
        _time_out(g, min(due, key=lambda d: (d.at, d.seat)))
    return bool(due)


def _off_turn(g: LocalGame, waiting: list[int], rng: random.Random) -> bool:
    """A seat the game does not wait for sends one of its legal commands (an off-turn Block,
    a given item, a hand-in, a change of its secret choice), if one has any: it is accepted
    (the kernel's legal commands offer a seat that has chosen only a change, never the same
    choice again or a change past MAX_CHANGES)."""
    seat = rng.choice([s for s in range(len(g.game.seats)) if s not in waiting] or [None])
    legal = lifecycle.legal_commands(g.title, g.game, seat) if seat is not None else []
    if not legal:
        return False
    cmd = rng.choice(legal)
    out = g.submit(cmd, seat)
    assert isinstance(out, Accepted), (cmd, out)
    return True


def play(case: Case, seed: int) -> tuple[LocalGame, int]:
    """One game of bots; returns it and the commands it took. Raises AssertionError on a stall."""
    title = get_title(case.title)
    rng = random.Random(f"{case.title}:{case.seats}:{sorted(case.options.items())}:{seed}")
    g = LocalGame(title, game_id=f"live-{case.title}-{seed}", seed=rng.randbytes(32))
    g.create_and_start(case.seats, case.options)
    names = sorted(title.bots)
    seat_bots = [title.bots[rng.choice(names)] for _ in range(case.seats)]
    timeouts = rng.choice([0.0, 0.02, 0.1])
    moves = 0
    while g.game.status == "active":
        assert moves < case.max_moves, f"{case} seed {seed}: not over after {moves} commands"
        waiting, able, why = _waiting(g)
        assert not why, f"{case} seed {seed}: stalled at version {g.game.version}: {why}"
        moves += 1
        g.now_ms += rng.randrange(0, 3000)
        if _fire_due(g) or (rng.random() < timeouts and _fire_deadline(g, rng)):
            continue
        if title.off_turn and rng.random() < 0.1 and _off_turn(g, waiting, rng):
            continue
        seat = rng.choice(able)
        cmd = seat_bots[seat](title.view(g.game.rules, seat), seat, rng)
        out = g.submit(cmd, seat)
        assert isinstance(out, Accepted), f"{case} seed {seed}: the bot's {cmd} refused: {out}"
    assert g.game.status == "finished", (case, seed, g.game.status)
    return g, moves


def test_every_registered_title_is_covered():
    shipped = {n for n, t in titles().items() if type(t).__module__.startswith("services.games.")}
    assert {c.title for c in CASES} == shipped


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.title}-{c.seats}-" + "-".join(f"{k}={v}" for k, v in c.options.items()))
def test_games_of_bots_never_stall_and_end(case):
    for seed in range(case.games):
        play(case, seed)
