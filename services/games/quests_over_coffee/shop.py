"""The Shop of Quests Over Coffee: opening it, buying, TRADE, environment swap, leaving.

Source: rulebook "Shop" (Setting Up the Shop 1-7), "Environments" 2, co-op variant 6; rulings
R13-R14 in docs/games/quests_over_coffee.md.
"""

from __future__ import annotations

import msgspec

from schemas.base import Event
from schemas.quests_over_coffee import (
    Buy,
    ChooseShopOrder,
    EnvironmentSwapped,
    ItemBought,
    ItemTraded,
    LeaveShop,
    ShopClosed,
    ShopLeft,
    ShopOpened,
    ShopOrderChosen,
    SwapEnvironment,
    Trade,
)
from services.games.quests_over_coffee.content import PACK
from services.games.quests_over_coffee.state import (
    QocState,
    _Draft,
    _leader_roll,
    _need_leader,
    _need_phase,
    _no,
    max_of,
    shop_price,
)
from services.kernel import Chance


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
    if len(state.party.items[seat]) >= max_of(state, "items", seat):
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
        while len(d.items[seat_]) > max_of(after, "items", seat_):
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
