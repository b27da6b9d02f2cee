"""Rules of Quests Over Coffee: state, setup, decide, evolve, scoring.

Source: rulebooks/quests-over-coffee.txt and ../shared/RULINGS.md "Quests Over Coffee"; the
rulings taken here are listed in docs/games/quests_over_coffee.md ("R1".. in comments).

Flow (phases): ``keep_item`` (Player Setup 5) -> ``quest`` round 1 -> ``shop`` -> ``quest``
round 2 -> ``over``. Resolving one quest (RULINGS: a small state machine): choose_quest ->
[pay_for_help]* -> roll -> (co-op: choose_dice) -> [reroll | use_item | pay_for_help]* -> accept.

Setup draw order (what scenario ``[chance] draws`` must list):
1. quests: ``shuffle`` of every quest id (file order); the first 5 are dealt face down (the
   round-2 deck, under the Shop card), the next 5 face up (round 1). Quest Board variant:
   ``shuffle`` of the one-star ids (first 3 kept), of the two-star ids (first 4), of the
   three-star ids (first 3), then ``shuffle`` of those 10 in that order, dealt as above.
2. ``shuffle`` of every item id: the item deck; each seat in turn is offered its top 2.
3. environments on: ``shuffle`` of environment ids; the first is in play.
4. companions on: ``shuffle`` of companion ids: the companion deck.
5. co-op: the Leader roll-off (``die`` per seat, repeated on a tie) once both items are kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from schemas.base import Command, Event, Record
from schemas.quests_over_coffee import (
    Accept,
    Buy,
    ChooseDice,
    ChooseQuest,
    ChooseShopOrder,
    DiceChosen,
    EnvironmentSwapped,
    GiveItem,
    HelpPaid,
    ItemBought,
    ItemGiven,
    ItemKept,
    ItemTraded,
    ItemUsed,
    KeepItem,
    LeaderRolled,
    LeaveShop,
    Party,
    PayForHelp,
    QocOptions,
    QuestChosen,
    QuestResolved,
    Reroll,
    Rerolled,
    Roll,
    Rolled,
    SetUp,
    ShopClosed,
    ShopLeft,
    ShopOpened,
    ShopOrderChosen,
    SwapEnvironment,
    Trade,
    UseItem,
)
from services.games.quests_over_coffee.content import DIE_OPS, PACK, Condition, Effect, Quest
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


def max_of(state: QocState, what: str) -> int:
    """Maximum ``health``/``luck``/``items`` of a seat, or ``money`` (co-op: the pool, R5)."""
    side = PACK.sides[state.side]
    base = {"health": side.max_health, "luck": side.max_luck, "items": side.max_items, "money": side.max_money}[what]
    base += _mods(state).get(f"max_{what}", 0)
    return base * state.seats if what == "money" else base


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
            self.health[seat] = min(max(self.health[seat] + n, 0), max_of(self.state, "health"))
        elif op == "luck":
            self.luck[seat] = min(max(self.luck[seat] + n, 0), max_of(self.state, "luck"))
        elif op == "money":
            self.money = min(max(self.money + n, 0), max_of(self.state, "money"))
        elif op == "item":  # draw n items from the top of the item deck, while there is room (R7)
            for _ in range(max(n, 0)):
                if self.item_deck and len(self.items[seat]) < max_of(self.state, "items"):
                    self.items[seat].append(self.item_deck.pop(0))

    def discard_item(self, seat: int, item: str) -> None:
        """Items 2: a used item goes to the bottom of the item deck."""
        self.items[seat].remove(item)
        self.item_deck.append(item)

    def party(self) -> Party:
        return Party(health=tuple(self.health), luck=tuple(self.luck), money=self.money,
                     items=tuple(tuple(x) for x in self.items))


# ---------------------------------------------------------------------------------------------
# Setup


def initial_state(options: QocOptions, seats: int) -> QocState:
    """The state before setup: each seat's cubes placed per the chosen Player card side."""
    side = PACK.sides[options.player_side]
    party = Party(health=(side.health,) * seats, luck=(side.luck,) * seats,
                  money=side.money * seats, items=((),) * seats)
    return QocState(mode=options.mode, seats=seats, quest_board=options.quest_board,
                    use_env=options.environments, use_comp=options.companions,
                    side=options.player_side, party=party)


