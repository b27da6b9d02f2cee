"""The game lifecycle shared by every title: create, join, leave, start, abandon, forfeit, finish.

A :class:`Game` wraps a title's rules state with the lifecycle facts. ``decide`` handles the
lifecycle commands itself and passes title commands to the title's ``decide``; when the
title's ``status`` reports a result, ``game_finished`` and ``seed_revealed`` are appended in
the same command. No title writes the lifecycle again.

The lifecycle also keeps the clocks (services/kernel/clock.py; time only from the command's
``received_at``), decides ``timeout`` commands by the game's ``on_timeout`` option, marks absent
seats and seats played by a bot (``join`` with ``bot``). Its options (:class:`LifecycleOptions`)
ride in ``create``'s ``options`` next to the title's own.

Rejection codes of the lifecycle (stable): ``stale_version``, ``game_exists``,
``no_such_game``, ``bad_options``, ``bad_seats``, ``not_in_lobby``, ``seat_out_of_range``,
``seat_taken``, ``seat_open``, ``not_seated``, ``seats_open``, ``bad_name``,
``bad_client_seed``, ``game_not_started``, ``game_over``, ``wrong_title``, ``unknown_bot``,
``out_of_time``, ``system_command``, ``bad_reason``, ``not_operator``, ``already_agreed``,
``bad_public_key``, ``seat_key_required``, ``signature_required``, ``bad_signature``; of secret
choices (``services/kernel/secret.py``): ``no_choice_open``, ``not_choosing``,
``choice_unchanged``, ``too_many_changes``.

Abandon (issue 13): in the lobby any seated player ends the game without a result; in a running
game ``abandon`` is a forfeit of that seat (``seat_forfeited``, then :func:`forfeit`: the
other seats win, the title's ``forfeit_winners`` decides for co-operative titles), unless every
seat agrees (``agree_abandon`` from each, with no title event in between: ``game_abandoned``
with no seat). An operator ends a stuck game with ``end_game {reason}`` (no seat; ``game_abandoned``).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from typing import Any, Generic, Literal, TypeVar

import msgspec

from schemas.base import ChoiceMade, ChoicesRevealed, Event, Record
from schemas.envelope import (
    LIFECYCLE_EVENTS,
    LIFECYCLE_OPTION_NAMES,
    AbandonAgreed,
    AbandonGame,
    AgreeToAbandon,
    AnswerUndo,
    ClockUpdated,
    CommandEnvelope,
    CreateGame,
    EndGame,
    EventEnvelope,
    FeedEntry,
    GameAbandoned,
    GameCreated,
    GameFinished,
    GameStarted,
    JoinSeat,
    LeaveSeat,
    LifecycleOptions,
    RequestUndo,
    Result,
    SeatAbsent,
    SeatBotted,
    SeatForfeited,
    SeatInfo,
    SeatJoined,
    SeatLeft,
    SeedRevealed,
    StartGame,
    TimedOut,
    Timeout,
    UndoAccepted,
    UndoInfo,
    Undone,
    UndoPoint,
    UndoRefused,
    UndoRequested,
    ViewEnvelope,
)
from services.kernel import clock as clocks
from services.kernel import secret
from services.kernel import undo as undos
from services.kernel.chance import RNG_ALGORITHM, Chance, SeededChance, derive_key, seed_commitment
from services.kernel.decider import Title
from services.kernel.errors import Rejection
from services.kernel.hashing import GENESIS
from services.kernel.signing import body_hash, is_public_key, seat_message, verify
from services.kernel.text import clean_name, clean_text

S = TypeVar("S")

Status = Literal["none", "lobby", "active", "finished", "abandoned"]

_HEX = re.compile(r"^[0-9a-fA-F]{0,64}\Z")  # \Z, not $: "$" also matches before a trailing newline

LIFECYCLE_VERSION = 1
"""The lifecycle rules a game created now runs under (``game_created.lifecycle_version``; a game
keeps the version it was created with, so replay and audit of every stored game decide as it was
played). 0 (games created before the field): a timeout that hands a seat to a bot may also mark it
absent (``absent_after`` 1), so its next deadline fell due at once, racing the bot service.
1: a seat the server's bot plays, or takes over by that very timeout, is never marked absent
(docs/gateway.md "Clocks")."""


class Game(Record, Generic[S]):
    """A game's whole state: lifecycle facts plus the title's rules state (``rules``).

    ``version`` is the number of events folded; ``status`` is ``none`` before ``create``.
    """

    game_id: str = ""
    title: str = ""
    version: int = 0
    status: Status = "none"
    seats: tuple[SeatInfo, ...] = ()
    client_seeds: tuple[str, ...] = ()
    options: dict = {}
    seed_commitment: str = ""
    rng: str = ""
    rules_version: str = ""
    created_at: int = 0
    rules: S | None = None
    result: Result | None = None
    revealed_seed: str | None = None
    last_hash: str = GENESIS
    abandon_votes: tuple[int, ...] = ()
    """Seats that agreed to abandon the running game since its last title event."""
    seat_keys: tuple[str, ...] = ()
    """Each seat's registered Ed25519 public key ("" for none)."""
    require_seat_keys: bool = False
    clock: clocks.ClockState | None = None
    """The clocks (None without a clock option or before start)."""
    bots: tuple[str, ...] = ()
    """Per seat: the server bot playing it, or "" for a person (empty before the first bot)."""
    undo: undos.UndoState | None = None
    """The last command's undo state, with the game before it (games with an undo option)."""
    choices: secret.PendingChoices | None = None
    """Secret choices made so far for the open simultaneous choice (never shown to others)."""
    lifecycle_version: int = 0
    """The lifecycle rules of the game (``game_created.lifecycle_version``, see LIFECYCLE_VERSION)."""


