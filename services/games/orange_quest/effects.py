"""Named handlers chosen by the content data: card effects, curses, equipment uses, hero abilities.

A card's ``effect`` (cards.toml) picks a handler of :data:`EFFECTS`; equipment's ``use`` one of
:data:`USES`; a hero's ``ability`` one of :data:`ABILITIES`. Handlers take the running
:class:`~services.games.orange_quest.flow.Flow` and emit events; the legality checks are in
rules.py (they raise Rejection before any handler runs).
Source: cards.toml / heroes.toml texts; rulebook "Action Cards", "6 Hero Cards".
"""

from __future__ import annotations

from collections.abc import Callable

from schemas.orange_quest import Modified
from services.games.orange_quest.content import ABILITIES, CARDS, Card
from services.games.orange_quest.content import EFFECTS as EFFECT_NAMES
from services.games.orange_quest.content import USES as USE_NAMES
from services.games.orange_quest.flow import Flow
from services.games.orange_quest.state import order_from

Effect = Callable[[Flow, int, Card, "int | None", "str | None"], None]


def _equip(f: Flow, seat: int, card: Card, target, item) -> None:
    f.move("table", f"equip:{seat}", [card.id], "equipment")


def _curse(f: Flow, seat: int, card: Card, target, item) -> None:
    f.move("table", f"curse:{target}", [card.id], "curse")


def _block(f: Flow, seat: int, card: Card, target, item) -> None:
    """A Block outside a chain: destroy ``item`` of ``target`` (still attached)."""
    if target is not None and item in f.s.equipment[target]:
        f.move(f"equip:{target}", "discard", [item], "block")


def _steal_candy(f: Flow, seat: int, card: Card, target, item) -> None:
    f.steal_candies(seat, target, card.value, card.base)


def _discard_random(f: Flow, seat: int, card: Card, target, item) -> None:
    f.discard_random(target, card.value, card.base)


def _draw(f: Flow, seat: int, card: Card, target, item) -> None:
    f.draw(seat, card.value, card.base)


def _gamble(f: Flow, seat: int, card: Card, target, item) -> None:
    if f.coin(seat, card.base):
        f.gain(seat, card.value, card.base)
    else:
        f.lose(seat, 1, card.base)


def _candy(f: Flow, seat: int, card: Card, target, item) -> None:
    f.gain(seat, card.value, card.base)


def _everyone_draws(f: Flow, seat: int, card: Card, target, item) -> None:
    for who in order_from(f.s, seat):
        f.draw(who, card.value, card.base)


def _lose_candy(f: Flow, seat: int, card: Card, target, item) -> None:
    f.lose(target, card.value, card.base)


def _steal_card(f: Flow, seat: int, card: Card, target, item) -> None:
    f.move(f"hand:{target}", f"hand:{seat}", f.chance_pick(f.s.hands[target], card.value), card.base)


def _combat(f: Flow, seat: int, card: Card, target, item) -> None:
    """Combat cards act when played (evolve adds the damage or the reduction)."""


EFFECTS: dict[str, Effect] = {
    "damage": _combat, "reduce": _combat, "block": _block, "curse": _curse, "steal_candy": _steal_candy,
    "discard_random": _discard_random, "draw": _draw, "gamble": _gamble, "equip": _equip, "candy": _candy,
    "everyone_draws": _everyone_draws, "lose_candy": _lose_candy, "steal_card": _steal_card,
}
"""Card effect handlers: applied when a quick card's chain resolves with it applying, or at once
for party cards. Curse and equipment handlers attach the card (their action comes later)."""


def curse_effect(f: Flow, seat: int, card_id: str) -> None:
    """A curse's action on its trigger (the card is discarded by the caller)."""
    card = CARDS[card_id]
    if card.base == "mark":
        f.lose(seat, card.value, "mark")
    elif card.base == "stomach_ache":
        f.discard_random(seat, card.value, "stomach_ache")
    # bad_dream: the Morning draws one card fewer (flow.step_morning)


def boost(f: Flow, seat: int, amount: int, reason: str) -> None:
    f.emit(Modified(seat=seat, amount=amount, reason=reason))


def _use_lucky(f: Flow, seat: int, card: Card) -> None:
    if f.coin(seat, card.base):
        f.gain(seat, card.value, card.base)


def _use_draw(f: Flow, seat: int, card: Card) -> None:
    f.draw(seat, card.value, card.base)


def _use_boost(f: Flow, seat: int, card: Card) -> None:
    boost(f, seat, card.value, card.base)


USES: dict[str, Callable[[Flow, int, Card], None]] = {"lucky": _use_lucky, "draw": _use_draw, "boost": _use_boost}


def _scout(f: Flow, seat: int, card: str | None) -> None:
    """Christian: the top 2 to his aside; the first combat card to hand and the other to the
    discard pile; no combat card: both back on top in the same order (ruling)."""
    looked = f.take_deck(2, f"aside:{seat}", "scout_combat")
    combat = [c for c in looked if CARDS[c].frame == "combat"]
    if not combat:
        f.move(f"aside:{seat}", "deck", looked, "scout_combat")
        return
    f.move(f"aside:{seat}", f"hand:{seat}", combat[:1], "scout_combat")
    f.move(f"aside:{seat}", "discard", [c for c in looked if c != combat[0]], "scout_combat")


def _coin_boost(f: Flow, seat: int, card: str | None) -> None:
    if f.coin(seat, "coin_boost"):
        boost(f, seat, 10, "coin_boost")


def _draw_one(f: Flow, seat: int, card: str | None) -> None:
    f.draw(seat, 1, "draw_one")


def _candy_one(f: Flow, seat: int, card: str | None) -> None:
    f.gain(seat, 1, "candy_one")


def _swap_two(f: Flow, seat: int, card: str | None) -> None:
    f.move(f"hand:{seat}", "discard", [card], "swap_two")
    f.draw(seat, 2, "swap_two")


ABILITY_HANDLERS: dict[str, Callable[[Flow, int, str | None], None]] = {
    "scout_combat": _scout, "coin_boost": _coin_boost, "draw_one": _draw_one, "candy_one": _candy_one,
    "swap_two": _swap_two,
}
"""Abilities used by command (Joy's ``keep_candies`` acts by itself: flow.lose)."""

assert set(EFFECTS) == EFFECT_NAMES and set(USES) == USE_NAMES
assert set(ABILITY_HANDLERS) | {"keep_candies"} == ABILITIES