def _ids(cards: dict) -> list[str]:
    return list(cards)


def setup(options: QocOptions, seats: int, chance: Chance) -> list[Event]:
    """Quest Deck, Player, Environment and Companion Setup; draw order in the module docstring."""
    if options.quest_board:
        chosen: list[str] = []
        for stars, n in BOARD_COUNTS.items():
            group = [q for q, c in PACK.quests.items() if c.stars == stars]
            chosen += chance.shuffle(group)[:n]
        order = chance.shuffle(chosen)
    else:
        order = chance.shuffle(_ids(PACK.quests))[:QUESTS_PER_GAME]
    items = chance.shuffle(_ids(PACK.items))
    offers = [items[2 * s: 2 * s + 2] for s in range(seats)]
    envs = chance.shuffle(_ids(PACK.environments)) if options.environments else []
    comps = chance.shuffle(_ids(PACK.companions)) if options.companions else []
    st = initial_state(options, seats)
    return [SetUp(deck=order[:ROUND_SIZE], face_up=order[ROUND_SIZE:], item_deck=items[2 * seats:],
                  offers=offers, environments=envs[1:], environment=envs[0] if envs else None,
                  companions=comps, party=st.party)]


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


def decide(state: QocState, seat: int, cmd: Command, chance: Chance) -> list[Event]:
    """Events for ``cmd`` by ``seat``. Raises Rejection with a code naming the rule."""
    if state.phase == "over":
        raise _no("wrong_phase", "The game is over.")
    handler = _HANDLERS.get(type(cmd))
    if handler is None:
        raise _no("unknown_command", "Quests Over Coffee does not know that command.")
    return handler(state, seat, cmd, chance)


def _keep_item(state: QocState, seat: int, cmd: KeepItem, chance: Chance) -> list[Event]:
    _need_phase(state, "keep_item")
    offer = state.offers[seat]
    if not offer:
        raise _no("already_kept", "You already kept your starting item.")
    if cmd.item not in offer:
        raise _no("not_offered", "Keep one of the two items you drew.")
    other = next((i for i in offer if i != cmd.item), None)
    d = _Draft(state)
    d.items[seat].append(cmd.item)
    if other is not None:
        d.item_deck.append(other)
    out: list[Event] = [ItemKept(seat=seat, item=cmd.item, returned=other, item_deck=d.item_deck, party=d.party())]
    if state.mode == "coop" and all(not o for i, o in enumerate(state.offers) if i != seat):
        out.append(_leader_roll(state.seats, chance))
    return out


def _give_item(state: QocState, seat: int, cmd: GiveItem, chance: Chance) -> list[Event]:
    if state.mode != "coop":
        raise _no("coop_only", "Items are swapped between players only in the co-op variant.")
    _need_phase(state, "quest", "shop")
    if cmd.item not in state.party.items[seat]:
        raise _no("no_such_item", "You do not hold that item.")
    to = 1 - seat
    if len(state.party.items[to]) >= max_of(state, "items"):
        raise _no("item_limit", "Your partner already holds the most items allowed.")
    d = _Draft(state)
    d.items[seat].remove(cmd.item)
    d.items[to].append(cmd.item)
    return [ItemGiven(seat=seat, item=cmd.item, to=to, party=d.party())]


