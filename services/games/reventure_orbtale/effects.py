"""Named effect handlers chosen by the content data (RULINGS.md "Content packs").

- ``EFFECTS[name](flow, card, winner, loser)``: a winning card's text (treasures.toml
  ``effect`` with its ``amount``); skills that change a text (Barbarian, Berserker, Knight,
  Alchemist) and the Orb of Might are applied here.
- ``BONUS_AT_CHAPTER_END[bonus](flow, seat, orb)``: active orb bonuses applied at the end of a
  chapter (``more_damage`` and ``bigger_hand`` are permanent and read where they apply).
- ``WHO[id](state) -> seats`` and ``WHAT[id](flow, seat)``: the two halves of a chapter rule.

Every effect is listed on docs/games/reventure_orbtale.md.
"""

from __future__ import annotations

from collections.abc import Callable

from schemas.reventure_orbtale import HeroesSwapped
from services.games.reventure_orbtale import content
from services.games.reventure_orbtale.content import Card
from services.games.reventure_orbtale.flow import Flow
from services.games.reventure_orbtale.state import OState, has_orb_bonus, playing, skills


def _attack_damage(flow: Flow, card: Card, winner: int) -> int:
    n = card.amount
    if card.kind == "attack":
        sk = skills(flow.s, winner)
        n += ("cleave" in sk) + ("rage" in sk and flow.s.players[winner].health <= 2)
        n += has_orb_bonus(flow.s, winner, "more_damage")
    return n


def damage(flow: Flow, card: Card, winner: int, loser: int) -> None:
    flow.damage(loser, _attack_damage(flow, card, winner), card.base)


def damage_and_steal(flow: Flow, card: Card, winner: int, loser: int) -> None:
    damage(flow, card, winner, loser)
    flow.steal(winner, loser, 1, "inventory", card.base)


def damage_and_discard(flow: Flow, card: Card, winner: int, loser: int) -> None:
    damage(flow, card, winner, loser)
    flow.discard_random(loser, 1, card.base)


def _defense_extras(flow: Flow, card: Card, winner: int, loser: int) -> None:
    sk = skills(flow.s, winner)
    if "riposte" in sk:
        flow.damage(loser, 1, "riposte")
    if "brew" in sk:
        flow.draw(winner, 1, "brew")


def heal(flow: Flow, card: Card, winner: int, loser: int) -> None:
    flow.heal(winner, card.amount, card.base)
    _defense_extras(flow, card, winner, loser)


def draw(flow: Flow, card: Card, winner: int, loser: int) -> None:
    flow.draw(winner, card.amount, card.base)
    _defense_extras(flow, card, winner, loser)


def heal_and_draw(flow: Flow, card: Card, winner: int, loser: int) -> None:
    flow.heal(winner, card.amount, card.base)
    flow.draw(winner, card.amount, card.base)
    _defense_extras(flow, card, winner, loser)


def steal_inventory(flow: Flow, card: Card, winner: int, loser: int) -> None:
    flow.steal(winner, loser, card.amount, "inventory", card.base)


def bomb(flow: Flow, card: Card, winner: int, loser: int) -> None:
    flow.damage(loser, card.amount, card.base)
    flow.damage(winner, 1, card.base)


def steal_hand(flow: Flow, card: Card, winner: int, loser: int) -> None:
    flow.steal(winner, loser, card.amount, "hand", card.base)


def swap_heroes(flow: Flow, card: Card, winner: int, loser: int) -> None:
    a, b = flow.s.players[winner].hero, flow.s.players[loser].hero
    if a is not None and b is not None:
        flow.emit(HeroesSwapped(seat=winner, other=loser, hero=b, other_hero=a))


EFFECTS: dict[str, Callable[[Flow, Card, int, int], None]] = {
    "damage": damage, "damage_and_steal": damage_and_steal, "damage_and_discard": damage_and_discard,
    "heal": heal, "draw": draw, "heal_and_draw": heal_and_draw, "steal_inventory": steal_inventory,
    "bomb": bomb, "steal_hand": steal_hand, "swap_heroes": swap_heroes,
}


def _orb_heal(flow: Flow, seat: int, orb: str) -> None:
    flow.heal(seat, 1, orb)


def _orb_draw(flow: Flow, seat: int, orb: str) -> None:
    flow.draw(seat, 1, orb)


BONUS_AT_CHAPTER_END: dict[str, Callable[[Flow, int, str], None]] = {"chapter_heal": _orb_heal, "chapter_draw": _orb_draw}


def _extreme(s: OState, key: Callable[[int], int], most: bool) -> list[int]:
    seats = playing(s)
    if not seats:
        return []
    best = (max if most else min)(key(i) for i in seats)
    return [i for i in seats if key(i) == best]


WHO: dict[str, Callable[[OState], list[int]]] = {
    "most_inventory": lambda s: _extreme(s, lambda i: len(s.players[i].inventory), True),
    "fewest_inventory": lambda s: _extreme(s, lambda i: len(s.players[i].inventory), False),
    "lowest_health": lambda s: _extreme(s, lambda i: s.players[i].health, False),
    "highest_health": lambda s: _extreme(s, lambda i: s.players[i].health, True),
    "orb_bearers": lambda s: [i for i in playing(s) if s.players[i].active],
    "no_orb": lambda s: [i for i in playing(s) if not s.players[i].active],
}
"""Who a chapter rule hits: heroes in play, in turn order; ties all included."""

WHAT: dict[str, Callable[[Flow, int], None]] = {
    "lose_health": lambda f, seat: f.damage(seat, 1, "chapter_rule"),
    "heal": lambda f, seat: f.heal(seat, 1, "chapter_rule"),
    "draw_one": lambda f, seat: f.draw(seat, 1, "chapter_rule"),
    "draw_two": lambda f, seat: f.draw(seat, 2, "chapter_rule"),
    "discard_one": lambda f, seat: f.discard_random(seat, 1, "chapter_rule"),
    "discard_two": lambda f, seat: f.discard_random(seat, 2, "chapter_rule"),
}

assert set(EFFECTS) == content.EFFECTS and set(WHO) == content.WHO and set(WHAT) == content.WHAT
assert set(BONUS_AT_CHAPTER_END) | {"more_damage", "bigger_hand"} == content.BONUSES