class Snapshot(Record):
    """A stored snapshot: the fingerprint of the code that wrote it and the game (msgpack).

    A reader uses ``game`` only if ``fingerprint`` equals its own :func:`snapshot_fingerprint`:
    a snapshot of another state type or rules version is ignored (and rewritten), never mixed in.
    """

    fingerprint: str
    game: bytes


@functools.lru_cache(maxsize=64)
def snapshot_fingerprint(title: Title, rules_version: str | None = None) -> str:
    """Hex SHA-256 (32 chars) of the title's name, rules version (default: the title's own) and
    the JSON Schema of ``Game[title.state_type]`` (field names, types and defaults): it changes
    whenever a snapshot written by other code could be misread. Issue 12."""
    schema = msgspec.json.schema(Game[title.state_type])
    data = msgspec.json.encode({"title": title.name, "rules_version": title.rules_version if rules_version is None else rules_version,
                                "state": schema}, order="sorted")
    return hashlib.sha256(data).hexdigest()[:32]


def new_game(game_id: str, title: str) -> Game:
    """The empty game (version 0) that ``create`` starts from."""
    return Game(game_id=game_id, title=title)


def typed_options(title: Title, options: dict) -> Any:
    """The title's options Struct from a JSON object (lifecycle option names are skipped).

    Raises Rejection ``bad_options``.
    """
    own = {k: v for k, v in options.items() if k not in LIFECYCLE_OPTION_NAMES}
    try:
        return msgspec.convert(own, title.options_type)
    except msgspec.ValidationError as exc:
        raise Rejection("bad_options", f"The game options are invalid: {exc}.") from None


def lifecycle_options(options: dict) -> LifecycleOptions:
    """The lifecycle's options (clock, timeout, undo) from a game's options object.

    Raises Rejection ``bad_options`` (only at create: stored options were checked then).
    """
    mine = {k: v for k, v in options.items() if k in LIFECYCLE_OPTION_NAMES}
    try:
        return clocks.check(msgspec.convert(mine, LifecycleOptions))
    except msgspec.ValidationError as exc:
        raise Rejection("bad_options", f"The game options are invalid: {exc}.") from None


def chance_for(game: Game, seed: bytes) -> Chance:
    """The seeded chance of the next command of ``game`` (keyed by seed, client seeds, version)."""
    return SeededChance(derive_key(seed, game.client_seeds), game.version)


def _seat_taken(game: Game, seat: int | None) -> bool:
    return seat is not None and 0 <= seat < len(game.seats) and game.seats[seat].name is not None