def _use_item(state: QocState, seat: int, cmd: UseItem, chance: Chance) -> list[Event]:
    _need_phase(state, "quest", "shop")
    if cmd.item not in state.party.items[seat]:
        raise _no("no_such_item", "You do not hold that item.")
    card = PACK.items[cmd.item]
    dice = list(state.dice)
    if any(e.op in DIE_OPS for e in card.effects):
        if state.phase != "quest" or state.active is None:
            raise _no("no_active_quest", "A die item is used while resolving a quest.")
        _need_leader(state, seat)
        _need_dice(state)
        if any(e.op != "reroll_all" for e in card.effects if e.op in DIE_OPS):
            if cmd.die is None or not 0 <= cmd.die < len(dice):
                raise _no("bad_die", f"Name a die from 0 to {len(dice) - 1}.")
    d = _Draft(state)
    for e in card.effects:
        if e.op == "bump_die":
            dice[cmd.die] = min(6, dice[cmd.die] + e.n)  # type: ignore[index]
        elif e.op == "set_die":
            dice[cmd.die] = e.n  # type: ignore[index]
        elif e.op == "reroll_all":
            dice = [chance.die(6) for _ in dice]
        else:
            d.add(seat, e.op, e.n)
    d.discard_item(seat, cmd.item)
    return [ItemUsed(seat=seat, item=cmd.item, dice=dice, item_deck=d.item_deck, party=d.party())]


def _choose_quest(state: QocState, seat: int, cmd: ChooseQuest, chance: Chance) -> list[Event]:
    _need_phase(state, "quest")
    _need_leader(state, seat)
    if state.active is not None:
        raise _no("quest_in_progress", "Finish the active quest first.")
    if cmd.quest not in state.face_up:
        raise _no("no_such_quest", "Choose one of the face-up quests.")
    return [QuestChosen(seat=seat, quest=cmd.quest)]


def _pay_for_help(state: QocState, seat: int, cmd: PayForHelp, chance: Chance) -> list[Event]:
    _need_phase(state, "quest")
    _need_leader(state, seat)
    quest = _need_active(state)
    if cmd.dice < 1:
        raise _no("bad_amount", "Pay for at least one die.")
    if state.help + cmd.dice > MAX_HELP:
        raise _no("help_limit_reached", f"At most {MAX_HELP} additional dice per quest.")
    cost = cmd.dice * help_cost(state, quest)
    if state.party.money < cost:
        raise _no("not_enough_money", f"{cmd.dice} help dice cost {cost} Money.")
    if cmd.companion:
        if not state.use_comp:
            raise _no("companions_off", "This game is played without Companions.")
        if state.companion is not None:
            raise _no("companion_already", "A Companion already helps with this quest.")
        if not state.comp_deck:
            raise _no("no_companion_left", "The Companion deck is empty.")
    d = _Draft(state)
    d.money -= cost
    n = cmd.dice
    comp = state.comp_deck[0] if cmd.companion else None
    if comp is not None:
        for e in PACK.companions[comp].effects:
            if e.op == "free_die":
                n = min(MAX_HELP - state.help, n + e.n)
            else:
                d.add(seat, e.op, e.n)
    rolled = [chance.die(6) for _ in range(n)] if state.rolled else []
    return [HelpPaid(dice=n, cost=cost, rolled=rolled, companion=comp,
                     companions=list(state.comp_deck[1:]) if comp else list(state.comp_deck),
                     help=state.help + n, party=d.party())]


def _roll(state: QocState, seat: int, cmd: Roll, chance: Chance) -> list[Event]:
    _need_phase(state, "quest")
    _need_leader(state, seat)
    _need_active(state)
    if state.rolled:
        raise _no("already_rolled", "The Base Roll is made; use Luck or items to change it.")
    if state.mode == "coop":
        n = PACK.sides[state.side].dice
        pool = [[chance.die(6) for _ in range(n)] for _ in range(state.seats)]
        extra = [chance.die(6) for _ in range(state.help)]
        return [Rolled(base=[], pool=pool, extra=extra)]
    base = [chance.die(6) for _ in range(PACK.sides[state.side].dice)]
    extra = [chance.die(6) for _ in range(state.help)]
    return [Rolled(base=base, pool=[], extra=extra)]


