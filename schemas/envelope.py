"""Envelopes, outcomes and the game lifecycle shared by every title.

Wire format: msgpack between services; JSON (``msgspec.json``) for export and clients.
Shapes:

- :class:`CommandEnvelope` -- what a client submits: ``command_id`` (client-chosen, unique
  per game, at most 64 chars), ``game_id``, ``title``, ``seat`` (0-based, or ``None`` for a
  game-less command such as ``create``), optional ``expected_version`` (optimistic
  concurrency), ``body`` (a tagged union: the lifecycle commands below plus the title's own).
- :class:`EventEnvelope` -- what is stored: ``game_id``, ``version`` (1-based, gap-free),
  ``body``, causing ``command_id``, ``recorded_at`` (milliseconds since the Unix epoch, from
  the worker's clock), ``prev_hash``, ``command_hash`` (of the causing command envelope) and
  ``hash`` (hex SHA-256, see ``services.kernel.hashing``).
- :class:`Accepted` / :class:`Rejected` -- the one stored outcome of a command id.

Source: ../shared/DESIGN.md, "The flow of one command" and "Fairness and audit".
"""

from __future__ import annotations

from typing import Generic, Literal, TypeVar, get_args

from schemas.base import Command, Event, Record

B = TypeVar("B")

MAX_ID_LEN = 64


class CommandEnvelope(Record, Generic[B], forbid_unknown_fields=True):
    """A command addressed to one game, as it travels on a title's command stream."""

    command_id: str
    """Client-chosen id; the same id always gets the same (first) outcome."""
    game_id: str
    """Game id: 1-64 chars of ``[A-Za-z0-9_.-]``."""
    title: str
    """Registered title name, e.g. ``questeros``."""
    body: B
    """The command itself: a tagged union (``type`` field)."""
    seat: int | None = None
    """Acting seat (0-based). The gateway stamps it from the seat token."""
    player: str | None = None
    """Display name of the acting player, stamped by the gateway (informational)."""
    expected_version: int | None = None
    """If set, the command is refused with ``stale_version`` unless the game is at it."""
    issued_at: int = 0
    """Client time in ms since the epoch (informational; rules never read the clock)."""


class EventEnvelope(Record, Generic[B]):
    """One stored event of a game's stream."""

    game_id: str
    version: int
    """1-based position in the game's stream; version N is stream id ``N-0``."""
    body: B
    command_id: str
    """The command that caused this event."""
    recorded_at: int
    """Worker clock, ms since the Unix epoch."""
    prev_hash: str
    """Hex SHA-256 of the previous envelope (64 zeros for version 1)."""
    command_hash: str = ""
    """Hex SHA-256 of the canonical encoding of the accepted command envelope that caused this
    event (``services.kernel.hashing.command_hash``): binds the command record into the chain."""
    hash: str = ""
    """Hex SHA-256 over the canonical encoding of every other field."""


class Accepted(Record, tag_field="status", tag="accepted"):
    """The command was decided and its events appended."""

    command_id: str
    game_id: str
    version: int
    """The game's version after the command's events."""
    events: int
    """How many events the command appended (0 for a no-op)."""


class Rejected(Record, tag_field="status", tag="rejected"):
    """The command was refused; nothing was written to the game."""

    command_id: str
    game_id: str
    code: str
    """Stable machine-readable code, e.g. ``not_your_turn``."""
    message: str
    """One human sentence naming the rule. Never carries a secret."""
    version: int = 0
    """The game's version when the command was refused."""


Outcome = Accepted | Rejected


# ---------------------------------------------------------------------------------------------
# Lifecycle commands (shared by every title; see services/kernel/game.py)


class CreateGame(Command, tag="create"):
    """Create a game of the envelope's title with ``seats`` seats and title ``options``."""

    seats: int
    options: dict = {}
    """Title options by name (JSON object); unknown names are refused."""