def decide(title: Title, game: Game, envelope: CommandEnvelope, chance: Chance, seed: bytes) -> list[Event]:
    """Decide one command on ``game``: the lifecycle here, title commands by the title.

    ``seed`` is the game's 32-byte secret seed (for ``create``, the freshly drawn one): its
    commitment goes into ``game_created`` and it is revealed when the game ends.
    Returns the event bodies (possibly empty). Raises :class:`Rejection`.
    """
    body = envelope.body
    seat = envelope.seat
    if envelope.expected_version is not None and envelope.expected_version != game.version:
        raise Rejection(
            "stale_version",
            f"The command expected version {envelope.expected_version} but the game is at version {game.version}.",
        )
    if game.status != "none" and game.title != title.name:
        raise Rejection("wrong_title", f"Game {game.game_id!r} is a game of another title.")
    if seat is not None and not isinstance(body, (CreateGame, JoinSeat)) and game.status != "none":
        check_seat_signature(game, envelope)
    if isinstance(body, CreateGame):
        if game.status != "none":
            raise Rejection("game_exists", f"Game {game.game_id!r} already exists.")
        if not title.min_seats <= body.seats <= title.max_seats:
            raise Rejection("bad_seats", f"{title.display_name} takes {title.min_seats} to {title.max_seats} seats, not {body.seats}.")
        opts = typed_options(title, body.options)
        lopts = lifecycle_options(body.options)
        if hasattr(title, "check_options"):
            title.check_options(opts, body.seats)
        if lopts.on_timeout == "bot" and (lopts.timeout_bot or _first_bot(title)) not in title.bots:
            raise unknown_bot(title, lopts.timeout_bot)
        stored = msgspec.to_builtins(opts)
        if lopts != LifecycleOptions():  # only a game that sets one stores the lifecycle options
            stored.update(msgspec.to_builtins(lopts))
        return [
            GameCreated(
                title=title.name,
                seats=body.seats,
                options=stored,
                rules_version=title.rules_version,
                seed_commitment=seed_commitment(seed),
                rng=RNG_ALGORITHM,
                require_seat_keys=body.require_seat_keys,
                lifecycle_version=LIFECYCLE_VERSION,
            )
        ]
    if game.status == "none":
        raise Rejection("no_such_game", f"There is no game {game.game_id!r}.")
    if isinstance(body, (JoinSeat, LeaveSeat, StartGame)) and game.status != "lobby":
        raise Rejection("not_in_lobby", _not_in_lobby(game.status))
    if isinstance(body, JoinSeat):
        if seat is None or not 0 <= seat < len(game.seats):
            raise Rejection("seat_out_of_range", f"Seat must be 0 to {len(game.seats) - 1}.")
        if _seat_taken(game, seat):
            raise Rejection("seat_taken", f"Seat {seat} is already taken.")
        if body.bot and body.bot not in title.bots:
            raise unknown_bot(title, body.bot)
        name = clean_name(body.name if body.name.strip() or not body.bot else f"{body.bot} bot")
        if not _HEX.match(body.client_seed):
            raise Rejection("bad_client_seed", "A client seed is at most 64 hexadecimal digits.")
        if body.public_key and not is_public_key(body.public_key):
            raise Rejection("bad_public_key", "A seat key is an Ed25519 public key: 64 lower-case hex digits.")
        if game.require_seat_keys and not body.public_key and not body.bot:
            raise Rejection("seat_key_required", "This game requires every seat to register a public key at join.")
        joined: list[Event] = [SeatJoined(seat=seat, name=name, client_seed=body.client_seed.lower(),
                                          public_key=body.public_key)]
        if body.bot:
            joined.append(SeatBotted(seat=seat, bot=body.bot, reason="The seat was joined as a bot."))
        return joined
    if isinstance(body, LeaveSeat):
        if not _seat_taken(game, seat):
            raise Rejection("seat_open", f"Seat {seat} is not taken.")
        return [SeatLeft(seat=seat)]  # type: ignore[arg-type]
    if isinstance(body, StartGame):
        if not _seat_taken(game, seat):
            raise Rejection("not_seated", "Only a seated player can start the game.")
        open_seats = [s.seat for s in game.seats if s.name is None]
        if open_seats:
            raise Rejection("seats_open", f"Seats {open_seats} are still open.")
        opts = typed_options(title, game.options)
        events: list[Event] = [GameStarted()]
        events += title.setup(opts, len(game.seats), chance)
        return events + _after(title, game, events, seed, None, envelope.received_at)
    if isinstance(body, EndGame):
        if seat is not None:
            raise Rejection("not_operator", "Only an operator (no seat) can end a game with end_game.")
        if game.status not in ("lobby", "active"):
            raise Rejection("game_over", "The game is already over.")
        reason = clean_text(body.reason, "bad_reason", "The reason")
        if not reason:
            raise Rejection("bad_reason", "An operator ending a game states the reason.")
        return [GameAbandoned(seat=None, reason=reason), SeedRevealed(seed=seed.hex())]
    if isinstance(body, (AbandonGame, AgreeToAbandon)):
        if game.status not in ("lobby", "active"):
            raise Rejection("game_over", "The game is already over.")
        if not _seat_taken(game, seat):
            raise Rejection("not_seated", "Only a seated player can abandon the game.")
        if isinstance(body, AbandonGame):
            reason = clean_text(body.reason, "bad_reason", "The reason")
            if game.status == "lobby":
                return [GameAbandoned(seat=seat, reason=reason), SeedRevealed(seed=seed.hex())]
            why = f"the seat gave up ({reason})." if reason else "the seat gave up."
            return [SeatForfeited(seat=seat, reason=reason), *forfeit(title, game, seat, why, seed)]  # type: ignore[arg-type]
        if game.status == "lobby":
            raise Rejection("game_not_started", "In the lobby a seat abandons the game with abandon.")
        if seat in game.abandon_votes:
            raise Rejection("already_agreed", f"Seat {seat} has already agreed to abandon the game.")
        agreed: list[Event] = [AbandonAgreed(seat=seat)]  # type: ignore[arg-type]
        if len(set(game.abandon_votes) | {seat}) == len(game.seats):
            agreed += [GameAbandoned(seat=None, reason="every seat agreed"), SeedRevealed(seed=seed.hex())]
        return agreed
    if isinstance(body, Timeout):
        return _timeout(title, game, envelope, body, chance, seed)
    if isinstance(body, (RequestUndo, AnswerUndo)):
        if game.status != "active":
            raise Rejection("game_over" if game.status in ("finished", "abandoned") else "game_not_started",
                            "Only a running game's commands can be taken back.")
        if not _seat_taken(game, seat):
            raise Rejection("not_seated", "Only a seated player can take a command back.")
        events = undos.decide(game, seat, body, lifecycle_options(game.options))  # type: ignore[arg-type]
        return events + _after(title, game, events, seed, None, envelope.received_at,
                               fresh=any(isinstance(e, Undone) for e in events))
    # A title command.
    if game.status == "lobby":
        raise Rejection("game_not_started", "The game has not started yet.")
    if game.status in ("finished", "abandoned"):
        raise Rejection("game_over", "The game is over.")
    if seat is None or not 0 <= seat < len(game.seats):
        raise Rejection("not_seated", "A game command must come from a seat of the game.")
    due = game.clock.deadline_of(seat) if game.clock is not None else None
    if due is not None and envelope.received_at > due.at:
        raise Rejection("out_of_time", f"Seat {seat}'s deadline has passed; the timeout decides this turn.")
    if not secret.is_choice(title, body) and not isinstance(body, title.off_turn) and game.rules is not None:
        waiting = list(title.to_move(game.rules))
        if seat not in waiting:  # precedence: not seated, not your turn, then the title's rules
            who = ", ".join(map(str, waiting)) or "nobody"
            raise Rejection("not_your_turn", f"The game waits for seat {who}, not seat {seat}.")
    undo_on = game.options.get("undo", "off") != "off"
    watched = undos.WatchedChance(chance) if undo_on else chance
    choice = secret.is_choice(title, body)
    if choice:
        events = secret.choose(title, game, seat, body, watched, lambda g, ev: _evolve_body(title, g, ev))
    else:
        events = list(title.decide(game.rules, seat, body, watched))
    if undo_on and events:
        events.insert(0, undos.point(title, game, seat, envelope.command_id, body, events,
                                     watched.drawn, choice))  # type: ignore[union-attr]
    return events + _after(title, game, events, seed, seat, envelope.received_at)