def _choose_dice(state: QocState, seat: int, cmd: ChooseDice, chance: Chance) -> list[Event]:
    if state.mode != "coop":
        raise _no("coop_only", "Base dice are chosen only in the co-op variant.")
    _need_phase(state, "quest")
    _need_leader(state, seat)
    _need_active(state)
    if not state.pool:
        raise _no("not_rolled_yet", "Make the Base Roll first.")
    if state.base:
        raise _no("dice_already_chosen", "The base dice are already chosen.")
    mine, theirs = state.pool[seat], state.pool[1 - seat]
    idx = cmd.leader
    if (len(idx) != COOP_BASE[0] or len(set(idx)) != len(idx) or not all(0 <= i < len(mine) for i in idx)
            or not 0 <= cmd.partner < len(theirs)):
        raise _no("bad_dice", "The Leader picks 2 of their own dice and 1 of the partner's.")
    return [DiceChosen(base=[mine[i] for i in idx] + [theirs[cmd.partner]])]


def _reroll(state: QocState, seat: int, cmd: Reroll, chance: Chance) -> list[Event]:
    _need_phase(state, "quest")
    _need_leader(state, seat)
    _need_active(state)
    _need_dice(state)
    payer = seat if cmd.payer is None else cmd.payer
    if not 0 <= payer < state.seats:
        raise _no("bad_payer", "The payer must be a seat of the game.")
    n = len(state.dice)
    if not cmd.dice or len(set(cmd.dice)) != len(cmd.dice) or not all(0 <= i < n for i in cmd.dice):
        raise _no("bad_dice", f"Name distinct dice from 0 to {n - 1}.")
    if state.party.luck[payer] < 1:
        raise _no("no_luck_left", "Rerolling costs one Luck.")
    dice = list(state.dice)
    for i in sorted(cmd.dice):
        dice[i] = chance.die(6)
    d = _Draft(state)
    d.luck[payer] -= 1
    return [Rerolled(payer=payer, indexes=sorted(cmd.dice), dice=dice, party=d.party())]


