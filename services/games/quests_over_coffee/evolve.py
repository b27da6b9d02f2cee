"""Evolve of Quests Over Coffee: fold one event into the state by setting fields.

Never validates, never draws, never raises on a stored event (STYLE checklist 4).
"""

from __future__ import annotations

import msgspec

from schemas.base import Event
from schemas.quests_over_coffee import (
    DiceChosen,
    EnvironmentSwapped,
    HelpPaid,
    ItemBought,
    ItemGiven,
    ItemKept,
    ItemSwapped,
    ItemTraded,
    ItemUsed,
    LeaderRolled,
    QuestChosen,
    QuestResolved,
    Rerolled,
    Rolled,
    SetUp,
    ShopClosed,
    ShopLeft,
    ShopOpened,
    ShopOrderChosen,
)
from services.games.quests_over_coffee.content import PACK
from services.games.quests_over_coffee.state import QocState


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
    if isinstance(ev, (ItemGiven, ItemSwapped, ItemBought, ItemTraded)):
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
