"""Bots of Quests Over Coffee: ``fn(view, seat, rng) -> Command``; they read only ``view``.

- ``random``: any command of ``view.legal``.
- ``sensible``: keeps the first item; picks the quest easiest for its stars; pays for help when
  the money is there; rerolls low dice with Luck while that can still change the band (reach
  Success, or leave the Fail band); uses a
  healing item in response to a lethal Fail; buys affordable items; leaves the shop.
"""

from __future__ import annotations

import random

from schemas.base import Command
from schemas.quests_over_coffee import (
    Accept,
    Buy,
    ChooseDice,
    ChooseQuest,
    ChooseShopOrder,
    KeepItem,
    LeaveShop,
    PayForHelp,
    QocView,
    Reroll,
    Roll,
    UseItem,
)
from services.games.quests_over_coffee.content import PACK


def random_bot(view: QocView, seat: int, rng: random.Random) -> Command:
    """A uniformly random legal command. Raises IndexError if the seat has none."""
    return rng.choice(view.legal)


def _first(view: QocView, typ: type, pred=lambda c: True) -> Command | None:
    return next((c for c in view.legal if isinstance(c, typ) and pred(c)), None)


def sensible_bot(view: QocView, seat: int, rng: random.Random) -> Command:
    """A simple sensible player (see module docstring). Falls back to the first legal command."""
    legal = view.legal
    for typ in (KeepItem, ChooseShopOrder):
        c = _first(view, typ)
        if c is not None:
            return c
    if view.phase == "shop":
        buys = [c for c in legal if isinstance(c, Buy)]
        if buys:
            return min(buys, key=lambda c: view.shop_prices[c.slot - 1])
        return _first(view, LeaveShop) or legal[0]
    if view.active is None:
        picks = [c for c in legal if isinstance(c, ChooseQuest)]
        if picks:
            cards = {q.id: q for q in view.face_up}
            return min(picks, key=lambda c: cards[c.quest].success - 3 * cards[c.quest].stars)
        return legal[0]
    q = view.active
    if not view.rolled:
        help_ = _first(view, PayForHelp, lambda c: c.dice == 1 and not c.companion)
        if help_ is not None and view.help < 1 and view.money >= 2 * q.stars:
            return help_
        return _first(view, Roll) or legal[0]
    choose = [c for c in legal if isinstance(c, ChooseDice)]
    if choose:
        def value(c: ChooseDice) -> int:
            return sum(view.pool[seat][i] for i in c.leader) + view.pool[1 - seat][c.partner]
        return max(choose, key=value)
    total, dice = view.total, view.dice
    if total < q.success:
        for c in legal:  # a die item that reaches Success
            if isinstance(c, UseItem) and c.die is not None and c.die == dice.index(min(dice)):
                return c
        low = [i for i, d in enumerate(dice) if d <= 3]
        best = total + 6 * len(low) - sum(dice[i] for i in low)
        if low and (best >= q.success or (total <= q.fail < best)):
            rr = _first(view, Reroll, lambda c: sorted(c.dice) == low)
            if rr is not None:
                return rr
    heal = [c for c in legal if isinstance(c, Accept) and c.respond
            and any(e.op == "health" for e in PACK.items[c.respond[0]].effects)]
    if total <= q.fail and heal and view.seats[seat].health <= 3:
        return heal[0]
    return Accept() if Accept() in legal else legal[0]


BOTS = {"random": random_bot, "sensible": sensible_bot}
