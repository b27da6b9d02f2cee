"""Questeros: multi-player trick-taking with bids, 7 rounds (rulebooks/questeros.txt).

Modules in reading order: ``content`` (the deck file), ``abilities`` (Epic hooks), ``rules``
(state, setup, decide, evolve, legal commands, status), ``views`` (view, redact), ``bots``.
Docs: docs/games/questeros.md.
"""

from __future__ import annotations

from schemas.base import Event
from schemas.questeros import (
    Bid,
    BidMade,
    CardPlayed,
    DealerChosen,
    EpicAdded,
    HandLookedAt,
    HandsDealt,
    LookAtHand,
    PlayCard,
    QuesterosOptions,
    QuesterosView,
    QuestWon,
    RoundScored,
)
from services.games.questeros import bots, rules, views
from services.games.questeros.rules import QState
from services.kernel import Rejection, register
from services.kernel.modular import ModuleTitle


class Questeros(ModuleTitle[QState]):
    """The Questeros Decider (the multi-player game; Ero's Quest and the Fate Deck are the titles
    ``eros_quest`` and ``fate_deck`` in the subpackages ``eros`` and ``fate``): decide, view,
    redact, legal commands, status, to_move and the default move (a timeout plays the lowest
    legal card) come from ``rules`` and ``views``."""

    name = "questeros"
    display_name = "Questeros"
    rules_version = "2"
    """2: a God is neither a Class nor an Epic card (RULINGS.md "Questeros", Gods)."""
    min_seats = 2
    max_seats = 6
    options_type = QuesterosOptions
    state_type = QState
    view_type = QuesterosView
    command_types = (Bid, PlayCard, LookAtHand)
    undoable = (Bid,)
    default_move_text = "the lowest legal card (Gods last, no XP paid if avoidable); bid 1; the Mentor declines"
    event_types = (DealerChosen, EpicAdded, HandsDealt, BidMade, CardPlayed, HandLookedAt, QuestWon, RoundScored)
    rules_module = rules
    views_module = views

    def check_options(self, options: QuesterosOptions, seats: int) -> None:
        if not 2 <= seats <= 6:  # pragma: no cover - the kernel checks min/max seats first
            raise Rejection("bad_options", "Questeros takes 2 to 6 players.")

    def initial_state(self, options: QuesterosOptions, seats: int) -> QState:
        return rules.initial_state(seats, options.alternative_god_rule)

    def setup(self, options: QuesterosOptions, seats: int, chance) -> list[Event]:
        return rules.setup(seats, chance)

    def evolve(self, state: QState, event: Event) -> QState:
        return rules.evolve(state, event)


Questeros.bots = {"random": bots.random_bot, "bidder": bots.bidder_bot}
Questeros.best_bot = "bidder"
QUESTEROS = register(Questeros())
