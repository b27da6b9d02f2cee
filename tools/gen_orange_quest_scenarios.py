"""Write the Orange Quest scenario files (scenarios/orange_quest/*.toml) from the designs below.

Run: ``.venv/bin/python tools/gen_orange_quest_scenarios.py``. Each design fixes the setup with
``[chance] draws`` built by :func:`deal` (heroes, the deck top: the 5-card hands then the Morning
draws from the first player, the location, the bosses, the first player; then the day's coins),
then lists its steps. Steps are commands, or macros the generator expands by playing the game in
memory: ``convert`` (every seat over 7 converts its last cards), ``until`` (everyone passes /
plays the default move until a condition holds: for the long designs). Every check is written by
hand from the rulebook and RULINGS.md, never read back from the engine; the commands a macro
records are inputs, and a check may name a card the generator saw in a view (a pool card picked).
tests/test_scenarios.py plays every file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import msgspec

from schemas.orange_quest import Convert
from services.games.orange_quest import ORANGE_QUEST as T
from services.games.orange_quest.state import HAND_LIMIT, convert_seats
from services.kernel import ScriptedChance, SeededChance, derive_key
from services.kernel import game as lifecycle
from services.kernel.runner import LocalGame

OUT = Path(__file__).resolve().parent.parent / "scenarios" / "orange_quest"
P = "orange_quest."
FILLER = ["cake1", "cake2", "cake3", "cake4", "cake5", "pinata1", "pinata2", "pinata3", "prank1", "prank2", "prank3",
          "prank4", "pickpocket1", "pickpocket2", "pickpocket3", "bad_dream1", "backpack1", "backpack2", "backpack3",
          "lucky_charm1", "lucky_charm2", "coin_toss1", "coin_toss2", "coin_toss3",
          *(f"block{i}" for i in range(10, 2, -1)), *(f"sticky_fingers{i}" for i in range(1, 5)),
          *(f"butterfingers{i}" for i in range(1, 5)), *(f"second_wind{i}" for i in range(5, 1, -1))]
"""Cards used to fill hands that do not matter (party and quick cards nobody plays)."""


def val(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, str)):
        return json.dumps(v)
    if v is None:
        raise TypeError("None")
    if isinstance(v, list):
        return "[" + ", ".join(val(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {val(x)}" for k, x in v.items() if x is not None) + " }"
    raise TypeError(v)


def play(card, target=None, item=None): return {"type": P + "play", "card": card, "target": target, "item": item}
def pass_(): return {"type": P + "pass"}
def ability(card=None): return {"type": P + "use_ability", "card": card}
def use(card): return {"type": P + "use_equipment", "card": card}
def duel(t): return {"type": P + "challenge", "target": t}
def give(*to): return {"type": P + "distribute", "to": list(to)}
def propose(*to): return {"type": P + "propose", "to": list(to)}
def accept(): return {"type": P + "accept"}
def fog(card): return {"type": P + "give_card", "card": card}
def chaos(*cards): return {"type": P + "put_in", "cards": list(cards)}
def throw(shape, card): return {"type": P + "throw", "shape": shape, "card": card}
def pick(card): return {"type": P + "pick", "card": card}
def gift(to, count): return {"type": P + "give_candies", "to": to, "count": count}
def chk(path, seat=None, **kw): return {"path": path, "seat": seat, **kw}


def deal(seats: int, first: int, hands: dict[int, list[str]], morning: dict[int, list[str]] | None = None,
         heroes: list[str] | None = None, location: str = "sugar_hills", bosses: tuple[str, ...] = ("gummy_bear",),
         more: list[str] = (), coins: list[bool] = ()) -> list[dict]:
    """Setup draws (rules.py "Setup draws"): these hands (filled up to 5 with FILLER cards) and
    Morning draws (filled up to 2), then ``more``, on the deck top; then the day's coins."""
    order = [(first + i) % seats for i in range(seats)]
    used = {c for h in hands.values() for c in h} | {c for h in (morning or {}).values() for c in h} | set(more)
    fill = iter(c for c in FILLER if c not in used)
    top: list[str] = []
    for s in order:
        h = list(hands.get(s, []))
        top += h + [next(fill) for _ in range(5 - len(h))]
    for s in order:
        m = list((morning or {}).get(s, []))
        top += m + [next(fill) for _ in range(2 - len(m))]
    top += list(more)
    heroes = heroes or ["lisa", "eric", "mia", "christian", "roy", "joy"][:seats]
    rest = [h for h in ["joy", "christian", "roy", "lisa", "eric", "mia"] if h not in heroes]
    return [{"shuffle": heroes + rest}, {"shuffle": top}, {"shuffle": [location]}, {"shuffle": list(bosses)},
            {"int": first}, *({"coin": c} for c in coins)]


class Design:
    """One scenario: its setup and steps (commands or macros), its checks."""

    def __init__(self, file: str, name: str, description: str, seats: int, draws: list[dict], steps: list,
                 options: dict | None = None, final: list[dict] | None = None) -> None:
        self.file, self.name, self.description, self.seats = file, name, description, seats
        self.draws, self.steps, self.options, self.final = draws, steps, options or {}, final or []


def S(seat, command, *checks, expect="accepted", note=""):
    return {"seat": seat, "command": command, "check": list(checks), "expect": expect, "note": note}