def check_seat_signature(game: Game, envelope: CommandEnvelope) -> None:
    """Refuse a command of a seat that registered a key unless it carries that key's signature
    over ``seat_message(game, seat, expected_version, body hash)``.

    Raises Rejection ``signature_required`` (none, or no ``expected_version`` to bind it to) or
    ``bad_signature``. A seat the server's bot plays (``seat_botted`` in the log) is not
    checked: from that event on its moves are the bot service's. Source: issue 13, "Seat keys".
    """
    seat = envelope.seat
    key = game.seat_keys[seat] if seat is not None and 0 <= seat < len(game.seat_keys) else ""
    if seat is not None and 0 <= seat < len(game.bots) and game.bots[seat]:
        return  # the server's bot plays the seat (a recorded seat_botted event: its timeout, or joined as a bot)
    if not key:
        return
    if not envelope.signature or envelope.expected_version is None:
        raise Rejection("signature_required", f"Seat {seat} registered a key: its commands must be signed and name "
                                              "the expected_version they were signed at.")
    msg = seat_message(envelope.game_id, seat, envelope.expected_version, body_hash(msgspec.to_builtins(envelope.body)))
    if not verify(key, envelope.signature, msg):
        raise Rejection("bad_signature", f"The command's signature does not verify with seat {seat}'s key.")