class JoinSeat(Command, tag="join"):
    """Take the envelope's seat. ``client_seed``: optional hex (<= 64 chars) mixed into chance."""

    name: str
    client_seed: str = ""


class LeaveSeat(Command, tag="leave"):
    """Give up the envelope's seat before the game starts."""


class StartGame(Command, tag="start"):
    """Start the game once every seat is taken; runs the title's setup."""


class AbandonGame(Command, tag="abandon"):
    """End the game without a result (any seated player, any time before it finishes)."""

    reason: str = ""


LifecycleCommand = CreateGame | JoinSeat | LeaveSeat | StartGame | AbandonGame
LIFECYCLE_COMMANDS: tuple[type[Command], ...] = get_args(LifecycleCommand)
LIFECYCLE_COMMAND_TAGS = frozenset(t.__struct_config__.tag for t in LIFECYCLE_COMMANDS)


# ---------------------------------------------------------------------------------------------
# Lifecycle events


class GameCreated(Event, tag="game_created"):
    """First event of every game. Publishes only the SHA-256 commitment of the secret seed."""

    title: str
    seats: int
    options: dict
    """The title's options after defaults were filled in (JSON object)."""
    rules_version: str
    seed_commitment: str
    """Hex SHA-256 of the 32-byte secret seed (revealed by ``seed_revealed`` at the end)."""
    rng: str
    """Versioned name of the derivation function, e.g. ``questhall-hmac-sha256/1``."""


class SeatJoined(Event, tag="seat_joined"):
    seat: int
    name: str
    client_seed: str = ""


class SeatLeft(Event, tag="seat_left"):
    seat: int


class GameStarted(Event, tag="game_started"):
    """The title's setup events follow this one in the same command."""


class GameAbandoned(Event, tag="game_abandoned"):
    seat: int | None = None
    reason: str = ""


class Result(Record):
    """A finished game's result."""

    winners: list[int]
    """Winning seats (several for a shared win; empty for a draw with no winner)."""
    scores: list[float] = []
    """Final score per seat, where the title has scores."""
    summary: str = ""
    """One sentence, e.g. ``Seat 2 wins with 41 XP``."""


class GameFinished(Event, tag="game_finished"):
    result: Result


class SeedRevealed(Event, tag="seed_revealed"):
    """The secret seed, published once the game is finished or abandoned."""

    seed: str
    """Hex of the 32-byte seed; its SHA-256 equals the ``seed_commitment``."""


LifecycleEvent = GameCreated | SeatJoined | SeatLeft | GameStarted | GameAbandoned | GameFinished | SeedRevealed
LIFECYCLE_EVENTS: tuple[type[Event], ...] = get_args(LifecycleEvent)
LIFECYCLE_EVENT_TAGS = frozenset(t.__struct_config__.tag for t in LIFECYCLE_EVENTS)


class SeatInfo(Record):
    """Public facts of one seat."""

    seat: int
    name: str | None = None
    """None while the seat is open."""


class ViewEnvelope(Record, Generic[B]):
    """A read model as served to a seat (``seat`` set) or a spectator (``seat`` None)."""

    game_id: str
    title: str
    version: int
    status: Literal["lobby", "active", "finished", "abandoned"]
    seats: list[SeatInfo]
    seat: int | None
    view: B | None
    """The title's view of its state for that seat; None before the game starts."""
    to_move: list[int] = []
    """Seats whose input the game waits for (empty outside an active game). While a
    simultaneous secret choice is open: the awaited seats that have not chosen yet."""
    result: Result | None = None
    chosen: list[int] = []
    """Seats that have made their secret choice in the open simultaneous choice (public)."""
    my_choice: dict | None = None
    """This seat's own pending secret choice (the command as JSON), until the reveal."""


class FeedEntry(Record, Generic[B]):
    """One event as a seat may see it (redacted by the title's ``redact``)."""

    game_id: str
    version: int
    recorded_at: int
    body: B
