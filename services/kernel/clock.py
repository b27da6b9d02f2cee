"""Game clocks as data: deadlines set by events, computed from the time riding in the command.

Pure (no clock is ever read here): ``now`` is the ``received_at`` the worker stamped on the
command, or, for a ``timeout``, the deadline that passed. After every accepted command of an
active game the lifecycle calls :func:`advance` and writes a ``clock_updated`` event when the
clocks changed; :func:`apply` folds that event back. Source: ../shared/DESIGN.md "Mechanisms
every title shares" (Time); issue 14.

Rules (docs/gateway.md "Clocks"):

- ``move``: every seat the game waits for gets ``move_seconds`` from the moment it starts
  waiting; a seat that acts and is still waited for starts a new decision.
- ``bank``: a seat's deadline is the moment it started waiting plus what is left in its bank;
  when it acts, the time used is taken from the bank and ``increment_seconds`` added. A bank that
  runs out is left at 0 and still gets the increment after the timeout's move, so the seat then
  has ``increment_seconds`` per decision.
- A seat marked absent gets a deadline at the moment it starts waiting (it falls due at once).
- A timeout that plays no move (the title has no default move, or it is not legal) leaves its
  seat without a deadline until a later command: it never falls due again at once.
- A title's timed decision (``Title.decision_seconds``: a response window, an agreement timer)
  gives the seat ``(key, seconds)``: a deadline with that ``key`` whatever the ``clock`` option
  (also ``none``), kept while the key stays the same (the seat acting does not restart it), never
  charging a bank; its timeout plays the title's default move (no forfeit, bot or absence).
- A move is in time when its ``received_at`` is at most the deadline (inclusive); later, it is
  refused ``out_of_time`` and the timeout decides the turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from schemas.base import Record
from schemas.envelope import (
    CORRESPONDENCE_SECONDS,
    DAY_SECONDS,
    ClockUpdated,
    Deadline,
    LifecycleOptions,
)
from services.kernel.errors import Rejection


class ClockState(Record):
    """The clocks of a game: deadlines of the seats waited for, banks, timeouts in a row, absent seats."""

    deadlines: tuple[Deadline, ...] = ()
    banks: tuple[int, ...] = ()
    timeouts: tuple[int, ...] = ()
    absent: tuple[int, ...] = ()

    def deadline_of(self, seat: int) -> Deadline | None:
        """The seat's pending deadline, or None."""
        for d in self.deadlines:
            if d.seat == seat:
                return d
        return None


def check(opts: LifecycleOptions) -> LifecycleOptions:
    """The options with the ``correspondence`` preset expanded. Raises Rejection ``bad_options``."""
    if not 1 <= opts.move_seconds <= 30 * DAY_SECONDS or not 1 <= opts.bank_seconds <= 30 * DAY_SECONDS:
        raise Rejection("bad_options", "move_seconds and bank_seconds must be 1 second to 30 days.")
    if not 0 <= opts.increment_seconds <= DAY_SECONDS:
        raise Rejection("bad_options", "increment_seconds must be 0 seconds to 1 day.")
    if not 0 <= opts.absent_after <= 100:
        raise Rejection("bad_options", "absent_after must be 0 to 100.")
    if opts.clock == "correspondence":
        opts = msgspec.structs.replace(opts, clock="move", move_seconds=CORRESPONDENCE_SECONDS)
    return opts


def start(opts: LifecycleOptions, seats: int) -> ClockState:
    """The clocks before the first deadline: full banks, no timeouts."""
    return ClockState(banks=tuple(opts.bank_seconds * 1000 for _ in range(seats)) if opts.clock == "bank" else (),
                      timeouts=tuple(0 for _ in range(seats)))


def advance(opts: LifecycleOptions, clock: ClockState, waiting: Sequence[int], actor: int | None, now: int,
            set_at: int, *, timed_out: bool = False, absent: Sequence[int] = (), idle: bool = False,
            timed: Mapping[int, tuple[str, int]] | None = None) -> ClockState:
    """The clocks after a command of ``actor`` (None: no seat, e.g. ``start``) decided at ``now`` (ms).

    ``waiting``: seats the game waits for after the command; ``set_at``: the game version after
    the command's events (the version a new deadline is set at); ``timed_out``: the command was
    the actor's timeout; ``absent``: seats marked absent by this command; ``idle``: the
    actor's timeout played no move (the title has none, or it was not legal), so the actor gets
    no new deadline now (a later command starts its next decision): an absent seat or an empty
    bank would otherwise fall due again at once, and the timeouts would follow each other without end.
    ``timed``: the title's timed decisions of waited seats, seat -> ``(key, seconds)`` (module docstring).
    """
    timed = timed or {}
    if opts.clock == "none" and not timed and not clock.deadlines:
        return clock
    old = {d.seat: d for d in clock.deadlines}
    banks = list(clock.banks)
    timeouts = list(clock.timeouts)
    away = set(clock.absent) | set(absent)
    inc = opts.increment_seconds * 1000
    if actor is not None and 0 <= actor < len(timeouts):
        d = old.pop(actor, None)
        if d is not None and d.key and not timed_out and actor in timed and timed[actor][0] == d.key:
            old[actor] = d  # the same timed decision goes on: its deadline stays
        elif d is not None and d.key:
            pass  # a timed decision is neither charged to a bank nor counted as a timeout in a row
        else:
            if opts.clock == "bank" and d is not None:
                banks[actor] = inc if timed_out else max(0, banks[actor] - max(0, now - d.since)) + inc
            if timed_out:
                timeouts[actor] += 1
            else:
                timeouts[actor] = 0
                away.discard(actor)
    for s, d in old.items():  # no longer waited for without acting: charge the bank
        if s not in waiting and opts.clock == "bank" and not d.key:
            banks[s] = max(0, banks[s] - max(0, now - d.since))
    deadlines = []
    for s in sorted(set(waiting)):
        if idle and s == actor:
            continue
        if s in timed:
            key, seconds = timed[s]
            if s in old and old[s].key == key:
                deadlines.append(old[s])
            else:
                deadlines.append(Deadline(seat=s, at=now + seconds * 1000, set_at=set_at, since=now, key=key))
            continue
        if s in old and not old[s].key:
            deadlines.append(old[s])
            continue
        if opts.clock == "none":
            continue
        length = 0 if s in away else (opts.move_seconds * 1000 if opts.clock == "move" else banks[s])
        deadlines.append(Deadline(seat=s, at=now + length, set_at=set_at, since=now))
    return ClockState(deadlines=tuple(deadlines), banks=tuple(banks), timeouts=tuple(timeouts), absent=tuple(sorted(away)))


def event(clock: ClockState) -> ClockUpdated:
    """The ``clock_updated`` event recording ``clock``."""
    return ClockUpdated(deadlines=list(clock.deadlines), banks=list(clock.banks), timeouts=list(clock.timeouts),
                        absent=list(clock.absent))


def apply(ev: ClockUpdated) -> ClockState:
    """Fold a ``clock_updated`` event: the clocks it records."""
    return ClockState(deadlines=tuple(ev.deadlines), banks=tuple(ev.banks), timeouts=tuple(ev.timeouts),
                      absent=tuple(ev.absent))