def CONVERT(*checks):
    """Every seat over 7 converts its last cards (recorded as commands)."""
    return ("convert", list(checks))


def UNTIL(cond: Callable, *checks, choose: Callable | None = None):
    """Seats to move pass (or play their default move) until ``cond(state)`` holds."""
    return ("until", cond, list(checks), choose)


def WAIT(ms: int, fire: bool = True, *checks):
    return {"wait_ms": ms, "fire": fire, "check": list(checks)}


def _submit(g: LocalGame, body: dict, seat) -> None:
    from services.kernel.registry import codec

    cmd = msgspec.convert(body, codec(T.name).command_union)
    out = g.submit(cmd, seat)
    assert type(out).__name__ == "Accepted", (body, out)


def expand(d: Design) -> list[dict]:
    """Play the design in memory; return its steps with macros expanded to commands."""
    seed = bytes(32)
    g = LocalGame(T, game_id="gen", seed=seed, chance=ScriptedChance(d.draws, fallback=SeededChance(derive_key(seed), 0)))
    g.now_ms = 1_767_225_600_000
    g.create_and_start(d.seats, d.options)
    out: list[dict] = []
    for step in d.steps:
        if isinstance(step, tuple) and step[0] == "convert":
            for seat in convert_seats(g.game.rules):
                hand = g.game.rules.hands[seat]
                body = msgspec.to_builtins(Convert(cards=list(hand[HAND_LIMIT:])))
                _submit(g, body, seat)
                out.append({"seat": seat, "command": body, "check": [], "expect": "accepted", "note": "hand limit"})
            if step[1]:
                out[-1]["check"] += step[1]
            continue
        if isinstance(step, tuple) and step[0] == "until":
            _, cond, checks, choose = step
            n = 0
            while not cond(g.game.rules) and g.game.status == "active":
                seat = lifecycle.to_move(T, g.game)[0]
                cmd = (choose or (lambda s, st: T.default_move(st, s)))(seat, g.game.rules)
                body = msgspec.to_builtins(cmd)
                _submit(g, body, seat)
                out.append({"seat": seat, "command": body, "check": [], "expect": "accepted", "note": ""})
                n += 1
                assert n < 2000
            if checks:
                out[-1]["check"] += checks
            continue
        if "wait_ms" in step:
            g.now_ms += step["wait_ms"]
            if step["fire"]:
                for dl in g.game.clock.deadlines:
                    if dl.at <= g.now_ms:
                        from schemas.envelope import Timeout

                        g.submit(Timeout(seat=dl.seat, version=dl.set_at), None)
            out.append(step)
            continue
        body = {k: v for k, v in step["command"].items() if v is not None}
        if callable(step.get("resolve")):
            body = step["resolve"](g.game.rules, body)
        if step["expect"] == "accepted":
            _submit(g, body, step["seat"])
        else:
            from services.kernel.registry import codec

            res = g.submit(msgspec.convert(body, codec(T.name).command_union), step["seat"])
            assert type(res).__name__ == "Rejected" and step["expect"].endswith(res.code), (body, res)
        out.append({**step, "command": body})
    return out


def write(d: Design) -> None:
    steps = expand(d)
    lines = ['format = "questhall-scenario/1"', 'title = "orange_quest"', f"name = {val(d.name)}", f"seats = {d.seats}",
             f"description = {val(d.description)}", "", "# Generated by tools/gen_orange_quest_scenarios.py", ""]
    if d.options:
        lines += ["[options]"] + [f"{k} = {val(v)}" for k, v in d.options.items()] + [""]
    lines += ["[chance]", "draws = ["] + [f"  {val(x)}," for x in d.draws] + ["]", ""]
    for st in steps:
        lines.append("[[step]]")
        if "wait_ms" in st:
            lines.append(f"wait_ms = {st['wait_ms']}")
            if st["fire"]:
                lines.append("fire = true")
        else:
            lines.append(f"seat = {st['seat']}")
            lines.append(f"command = {val(st['command'])}")
            if st["expect"] != "accepted":
                lines.append(f"expect = {val(st['expect'])}")
            if st.get("note"):
                lines.append(f"note = {val(st['note'])}")
        for c in st.get("check", []):
            lines.append("[[step.check]]")
            lines += [f"{k} = {val(v)}" for k, v in c.items() if v is not None]
        lines.append("")
    for c in d.final:
        lines.append("[[final]]")
        lines += [f"{k} = {val(v)}" for k, v in c.items() if v is not None]
        lines.append("")
    (OUT / d.file).write_text("\n".join(lines))


def phase_is(p: str) -> Callable:
    return lambda s: s.phase == p and not s.window and not convert_seats(s)


DESIGNS: list[Design] = []


def design(*a, **kw) -> None:
    DESIGNS.append(Design(*a, **kw))


# Two players, first player seat 0, location Sugar Hills (Candy Madness: both coins heads; equal
# stashes: both receive 2 candies twice, so 4 each), boss Gummy Bear (50, halved: 25).
TWO = dict(location="sugar_hills", coins=[True, True])

