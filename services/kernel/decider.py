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
- ``default_move(state, seat) -> Command | None`` -- what a timeout plays for the seat
  (default: its first legal command); the title's own rule for "the player did not move".
- ``forfeit_winners(state, seat, seats) -> list[int]`` -- the winners when ``seat`` forfeits
  (default: every other seat).
- ``undoable`` -- the command types a seat may take back (game option ``undo``).
- ``lobby_note(state) -> str`` (optional) -- one public line the lobby shows beside the game
  (e.g. a match's series so far); "" for none. At most 200 characters are kept.
- ``view_legal(view, seat) -> list[Command]`` (optional) -- the seat's legal commands from its
  view, for clients that hold only the view (the chat kit, ``questhall play``), where the view's
  ``legal`` list is not all of them (Orion Duel's placements in play).

Simultaneous secret choices (optional; ``services/kernel/secret.py``): ``choice_types``,
``choice_made_type``, ``choices_revealed_type``, ``secret_choice(state)``,
``check_choice(state, seat, command)``, ``resolve_choices(state, choices, chance)``.

Source: ../shared/DESIGN.md "The Decider"; ../shared/STYLE.md section 3.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from schemas.base import ChoiceMade, ChoicesRevealed, Command, Event, Options, Record
from schemas.envelope import Result
from services.kernel.chance import Chance
from services.kernel.secret import SecretChoice

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
    best_bot: ClassVar[str] = ""
    """The name of the title's strongest bot (hints in the terminal client); "" for the first
    bot not named ``random`` (see :func:`services.kernel.registry.best_bot`)."""
    choice_types: ClassVar[tuple[type[Command], ...]] = ()
    """Commands that are simultaneous secret choices: the kernel collects them, hides them and
    reveals them together (``services/kernel/secret.py``); ``decide`` never sees them."""
    choice_made_type: ClassVar[type[ChoiceMade]]
    """The title's ChoiceMade subclass (its own tag; ``choice: <choice commands> | None``)."""
    choices_revealed_type: ClassVar[type[ChoicesRevealed]]
    """The title's ChoicesRevealed subclass (its own tag; ``choices: list[<its ChoiceMade>]``)."""
    upcasters: ClassVar[dict[str, Callable[[dict], dict]]] = {}
    """Upcasters by stored tag: ``fn(old event body as builtins) -> newer body`` (may change the
    tag; one that keeps it returns a current body unchanged). Applied, repeatedly, only to a
    stored event that no longer decodes as the current union, e.g. one with a renamed field:
    stored events forbid unknown fields, so without an upcaster it is a ``CorruptEvent``."""

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

    off_turn: ClassVar[tuple[type[Command], ...]] = ()
    """Command types a seat may send while the game does not wait for it (``to_move``). Every
    other title command from a seat not in ``to_move`` is refused ``not_your_turn`` by the
    lifecycle before the title's own rules (error precedence: not seated, not your turn, wrong
    phase, then the title's rules)."""

    undoable: ClassVar[tuple[type[Command], ...]] = ()
    """Command types that may be taken back (never one that draws chance or shows a secret:
    the lifecycle refuses those anyway)."""

    default_move_text: ClassVar[str] = "the seat's first legal command"
    """One line for ``questhall titles`` and the docs: what :meth:`default_move` plays."""

    def default_move(self, state: S, seat: int) -> Command | None:
        """The move a timeout plays for ``seat`` (None: nothing to play). Default: the first legal command."""
        legal = self.legal_commands(state, seat)
        return legal[0] if legal else None

    def forfeit_winners(self, state: S | None, seat: int, seats: int) -> list[int]:
        """The winners when ``seat`` forfeits a running game. Default: every other seat."""
        return [s for s in range(seats) if s != seat]

    timed_decisions: ClassVar[bool] = False
    """True if :meth:`decision_seconds` may give a seat a deadline of the title's own (the game
    then keeps clocks even with the ``clock`` option ``none``)."""

    def decision_seconds(self, state: S, seat: int) -> tuple[str, int] | None:
        """The title's own deadline for ``seat``'s decision now, ``(key, seconds)``, or None.

        For rules that fix a time (a response window, "agree within 30 seconds"), independent of
        the lifecycle clock: the deadline stays while ``key`` stays the same, and its timeout
        plays :meth:`default_move` (services/kernel/clock.py). Only read if ``timed_decisions``."""
        return None

    def secret_choice(self, state: S) -> SecretChoice | None:
        """The simultaneous secret choice open now (key and awaited seats), or None."""
        return None

    def check_choice(self, state: S, seat: int, command: Command) -> None:
        """Raise Rejection unless ``seat`` may choose ``command`` in the open secret choice.
        Judge only the seat's own and public facts: the sentence must leak nothing."""

    def resolve_choices(self, state: S, choices: dict[int, Command], chance: Chance) -> list[Event]:
        """Events after a reveal; ``state`` has the reveal folded in, ``choices``: seat -> command."""
        return []
