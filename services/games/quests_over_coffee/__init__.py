"""Quests Over Coffee: solo dice questing, with the 2-player co-op and Quest Board variants.

Source: rulebooks/quests-over-coffee.txt; ../shared/RULINGS.md "Quests Over Coffee";
docs/games/quests_over_coffee.md. Registered as title ``quests_over_coffee``.
"""

from __future__ import annotations

from schemas.base import Command, Event
from schemas.envelope import Result
from schemas.quests_over_coffee import (
    COMMAND_TYPES,
    EVENT_TYPES,
    Accept,
    ChooseDice,
    ChooseQuest,
    ChooseShopOrder,
    GiveItem,
    KeepItem,
    LeaveShop,
    PayForHelp,
    QocOptions,
    QocView,
    Reroll,
    Roll,
    SwapItem,
    UseItem,
)
from services.games.quests_over_coffee import rules, views
from services.games.quests_over_coffee.bots import BOTS
from services.games.quests_over_coffee.rules import QocState
from services.kernel import Chance, Rejection, Title, register

SEATS_BY_MODE = {"solo": 1, "coop": 2}


class QuestsOverCoffee(Title[QocState]):
    """The Decider of Quests Over Coffee (modes: solo 1 seat, coop 2 seats)."""

    name = "quests_over_coffee"
    display_name = "Quests Over Coffee"
    rules_version = "1"
    min_seats = 1
    max_seats = 2
    options_type = QocOptions
    state_type = QocState
    view_type = QocView
    command_types = COMMAND_TYPES
    undoable = (ChooseQuest, PayForHelp, ChooseShopOrder, GiveItem, SwapItem)
    default_move_text = "accepts the roll (before a roll: rolls; picks dice, leaves the shop, keeps the first item, takes the first quest)"
    event_types = EVENT_TYPES
    off_turn = (GiveItem, SwapItem, UseItem, Reroll)
    """Co-op 7 and RULINGS "Co-op variant": items are given or swapped at any time, and either
    seat uses its own items and Luck on the shared dice (the rules check the rest)."""

    def check_options(self, options: QocOptions, seats: int) -> None:
        """Raises Rejection ``bad_options``: mode vs seat count, unknown player side(s), a bad Quest Board choice."""
        if options.mode is not None and SEATS_BY_MODE[options.mode] != seats:
            raise Rejection("bad_options", f"Mode {options.mode} is played with {SEATS_BY_MODE[options.mode]} seat(s), not {seats}.")
        if options.player_side not in rules.PACK.sides:
            raise Rejection("bad_options", f"Player card side must be one of {sorted(rules.PACK.sides)}.")
        if options.player_sides:
            if len(options.player_sides) != seats:
                raise Rejection("bad_options", f"player_sides names one side per seat ({seats}), not {len(options.player_sides)}.")
            bad = [sd for sd in options.player_sides if sd not in rules.PACK.sides]
            if bad:
                raise Rejection("bad_options", f"Player card side must be one of {sorted(rules.PACK.sides)}, not {bad[0]!r}.")
        rules.check_board_quests(options)

    def initial_state(self, options: QocOptions, seats: int) -> QocState:
        return rules.initial_state(options, seats)

    def setup(self, options: QocOptions, seats: int, chance: Chance) -> list[Event]:
        return rules.setup(options, seats, chance)

    def decide(self, state: QocState, seat: int, command: Command, chance: Chance) -> list[Event]:
        return rules.decide(state, seat, command, chance)

    def evolve(self, state: QocState, event: Event) -> QocState:
        return rules.evolve(state, event)

    def view(self, state: QocState, seat: int | None) -> QocView:
        return views.view(state, seat)

    def redact(self, event: Event, seat: int | None) -> Event | None:
        return views.redact(event, seat)

    def legal_commands(self, state: QocState, seat: int) -> list[Command]:
        return views.legal_commands(state, seat)

    def status(self, state: QocState) -> Result | None:
        """The result once over: every seat shares the score; winners unless defeated (R11)."""
        if state.phase != "over":
            return None
        sc, sg = rules.score(state), rules.star_grade(state)
        text = rules.grade_text(sc, sg, state.quest_board)
        what = "Defeated" if state.defeated else f"{sc} VP"
        return Result(winners=[] if state.defeated else list(range(state.seats)),
                      scores=[float(sc)] * state.seats, summary=f"{what}, Star Grade {sg}: {text}")

    def default_move(self, state: QocState, seat: int) -> Command | None:
        """A timeout accepts the roll (house rule, issue 14): in order of preference accept, roll,
        pick dice, leave the shop, choose a shop order, keep an item, choose a quest."""
        legal = views.legal_commands(state, seat)
        for kind in (Accept, Roll, ChooseDice, LeaveShop, ChooseShopOrder, KeepItem, ChooseQuest):
            for c in legal:
                if type(c) is kind:
                    return c
        return legal[0] if legal else None

    def forfeit_winners(self, state: QocState | None, seat: int, seats: int) -> list[int]:
        """A co-operative game: when a seat forfeits, the party loses together."""
        return []

    def to_move(self, state: QocState) -> list[int]:
        if state.phase == "keep_item":
            return [i for i, o in enumerate(state.offers) if o]
        if state.phase == "quest":
            return [state.leader]
        if state.phase == "shop":
            return [state.shop_order[0]] if state.shop_order else [state.leader]
        return []


QuestsOverCoffee.bots = dict(BOTS)
QuestsOverCoffee.best_bot = "sensible"
QOC = register(QuestsOverCoffee())
