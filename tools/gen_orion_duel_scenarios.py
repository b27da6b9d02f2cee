"""Search seeded bot games of Orion Duel for the positions the scenario files need, and write them.

Usage: ``.venv/bin/python tools/gen_orion_duel_scenarios.py [OUTDIR]`` (default
``scenarios/orion_duel``). Deterministic: seeds are tried in order; each wanted situation
takes the first game that shows it. Games start from a preset setup with ``first_seat = 0``,
so the scenario files need no chance draws. The files are committed; this script only
documents how they were found.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import msgspec

from schemas.orion_duel import OrionOptions, PlaceTile
from services.games.orion_duel import ORION_DUEL
from services.games.orion_duel.bots import _Analysis, greedy_bot, random_bot
from services.games.orion_duel.rules import OrionState, decide, evolve, placements, setup_events


def avoid_bot(view, seat, rng):
    """Random placement that keeps the scores equal, if one exists."""
    an = _Analysis(view)
    moves = list(placements(view, seat))
    rng.shuffle(moves)
    for t, rot, mir, a, hs in moves:
        sc = an.scores_after(an.merged(hs))
        if sc[0] == sc[1]:
            return PlaceTile(tile=t, anchor=a, rotation=rot, mirror=mir)
    t, rot, mir, a, _ = moves[0]
    return PlaceTile(tile=t, anchor=a, rotation=rot, mirror=mir)


POLICIES = {"random": random_bot, "greedy": greedy_bot, "avoid": avoid_bot}


def play(seed: int, setup: str, policies: tuple[str, str]):
    opts = OrionOptions(setup=setup, first_seat=0)
    st = OrionState(setup=setup)
    for ev in setup_events(opts, None):
        st = evolve(st, ev)
    rng = random.Random(seed)
    steps = []
    while st.phase != "over":
        seat = st.turn
        v = ORION_DUEL.view(st, seat)
        cmd = POLICIES[policies[seat]](v, seat, rng)
        evs = decide(st, seat, cmd)
        for ev in evs:
            st = evolve(st, ev)
        steps.append((seat, cmd, st))
    return steps, st


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return str(v)


def write(path: Path, name: str, description: str, setup: str, steps, checks_at: dict[int, list[tuple[str, object]]], final: list[tuple[str, object]]):
    out = [
        'format = "questhall-scenario/1"', 'title = "orion_duel"', f'name = "{name}"',
        f'description = "{description}"', "seats = 2", 'names = ["Blue", "Orange"]', "",
        "[options]", f'setup = "{setup}"', "first_seat = 0", "",
    ]
    for i, (seat, cmd, _st) in enumerate(steps):
        body = msgspec.to_builtins(cmd)
        inner = ", ".join(f"{k} = {toml_value(v)}" for k, v in body.items())
        out += ["[[step]]", f"seat = {seat}", f"command = {{ {inner} }}"]
        for p, val in checks_at.get(i, []):
            out += ["[[step.check]]", f'path = "{p}"', f"equals = {toml_value(val)}"]
        out.append("")
    for p, val in final:
        out += ["[[final]]", f'path = "{p}"', f"equals = {toml_value(val)}"]
    path.write_text("\n".join(out) + "\n")


def main() -> None:
    outdir = Path(sys.argv[1] if len(sys.argv) > 1 else "scenarios/orion_duel")
    want = {"link_alone", "galaxies_alone", "black_holes_alone", "two_at_once", "scores_for_opponent",
            "tied_continuing", "blocked", "tiebreak", "draw"}
    found: dict[str, tuple] = {}
    combos = [("random", "random"), ("greedy", "random"), ("avoid", "avoid"), ("greedy", "greedy")]
    for seed in range(3000):
        if want <= set(found):
            break
        setup = ("symmetric_1", "symmetric_2")[seed % 2]
        pol = combos[(seed // 2) % len(combos)]
        steps, st = play(seed, setup, pol)
        v = ORION_DUEL.view(st, None)
        w = st.winners
        last_seat = steps[-1][0]
        if st.reason == "score":
            win = w[0]
            conds = v.conditions[win]
            prev = steps[-2][2].scores if len(steps) > 1 else (0, 0)
            if v.conditions[1 - win] == [] and len(conds) == 1 and prev == (0, 0):
                found.setdefault(conds[0] + "_alone", (seed, setup, steps, st))
            if st.scores[win] - prev[win] >= 2:
                found.setdefault("two_at_once", (seed, setup, steps, st))
            if last_seat != win:
                found.setdefault("scores_for_opponent", (seed, setup, steps, st))
        if any(s.scores[0] == s.scores[1] >= 1 and s.phase == "play" for _a, _b, s in steps):
            found.setdefault("tied_continuing", (seed, setup, steps, st))
        if st.reason in ("blocked", "tiebreak", "draw"):
            found.setdefault(st.reason, (seed, setup, steps, st))
    print({k: (v[0], v[1], len(v[2])) for k, v in found.items()}, "missing:", want - set(found))
    for key, (seed, setup, steps, st) in found.items():
        v = ORION_DUEL.view(st, None)
        final = [("status", "finished"), ("result.winners", list(st.winners)), ("view.reason", st.reason),
                 ("view.scores", list(st.scores)), ("view.conditions", v.conditions)]
        if st.tiebreak:
            final.append(("view.tiebreak", list(st.tiebreak)))
        if st.reason == "blocked":
            loser = 1 - st.winners[0]
            final.append((f"view.remaining.{loser}", v.remaining[loser]))
        checks: dict[int, list] = {}
        if key == "tied_continuing":
            i = next(i for i, (_a, _b, s) in enumerate(steps) if s.scores[0] == s.scores[1] >= 1 and s.phase == "play")
            checks[i] = [("status", "active"), ("view.scores", list(steps[i][2].scores))]
        desc = f"Found by tools/gen_orion_duel_scenarios.py (seed {seed}); {len(steps)} placements."
        if key == "scores_for_opponent":
            desc += f" The last placement, by seat {steps[-1][0]}, scores for the opponent, who wins."
        write(outdir / f"found_{key}.toml", f"{key.replace('_', ' ')} ({setup})", desc, setup, steps, checks, final)


if __name__ == "__main__":
    main()
