"""Views, redaction and legal commands of Quests Over Coffee.

Hidden (both modes): the order of every face-down deck (round-2 quests, items, environments,
companions). Everything else is open: solo has one player and co-op is played open-handed
(ruling R10). ``view.legal`` lists the seat's accepted commands so bots and clients need
nothing else.
"""

from __future__ import annotations

from itertools import combinations

import msgspec

from schemas.base import Command, Event
from schemas.quests_over_coffee import (
    HIDDEN_FIELDS,
    Accept,
    Buy,
    CardText,
    ChooseDice,
    ChooseQuest,
    ChooseShopOrder,
    GiveItem,
    ItemKept,
    KeepItem,
    LeaveShop,
    PayForHelp,
    QocView,
    QuestCard,
    Reroll,
    Roll,
    SeatView,
    SetUp,
    SwapEnvironment,
    SwapItem,
    Trade,
    UseItem,
)
from services.games.quests_over_coffee.content import DIE_OPS, PACK
from services.games.quests_over_coffee.rules import (
    MAX_HELP,
    QocState,
    condition_text,
    decide,
    grade_text,
    help_cost,
    max_of,
    score,
    shop_price,
    star_grade,
)
from services.kernel import Rejection, SeededChance


def effects_text(effects) -> str:
    """Card text of an event's effects, e.g. ``Health -1, Money +2`` ("" for none)."""
    return ", ".join(f"{e.op.replace('_', ' ').capitalize()} {e.n:+d}" for e in effects)


def card(qid: str) -> QuestCard:
    """The public face of quest ``qid``: bands, the Special Condition and the three events' texts."""
    q = PACK.quests[qid]
    return QuestCard(id=q.id, name=q.name, stars=q.stars, fail=q.fail, success=q.success,
                     special=condition_text(q.special), fail_event=effects_text(q.on_fail),
                     success_event=effects_text(q.on_success), special_event=effects_text(q.on_special))


def card_text(cid: str) -> CardText:
    """Name and text of an item, environment or companion card."""
    c = PACK.items.get(cid) or PACK.environments.get(cid) or PACK.companions[cid]
    return CardText(id=c.id, name=c.name, text=c.text)


def _in_sight(st: QocState, seat: int | None) -> list[str]:
    ids: list[str] = [i for held in st.party.items for i in held]
    if seat is not None and st.offers:
        ids += list(st.offers[seat])
    ids += [i for i in st.shop_items if i is not None]
    ids += [x for x in (st.environment, st.companion) if x is not None]
    return list(dict.fromkeys(ids))


def _candidates(st: QocState, seat: int) -> list[Command]:
    out: list[Command] = []
    mine = st.party.items[seat]
    if st.mode == "coop":  # Co-op 7: give or swap at any time (also while the items are kept)
        out += [GiveItem(item=i) for i in mine]
        out += [SwapItem(item=i, take=j) for i in mine for j in st.party.items[1 - seat]]
    if st.phase == "keep_item":
        return [KeepItem(item=i) for i in st.offers[seat]] + out
    n = len(st.dice)
    for i in mine:
        if any(e.op in DIE_OPS for e in PACK.items[i].effects):
            out += [UseItem(item=i, die=k) for k in range(n)] + [UseItem(item=i)]
        else:
            out.append(UseItem(item=i))
    if st.phase == "quest" and st.active is not None:  # either seat, its own Luck (co-op)
        for r in range(1, n + 1):
            out += [Reroll(dice=list(sub)) for sub in combinations(range(n), r)]
    if st.phase == "quest" and seat == st.leader:
        if st.active is None:
            out += [ChooseQuest(quest=q) for q in st.face_up]
        else:
            for k in range(1, MAX_HELP - st.help + 1):
                out.append(PayForHelp(dice=k))
                if st.use_comp:
                    out.append(PayForHelp(dice=k, companion=True))
            out.append(Roll())
            if st.pool and not st.base:
                out += [ChooseDice(leader=list(p), partner=k) for p in combinations(range(3), 2) for k in range(3)]
            # accept is a sample (docs/games/quests_over_coffee.md "view.legal"): the default split,
            # the Leader keeping everything, giving the partner the items, and one response item each
            out.append(Accept())
            if st.mode == "coop":
                out.append(Accept(to_partner={"health": 0, "luck": 0}, special_to_partner={"health": 0, "luck": 0}))
                out.append(Accept(to_partner={"item": 1}))
                out.append(Accept(special_to_partner={"item": 1}))
            out += [Accept(respond=[i]) for i in mine]
    if st.phase == "shop":
        if seat == st.leader:
            out += [ChooseShopOrder(first=s) for s in range(st.seats)]
        out += [Buy(slot=k) for k in range(1, len(PACK.shop.spots) + 1)]
        out += [Trade(give=i) for i in mine] + [SwapEnvironment(), LeaveShop()]
    return out