design("gvozdar_dao_cola.toml", "the rulebook's Gvozdar / Dao-Cola example",
       "rulebook Action Cards: Gvozdar (-40) deals 40; Dao-Cola (+20) placed on it leaves 20 (-40+20 = -20). "
       "The fight is won with a later Hook (20 + 10 >= 25): seat 0 leads.",
       2, deal(2, 0, {0: ["gvozdar1", "hook1"], 1: ["dao_cola1"]}, **TWO),
       [S(0, play("gvozdar1"), chk("view.players.0.damage", equals=40), chk("view.boss_health", equals=25)),
        S(0, pass_()),
        S(1, play("dao_cola1", 0), chk("view.players.0.damage", equals=20)),
        S(1, pass_()),
        S(0, play("hook1"), chk("view.players.0.damage", equals=30)),
        S(0, pass_()), S(1, pass_()),
        S(0, pass_(), chk("view.phase", equals="party"), chk("view.players.0.trophies", equals=["gummy_bear"]),
          chk("view.players.0.candies", equals=6), chk("view.players.1.candies", equals=4))])

design("hook_dao_cola.toml", "the rulebook's Hook example: Dao-Cola cancels a Hook fully; a lost fight",
       "rulebook Action Cards: Hook (-10) with Dao-Cola (+20) on it deals 0, not -10 (damage is never reduced below "
       "zero). No damage: the boss wins and every player loses 2 candies (rulebook Evening).",
       2, deal(2, 0, {0: ["hook1"], 1: ["dao_cola1"]}, **TWO),
       [S(0, play("hook1"), chk("view.players.0.damage", equals=10)), S(0, pass_()),
        S(1, play("dao_cola1", 0), chk("view.players.0.damage", equals=0)), S(1, pass_()),
        S(0, pass_()),
        S(1, pass_(), chk("view.phase", equals="party"), chk("view.players.0.candies", equals=2),
          chk("view.players.1.candies", equals=2), chk("view.players.0.trophies", length=0))])

design("coin_strengthened_gvozdar.toml", "Roy's coin strengthens Gvozdar to -50",
       "rulebook Auxiliary Damage Cards: the coin flipped to strengthen Gvozdar lands well; the auxiliary card's "
       "red side (-10) on it makes 50 (-40 + -10). Roy's ability is once per day: the hero card turns.",
       2, deal(2, 0, {0: ["gvozdar1"]}, heroes=["roy", "eric"], **TWO) + [{"coin": True}],
       [S(0, play("gvozdar1")),
        S(0, ability(), chk("view.players.0.damage", equals=50), chk("view.players.0.hero_turned", equals=True)),
        S(0, ability(), expect="rejected:ability_used")])

design("block_of_a_block.toml", "a Block of a Block: the first card applies",
       "rulebook Action Cards: Block can cancel any action, including another Block. Seat 0 plays Second Wind "
       "(a quick card, during the boss fight); seat 1 Blocks it; seat 0 Blocks the Block; seat 1 passes. The chain "
       "resolves from the top: the second Block cancels the first, so Second Wind applies (seat 0 takes 2 cards).",
       2, deal(2, 0, {0: ["second_wind1", "block1"], 1: ["block2"]}, **TWO),
       [S(0, play("second_wind1"), chk("view.chain", length=1), chk("to_move", equals=[1])),
        S(1, play("block2"), chk("view.chain", length=2), chk("to_move", equals=[0])),
        S(0, play("block1"), chk("view.chain", length=3), chk("to_move", equals=[1])),
        S(1, pass_(), chk("view.chain", length=0), chk("view.players.0.hand_count", equals=7),
          chk("view.players.1.hand_count", equals=6), chk("to_move", equals=[0]))])

design("window_closed_by_deadline.toml", "a response window closed by its deadline",
       "RULINGS.md Orange Quest (timing): the window closes when all have passed or its timer runs out. With "
       "window_seconds = 20 the answering seat gets a 20 s deadline (a timed decision of the title, whatever the "
       "clock option); the clock service fires it and the timeout passes: Second Wind applies (8 cards: a conversion follows).",
       2, deal(2, 0, {0: ["second_wind1"]}, **TWO),
       [S(0, play("second_wind1"), chk("deadlines.0.seat", equals=1), chk("deadlines.0.key", equals="window:1:1")),
        WAIT(19_000, False),
        WAIT(1_001, True, chk("view.chain", length=0), chk("view.players.0.hand_count", equals=8),
             chk("view.convert", equals=[0]), chk("deadlines", length=0))],
       options={"window_seconds": 20})

design("pass_rule_returns_the_turn.toml", "the pass rule: a pass followed by a play returns the turn",
       "rulebook Evening: a player who passed gets the turn again if anyone after it plays a card; the fight ends "
       "only when every player has passed in a row.",
       2, deal(2, 0, {0: ["hook1"], 1: ["hook2"]}, **TWO),
       [S(0, pass_(), chk("to_move", equals=[1])),
        S(1, play("hook2")), S(1, pass_(), chk("to_move", equals=[0]), chk("view.phase", equals="fight")),
        S(0, play("hook1")), S(0, pass_()), S(1, pass_(), chk("view.phase", equals="fight")),
        S(0, pass_(), chk("view.phase", equals="party"), chk("view.players.0.candies", equals=2))])