def _not_in_lobby(status: str) -> str:
    """The sentence of ``not_in_lobby``: the game's actual status, then what the lobby allows."""
    now = "has already started" if status == "active" else "is over"
    return f"The game {now} (status {status}); seats are joined or left, and the game started, only in the lobby."


def unknown_bot(title: Title, name: str) -> Rejection:
    """The ``unknown_bot`` rejection of a bot name ``title`` does not have (a join's ``bot``, the
    ``timeout_bot`` option, the SDK's ``bot_names``): the name (first 40 characters) and the
    title's bots, sorted."""
    return Rejection("unknown_bot", f"{title.display_name} has no bot {name[:40]!r}; bots: {sorted(title.bots)}.")


def _first_bot(title: Title) -> str:
    return next(iter(title.bots), "")


def _timeout(title: Title, game: Game, envelope: CommandEnvelope, body: Timeout, chance: Chance, seed: bytes) -> list[Event]:
    """A seat's deadline passed (docs/gateway.md "Clocks"): the ``on_timeout`` option decides.

    A stale timeout (the deadline was set again or cleared since ``body.version``, or the game
    is no longer running) appends nothing. Raises Rejection ``system_command`` if a seat sent it.
    """
    if envelope.seat is not None:
        raise Rejection("system_command", "Only the clock service sends a timeout.")
    d = game.clock.deadline_of(body.seat) if game.status == "active" and game.clock is not None else None
    if d is None or d.set_at != body.version or game.rules is None:
        return []
    lopts = lifecycle_options(game.options)
    if d.key:  # a title's timed decision (a response window): its default move, nothing else
        lopts = msgspec.structs.replace(lopts, on_timeout="default_move", absent_after=0)
        reason = f"The {(d.at - d.since) // 1000} s of the timed decision ran out."
    else:
        reason = ("The seat's time bank ran out." if lopts.clock == "bank"
                  else f"The {lopts.move_seconds} s for the decision ran out.")
    events: list[Event] = [TimedOut(seat=body.seat, deadline=d.at, action=lopts.on_timeout, reason=reason)]
    in_row = (game.clock.timeouts[body.seat] if body.seat < len(game.clock.timeouts) else 0) + 1
    botted = body.seat < len(game.bots) and bool(game.bots[body.seat])
    takeover = lopts.on_timeout == "bot" and not botted
    # lifecycle_version 1: a seat the server's bot plays (or takes over now) is not absent: the bot
    # plays its deadlines (else the next one fell due at once, racing the bot service's move).
    played = game.lifecycle_version >= 1 and (botted or takeover)
    absent: list[int] = []
    if lopts.absent_after and in_row >= lopts.absent_after and body.seat not in game.clock.absent and not played:
        events.append(SeatAbsent(seat=body.seat, timeouts=in_row, reason=f"The seat timed out {in_row} times in a row."))
        absent.append(body.seat)
    if lopts.on_timeout == "forfeit":
        return events + forfeit(title, game, body.seat, reason, seed)
    if takeover:
        bot = lopts.timeout_bot or _first_bot(title)
        events.append(SeatBotted(seat=body.seat, bot=bot, reason=f"The seat timed out: {reason[0].lower()}{reason[1:]}",
                                 takeover=True))
    recorded = len(events)
    move = title.default_move(game.rules, body.seat)
    if move is not None:
        try:
            if secret.is_choice(title, move):  # a default choice stays as secret as a chosen one
                events += secret.choose(title, game, body.seat, move, chance, lambda g, ev: _evolve_body(title, g, ev))
            else:
                events += title.decide(game.rules, body.seat, move, chance)
        except Rejection:  # a title whose default move is not legal: only the timeout is recorded
            pass
    # A timeout that played nothing leaves the seat without a deadline until the game changes:
    # else an absent seat (or an empty bank) would fall due again at once, without end.
    return events + _after(title, game, events, seed, body.seat, d.at, timed_out=True, absent=absent,
                           idle=len(events) == recorded)


