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
    signature: str = ""
    """The seat's Ed25519 signature (128 hex digits) of ``services.kernel.signing.seat_message``
    over (game, seat, ``expected_version``, body hash); required from a seat that registered a key."""
    received_at: int = 0
    """Server time in ms since the epoch: when the command's stream received it (its entry id's
    ms, Redis's clock), stamped by the worker (a client's value is overwritten). The lifecycle's only source of time: deadlines are computed
    from it, so replay and audit re-decide with the same time. Left out of the command hash
    while 0 (commands stored before clocks existed keep their hash)."""


class EventEnvelope(Record, Generic[B], forbid_unknown_fields=True):
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
    salt: str = ""
    """32 hex digits keyed by the game's secret seed (``services.kernel.hashing.event_salt``),
    hashed with the envelope so that the public head hash cannot confirm a guess of the event's
    hidden parts; never in a feed or view (revealed with the bundle once the game ends). Empty
    on events recorded before it (left out of their hash: they keep it). Source: docs/fairness.md
    "What the head hash does not give away"."""
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
    head_hash: str = ""
    """The hash of the game's last event at ``version`` (the head the receipt signs)."""
    request_hash: str = ""
    """``services.kernel.hashing.request_hash`` of the command: a retry under this id must match it."""


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
    head_hash: str = ""
    """The hash of the game's last event at ``version`` ("" when refused before the game was read)."""
    request_hash: str = ""
    """``services.kernel.hashing.request_hash`` of the command ("" when it could not be decoded)."""


Outcome = Accepted | Rejected


# ---------------------------------------------------------------------------------------------
# Lifecycle options (every title; given in ``create``'s ``options`` next to the title's own)

ClockKind = Literal["none", "move", "bank", "correspondence"]
OnTimeout = Literal["default_move", "forfeit", "bot"]
UndoPolicy = Literal["off", "own_move", "agreed"]

DAY_SECONDS = 86_400
CORRESPONDENCE_SECONDS = DAY_SECONDS
"""The ``correspondence`` preset: a ``move`` clock of 24 h per decision."""


class LifecycleOptions(Record, forbid_unknown_fields=True):
    """Options of the lifecycle shared by every title (services/kernel/clock.py).

    Bounds (``bad_options`` outside them): seconds 1 to 30 days, increment 0 to 1 day,
    ``absent_after`` 0 to 100.
    """

    clock: ClockKind = "none"
    """``none``; ``move``: ``move_seconds`` per decision; ``bank``: ``bank_seconds`` per seat for
    the whole game plus ``increment_seconds`` after every move (chess style);
    ``correspondence``: a ``move`` clock of 24 h (stored as ``move`` with 86400 s)."""
    move_seconds: int = 60
    bank_seconds: int = 600
    increment_seconds: int = 5
    on_timeout: OnTimeout = "default_move"
    """What a timeout does: the title's default move, a forfeit of the seat, or the seat is
    handed to a bot (``timeout_bot``, default the title's first) that plays this move and the rest."""
    timeout_bot: str = ""
    absent_after: int = 3
    """Mark a seat absent after this many timeouts in a row (0: never)."""
    undo: UndoPolicy = "off"
    """``own_move``: a seat may take back its last undoable command before any other seat acted;
    ``agreed``: the other seats accept a request first. Never across a chance draw or a secret."""


LIFECYCLE_OPTION_NAMES = frozenset(LifecycleOptions.__struct_fields__)


# ---------------------------------------------------------------------------------------------
# Lifecycle commands (shared by every title; see services/kernel/game.py)


class CreateGame(Command, tag="create"):
    """Create a game of the envelope's title with ``seats`` seats and title ``options``."""

    seats: int
    options: dict = {}
    """Title options by name (JSON object); unknown names are refused."""
    require_seat_keys: bool = False
    """If true, a join without a seat key is refused (``seat_key_required``)."""


class JoinSeat(Command, tag="join"):
    """Take the envelope's seat. ``client_seed``: optional hex (<= 64 chars) mixed into chance.
    ``public_key``: optional Ed25519 public key (64 hex digits): every later command of the seat
    must then be signed with it (docs/fairness.md, "Seat keys").
    ``bot``: one of the title's named bots (``questhall titles``) plays the seat, served by the
    bot service; ``name`` then defaults to ``<bot> bot``.
    """

    name: str = ""
    client_seed: str = ""
    public_key: str = ""
    bot: str = ""