def _split(state: QocState, op: str, total: int, to_partner: dict[str, int]) -> tuple[int, int]:
    """Co-op 3-4: (leader delta, partner delta) of a ``health``/``luck`` change (R4)."""
    if state.mode != "coop":
        return total, 0
    share = to_partner.get(op, abs(total) // 2)
    if not 0 <= share <= abs(total):
        raise _no("bad_split", f"Give the partner 0 to {abs(total)} of the {op} change.")
    sign = 1 if total >= 0 else -1
    return total - sign * share, sign * share


def _accept(state: QocState, seat: int, cmd: Accept, chance: Chance) -> list[Event]:
    _need_phase(state, "quest")
    _need_leader(state, seat)
    quest = _need_active(state)
    _need_dice(state)
    if state.mode != "coop" and cmd.to_partner:
        raise _no("bad_split", "Rewards are split only in the co-op variant.")
    if any(k not in ("health", "luck") for k in cmd.to_partner):
        raise _no("bad_split", "Only health and luck changes are split (money is pooled).")
    held = list(state.party.items[seat])
    for it in cmd.respond:
        if it not in held:
            raise _no("no_such_item", f"You do not hold {it!r}.")
        if any(e.op in DIE_OPS for e in PACK.items[it].effects):
            raise _no("not_a_response_item", "Die items are used before accepting.")
        held.remove(it)
    d = _Draft(state)
    for it in cmd.respond:  # Items 3: last in, first out -- the responses resolve first (R8)
        for e in PACK.items[it].effects:
            d.add(seat, e.op, e.n)
        d.discard_item(seat, it)
    after_items = msgspec.structs.replace(state, party=d.party())
    dice = state.dice
    total = sum(dice)
    b = band(quest, total)
    special = condition_met(quest.special, dice, after_items)
    effects: list[Effect] = list(quest.on_fail if b == "fail" else quest.on_success if b == "success" else ())
    if special:
        effects += quest.on_special
    for op in ("health", "luck"):
        total_op = sum(e.n for e in effects if e.op == op)
        if total_op or op in cmd.to_partner:
            mine, theirs = _split(state, op, total_op, cmd.to_partner)
            d.add(seat, op, mine)
            if state.mode == "coop":
                d.add(1 - seat, op, theirs)
    money = sum(e.n for e in effects if e.op == "money")
    if money:
        d.add(seat, "money", money)
    for e in effects:
        if e.op == "item":
            d.add(seat, "item", e.n)
    comps = list(state.comp_deck) + ([state.companion] if state.companion else [])
    party = d.party()
    defeated = any(h <= 0 for h in party.health)
    out: list[Event] = [QuestResolved(quest=quest.id, total=total, band=b, special=special,  # type: ignore[arg-type]
                                      responded=list(cmd.respond), item_deck=d.item_deck,
                                      companions=comps, party=party, defeated=defeated)]
    left = [q for q in state.face_up if q != quest.id]
    if defeated or left:
        if left and state.mode == "coop":
            out.append(_leader_roll(state.seats, chance))
        return out
    if state.round == 1:
        out.append(_open_shop(state, d.item_deck, chance))
    return out


def _open_shop(state: QocState, item_deck: list[str], chance: Chance) -> ShopOpened:
    """Setting Up the Shop 2-4: roll 3d6 prices, shuffle the item deck, deal 3 items in order."""
    prices = [chance.die(6) for _ in PACK.shop.spots]
    deck = chance.shuffle(item_deck)
    items: list[str | None] = [deck.pop(0) if deck else None for _ in PACK.shop.spots]
    order = [0] if state.mode == "solo" else []
    return ShopOpened(prices=prices, items=items, item_deck=deck, order=order)


def _shop_visitor(state: QocState, seat: int) -> None:
    _need_phase(state, "shop")
    if not state.shop_order:
        raise _no("shop_order_not_chosen", "Decide who enters the Shop first.")
    if seat != state.shop_order[0]:
        raise _no("not_your_turn", f"Seat {state.shop_order[0]} is in the Shop.")


def _choose_shop_order(state: QocState, seat: int, cmd: ChooseShopOrder, chance: Chance) -> list[Event]:
    _need_phase(state, "shop")
    if state.mode != "coop":
        raise _no("coop_only", "The Shop order is chosen only in the co-op variant.")
    _need_leader(state, seat)
    if state.shop_order:
        raise _no("shop_order_chosen", "The Shop order is already decided.")
    if not 0 <= cmd.first < state.seats:
        raise _no("bad_seat", "The first visitor must be a seat of the game.")
    return [ShopOrderChosen(order=[cmd.first, 1 - cmd.first])]


def _slot(state: QocState, slot: int) -> str:
    if not 1 <= slot <= len(PACK.shop.spots):
        raise _no("no_such_slot", f"The Shop has Item spots 1 to {len(PACK.shop.spots)}.")
    item = state.shop_items[slot - 1]
    if item is None:
        raise _no("slot_empty", "That Item spot is empty.")
    return item


def _buy(state: QocState, seat: int, cmd: Buy, chance: Chance) -> list[Event]:
    _shop_visitor(state, seat)
    item = _slot(state, cmd.slot)
    if PACK.shop.spots[cmd.slot - 1] == "trade":
        raise _no("slot_is_trade", "The TRADE spot's item is traded, not bought.")
    price = shop_price(state, cmd.slot)
    if state.party.money < price:
        raise _no("not_enough_money", f"That item costs {price} Money.")
    if len(state.party.items[seat]) >= max_of(state, "items"):
        raise _no("item_limit", "You already hold the most items allowed.")
    d = _Draft(state)
    d.money -= price
    d.items[seat].append(item)
    return [ItemBought(seat=seat, slot=cmd.slot, item=item, price=price, party=d.party())]


def _trade(state: QocState, seat: int, cmd: Trade, chance: Chance) -> list[Event]:
    _shop_visitor(state, seat)
    if "trade" not in PACK.shop.spots:
        raise _no("no_trade_spot", "This Shop card has no TRADE spot.")
    slot = PACK.shop.spots.index("trade") + 1
    item = _slot(state, slot)
    if state.traded:
        raise _no("trade_used", "One trade per Shop visit.")
    if cmd.give not in state.party.items[seat]:
        raise _no("no_such_item", "You do not hold that item.")
    d = _Draft(state)
    d.items[seat].remove(cmd.give)
    d.items[seat].append(item)
    return [ItemTraded(seat=seat, gave=cmd.give, took=item, party=d.party())]


def _swap_env(state: QocState, seat: int, cmd: SwapEnvironment, chance: Chance) -> list[Event]:
    _shop_visitor(state, seat)
    if not state.use_env:
        raise _no("environments_off", "This game is played without Environments.")
    if state.env_swapped:
        raise _no("environment_already_swapped", "The Environment is swapped at most once per Shop.")
    if not state.env_deck:
        raise _no("no_environment_left", "The Environment deck is empty.")
    after = msgspec.structs.replace(state, environment=state.env_deck[0])
    d = _Draft(after)
    for seat_ in range(state.seats):  # R6: values above a lowered maximum come down to it
        d.add(seat_, "health", 0)
        d.add(seat_, "luck", 0)
        while len(d.items[seat_]) > max_of(after, "items"):
            d.discard_item(seat_, d.items[seat_][-1])
    d.add(0, "money", 0)
    return [EnvironmentSwapped(old=state.environment, new=state.env_deck[0], environments=list(state.env_deck[1:]),
                               party=d.party(), item_deck=d.item_deck)]


def _leave_shop(state: QocState, seat: int, cmd: LeaveShop, chance: Chance) -> list[Event]:
    _shop_visitor(state, seat)
    deck = list(state.item_deck)
    items = list(state.shop_items)
    if len(state.shop_order) > 1:  # Co-op 6: refill after the first visitor, keeping unbought items
        items = [it if it is not None else (deck.pop(0) if deck else None) for it in items]
        return [ShopLeft(seat=seat, items=items, item_deck=deck)]
    out: list[Event] = [ShopLeft(seat=seat, items=items, item_deck=deck)]
    back = chance.shuffle(deck + [it for it in items if it is not None])  # Shop 6
    out.append(ShopClosed(item_deck=back, face_up=list(state.deck)))
    if state.mode == "coop":
        out.append(_leader_roll(state.seats, chance))
    return out


_HANDLERS = {
    KeepItem: _keep_item, GiveItem: _give_item, UseItem: _use_item, ChooseQuest: _choose_quest,
    PayForHelp: _pay_for_help, Roll: _roll, ChooseDice: _choose_dice, Reroll: _reroll,
    Accept: _accept, ChooseShopOrder: _choose_shop_order, Buy: _buy, Trade: _trade,
    SwapEnvironment: _swap_env, LeaveShop: _leave_shop,
}


# ---------------------------------------------------------------------------------------------
# Evolve: only sets fields from the event (never validates, never draws)


def _clear_quest(st: QocState, **kw) -> QocState:
    return msgspec.structs.replace(st, active=None, help=0, base=(), extra=(), pool=(), companion=None, **kw)


def evolve(st: QocState, ev: Event) -> QocState:
    """Fold one event into the state. Total: an unknown event leaves the state unchanged."""
    rep = msgspec.structs.replace
    if isinstance(ev, SetUp):
        return rep(st, phase="keep_item", deck=tuple(ev.deck), face_up=tuple(ev.face_up),
                   item_deck=tuple(ev.item_deck), offers=tuple(tuple(o) for o in ev.offers),
                   env_deck=tuple(ev.environments), environment=ev.environment,
                   comp_deck=tuple(ev.companions), party=ev.party)
    if isinstance(ev, ItemKept):
        offers = tuple(() if i == ev.seat else o for i, o in enumerate(st.offers))
        return rep(st, offers=offers, item_deck=tuple(ev.item_deck), party=ev.party,
                   phase="quest" if not any(offers) else st.phase)
    if isinstance(ev, LeaderRolled):
        return rep(st, leader=ev.leader)
    if isinstance(ev, QuestChosen):
        return rep(st, active=ev.quest)
    if isinstance(ev, HelpPaid):
        return rep(st, help=ev.help, extra=st.extra + tuple(ev.rolled), companion=ev.companion or st.companion,
                   comp_deck=tuple(ev.companions), party=ev.party)
    if isinstance(ev, Rolled):
        return rep(st, base=tuple(ev.base), pool=tuple(tuple(p) for p in ev.pool), extra=tuple(ev.extra))
    if isinstance(ev, DiceChosen):
        return rep(st, base=tuple(ev.base))
    if isinstance(ev, (Rerolled, ItemUsed)):
        st = rep(st, party=ev.party, item_deck=tuple(ev.item_deck) if isinstance(ev, ItemUsed) else st.item_deck)
        if st.base:
            n = len(st.base)
            st = rep(st, base=tuple(ev.dice[:n]), extra=tuple(ev.dice[n:]))
        return st
    if isinstance(ev, (ItemGiven, ItemBought, ItemTraded)):
        st = rep(st, party=ev.party)
        if isinstance(ev, ItemBought):
            st = rep(st, shop_items=tuple(None if i == ev.slot - 1 else x for i, x in enumerate(st.shop_items)))
        if isinstance(ev, ItemTraded):
            slot = PACK.shop.spots.index("trade")
            st = rep(st, traded=True, shop_items=tuple(ev.gave if i == slot else x for i, x in enumerate(st.shop_items)))
        return st
    if isinstance(ev, QuestResolved):
        kept = st.kept + ((ev.quest,) if ev.band == "success" else ())
        failed = st.failed + ((ev.quest,) if ev.band == "fail" else ())
        abandoned = st.abandoned + ((ev.quest,) if ev.band == "abandon" else ())
        face_up = tuple(q for q in st.face_up if q != ev.quest)
        over = ev.defeated or (not face_up and st.round == 2)
        return _clear_quest(st, kept=kept, failed=failed, abandoned=abandoned, face_up=face_up,
                            item_deck=tuple(ev.item_deck), comp_deck=tuple(ev.companions),
                            party=ev.party, defeated=ev.defeated, phase="over" if over else st.phase)
    if isinstance(ev, ShopOpened):
        return rep(st, phase="shop", prices=tuple(ev.prices), shop_items=tuple(ev.items),
                   item_deck=tuple(ev.item_deck), shop_order=tuple(ev.order), traded=False, env_swapped=False)
    if isinstance(ev, ShopOrderChosen):
        return rep(st, shop_order=tuple(ev.order))
    if isinstance(ev, EnvironmentSwapped):
        return rep(st, environment=ev.new, env_deck=tuple(ev.environments), env_swapped=True,
                   party=ev.party, item_deck=tuple(ev.item_deck))
    if isinstance(ev, ShopLeft):
        return rep(st, shop_items=tuple(ev.items), item_deck=tuple(ev.item_deck),
                   shop_order=st.shop_order[1:], traded=False)
    if isinstance(ev, ShopClosed):
        return rep(st, phase="quest", round=2, item_deck=tuple(ev.item_deck), face_up=tuple(ev.face_up),
                   deck=(), prices=(), shop_items=())
    return st
