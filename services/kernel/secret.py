"""Simultaneous secret choices, shared by every title (../shared/DESIGN.md "Mechanisms").

Several seats each submit a choice; until the last awaited seat has chosen, every other seat
and spectators see only *that* a seat has chosen; then one event reveals all of them, in the
same command as the last choice (so no later event can be timed against an early reveal).
A seat may change its choice until the reveal (ruling, docs/writing-a-title.md), at most
:data:`MAX_CHANGES` times per open choice; sending the very choice it has pending is refused
(each accepted choice is an event, so a seat cannot grow the stream without bound).

A title takes part by:

- ``choice_types``: the command types that are secret choices (class attribute);
- ``choice_made_type`` / ``choices_revealed_type``: its subclasses of
  :class:`schemas.base.ChoiceMade` / :class:`schemas.base.ChoicesRevealed` (own tags);
- ``secret_choice(state) -> SecretChoice | None``: the choice open now (its ``key`` and the
  seats it waits for), derived from the title's state;
- ``check_choice(state, seat, command)``: raise ``Rejection`` for a choice the seat may not
  make (judged on that seat's own facts and public ones only, so the sentence leaks nothing);
- ``resolve_choices(state, choices, chance) -> [Event]``: the events that follow the reveal
  (``state`` already has the reveal folded in; ``choices`` maps seat -> command).

The kernel keeps the choices made so far in :attr:`services.kernel.game.Game.choices`
(:class:`PendingChoices`), never in the title's state, and removes ``choice`` from every
:class:`ChoiceMade` a non-chooser reads (:func:`redact_choice`). :func:`waiting_for` is the
generic "which seats does the open choice wait for" (to_move, clocks and deadlines use it).

Rejection codes (stable): ``no_choice_open``, ``not_choosing``, ``choice_unchanged`` (the seat
sent the choice it has pending), ``too_many_changes`` (it changed its choice MAX_CHANGES times).
Bounds: one pending choice per awaited seat (at most the game's seat count) per game; at most
``1 + MAX_CHANGES`` ChoiceMade events per seat per open choice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from schemas.base import ChoiceMade, ChoicesRevealed, Command, Event, Record
from services.kernel.errors import Rejection

if TYPE_CHECKING:  # pragma: no cover
    from services.kernel.decider import Title
    from services.kernel.game import Game

_ENC = msgspec.msgpack.Encoder()
MAX_CHANGES = 5
"""How many times a seat may change its pending choice before the reveal (the first choice
is not a change); the next change is refused with ``too_many_changes``."""


class SecretChoice(Record):
    """A simultaneous secret choice open now (returned by a title's ``secret_choice``)."""

    key: str
    """Names this choice uniquely within the game (e.g. ``organize:2``, ``combat:3:1:2``); a new
    key drops any choices made for an older one."""
    seats: tuple[int, ...]
    """The seats it waits for; revealed once every one of them has chosen."""


class PendingChoices(Record):
    """The choices made so far for the open choice ``key`` (kernel state, secret)."""

    key: str
    seats: tuple[int, ...] = ()
    """Seats that have chosen, ascending (public: views show them as ``chosen``)."""
    made: tuple[bytes, ...] = ()
    """msgpack of each seat's latest :class:`ChoiceMade` (same order as ``seats``). Secret."""
    changes: tuple[int, ...] = ()
    """How many times each seat changed its choice (same order as ``seats``; at most
    MAX_CHANGES). Counted from the ChoiceMade events, so every stream replays to it; empty in
    a state folded before this field existed means none counted (such snapshots are rewritten:
    their fingerprint differs)."""

    def changes_of(self, seat: int) -> int:
        """How many times ``seat`` changed its pending choice (0 if it has none)."""
        if seat not in self.seats:
            return 0
        i = self.seats.index(seat)
        return self.changes[i] if i < len(self.changes) else 0


def is_choice(title: Title, body: Any) -> bool:
    """Whether ``body`` is one of ``title``'s secret choice commands."""
    types = getattr(title, "choice_types", ())
    return bool(types) and isinstance(body, types)


def _pending(title: Title, game: Game) -> PendingChoices | None:
    req = title.secret_choice(game.rules) if game.rules is not None else None
    p = game.choices
    if req is None or p is None or p.key != req.key:
        return None
    return p


def _decode(title: Title, blob: bytes) -> ChoiceMade:
    return msgspec.msgpack.decode(blob, type=title.choice_made_type)


def choose(title: Title, game: Game, seat: int, body: Command, chance: Any,
           evolve_body: Any) -> list[Event]:
    """Events for ``seat`` submitting the secret choice ``body``.

    Returns ``[choice_made]`` while other awaited seats have not chosen, else
    ``[choice_made, choices_revealed, *title.resolve_choices(...)]``. ``evolve_body(game, ev)``
    folds one body into the game (the lifecycle's). Raises Rejection ``no_choice_open``,
    ``not_choosing`` or the title's own code from ``check_choice``.
    """
    req = title.secret_choice(game.rules)
    if req is None:
        raise Rejection("no_choice_open", "No secret choice is open now.")
    if seat not in req.seats:
        raise Rejection("not_choosing", f"Seat {seat} has no choice to make now.")
    title.check_choice(game.rules, seat, body)
    made = title.choice_made_type(key=req.key, seat=seat, choice=body)
    p = _pending(title, game)
    if p is not None and seat in p.seats:
        if _decode(title, p.made[p.seats.index(seat)]).choice == body:
            raise Rejection("choice_unchanged", "You have already made exactly this choice.")
        if p.changes_of(seat) >= MAX_CHANGES:
            raise Rejection("too_many_changes", f"You changed your choice {MAX_CHANGES} times: it stands until the reveal.")
    others = {} if p is None else {s: b for s, b in zip(p.seats, p.made, strict=True) if s != seat}
    if set(others) | {seat} < set(req.seats):
        return [made]
    every = sorted([_decode(title, b) for b in others.values()] + [made], key=lambda m: m.seat)
    revealed = title.choices_revealed_type(key=req.key, choices=every)
    g = evolve_body(evolve_body(game, made), revealed)
    out: list[Event] = [made, revealed]
    out += title.resolve_choices(g.rules, {m.seat: m.choice for m in every}, chance)
    return out


def evolve_choices(game: Game, body: Event) -> PendingChoices | None:
    """The pending choices after ``body`` (a ChoiceMade adds or replaces; a reveal clears)."""
    if isinstance(body, ChoiceMade):
        p = game.choices if game.choices is not None and game.choices.key == body.key else PendingChoices(key=body.key)
        pairs = dict(zip(p.seats, p.made, strict=True))
        counts = {s: p.changes_of(s) for s in p.seats}
        counts[body.seat] = counts[body.seat] + 1 if body.seat in pairs else 0
        pairs[body.seat] = _ENC.encode(body)
        seats = tuple(sorted(pairs))
        return PendingChoices(key=body.key, seats=seats, made=tuple(pairs[s] for s in seats),
                              changes=tuple(counts[s] for s in seats))
    if isinstance(body, ChoicesRevealed):
        return None
    return game.choices


def redact_choice(body: Event, seat: int | None) -> Event:
    """A ChoiceMade as ``seat`` may see it: the choice only for its chooser."""
    if isinstance(body, ChoiceMade) and body.seat != seat and getattr(body, "choice", None) is not None:
        return msgspec.structs.replace(body, choice=None)
    return body


def chosen(title: Title, game: Game) -> list[int]:
    """Seats that have chosen in the open secret choice (public), ascending."""
    p = _pending(title, game)
    return list(p.seats) if p is not None else []


def waiting_for(title: Title, game: Game) -> list[int] | None:
    """Seats the open secret choice still waits for, or None when no secret choice is open.

    The generic hook for to_move, clocks and deadlines: a seat that has chosen is not waited
    for (it may still change its choice until the reveal).
    """
    if game.rules is None or not getattr(title, "choice_types", ()):
        return None
    req = title.secret_choice(game.rules)
    if req is None:
        return None
    done = set(chosen(title, game))
    return [s for s in req.seats if s not in done]


def legal_now(title: Title, game: Game, seat: int | None, legal: list) -> list:
    """``legal`` (the title's legal commands of ``seat``) as the kernel's choice rules leave them.

    A seat that has chosen in the open choice may change its choice (ruling above): every choice
    command stays legal as a change except the very choice it has pending (``choice_unchanged``);
    once it changed MAX_CHANGES times, no choice command is legal (``too_many_changes``). Other
    commands (a title's off-turn ones) are kept. Any other seat's list is returned as it is.
    """
    p = _pending(title, game)
    if p is None or seat is None or seat not in p.seats:
        return list(legal)
    spent = p.changes_of(seat) >= MAX_CHANGES
    pending = _decode(title, p.made[p.seats.index(seat)]).choice
    return [c for c in legal if not (is_choice(title, c) and (spent or c == pending))]


def my_choice(title: Title, game: Game, seat: int | None) -> dict | None:
    """``seat``'s own pending choice as JSON builtins (with its ``type``), or None."""
    p = _pending(title, game)
    if p is None or seat is None or seat not in p.seats:
        return None
    made = _decode(title, p.made[p.seats.index(seat)])
    return msgspec.to_builtins(made.choice)