design("lost_fight_and_joy.toml", "a lost boss fight: everyone loses 2, Joy too; Joy keeps hers against a Prank, not in a duel",
       "rulebook 6 Hero Cards: Joy does not lose candies, except to a boss and in duels. The fight is lost (no "
       "damage): both lose 2 (4 -> 2). At the party seat 1's Prank would take 1 of Joy's: her ability keeps it (the "
       "card turns). Then seat 1 duels Joy and wins: it takes her 2 candies (all she has), the ability does not apply.",
       2, deal(2, 0, {0: [], 1: ["prank1", "hook1"]}, heroes=["joy", "eric"], **TWO),
       [S(0, pass_()), S(1, pass_(), chk("view.players.0.candies", equals=2), chk("view.players.1.candies", equals=2),
                         chk("view.players.0.hero_turned", equals=False)),
        S(0, pass_(), chk("view.turn", equals=1)),
        S(1, play("prank1", 0), chk("view.players.0.candies", equals=2), chk("view.players.0.hero_turned", equals=True)),
        S(1, duel(0), chk("view.duel", equals=[1, 0])),
        S(1, play("hook1")), S(1, pass_()), S(0, pass_()),
        S(1, pass_(), chk("view.players.0.candies", equals=0), chk("view.players.1.candies", equals=4),
          chk("view.phase", equals="party"))])

design("tied_leader.toml", "a tied top damage: no leader, the leader's reward added to the participants'",
       "rulebook Distribution of Rewards: equal top damage, no leader; the leader's reward is added to the "
       "participants'. Gummy Bear: leader 2 candies 1 card, participants 1 candy 2 cards: each participant gets "
       "3 candies (4 -> 7) and the 3 cards are dealt peaceably (1 each, 1 discarded). Nobody takes the boss card.",
       2, deal(2, 0, {0: ["gvozdar1"], 1: ["gvozdar2"]}, **TWO),
       [S(0, play("gvozdar1")), S(0, pass_()), S(1, play("gvozdar2")), S(1, pass_()), S(0, pass_()),
        S(1, pass_(), chk("view.players.0.candies", equals=7), chk("view.players.1.candies", equals=7),
          chk("view.players.0.hand_count", equals=7), chk("view.players.1.hand_count", equals=7),
          chk("view.players.0.trophies", length=0), chk("view.players.1.trophies", length=0),
          chk("view.discard_count", equals=3))])

SIX = ["joy", "christian", "roy", "lisa", "eric", "mia"]
design("six_player_andy.toml", "the rulebook's six-player Andy example",
       "rulebook Distribution of Rewards: six players defeat Andy (60 + 40 strengthening = 100). Sylvester (0) and "
       "Arnold (1) deal the most, equally (40 each): no leader; with Bruce (2) and Jean (3) they are the "
       "participants and share (peaceably). Arnold (drawn among the tied) hands the others' reward to Dolph (4) "
       "and Chuck (5) as he wishes, but must hand out all the cards, and only to them. Strengthening (6 "
       "players): +1 candy and +1 card in each cell. Candy Madness (all heads) left stashes 2, 2, 2, 2, 4, 4.",
       6, deal(6, 0, {0: ["gvozdar1"], 1: ["gvozdar2"], 2: ["hook1"], 3: ["slingshot1"]}, heroes=SIX,
               bosses=("andy",), location="sugar_hills", coins=[True] * 6) + [{"int": 1}],
       [S(0, play("gvozdar1"), chk("view.boss_health", equals=100), chk("view.players.4.candies", equals=4),
          chk("view.players.0.candies", equals=2)), S(0, pass_()), S(1, play("gvozdar2")), S(1, pass_()),
        S(2, play("hook1")), S(2, pass_()), S(3, play("slingshot1")), S(3, pass_()),
        S(4, pass_()), S(5, pass_()), S(0, pass_()), S(1, pass_()), S(2, pass_()),
        S(3, pass_(), chk("view.phase", equals="others"), chk("view.distributor", equals=1),
          chk("view.share_seats", equals=[4, 5]), chk("view.pool", length=3),
          chk("view.players.0.candies", equals=7), chk("view.players.3.candies", equals=7),
          chk("view.players.0.hand_count", equals=7), chk("view.players.1.trophies", length=0),
          chk("to_move", equals=[1])),
        S(4, give(4, 5, 4), expect="rejected:not_your_turn"),
        S(1, give(4, 5), expect="rejected:bad_distribution", note="the distributor must hand out all the cards"),
        S(1, give(4, 5, 1), expect="rejected:bad_distribution", note="only to the others (who dealt no damage)"),
        S(1, give(4, 5, 4), chk("view.players.4.candies", equals=5), chk("view.players.5.candies", equals=5),
          chk("view.players.4.hand_count", equals=9), chk("view.convert", equals=[4, 5]), chk("to_move", equals=[4, 5]))])