class LeaveSeat(Command, tag="leave"):
    """Give up the envelope's seat before the game starts."""


class StartGame(Command, tag="start"):
    """Start the game once every seat is taken; runs the title's setup."""


class AbandonGame(Command, tag="abandon"):
    """Give up: in the lobby it ends the game without a result; in a running game it is a
    forfeit of the envelope's seat (``seat_forfeited``, then ``game_finished`` with the title's
    forfeit result: the other seats win). ``reason``: at most 200 characters, no control characters."""

    reason: str = ""


class AgreeToAbandon(Command, tag="agree_abandon"):
    """The envelope's seat agrees to end a running game without a result. Once every seat has
    agreed (with no title event in between), the game is abandoned; no seat loses."""


class EndGame(Command, tag="end_game"):
    """An operator ends a stuck game without a result (no seat: the gateway's admin endpoint only)."""

    reason: str
    """Why, stated in the ``game_abandoned`` event (1-200 characters, no control characters)."""


class Timeout(Command, tag="timeout"):
    """A seat's deadline passed: sent by the clock service only (envelope ``seat`` None), with
    the command id ``timeout:<seat>:<version>``.

    ``version``: the game version the deadline was set at (``Deadline.set_at``). Decided against
    that version: if the seat's deadline was set again or cleared since (it moved in time, the
    game ended), the timeout is a stale no-op (accepted, no events), never a second move.
    """

    seat: int
    version: int


class RequestUndo(Command, tag="undo"):
    """Take back the last undoable command of the envelope's seat (game option ``undo``)."""


class AnswerUndo(Command, tag="answer_undo"):
    """Accept (``accept`` true) or refuse another seat's pending undo request (``undo = agreed``)."""

    accept: bool


LifecycleCommand = (CreateGame | JoinSeat | LeaveSeat | StartGame | AbandonGame | AgreeToAbandon | EndGame | Timeout
                    | RequestUndo | AnswerUndo)
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
    require_seat_keys: bool = False
    lifecycle_version: int = 0
    """The lifecycle rules the game runs under (``services.kernel.game.LIFECYCLE_VERSION`` at its
    creation), so that a changed lifecycle rule never changes what a stored game means: 0, a game
    created before the field (a record without it): a timeout that hands a seat to a bot may also
    mark it absent; 1: a seat the server's bot plays, or takes over by that timeout, is never
    marked absent. Added later (the audit's ``ADDED_LATER``)."""


class SeatJoined(Event, tag="seat_joined"):
    seat: int
    name: str
    client_seed: str = ""
    public_key: str = ""
    """The seat's Ed25519 public key ("" for none): its commands must be signed with it."""


class SeatLeft(Event, tag="seat_left"):
    seat: int


class GameStarted(Event, tag="game_started"):
    """The title's setup events follow this one in the same command."""


class GameAbandoned(Event, tag="game_abandoned"):
    """The game ended without a result: abandoned in the lobby by ``seat``, or (``seat`` None) by
    the agreement of every seat (``abandon_agreed`` events before it) or by an operator (none)."""

    seat: int | None = None
    reason: str = ""


class AbandonAgreed(Event, tag="abandon_agreed"):
    """``seat`` agreed to end the running game without a result (void once a title event follows)."""

    seat: int


class SeatForfeited(Event, tag="seat_forfeited"):
    """``seat`` gave up a running game; ``game_finished`` with the forfeit result follows."""

    seat: int
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


class Deadline(Record, omit_defaults=True):
    """When the game stops waiting for one seat."""

    seat: int
    at: int
    """Absolute time, ms since the Unix epoch."""
    set_at: int
    """The game version this deadline was set at: the ``version`` of its ``timeout`` command."""
    since: int
    """When the seat started waiting (ms since the epoch); a time bank is charged from here."""
    key: str = ""
    """"" for a deadline of the lifecycle clock; else the title's key of a timed decision (a
    response window, an agreement timer: ``Title.decision_seconds``), which the seat keeps while
    the key stays the same, never charges a bank, and whose timeout always plays the default move."""