def legal_commands(st: QocState, seat: int) -> list[Command]:
    """Every candidate command ``decide`` accepts now for ``seat`` (checked against ``decide``)."""
    if st.phase in ("setup", "over") or not 0 <= seat < st.seats:
        return []
    ok: list[Command] = []
    for c in _candidates(st, seat):
        try:
            decide(st, seat, c, SeededChance(bytes(32), 0))
        except Rejection:
            continue
        ok.append(c)
    return ok


def view(st: QocState, seat: int | None) -> QocView:
    """The seat's view (``seat`` None: spectator, no offers and no legal commands)."""
    sc, sg = score(st), star_grade(st)
    shop_turn = st.shop_order[0] if st.phase == "shop" and st.shop_order else None
    trade = PACK.shop.spots.index("trade") + 1 if "trade" in PACK.shop.spots else 0
    seats = [SeatView(seat=i, health=st.party.health[i], luck=st.party.luck[i], items=list(st.party.items[i]),
                      max_health=max_of(st, "health", i), max_luck=max_of(st, "luck", i), max_items=max_of(st, "items", i))
             for i in range(st.seats)]
    return QocView(
        mode=st.mode, phase=st.phase, round=st.round, face_up=[card(q) for q in st.face_up],
        deck_left=len(st.deck), active=card(st.active) if st.active else None, help=st.help,
        rolled=st.rolled, dice=list(st.dice), pool=[list(p) for p in st.pool], total=sum(st.dice),
        companion=st.companion, seats=seats, money=st.party.money, max_money=max_of(st, "money"),
        leader=st.leader, offers=list(st.offers[seat]) if seat is not None and st.offers else [],
        environment=st.environment, shop_prices=list(st.prices), shop_items=list(st.shop_items),
        shop_trade_slot=trade, shop_turn=shop_turn, kept=list(st.kept), failed=list(st.failed),
        abandoned=list(st.abandoned), score=sc, star_grade=sg,
        grade=grade_text(sc, sg, st.quest_board) if st.phase == "over" else "",
        defeated=st.defeated, legal=legal_commands(st, seat) if seat is not None else [],
        cards=[card_text(i) for i in _in_sight(st, seat)],
        shop_costs=[0 if spot == "trade" else shop_price(st, k + 1) for k, spot in enumerate(PACK.shop.spots)]
        if st.prices else [],
        help_cost=help_cost(st, PACK.quests[st.active]) if st.active else 0,
        item_deck_left=len(st.item_deck), environment_deck_left=len(st.env_deck), companion_deck_left=len(st.comp_deck),
    )


def redact(ev: Event, seat: int | None) -> Event:
    """The event without face-down deck orders (HIDDEN_FIELDS emptied), and as the views hide
    them: the starting item offers only to their seat, the offer sent back to the bottom of the
    item deck (``item_kept.returned``) only to its seat (else it reveals the deck's bottom card)."""
    hidden: dict = {f: [] for f in HIDDEN_FIELDS if f in ev.__struct_fields__}
    if isinstance(ev, SetUp):
        hidden["offers"] = [o if i == seat else [] for i, o in enumerate(ev.offers)]
    if isinstance(ev, ItemKept) and ev.seat != seat:
        hidden["returned"] = None
    return msgspec.structs.replace(ev, **hidden) if hidden else ev