design("duel_takes_three.toml", "a duel won takes 3 candies; the refills",
       "rulebook Duel: the winner takes 3 candies from the loser; afterwards each player takes as many cards as "
       "combat cards it spent. Seat 0 led the fight (Frying Pan 30 >= 25: 4 + 2 = 6 candies); at the party it "
       "challenges seat 1 (4 candies), deals 40 against 10 and takes 3.",
       2, deal(2, 0, {0: ["frying_pan1", "gvozdar1"], 1: ["hook1"]}, **TWO),
       [S(0, play("frying_pan1")), S(0, pass_()), S(1, pass_()),
        S(0, pass_(), chk("view.players.0.candies", equals=6), chk("view.convert", equals=[1])),
        CONVERT(chk("view.phase", equals="party"), chk("view.players.1.candies", equals=5)),
        S(0, duel(1), chk("view.phase", equals="duel")),
        S(0, play("gvozdar1")), S(0, pass_()), S(1, play("hook1")), S(1, pass_()), S(0, pass_()),
        S(1, pass_(), chk("view.phase", equals="party"), chk("view.players.0.candies", equals=9),
          chk("view.players.1.candies", equals=2), chk("view.players.0.hand_count", equals=7),
          chk("view.players.1.hand_count", equals=7)),
        S(0, duel(1), expect="rejected:duel_already_started")])

design("duel_takes_all.toml", "a duel won against fewer than 3 candies takes them all",
       "rulebook Duel: 3 candies, or everything the loser has if fewer. The fight was lost (4 - 2 = 2 each).",
       2, deal(2, 0, {0: ["gvozdar1"]}, **TWO),
       [S(0, pass_()), S(1, pass_(), chk("view.players.1.candies", equals=2)),
        S(0, duel(1)), S(0, play("gvozdar1")), S(0, pass_()),
        S(1, pass_(), chk("view.phase", equals="duel")),
        S(0, pass_(), chk("view.players.0.candies", equals=4), chk("view.players.1.candies", equals=0),
          chk("view.phase", equals="party"))])

design("duel_draw.toml", "a duel draw: equal damage, nobody takes anything",
       "rulebook Duel: equal damage (or none) is a draw and nobody receives a reward; the spent cards are refilled.",
       2, deal(2, 0, {0: ["hook1"], 1: ["hook2"]}, **TWO),
       [S(0, pass_()), S(1, pass_()),
        S(0, duel(1)), S(0, play("hook1")), S(0, pass_()), S(1, play("hook2")), S(1, pass_()), S(0, pass_()),
        S(1, pass_(), chk("view.players.0.candies", equals=2), chk("view.players.1.candies", equals=2),
          chk("view.players.0.hand_count", equals=7), chk("view.players.1.hand_count", equals=7))])

design("duel_refill_count.toml", "duel refills: each takes as many cards as combat cards it spent, helpers too",
       "rulebook Duel: after the duel each player who took part, even one who only helped, takes as many cards "
       "as combat cards it spent. RULINGS.md: a helper plays during the turn of the duellist it helps. Seat 0 "
       "spends 2 (Hook, Slingshot), seat 2 helps seat 0 with a Hook, seat 1 spends 1: refills 2, 1, 1.",
       3, deal(3, 0, {0: ["hook1", "slingshot1"], 1: ["hook2"], 2: ["hook3"]}, location="sugar_hills",
               coins=[True, True, True]),
       [S(0, pass_()), S(1, pass_()), S(2, pass_(), chk("view.phase", equals="party")),
        S(0, duel(1)), S(0, play("hook1")), S(2, play("hook3"), chk("view.players.0.damage", equals=20)),
        S(0, play("slingshot1"), chk("view.players.0.damage", equals=40)), S(0, pass_()),
        S(1, play("hook2")), S(1, pass_()), S(0, pass_()),
        S(1, pass_(), chk("view.players.0.hand_count", equals=7), chk("view.players.1.hand_count", equals=7),
          chk("view.players.2.hand_count", equals=7))])

design("duel_helper_promise.toml", "the rulebook's Arnold / Chuck example: promised 2 candies, the winner gives 1",
       "rulebook Duel: Arnold (0) challenges Bruce (1) and needs help; he promises Chuck (2) 2 of the candies he "
       "would take (a promise in chat: RULINGS.md, not enforced). Chuck's Slingshot counts as Arnold's (10 + 20 "
       "against 10): Arnold takes 3 of Bruce's 7 candies (6), and only then may give his helper candies from those "
       "he won, to Chuck alone, at most 3: he gives 1 and passes. Candy Madness left 2, 4, 4; Bruce led the fight "
       "against Granny Gumdrop (80 >= 70: 4 + 3 = 7), the others got 1 each (3, 5).",
       3, deal(3, 0, {0: ["hook1"], 1: ["gvozdar1", "gvozdar2", "hook2"], 2: ["slingshot1"]}, location="sugar_hills",
               bosses=("granny_gumdrop",), coins=[True, True, True]),
       [S(0, pass_()), S(1, play("gvozdar1")), S(1, play("gvozdar2")), S(1, pass_()), S(2, pass_()), S(0, pass_()),
        S(1, pass_(), chk("view.phase", equals="party"), chk("view.players.1.candies", equals=7),
          chk("view.players.0.candies", equals=3), chk("view.players.2.candies", equals=5), chk("view.turn", equals=0)),
        S(0, duel(1), chk("view.duel", equals=[0, 1])),
        S(0, play("hook1")),
        S(2, play("slingshot1"), chk("view.players.0.damage", equals=30), note="Chuck helps Arnold (promised 2)"),
        S(0, pass_()), S(1, play("hook2")), S(1, pass_()), S(0, pass_()),
        S(1, pass_(), chk("view.phase", equals="gift"), chk("view.gift_giver", equals=0),
          chk("view.gift_helpers", equals=[2]), chk("view.gift_left", equals=3), chk("to_move", equals=[0]),
          chk("view.players.0.candies", equals=6), chk("view.players.1.candies", equals=4),
          chk("view.legal", seat=0, contains={"type": P + "give_candies", "to": 2, "count": 2})),
        S(2, gift(2, 1), expect="rejected:not_your_turn", note="only the winner gives"),
        S(1, pass_(), expect="rejected:not_your_turn"),
        S(0, gift(1, 1), expect="rejected:not_a_helper", note="Bruce did not help Arnold"),
        S(0, gift(2, 4), expect="rejected:bad_count", note="at most the 3 candies won"),
        S(0, gift(2, 1), chk("view.players.0.candies", equals=5), chk("view.players.2.candies", equals=6),
          chk("view.gift_left", equals=2), chk("view.phase", equals="gift"), note="Arnold gives Chuck only 1"),
        S(0, pass_(), chk("view.phase", equals="party"), chk("view.gift_giver", is_null=True),
          chk("view.turn", equals=0), chk("view.players.0.candies", equals=5), chk("view.players.2.candies", equals=6)),
        S(0, gift(2, 1), expect="rejected:not_giving", note="only right after the duel")])