class ClockUpdated(Event, tag="clock_updated"):
    """The game's clocks after a command (only written when something changed).

    ``deadlines``: one per seat the game waits for; ``banks``: ms left per seat (``bank``
    clock, else empty); ``timeouts``: timeouts in a row per seat; ``absent``: seats marked absent.
    """

    deadlines: list[Deadline] = []
    banks: list[int] = []
    timeouts: list[int] = []
    absent: list[int] = []


class TimedOut(Event, tag="timed_out"):
    """A seat's deadline passed; ``action`` (``default_move``, ``forfeit``, ``bot``) says what
    the game's ``on_timeout`` option did about it and ``reason`` why, in one sentence."""

    seat: int
    deadline: int
    """The deadline that passed, ms since the epoch."""
    action: str
    reason: str


class SeatAbsent(Event, tag="seat_absent"):
    """The seat timed out ``timeouts`` times in a row (option ``absent_after``): from now on its
    deadlines fall due at once, until the seat itself moves again. Never for a seat the server's
    bot plays, nor with the ``seat_botted`` of a takeover (``lifecycle_version`` 1 on)."""

    seat: int
    timeouts: int
    reason: str


class SeatBotted(Event, tag="seat_botted"):
    """The seat is played by the server's bot ``bot`` from now on; ``reason`` says why."""

    seat: int
    bot: str
    reason: str
    takeover: bool = False
    """True when the bot takes over a seat a person held (the seat timed out, ``on_timeout = bot``);
    False for a seat joined as a bot (the ``seat_joined`` just before it). Clients show a takeover
    and need not show a join. Added later: a record from before it lacks the field (a join)."""


class UndoPoint(Event, tag="undo_point"):
    """First event of every accepted command of a game with an ``undo`` option: whether the
    command of ``seat`` (``command_id``) can be taken back and, if not, ``reason`` (the code the
    undo would be refused with: ``not_undoable``, ``undo_after_chance``, ``undo_after_secret``)."""

    seat: int | None
    command_id: str
    undoable: bool
    reason: str = ""


class UndoAccepted(Event, tag="undo_accepted"):
    """A seat accepted the pending undo request (``undo = agreed``)."""

    seat: int


class UndoRequested(Event, tag="undo_requested"):
    """``seat`` asks to take back its command ``command_id`` (``undo = agreed``: the others answer)."""

    seat: int
    command_id: str


class UndoRefused(Event, tag="undo_refused"):
    """A seat refused the pending undo request."""

    seat: int


class Undone(Event, tag="undone"):
    """The command ``command_id`` of ``seat`` is taken back: the state is again what it was before
    it (the log keeps the undone command and its events for the audit)."""

    seat: int
    command_id: str
    version: int
    """The game version before the undone command."""


LifecycleEvent = (GameCreated | SeatJoined | SeatLeft | GameStarted | GameAbandoned | GameFinished | SeedRevealed
                  | ClockUpdated | TimedOut | SeatAbsent | SeatBotted | UndoPoint | UndoRequested | UndoAccepted
                  | UndoRefused | Undone | AbandonAgreed | SeatForfeited)
LIFECYCLE_EVENTS: tuple[type[Event], ...] = get_args(LifecycleEvent)
LIFECYCLE_EVENT_TAGS = frozenset(t.__struct_config__.tag for t in LIFECYCLE_EVENTS)


class SeatInfo(Record):
    """Public facts of one seat."""

    seat: int
    name: str | None = None
    """None while the seat is open."""


class UndoInfo(Record):
    """Public undo facts: whose last command may be taken back, and a pending request."""

    seat: int | None
    undoable: bool
    reason: str = ""
    requested: bool = False
    accepted: list[int] = []


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
    deadlines: list[Deadline] = []
    """The deadline of every seat the game waits for (empty without a clock)."""
    banks: list[int] = []
    """Time bank left per seat in ms (``clock = bank`` only)."""
    bots: list[str | None] = []
    """Per seat: the server bot playing it, or None for a person (empty: no bot seat)."""
    absent: list[int] = []
    """Seats marked absent after timing out ``absent_after`` times in a row."""
    undo: UndoInfo | None = None
    """The last command's undo state (games with an ``undo`` option)."""
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
