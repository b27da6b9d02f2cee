"""Rules of Quests Over Coffee: setup and decide (the shop's commands are in ``shop.py``).

Source: rulebooks/quests-over-coffee.txt and ../shared/RULINGS.md "Quests Over Coffee"; the
rulings taken here are listed in docs/games/quests_over_coffee.md ("R1".. in comments).

Flow (phases): ``keep_item`` (Player Setup 5) -> ``quest`` round 1 -> ``shop`` -> ``quest``
round 2 -> ``over``. Resolving one quest (RULINGS: a small state machine): choose_quest ->
[pay_for_help]* -> roll -> (co-op: choose_dice) -> [reroll | use_item | pay_for_help]* -> accept.

Setup draw order (what scenario ``[chance] draws`` must list):
1. quests: ``shuffle`` of every quest id (file order); the first 5 are dealt face down (the
   round-2 deck, under the Shop card), the next 5 face up (round 1). Quest Board variant:
   ``shuffle`` of the one-star ids (first 3 kept), of the two-star ids (first 4), of the
   three-star ids (first 3), then ``shuffle`` of those 10 in that order, dealt as above;
   with ``board_quests`` chosen: one ``shuffle`` of the chosen 10 in the order given.
2. ``shuffle`` of every item id: the item deck; each seat in turn is offered its top 2.
3. environments on: ``shuffle`` of environment ids; the first is in play.
4. companions on: ``shuffle`` of companion ids: the companion deck.
5. co-op: the Leader roll-off (``die`` per seat, repeated on a tie) once both items are kept.
"""

from __future__ import annotations

import msgspec

from schemas.base import Command, Event
from schemas.quests_over_coffee import (
    Accept,
    Buy,
    ChooseDice,
    ChooseQuest,
    ChooseShopOrder,
    DiceChosen,
    GiveItem,
    HelpPaid,
    ItemGiven,
    ItemKept,
    ItemSwapped,
    ItemUsed,
    KeepItem,
    LeaveShop,
    PayForHelp,
    QocOptions,
    QuestChosen,
    QuestResolved,
    Reroll,
    Rerolled,
    Roll,
    Rolled,
    SetUp,
    SwapEnvironment,
    SwapItem,
    Trade,
    UseItem,
)
from services.games.quests_over_coffee.content import DIE_OPS, PACK, Effect
from services.games.quests_over_coffee.evolve import evolve
from services.games.quests_over_coffee.shop import (
    _buy,
    _choose_shop_order,
    _leave_shop,
    _open_shop,
    _swap_env,
    _trade,
)
from services.games.quests_over_coffee.state import (
    BOARD_COUNTS,
    COOP_BASE,
    MAX_HELP,
    QUESTS_PER_GAME,
    ROUND_SIZE,
    QocState,
    _Draft,
    _leader_roll,
    _need_active,
    _need_dice,
    _need_leader,
    _need_phase,
    _no,
    band,
    condition_met,
    condition_text,
    grade_text,
    help_cost,
    initial_state,
    max_of,
    score,
    shop_price,
    star_grade,
)
from services.kernel import Chance, Rejection

__all__ = [
    "MAX_HELP", "QocState", "band", "condition_met", "condition_text", "decide", "evolve",
    "check_board_quests", "grade_text", "help_cost", "initial_state", "max_of", "score", "setup", "shop_price", "star_grade",
]


def _ids(cards: dict) -> list[str]:
    return list(cards)


def check_board_quests(options: QocOptions) -> None:
    """Quest Board Variant Setup: the chosen quests are 3 one-star, 4 two-star and 3 three-star
    quests of the pack, all different. Raises Rejection ``bad_options``."""
    chosen = options.board_quests
    if not chosen:
        return
    if not options.quest_board:
        raise Rejection("bad_options", "board_quests is an option of the Quest Board variant (quest_board = true).")
    unknown = [q for q in chosen if q not in PACK.quests]
    if unknown:
        raise Rejection("bad_options", f"{unknown[0]!r} is not a quest of this game.")
    counts = {stars: sum(PACK.quests[q].stars == stars for q in chosen) for stars in BOARD_COUNTS}
    if len(set(chosen)) != len(chosen) or counts != BOARD_COUNTS or len(chosen) != QUESTS_PER_GAME:
        raise Rejection("bad_options", "Choose 10 different quests: 3 one-star, 4 two-star and 3 three-star.")


def setup(options: QocOptions, seats: int, chance: Chance) -> list[Event]:
    """Quest Deck, Player, Environment and Companion Setup; draw order in the module docstring."""
    if options.quest_board and options.board_quests:  # the players chose their 3 + 4 + 3: "Shuffle and begin!"
        order = chance.shuffle(list(options.board_quests))
    elif options.quest_board:
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


def _need_swap(state: QocState, seat: int, item: str) -> int:
    """Co-op 7 ("Players may swap Items at any time"): checks shared by give and swap; the partner."""
    if state.mode != "coop":
        raise _no("coop_only", "Items are swapped between players only in the co-op variant.")
    _need_phase(state, "keep_item", "quest", "shop")
    if item not in state.party.items[seat]:
        raise _no("no_such_item", "You do not hold that item.")
    return 1 - seat


def _give_item(state: QocState, seat: int, cmd: GiveItem, chance: Chance) -> list[Event]:
    to = _need_swap(state, seat, cmd.item)
    if len(state.party.items[to]) >= max_of(state, "items", to):
        raise _no("item_limit", "Your partner already holds the most items allowed; swap one for one instead.")
    d = _Draft(state)
    d.items[seat].remove(cmd.item)
    d.items[to].append(cmd.item)
    return [ItemGiven(seat=seat, item=cmd.item, to=to, party=d.party())]