# -- signposts (day 1; two players, first player seat 0) -----------------------------------------


def sign(file, name, desc, location, coins, steps, hands=None, heroes=None, extra=(), seats=2, options=None, final=None):
    design(file, name, desc, seats, deal(seats, 0, hands or {}, heroes=heroes, location=location, coins=coins) + list(extra),
           steps, options=options, final=final)


sign("signpost_rage.toml", "signpost Rage: the coin adds 20 or 40 to the boss's health",
     "rulebook Signposts, Rage: heads +20, tails +40. Tails: Gummy Bear 50 halved (25) + 40 = 65. Fair follows "
     "(2 cards each: 9 in hand, 2 converted each).", "angry_orchard", [False],
     [CONVERT(chk("view.boss_health", equals=65), chk("view.players.0.candies", equals=2))])
sign("signpost_fair.toml", "signpost Fair: each player takes 2 cards, then the hand limit",
     "rulebook Signposts, Fair: each player from the first takes 2 cards; 9 > 7, so each converts 2 into candy "
     "before anything else (rulebook Game Setup).", "angry_orchard", [True],
     [S(1, play("block1"), expect="rejected:must_convert"),
      CONVERT(chk("view.players.0.hand_count", equals=7), chk("view.players.1.candies", equals=2),
              chk("view.boss_health", equals=45))])
sign("signpost_fog_of_generosity.toml", "signpost Fog of Generosity: everyone passes one card, the coin says where",
     "rulebook Signposts, Fog of Generosity: all pass one chosen card at once (a simultaneous secret choice); "
     "tails: to the neighbour on the left. Seat 0 gives Hook 1, seat 1 gives Hook 2.", "foggy_market", [False],
     [CONVERT(), S(0, fog("hook1"), chk("chosen", equals=[0]), chk("view.phase", equals="fog"),
                   chk("my_choice.card", seat=0, equals="hook1"), chk("", seat=1, absent="hook1")),
      S(1, fog("hook2"), chk("view.hand", seat=0, contains="hook2"), chk("view.hand", seat=1, contains="hook1"),
        chk("view.phase", equals="fight"))],
     hands={0: ["hook1"], 1: ["hook2"]})
sign("signpost_sacred_place.toml", "signpost Sacred Place: no duels tonight",
     "rulebook Signposts, Sacred Place: players may not challenge each other to a duel. Treasure follows: nobody "
     "has candy, so one card each at random (8 in hand: 1 converted each).", "old_chapel", [],
     [CONVERT(chk("view.sacred_place", equals=True)), S(0, pass_()), S(1, pass_()),
      S(0, duel(1), expect="rejected:sacred_place")])
sign("signpost_loss_of_losses.toml", "signpost Loss of Losses: one random hand card each to the discard pile",
     "rulebook Signposts, Loss of Losses: each player loses one card from hand chosen at random by a neighbour "
     "(the coin names which). Rage first (heads: +20).", "thieves_bridge", [True, True],
     [S(0, pass_(), chk("view.players.0.hand_count", equals=6), chk("view.players.1.hand_count", equals=6),
        chk("view.discard_count", equals=2), chk("view.boss_health", equals=45))])
sign("signpost_breakage.toml", "signpost Breakage: equipment cannot be used and is attached turned",
     "rulebook Signposts, Breakage: players may not use equipment; new equipment is attached turned. Seat 0 "
     "attaches a Backpack (a quick card: seat 1 passes in its window) and cannot use it.", "rusty_forge", [],
     [CONVERT(chk("view.breakage", equals=True)),
      S(0, play("backpack1")), S(1, pass_(), chk("view.players.0.equipment", equals=["backpack1"]),
                                  chk("view.players.0.equipment_used", equals=["backpack1"])),
      S(0, use("backpack1"), expect="rejected:breakage")],
     hands={0: ["backpack1"]})
sign("signpost_powerlessness.toml", "signpost Powerlessness: hero abilities do not work today",
     "rulebook Signposts, Powerlessness: all hero cards are turned; they return at the next Morning.",
     "sleepy_hollow", [],
     [CONVERT(chk("view.powerlessness", equals=True), chk("view.players.0.hero_turned", equals=True)),
      S(0, ability(), expect="rejected:powerlessness")])