def forfeit(title: Title, game: Game, seat: int, reason: str, seed: bytes) -> list[Event]:
    """The events that end a running game by ``seat`` forfeiting (``reason``: one sentence).

    The other seats win (the title's ``forfeit_winners`` decides for co-operative titles).
    """
    winners = title.forfeit_winners(game.rules, seat, len(game.seats))
    result = Result(winners=winners, summary=f"Seat {seat} forfeits: {reason}")
    return [GameFinished(result=result), SeedRevealed(seed=seed.hex())]


def _after(title: Title, game: Game, events: list[Event], seed: bytes, actor: int | None, now: int, *,
           timed_out: bool = False, absent: list[int] | None = None, fresh: bool = False,
           idle: bool = False) -> list[Event]:
    """What the lifecycle appends after a command's events: the finish (result and seed), or the
    clocks if they changed."""
    if not events:
        return []
    g = game
    for ev in events:
        g = _evolve_body(title, g, ev)
    result = title.status(g.rules) if g.rules is not None else None
    if result is not None:
        return [GameFinished(result=result), SeedRevealed(seed=seed.hex())]
    if g.clock is None:
        return []
    lopts = lifecycle_options(g.options)
    set_at = game.version + len(events) + 1
    base = g.clock
    if fresh:  # after an undo: the restored deadlines keep their time (an undo takes back a command,
        # not the clock), set again at this version so that their timeouts get new command ids
        base = msgspec.structs.replace(g.clock, deadlines=tuple(msgspec.structs.replace(d, set_at=set_at)
                                                                for d in g.clock.deadlines))
    waiting = to_move(title, g)
    timed = {}
    if title.timed_decisions and g.rules is not None:
        timed = {s: t for s in waiting if (t := title.decision_seconds(g.rules, s)) is not None}
    new = clocks.advance(lopts, base, waiting, actor, now, set_at,
                         timed_out=timed_out, absent=absent or (), idle=idle, timed=timed)
    return [clocks.event(new)] if new != g.clock else []


_LIFECYCLE_BODIES = (GameCreated, SeatJoined, SeatLeft, GameStarted, ClockUpdated, SeatBotted, UndoPoint, UndoRequested,
                     UndoAccepted, UndoRefused, Undone, TimedOut, SeatAbsent, GameAbandoned, AbandonAgreed, SeatForfeited,
                     GameFinished, SeedRevealed)
"""Every event type :func:`_evolve_body` handles before the title's ``evolve`` (one ``isinstance``
with this tuple sends a title's event straight there)."""