def _swap_item(state: QocState, seat: int, cmd: SwapItem, chance: Chance) -> list[Event]:
    to = _need_swap(state, seat, cmd.item)
    if cmd.take not in state.party.items[to]:
        raise _no("no_such_item", "Your partner does not hold that item.")
    d = _Draft(state)
    d.items[seat][d.items[seat].index(cmd.item)] = cmd.take
    d.items[to][d.items[to].index(cmd.take)] = cmd.item
    return [ItemSwapped(seat=seat, gave=cmd.item, took=cmd.take, to=to, party=d.party())]


def _use_item(state: QocState, seat: int, cmd: UseItem, chance: Chance) -> list[Event]:
    _need_phase(state, "quest", "shop")
    if cmd.item not in state.party.items[seat]:
        raise _no("no_such_item", "You do not hold that item.")
    card = PACK.items[cmd.item]
    dice = list(state.dice)
    if any(e.op in DIE_OPS for e in card.effects):
        if state.phase != "quest" or state.active is None:
            raise _no("no_active_quest", "A die item is used while resolving a quest.")
        _need_dice(state)  # co-op: either seat, on the shared base dice, with its own items
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
        pool = [[chance.die(6) for _ in range(PACK.sides[state.side_of(i)].dice)] for i in range(state.seats)]
        extra = [chance.die(6) for _ in range(state.help)]
        return [Rolled(base=[], pool=pool, extra=extra)]
    base = [chance.die(6) for _ in range(PACK.sides[state.side_of(0)].dice)]
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
    _need_active(state)
    _need_dice(state)  # co-op: either seat rerolls the shared base dice with its own Luck
    payer = seat if cmd.payer is None else cmd.payer
    if payer != seat:
        raise _no("bad_payer", f"Only seat {payer} can spend its Luck: it sends the reroll itself.")
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


SPLIT_KEYS = ("health", "luck", "item")
"""Parts of a reward the co-op Leader splits (money is pooled, co-op 5)."""


def _split(state: QocState, op: str, total: int, to_partner: dict[str, int]) -> tuple[int, int]:
    """Co-op 3-4: (leader delta, partner delta) of a ``health``/``luck``/``item`` change (R4).

    Default share: half of a health/luck change (rounded down), none of the items.
    """
    if state.mode != "coop":
        return total, 0
    share = to_partner.get(op, abs(total) // 2 if op != "item" else 0)
    if not 0 <= share <= abs(total):
        raise _no("bad_split", f"Give the partner 0 to {abs(total)} of the {op} change.")
    sign = 1 if total >= 0 else -1
    return total - sign * share, sign * share


def _draw_items(d: _Draft, leader: int, mine: int, theirs: int) -> None:
    """Item rewards: the partner's share first, then the Leader's; a card whose receiver holds the
    most items goes to the other seat if it has room, else stays in the deck (R7)."""
    partner = 1 - leader if d.state.seats > 1 else leader
    for target in [partner] * theirs + [leader] * mine:
        for who in (target, partner if target == leader else leader):
            if d.item_deck and len(d.items[who]) < max_of(d.state, "items", who):
                d.items[who].append(d.item_deck.pop(0))
                break


def _apply_stage(state: QocState, d: _Draft, seat: int, stage: list[Effect], split: dict[str, int]) -> None:
    """Apply one event of a quest (Fail/Success, or the Special), split in co-op by the Leader."""
    for op in SPLIT_KEYS:
        total_op = sum(e.n for e in stage if e.op == op)
        if not total_op:
            continue
        mine, theirs = _split(state, op, total_op, split)
        if op == "item":
            _draw_items(d, seat, mine, theirs)
            continue
        d.add(seat, op, mine)
        if state.mode == "coop":
            d.add(1 - seat, op, theirs)
    money = sum(e.n for e in stage if e.op == "money")
    if money:
        d.add(seat, "money", money)


def _accept(state: QocState, seat: int, cmd: Accept, chance: Chance) -> list[Event]:
    _need_phase(state, "quest")
    _need_leader(state, seat)
    quest = _need_active(state)
    _need_dice(state)
    if state.mode != "coop" and (cmd.to_partner or cmd.special_to_partner):
        raise _no("bad_split", "Rewards are split only in the co-op variant.")
    if any(k not in SPLIT_KEYS for k in (*cmd.to_partner, *cmd.special_to_partner)):
        raise _no("bad_split", "Only health, luck and item changes are split (money is pooled).")
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
    main = list(quest.on_fail if b == "fail" else quest.on_success if b == "success" else ())
    stages = [(main, cmd.to_partner), (list(quest.on_special) if special else [], cmd.special_to_partner)]
    for stage, split in stages:  # every split is checked before anything is applied
        for op in SPLIT_KEYS:
            n = sum(e.n for e in stage if e.op == op)
            if n or op in split:
                _split(state, op, n, split)
    # One order in every mode (RULINGS): the Fail or Success event, then the Special event, each
    # applied (and clamped) in turn; Health 0 after the first ends the game before the Special.
    out_of_health = False
    for stage, split in stages:
        _apply_stage(state, d, seat, stage, split)
        out_of_health = any(h <= 0 for h in d.health)
        if out_of_health:
            break
    comps = list(state.comp_deck) + ([state.companion] if state.companion else [])
    party = d.party()
    defeated = out_of_health
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


_HANDLERS = {
    KeepItem: _keep_item, GiveItem: _give_item, SwapItem: _swap_item, UseItem: _use_item, ChooseQuest: _choose_quest,
    PayForHelp: _pay_for_help, Roll: _roll, ChooseDice: _choose_dice, Reroll: _reroll,
    Accept: _accept, ChooseShopOrder: _choose_shop_order, Buy: _buy, Trade: _trade,
    SwapEnvironment: _swap_env, LeaveShop: _leave_shop,
}
