"""The Decider protocol every title implements, and the bot protocol.

A title is pure: it imports only the kernel and ``schemas``; no Redis, no anyio, no clock.
Shapes (``S`` is the title's state, a frozen msgspec Struct so that it can be snapshotted):

- ``initial_state(options, seats) -> S`` -- the rules state before the setup events.
- ``setup(options, seats, chance) -> list[Event]`` -- run by the lifecycle's ``start``;
  every random outcome (shuffle, dice) is written into these events.
- ``decide(state, seat, command, chance) -> list[Event]`` -- raises
  :class:`~services.kernel.errors.Rejection` (stable code + sentence) for an illegal command.
- ``evolve(state, event) -> S`` -- pure, total, never raises on a stored event; only sets fields.
- ``view(state, seat | None) -> Record`` -- what that seat (or a spectator) may see.
- ``redact(event, seat | None) -> Event | None`` -- the event as that seat may see it.
- ``legal_commands(state, seat) -> list[Command]`` -- every command ``decide`` accepts now.
- ``status(state) -> Result | None`` -- None while the game goes on, the result once finished.
- ``to_move(state) -> list[int]`` -- seats whose input the game waits for.

Source: ../shared/DESIGN.md "The Decider"; ../shared/STYLE.md section 3.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from schemas.base import Command, Event, Options, Record
from schemas.envelope import Result
from services.kernel.chance import Chance

S = TypeVar("S")

Bot = Callable[[Any, int, random.Random], Command]
"""A bot: ``(seat's view, seat, rng) -> command``. It sees only what its seat may see."""


class Title(Generic[S]):
    """Base class of a title's Decider. Subclasses fill the class attributes and methods."""

    name: ClassVar[str]
    """Registry key and wire ``title``, e.g. ``questeros``. Never renamed."""
    display_name: ClassVar[str]
    rules_version: ClassVar[str]
    """Bumped when a rule changes; stored in ``game_created``."""
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    seats_label: ClassVar[str] = ""
    """What the seats are, for listings, e.g. ``solo`` or ``GM + 1-32 players`` (optional)."""
    options_type: ClassVar[type[Options]]
    state_type: ClassVar[type]
    view_type: ClassVar[type[Record]]
    command_types: ClassVar[tuple[type[Command], ...]]
    event_types: ClassVar[tuple[type[Event], ...]]
    bots: ClassVar[dict[str, Bot]] = {}
    """Named bots, e.g. ``{"random": ..., "greedy": ...}``."""
    upcasters: ClassVar[dict[str, Callable[[dict], dict]]] = {}
    """Upcasters by stored tag: ``fn(old event body as builtins) -> newer body`` (may change the
    tag). Applied, repeatedly, only to a stored event that no longer decodes as the current union."""

    def initial_state(self, options: Any, seats: int) -> S:
        raise NotImplementedError

    def setup(self, options: Any, seats: int, chance: Chance) -> list[Event]:
        raise NotImplementedError

    def decide(self, state: S, seat: int, command: Command, chance: Chance) -> list[Event]:
        raise NotImplementedError

    def evolve(self, state: S, event: Event) -> S:
        raise NotImplementedError

    def view(self, state: S, seat: int | None) -> Record:
        raise NotImplementedError

    def redact(self, event: Event, seat: int | None) -> Event | None:
        """Default: every event is public. Titles with hidden information override this."""
        return event

    def legal_commands(self, state: S, seat: int) -> list[Command]:
        raise NotImplementedError

    def status(self, state: S) -> Result | None:
        raise NotImplementedError

    def to_move(self, state: S) -> list[int]:
        raise NotImplementedError
