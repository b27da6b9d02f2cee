"""State of Quests Over Coffee: the rules state, maximums, attribute changes, conditions, scoring.

Source: rulebooks/quests-over-coffee.txt ("Player Setup", "Special Conditions", "Final
Scoring", "Final Grading", "Quest Board Scoring"); rulings R3-R9 and R19 in
docs/games/quests_over_coffee.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from schemas.base import Record
from schemas.quests_over_coffee import LeaderRolled, Party, QocOptions
from services.games.quests_over_coffee.content import PACK, Condition, Quest
from services.kernel import Chance, Rejection

MAX_HELP = 3
"""Paying for Help 4: at most 3 additional d6."""
COOP_BASE = (2, 1)
"""Co-op 2: the Leader contributes 2 dice, the other player 1."""
QUESTS_PER_GAME = 10
ROUND_SIZE = 5
BOARD_COUNTS = {1: 3, 2: 4, 3: 3}
"""Quest Board Variant Setup: 3x 1-star, 4x 2-star, 3x 3-star."""


class QocState(Record):
    """The whole rules state (public and secret parts; ``view`` hides deck orders)."""

    mode: str
    seats: int
    quest_board: bool
    use_env: bool
    use_comp: bool
    side: str
    """The side every seat uses unless ``sides`` names one per seat."""
    party: Party
    phase: str = "setup"
    """setup, keep_item, quest, shop, over."""
    round: int = 1
    deck: tuple[str, ...] = ()
    face_up: tuple[str, ...] = ()
    item_deck: tuple[str, ...] = ()
    offers: tuple[tuple[str, ...], ...] = ()
    env_deck: tuple[str, ...] = ()
    environment: str | None = None
    comp_deck: tuple[str, ...] = ()
    leader: int = 0
    active: str | None = None
    help: int = 0
    base: tuple[int, ...] = ()
    extra: tuple[int, ...] = ()
    pool: tuple[tuple[int, ...], ...] = ()
    companion: str | None = None
    kept: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    abandoned: tuple[str, ...] = ()
    prices: tuple[int, ...] = ()
    shop_items: tuple[str | None, ...] = ()
    shop_order: tuple[int, ...] = ()
    traded: bool = False
    env_swapped: bool = False
    defeated: bool = False
    sides: tuple[str, ...] = ()
    """Co-op: each seat's own Player card side (2-Player Variant Setup 2); empty: ``side`` for all."""

    def side_of(self, seat: int) -> str:
        """The Player card side of ``seat``."""
        return self.sides[seat] if self.sides else self.side

    @property
    def dice(self) -> tuple[int, ...]:
        """The dice of the active quest: base dice, then help dice."""
        return self.base + self.extra

    @property
    def rolled(self) -> bool:
        return bool(self.base or self.pool)


# ---------------------------------------------------------------------------------------------
# Limits (Player Setup 2-5 "unless noted otherwise": the player card side and the environment)


def _mods(state: QocState) -> dict[str, int]:
    return dict(PACK.environments[state.environment].mods) if state.environment else {}


def max_of(state: QocState, what: str, seat: int = 0) -> int:
    """Maximum ``health``/``luck``/``items`` of ``seat`` (its own Player card side), or ``money``
    (co-op: the pool, the sum of both sides' maximums, R5)."""
    def base_of(sd: str) -> int:
        side = PACK.sides[sd]
        return {"health": side.max_health, "luck": side.max_luck, "items": side.max_items, "money": side.max_money}[what]

    mod = _mods(state).get(f"max_{what}", 0)
    if what == "money":
        return sum(base_of(state.side_of(i)) + mod for i in range(state.seats))
    return base_of(state.side_of(seat)) + mod


def help_cost(state: QocState, quest: Quest) -> int:
    """Money per help die: the quest's stars (Paying for Help 1) plus the environment's help_cost, at least 1."""
    return max(1, quest.stars + _mods(state).get("help_cost", 0))


def shop_price(state: QocState, slot: int) -> int:
    """Price of a shop slot (1-based): its die plus the environment's shop_price, at least 0."""
    return max(0, state.prices[slot - 1] + _mods(state).get("shop_price", 0))


class _Draft:
    """Mutable copy of a Party; every change is clamped to the maximums (R6)."""

    def __init__(self, state: QocState) -> None:
        self.state = state
        self.health = list(state.party.health)
        self.luck = list(state.party.luck)
        self.money = state.party.money
        self.items = [list(x) for x in state.party.items]
        self.item_deck = list(state.item_deck)

    def add(self, seat: int, op: str, n: int) -> None:
        if op == "health":
            self.health[seat] = min(max(self.health[seat] + n, 0), max_of(self.state, "health", seat))
        elif op == "luck":
            self.luck[seat] = min(max(self.luck[seat] + n, 0), max_of(self.state, "luck", seat))
        elif op == "money":
            self.money = min(max(self.money + n, 0), max_of(self.state, "money"))
        elif op == "item":  # draw n items from the top of the item deck, while there is room (R7)
            for _ in range(max(n, 0)):
                if self.item_deck and len(self.items[seat]) < max_of(self.state, "items", seat):
                    self.items[seat].append(self.item_deck.pop(0))

    def discard_item(self, seat: int, item: str) -> None:
        """Items 2: a used item goes to the bottom of the item deck."""
        self.items[seat].remove(item)
        self.item_deck.append(item)

    def party(self) -> Party:
        return Party(health=tuple(self.health), luck=tuple(self.luck), money=self.money,
                     items=tuple(tuple(x) for x in self.items))