def _evolve_body(title: Title, game: Game, body: Event) -> Game:
    if not isinstance(body, _LIFECYCLE_BODIES):  # a title's event (most of them): skip the lifecycle's checks
        return _evolve_rules(title, game, body)
    rep = msgspec.structs.replace
    if isinstance(body, GameCreated):
        return rep(
            game,
            title=body.title,
            status="lobby",
            seats=tuple(SeatInfo(seat=i) for i in range(body.seats)),
            client_seeds=tuple("" for _ in range(body.seats)),
            options=body.options,
            seed_commitment=body.seed_commitment,
            rng=body.rng,
            rules_version=body.rules_version,
            seat_keys=tuple("" for _ in range(body.seats)),
            require_seat_keys=body.require_seat_keys,
            lifecycle_version=body.lifecycle_version,
        )
    if isinstance(body, (SeatJoined, SeatLeft)):
        seats = list(game.seats)
        seeds = list(game.client_seeds)
        keys = list(game.seat_keys) or ["" for _ in seats]
        if 0 <= body.seat < len(seats):
            joined = isinstance(body, SeatJoined)
            seats[body.seat] = SeatInfo(seat=body.seat, name=body.name) if joined else SeatInfo(seat=body.seat)
            seeds[body.seat] = body.client_seed if joined else ""
            keys[body.seat] = body.public_key if joined else ""
        if isinstance(body, SeatJoined):
            return rep(game, seats=tuple(seats), client_seeds=tuple(seeds), seat_keys=tuple(keys))
        bots = tuple("" if i == body.seat else b for i, b in enumerate(game.bots))
        return rep(game, seats=tuple(seats), client_seeds=tuple(seeds), seat_keys=tuple(keys), bots=bots)
    if isinstance(body, GameStarted):
        opts = typed_options(title, game.options)
        lopts = lifecycle_options(game.options)
        clock = clocks.start(lopts, len(game.seats)) if lopts.clock != "none" or title.timed_decisions else None
        return rep(game, status="active", rules=title.initial_state(opts, len(game.seats)), clock=clock)
    if isinstance(body, ClockUpdated):
        return rep(game, clock=clocks.apply(body))
    if isinstance(body, SeatBotted):
        bots = list(game.bots) or ["" for _ in game.seats]
        if 0 <= body.seat < len(bots):
            bots[body.seat] = body.bot
        return rep(game, bots=tuple(bots))
    if isinstance(body, UndoPoint):
        before = msgspec.msgpack.encode(rep(game, undo=None))
        return rep(game, undo=undos.UndoState(seat=body.seat, command_id=body.command_id, undoable=body.undoable,
                                              reason=body.reason, version=game.version,
                                              before=before if body.undoable else b""))
    if isinstance(body, UndoRequested) and game.undo is not None:
        return rep(game, undo=rep(game.undo, requested=True))
    if isinstance(body, UndoAccepted) and game.undo is not None:
        return rep(game, undo=rep(game.undo, accepted=tuple(sorted({*game.undo.accepted, body.seat}))))
    if isinstance(body, UndoRefused) and game.undo is not None:
        return rep(game, undo=rep(game.undo, requested=False, accepted=()))
    if isinstance(body, Undone):
        if game.undo is None or not game.undo.before:  # keep evolve total
            return rep(game, undo=None)
        return msgspec.msgpack.decode(game.undo.before, type=Game[title.state_type])
    if isinstance(body, (TimedOut, SeatAbsent)):  # what they change is in the clock_updated that follows
        return game
    if isinstance(body, GameAbandoned):
        return rep(game, status="abandoned")
    if isinstance(body, AbandonAgreed):
        return rep(game, abandon_votes=(*game.abandon_votes, body.seat))
    if isinstance(body, SeatForfeited):
        return game
    if isinstance(body, GameFinished):
        return rep(game, status="finished", result=body.result)
    if isinstance(body, SeedRevealed):
        return rep(game, revealed_seed=body.seed)
    return _evolve_rules(title, game, body)


def _evolve_rules(title: Title, game: Game, body: Event) -> Game:
    if game.rules is None:  # a title event before start: keep evolve total, ignore it
        return game
    if isinstance(body, (ChoiceMade, ChoicesRevealed)):
        game = msgspec.structs.replace(game, choices=secret.evolve_choices(game, body))
    return msgspec.structs.replace(game, rules=title.evolve(game.rules, body), abandon_votes=())