sign("signpost_treasure.toml", "signpost Treasure: nobody richer than the rest, one card each",
     "rulebook Signposts, Treasure: if everyone has an equal number of candies (here none), deal each player one "
     "action card at random. (The richest-player branch: treasure_richest_distributes.toml.)", "old_chapel", [],
     [CONVERT(chk("view.players.0.candies", equals=1), chk("view.players.1.candies", equals=1),
              chk("view.players.0.hand_count", equals=7))])
sign("signpost_chaos.toml", "signpost Chaos: two cards each to the centre, shuffled and dealt",
     "rulebook Signposts, Chaos: each puts two cards of their choice in the centre (a simultaneous secret choice); "
     "the pile is shuffled and dealt one at a time from the first player (shuffled hook3, hook1, hook4, hook2: "
     "seat 0 gets hook3 and hook4, seat 1 hook1 and hook2). Sacred Place comes first.", "messy_attic", [],
     [S(0, chaos("hook1", "hook2"), chk("view.phase", equals="chaos")),
      S(1, chaos("hook3", "hook4"), chk("view.phase", equals="fight"), chk("view.players.0.hand_count", equals=7),
        chk("view.players.1.hand_count", equals=7), chk("view.hand", seat=0, contains="hook3"),
        chk("view.hand", seat=0, contains="hook4"), chk("view.hand", seat=1, contains="hook1"),
        chk("view.hand", seat=1, contains="hook2"))],
     hands={0: ["hook1", "hook2"], 1: ["hook3", "hook4"]}, extra=[{"shuffle": ["hook3", "hook1", "hook4", "hook2"]}])
sign("signpost_candy_madness.toml", "signpost Candy Madness: the fewer candies receive two, equal both",
     "rulebook Signposts, Candy Madness: three players, all heads (the right neighbour): seat 0 and seat 2 are "
     "equal (0): both +2; seat 1 (0) has fewer than seat 0 (2): +2; seat 2 and seat 1 are equal (2): both +2.",
     "sugar_hills", [True, True, True],
     [S(0, pass_(), chk("view.players.0.candies", equals=2), chk("view.players.1.candies", equals=4),
        chk("view.players.2.candies", equals=4))], seats=3)

design("treasure_richest_distributes.toml", "signpost Treasure: the richest player looks at the cards and hands them out",
       "rulebook Signposts, Treasure: the player with the most candies takes as many cards as there are players, "
       "looks at them and distributes them among the other players. Day 1: seat 0 leads the fight (6 candies to "
       "4); day 2 (first player seat 1) reaches the Old Chapel after the Morning conversions (seat 0: 8, seat 1: 7): "
       "seat 0 alone sees the 2 cards (aside) and gives both to seat 1.",
       2, deal(2, 0, {0: ["frying_pan1"]}, location="sugar_hills", coins=[True, True])[:2]
       + [{"shuffle": ["sugar_hills", "old_chapel"]}, {"shuffle": ["gummy_bear"]}, {"int": 0}, {"coin": True}, {"coin": True}],
       [S(0, play("frying_pan1")), S(0, pass_()), S(1, pass_()), S(0, pass_(), chk("view.players.0.candies", equals=6)),
        UNTIL(lambda s: s.phase == "treasure", chk("view.day", equals=2), chk("view.location", equals="old_chapel"),
              chk("view.players.0.candies", equals=8), chk("view.players.1.candies", equals=7),
              chk("view.aside", seat=0, length=2), chk("view.aside", seat=1, length=0), chk("to_move", equals=[0])),
        S(0, give(0, 1), expect="rejected:bad_distribution"),
        S(0, give(1, 1), chk("view.players.1.hand_count", equals=9), chk("view.aside", seat=0, length=0),
          chk("view.convert", equals=[1]))])

design("hand_limit_conversion.toml", "the hand limit: over 7 cards, the surplus converted at once by the player's choice",
       "rulebook Game Setup: more than 7 cards in hand: immediately, before any other action, the player chooses "
       "the surplus and puts it face down into the candy stash. Nobody sees which cards became candy, the owner "
       "included (the stash shows as a count; the move's cards are empty in every feed).",
       2, deal(2, 0, {0: ["hook1", "hook2"]}, location="angry_orchard", coins=[True]),
       [S(0, pass_(), expect="rejected:must_convert"),
        S(0, {"type": P + "convert", "cards": ["hook1"]}, expect="rejected:bad_conversion"),
        S(0, {"type": P + "convert", "cards": ["hook1", "hook2"]}, chk("view.players.0.candies", equals=2),
          chk("view.hand", seat=0, absent="hook1"), chk("", seat=0, absent="hook2"), chk("to_move", equals=[1])),
        CONVERT(chk("to_move", equals=[0]), chk("view.phase", equals="fight"))])

# -- sharing variants (three players: seat 0 leads with Gvozdar, seats 1 and 2 are participants) ---


