"""Epic ability hooks: named handlers the deck file chooses (``on_play``, ``end_of_turn``).

RULINGS.md "Questeros": the rulebook gives only the Mentor's ability; every other Epic has rank
only in the default ruleset, but the engine carries both hooks the rulebook names
("Follow the rules of each Epic card played before the next card is played" -- on play;
"At the end of the turn resolve any end of turn Epic card effects" -- end of turn) so a house
pack can add abilities.

- ``ON_PLAY[name]``: the ability is recorded on ``card_played`` (``ability = name``); an ability
  that needs a choice (``mentor_look``) makes the game wait for that seat's command.
- ``END_OF_TURN[name](state, seat) -> list[Event]``: run by ``decide`` after the last card of a
  turn and before the Quest is awarded, in play order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemas.base import Event

ON_PLAY: dict[str, str] = {
    "mentor_look": "its player may look at one other player's hand (rulebook: Example 2)",
}
"""On-play abilities by name, with what they do. Choices are made by a follow-up command."""

END_OF_TURN: dict[str, Callable[[Any, int], list[Event]]] = {}
"""End-of-turn abilities by name. None in the default ruleset (RULINGS.md)."""

KNOWN = frozenset(ON_PLAY) | frozenset(END_OF_TURN)