def evolve(title: Title, game: Game, envelope: EventEnvelope) -> Game:
    """Fold one stored event into the game. Pure and total; sets version and last hash."""
    if game.undo is not None and envelope.command_id != game.undo.command_id and not isinstance(envelope.body, undos.UNDO_EVENTS):
        game = msgspec.structs.replace(game, undo=None)  # another command: the last one can no longer be undone
    g = _evolve_body(title, game, envelope.body)
    extra: dict[str, Any] = {"version": envelope.version, "last_hash": envelope.hash}
    if envelope.version == 1:
        extra["game_id"] = envelope.game_id
        extra["created_at"] = envelope.recorded_at
    return msgspec.structs.replace(g, **extra)


def fold(title: Title, envelopes: Iterable[EventEnvelope], game: Game | None = None) -> Game:
    """Fold events (in version order) onto ``game`` (default: the empty game)."""
    g = game if game is not None else Game(title=title.name)
    for env in envelopes:
        g = evolve(title, g, env)
    return g


def to_move(title: Title, game: Game) -> list[int]:
    """Seats the game waits for (empty unless active): the title's ``to_move``, or while a
    simultaneous secret choice is open, its awaited seats that have not chosen yet.

    The one hook through which the lifecycle learns whom it waits for: every one of these
    seats gets a deadline from the clock (services/kernel/clock.py)."""
    if game.rules is None or game.status != "active":
        return []
    waiting = secret.waiting_for(title, game)
    return list(title.to_move(game.rules)) if waiting is None else waiting


def legal_commands(title: Title, game: Game, seat: int) -> list:
    """The commands ``seat`` may send now: the title's ``legal_commands`` as the kernel's secret
    choice rules leave them (a seat that has chosen: only a change of its choice, and none once
    it changed ``MAX_CHANGES`` times; services/kernel/secret.py ``legal_now``). [] unless active."""
    if game.rules is None or game.status != "active":
        return []
    return secret.legal_now(title, game, seat, title.legal_commands(game.rules, seat))


def view(title: Title, game: Game, seat: int | None) -> ViewEnvelope:
    """The read model of ``game`` for ``seat`` (None: spectator).

    A title view's ``legal`` list (where the title keeps one) passes the kernel's secret choice
    rules (:func:`legal_commands`): a seat that has made its choice is offered only a change."""
    inner = title.view(game.rules, seat) if game.rules is not None else None
    active = game.rules is not None and game.status == "active"
    if active and seat is not None and secret.chosen(title, game) and isinstance(getattr(inner, "legal", None), list):
        inner = msgspec.structs.replace(inner, legal=secret.legal_now(title, game, seat, inner.legal))  # type: ignore[arg-type]
    return ViewEnvelope(
        game_id=game.game_id,
        title=game.title,
        version=game.version,
        status=game.status if game.status != "none" else "lobby",
        seats=list(game.seats),
        seat=seat,
        view=inner,
        to_move=to_move(title, game),
        result=game.result,
        deadlines=list(game.clock.deadlines) if game.clock is not None and game.status == "active" else [],
        banks=list(game.clock.banks) if game.clock is not None else [],
        bots=[b or None for b in game.bots],
        absent=list(game.clock.absent) if game.clock is not None else [],
        undo=UndoInfo(seat=game.undo.seat, undoable=game.undo.undoable, reason=game.undo.reason,
                      requested=game.undo.requested, accepted=list(game.undo.accepted))
        if game.undo is not None and active else None,
        chosen=secret.chosen(title, game) if active else [],
        my_choice=secret.my_choice(title, game, seat) if active else None,
    )


def redact(title: Title, envelope: EventEnvelope, seat: int | None) -> FeedEntry | None:
    """The event as ``seat`` (None: spectator) may see it, or None if it sees nothing of it."""
    body = envelope.body
    if not isinstance(body, LIFECYCLE_EVENTS):
        body = title.redact(secret.redact_choice(body, seat), seat)
        if body is None:
            return None
    return FeedEntry(game_id=envelope.game_id, version=envelope.version, recorded_at=envelope.recorded_at, body=body)