def seat_sides(options: QocOptions, seats: int) -> tuple[str, ...]:
    """Each seat's Player card side: ``player_sides`` if given, else ``player_side`` for every seat."""
    return tuple(options.player_sides) if options.player_sides else (options.player_side,) * seats


def initial_state(options: QocOptions, seats: int) -> QocState:
    """The state before setup: each seat's cubes placed per its own Player card side."""
    sides = seat_sides(options, seats)
    cards = [PACK.sides[sd] for sd in sides]
    party = Party(health=tuple(c.health for c in cards), luck=tuple(c.luck for c in cards),
                  money=sum(c.money for c in cards), items=((),) * seats)
    return QocState(mode=options.mode or ("solo" if seats == 1 else "coop"), seats=seats, quest_board=options.quest_board,
                    use_env=options.environments, use_comp=options.companions,
                    side=sides[0], party=party, sides=sides if options.player_sides else ())


def _leader_roll(seats: int, chance: Chance) -> LeaderRolled:
    """Co-op 1: each seat rolls 1d6, highest wins; a tie rolls again (R3)."""
    rolls: list[list[int]] = []
    for _ in range(100):
        r = [chance.die(6) for _ in range(seats)]
        rolls.append(r)
        if r.count(max(r)) == 1:
            return LeaderRolled(rolls=rolls, leader=r.index(max(r)))
    return LeaderRolled(rolls=rolls, leader=0)


# ---------------------------------------------------------------------------------------------
# Special conditions and bands (Resolving a Quest 2-6; Special Conditions 1-4)


def condition_met(cond: Condition | None, dice: Sequence[int], state: QocState) -> bool:
    """Whether a Special Condition holds for ``dice`` and the Leader's attributes (R9)."""
    if cond is None:
        return False
    if cond.kind == "straight":
        vals = set(dice)
        return any(all(v + k in vals for k in range(cond.length)) for v in vals)
    if cond.kind == "pair":
        return any(list(dice).count(v) >= cond.count for v in set(dice))
    if cond.kind == "exact":
        rest = list(dice)
        for v in cond.values:
            if v not in rest:
                return False
            rest.remove(v)
        return True
    cur = {"health": state.party.health[state.leader], "luck": state.party.luck[state.leader],
           "money": state.party.money}[cond.attr]
    return {"<": cur < cond.value, ">": cur > cond.value, "=": cur == cond.value}[cond.cmp]


def condition_text(cond: Condition | None) -> str:
    """Card text of a Special Condition, e.g. ``[STRAIGHT]``, ``[6,6]``, ``[MONEY < 2]``."""
    if cond is None:
        return ""
    if cond.kind == "straight":
        return "[STRAIGHT]"
    if cond.kind == "pair":
        return "[PAIR]"
    if cond.kind == "exact":
        return "[" + ",".join(map(str, cond.values)) + "]"
    return f"[{cond.attr.upper()} {cond.cmp} {cond.value}]"


def band(quest: Quest, total: int) -> str:
    """``fail`` (total <= Fail), ``success`` (total >= Success) or ``abandon`` (in between)."""
    if total <= quest.fail:
        return "fail"
    if total >= quest.success:
        return "success"
    return "abandon"


# ---------------------------------------------------------------------------------------------
# Scoring (Final Scoring, Final Grading, Quest Board Scoring)


def score(state: QocState) -> int:
    """1 VP per star of kept quests, -1 VP per failed quest; 0 if defeated (Health 1)."""
    if state.defeated:
        return 0
    return sum(PACK.quests[q].stars for q in state.kept) - len(state.failed)


def star_grade(state: QocState) -> int:
    """Total stars of failed and successful quests (abandoned ones excluded; RULINGS)."""
    return sum(PACK.quests[q].stars for q in state.kept + state.failed)


def grade_text(score_: int, grade: int, quest_board: bool) -> str:
    """The grade text: the Quest Board table by score, or the standard table by distance to the Star Grade."""
    if quest_board:
        return next(g.text for g in PACK.board_grades if score_ >= g.min)
    gap = grade - score_
    return next(g.text for g in PACK.standard_grades if gap <= g.within)


# ---------------------------------------------------------------------------------------------
# Decide


def _no(code: str, msg: str) -> Rejection:
    return Rejection(code, msg)


def _need_phase(state: QocState, *phases: str) -> None:
    if state.phase not in phases:
        raise _no("wrong_phase", f"That is not possible in the {state.phase} phase.")


def _need_leader(state: QocState, seat: int) -> None:
    if seat != state.leader:
        raise _no("not_your_turn", f"Seat {state.leader} leads this quest.")


def _need_active(state: QocState) -> Quest:
    if state.active is None:
        raise _no("no_active_quest", "Choose a face-up quest first.")
    return PACK.quests[state.active]


def _need_dice(state: QocState) -> None:
    if not state.rolled:
        raise _no("not_rolled_yet", "Make the Base Roll first.")
    if not state.base:
        raise _no("dice_not_chosen", "The Leader must choose the base dice first.")
