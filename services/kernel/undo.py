"""Undo by policy (game option ``undo = off | own_move | agreed``), shared by every title.

In a game with an undo option, every accepted title command starts with an ``undo_point``
event saying whether that command can be taken back: only a command of a type the title
declares ``undoable``, that drew no chance and whose events hide nothing from any seat (no
hand shown, no secret choice). Folding ``undo_point`` keeps the whole game state before the
command (:attr:`UndoState.before`, kernel state, never in a view). Any later command of
another id drops it, so only the last command can be taken back, and under ``own_move`` only
before any other seat acted. ``undo`` by the seat that made it appends ``undone`` (naming the
command; the log keeps it and its events for the audit), whose fold restores that state byte
for byte (its deadlines included: an undo takes back the command, not the time). Under ``agreed`` the undo is first an
``undo_requested`` that every other seat (bot seats excepted) accepts with ``answer_undo``.

Rejection codes (stable): ``undo_off``, ``nothing_to_undo``, ``not_your_command``,
``not_undoable``, ``undo_after_chance``, ``undo_after_secret``, ``undo_pending``,
``no_undo_request``, ``own_undo_request``, ``already_answered``.
Bound: one kept state per game (the state before its last command).
Source: ../shared/DESIGN.md "Mechanisms every title shares" (Undo); issue 14.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from schemas.base import Command, Event, Record
from schemas.envelope import (
    LIFECYCLE_EVENTS,
    AnswerUndo,
    LifecycleOptions,
    RequestUndo,
    UndoAccepted,
    Undone,
    UndoPoint,
    UndoRefused,
    UndoRequested,
)
from services.kernel.errors import Rejection

if TYPE_CHECKING:  # pragma: no cover
    from services.kernel.decider import Title
    from services.kernel.game import Game

UNDO_EVENTS = (UndoPoint, UndoRequested, UndoAccepted, UndoRefused, Undone)
"""Events that keep the undo state of the command before them."""

MESSAGES = {
    "not_undoable": "That command cannot be taken back in this title.",
    "undo_after_chance": "The last command drew chance (a die roll, a shuffle or a draw); it cannot be taken back.",
    "undo_after_secret": "The last command showed a secret (a hand, a card or a choice); it cannot be taken back.",
}


class UndoState(Record):
    """The undo facts of a game's last command (kernel state)."""

    seat: int | None
    command_id: str
    undoable: bool
    reason: str = ""
    version: int = 0
    """The game version before the command."""
    before: bytes = b""
    """msgpack of the whole game before the command (undo state cleared). Secret: never shown."""
    requested: bool = False
    accepted: tuple[int, ...] = ()


class WatchedChance:
    """A chance source that remembers whether anything was drawn from it (``drawn``)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.drawn = False

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._inner, name)

        def draw(*args: Any, **kwargs: Any) -> Any:
            self.drawn = True
            return fn(*args, **kwargs)

        return draw


def point(title: Title, game: Game, seat: int, command_id: str, command: Command, events: Sequence[Event],
          drawn: bool, secret_choice: bool) -> UndoPoint:
    """The ``undo_point`` of an accepted title command (see the module docstring)."""
    reason = ""
    if drawn:
        reason = "undo_after_chance"
    elif secret_choice or _hides(title, game, events):
        reason = "undo_after_secret"
    elif not isinstance(command, tuple(title.undoable)):
        reason = "not_undoable"
    return UndoPoint(seat=seat, command_id=command_id, undoable=not reason, reason=reason)


def _hides(title: Title, game: Game, events: Sequence[Event]) -> bool:
    seats: list[int | None] = [*range(len(game.seats)), None]
    return any(not isinstance(e, LIFECYCLE_EVENTS) and any(title.redact(e, s) != e for s in seats) for e in events)


def decide(game: Game, seat: int, body: RequestUndo | AnswerUndo, opts: LifecycleOptions) -> list[Event]:
    """The events of an ``undo`` or ``answer_undo`` of ``seat``. Raises Rejection (codes above)."""
    if opts.undo == "off":
        raise Rejection("undo_off", "Undo is off in this game (option undo).")
    u: UndoState | None = game.undo
    others = [s for s in range(len(game.seats)) if s != (u.seat if u else seat)
              and not (s < len(game.bots) and game.bots[s])]
    if isinstance(body, RequestUndo):
        if u is None or u.seat is None:
            raise Rejection("nothing_to_undo", "There is no command to take back.")
        if u.seat != seat:
            raise Rejection("not_your_command", f"The last command was seat {u.seat}'s; a seat may take back only its own.")
        if not u.undoable:
            raise Rejection(u.reason, MESSAGES.get(u.reason, "That command cannot be taken back."))
        if opts.undo == "own_move" or not others:
            return [Undone(seat=seat, command_id=u.command_id, version=u.version)]
        if u.requested:
            raise Rejection("undo_pending", "An undo request is already waiting for the other seats.")
        return [UndoRequested(seat=seat, command_id=u.command_id)]
    if u is None or not u.requested:
        raise Rejection("no_undo_request", "No undo request is waiting for an answer.")
    if seat == u.seat:
        raise Rejection("own_undo_request", "The seat that asked for the undo cannot answer it.")
    if seat in u.accepted:
        raise Rejection("already_answered", "This seat already accepted the undo request.")
    if not body.accept:
        return [UndoRefused(seat=seat)]
    accepted = {*u.accepted, seat}
    out: list[Event] = [UndoAccepted(seat=seat)]
    if accepted >= set(others):
        out.append(Undone(seat=u.seat, command_id=u.command_id, version=u.version))  # type: ignore[arg-type]
    return out