def sharing(file, name, desc, variant, steps, options=None):
    design(file, name, desc, 3, deal(3, 0, {0: ["gvozdar1"], 1: ["hook1"], 2: ["slingshot1"]}, location="sugar_hills",
                                     coins=[True, True, True]),
           [S(0, play("gvozdar1")), S(0, pass_()), S(1, play("hook1")), S(1, pass_()), S(2, play("slingshot1")),
            S(2, pass_()), S(0, pass_()), S(1, pass_()),
            S(2, pass_(), chk("view.sharing", equals=variant), chk("view.share_seats", equals=[1, 2]),
              chk("view.pool", length=2), chk("view.players.0.trophies", equals=["gummy_bear"])), *steps],
           options={"sharing": variant, **(options or {})})


def pool_card(i):
    return lambda s, body: {**body, "card": [c for c in s.table][i]}


sharing("sharing_peaceable.toml", "sharing Peaceable: dealt evenly at random", "rulebook Additional Rules, "
        "Peaceable: deal the cards evenly at random, discard any surplus (2 cards, 2 participants: 1 each).", "peaceable", [])
DESIGNS[-1].steps[-1]["check"] = [chk("view.phase", equals="party"), chk("view.players.1.hand_count", equals=7),
                                  chk("view.players.2.hand_count", equals=7), chk("view.players.0.trophies", equals=["gummy_bear"])]
sharing("sharing_rock_paper_scissors.toml", "sharing Let's play a game: rock-paper-scissors as secret choices",
        "rulebook Additional Rules: the right to choose a card by rock-paper-scissors. Each throw names the card its "
        "seat takes if it wins; throws are simultaneous secret choices. Round 1: rock beats scissors (seat 1 takes "
        "its card); round 2: both rock, nobody; round 3: paper beats rock (seat 2 takes the last card).", "rps",
        [{**S(1, throw("rock", "")), "resolve": pool_card(0)},
         {**S(2, throw("scissors", "")), "resolve": pool_card(1), "check": [chk("view.pool", length=1),
                                                                          chk("view.players.1.hand_count", equals=7)]},
         {**S(1, throw("rock", "")), "resolve": pool_card(0)},
         {**S(2, throw("rock", "")), "resolve": pool_card(0), "check": [chk("view.pool", length=1)]},
         {**S(1, throw("rock", "")), "resolve": pool_card(0)},
         {**S(2, throw("paper", "")), "resolve": pool_card(0), "check": [chk("view.phase", equals="party"),
                                                                       chk("view.players.2.hand_count", equals=7)]}])
sharing("sharing_i_take_what_i_want.toml", "sharing I take what I want: a collision discards, a last card is discarded",
        "rulebook Additional Rules, I take what I want: players point at cards at once (secret picks); a card two "
        "or more pointed at is discarded; if one card remains it is discarded automatically.", "take",
        [{**S(1, pick("")), "resolve": pool_card(0), "check": [chk("chosen", equals=[1]),
                                                             chk("my_choice", seat=2, is_null=True)]},
         {**S(2, pick("")), "resolve": pool_card(0), "check": [chk("view.phase", equals="party"), chk("view.pool", length=0),
                                                             chk("view.players.1.hand_count", equals=6),
                                                             chk("view.players.2.hand_count", equals=6)]}])
sharing("sharing_we_had_better_agree.toml", "sharing We had better agree: a proposal all accept",
        "rulebook Additional Rules, We had better agree: the participants agree within 30 seconds how to share; "
        "seat 1 proposes a card each, seat 2 accepts.", "agree",
        [S(1, propose(1, 2), chk("view.proposal", equals=[1, 2]), chk("deadlines.0.key", equals="agree:1")),
         S(1, accept(), expect="rejected:already_accepted"),
         S(2, accept(), chk("view.phase", equals="party"), chk("view.players.1.hand_count", equals=7),
           chk("view.players.2.hand_count", equals=7))])
sharing("sharing_we_had_better_agree_deadline.toml", "sharing We had better agree: no agreement in 30 s, all discarded",
        "rulebook Additional Rules, We had better agree: if they fail to agree within 30 seconds, all cards taking "
        "part in the sharing are discarded. The 30 s run from the opening of the sharing (a new proposal does not "
        "restart them).", "agree",
        [S(1, propose(1, 2)), WAIT(20_000, False), S(2, propose(2, 2), chk("deadlines.0.at", equals=1_767_225_630_000)),
         WAIT(10_001, True, chk("view.phase", equals="party"), chk("view.players.1.hand_count", equals=6),
              chk("view.players.2.hand_count", equals=6), chk("view.discard_count", equals=5))])

design("last_day_candy_joe_and_final_tie.toml", "the last day with Candy Joe, the final scoring and a shared victory",
       "rulebook Game Process and End of Game: 4 days (option), so the boss deck holds 3 bosses over Candy Joe. "
       "Both players pass every fight and party: their stashes stay equal (every signpost treats them alike), so "
       "the final scores tie and both win (rulebook: a double victory).",
       2, deal(2, 0, {}, location="sugar_hills", bosses=("andy", "gummy_bear", "granny_gumdrop"), coins=[True, True]),
       [UNTIL(lambda s: s.day == 4 and s.phase == "fight", chk("view.boss", equals="candy_joe"),
              chk("view.bosses_left", equals=0), chk("view.day", equals=4)),
        UNTIL(lambda s: s.phase == "over")],
       options={"days": 4},
       final=[chk("status", equals="finished"), chk("result.winners", equals=[0, 1])])


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for d in DESIGNS:
        write(d)
        print("wrote", d.file)


if __name__ == "__main__":
    main()
