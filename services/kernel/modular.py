"""A Title whose rules and views live in modules: the delegation several titles share (pure).

A title written as modules (``rules``: decide, legal_commands, status, to_move, default_move;
``views``: view, redact) subclasses :class:`ModuleTitle` and names them in ``rules_module`` and
``views_module``; it still writes what differs between titles itself (options, setup, evolve,
secret choices). Source: docs/writing-a-title.md; used by Questeros and Orange Quest.
"""

from __future__ import annotations

from types import ModuleType
from typing import ClassVar, TypeVar

from schemas.base import Command, Event, Record
from schemas.envelope import Result
from services.kernel.chance import Chance
from services.kernel.decider import Title

S = TypeVar("S")


class ModuleTitle(Title[S]):
    """Decide, view, redact, legal_commands, status, to_move and default_move from the title's modules."""

    rules_module: ClassVar[ModuleType]
    """Has ``decide(state, seat, command, chance)``, ``legal_commands(state, seat)``,
    ``status(state)``, ``to_move(state)`` and ``default_move(state, seat)``."""
    views_module: ClassVar[ModuleType]
    """Has ``view(state, seat)`` and ``redact(event, seat)``."""

    def decide(self, state: S, seat: int, command: Command, chance: Chance) -> list[Event]:
        return self.rules_module.decide(state, seat, command, chance)

    def view(self, state: S, seat: int | None) -> Record:
        return self.views_module.view(state, seat)

    def redact(self, event: Event, seat: int | None) -> Event | None:
        return self.views_module.redact(event, seat)

    def legal_commands(self, state: S, seat: int) -> list[Command]:
        return self.rules_module.legal_commands(state, seat)

    def status(self, state: S) -> Result | None:
        return self.rules_module.status(state)

    def to_move(self, state: S) -> list[int]:
        return self.rules_module.to_move(state)

    def default_move(self, state: S, seat: int) -> Command | None:
        return self.rules_module.default_move(state, seat)
