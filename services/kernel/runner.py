"""Turning decided event bodies into sealed envelopes, and an in-memory game runner.

:func:`stamp` is what every writer uses (the Redis worker and :class:`LocalGame`), so the
hash chain and versions are computed in one place. :class:`LocalGame` runs a game with no
I/O at all: property tests, the pure bench figure and offline audits use it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from schemas.base import Command, Event
from schemas.envelope import Accepted, CommandEnvelope, CreateGame, EventEnvelope, Outcome, Rejected
from services.kernel import game as lifecycle
from services.kernel.chance import Chance
from services.kernel.decider import Title
from services.kernel.errors import Rejection
from services.kernel.hashing import command_hash, event_salt, seal


def stamp(game: lifecycle.Game, bodies: Sequence[Event], command_id: str, recorded_at: int,
          command_hash: str = "", seed: bytes | None = None) -> list[EventEnvelope]:
    """Envelopes for ``bodies`` following ``game``: versions ``game.version+1..``, chained hashes.

    ``command_hash``: :func:`services.kernel.hashing.command_hash` of the causing command
    (every writer passes it; the audit requires it). ``seed``: the game's 32-byte secret seed,
    which keys each envelope's ``salt`` (:func:`services.kernel.hashing.event_salt`; every
    writer passes it; None: no salt, as events recorded before salts).
    """
    out: list[EventEnvelope] = []
    prev = game.last_hash
    for i, body in enumerate(bodies):
        v = game.version + 1 + i
        env = seal(EventEnvelope(
            game_id=game.game_id, version=v, body=body, command_id=command_id, recorded_at=recorded_at,
            prev_hash=prev, command_hash=command_hash, salt=event_salt(seed, game.game_id, v) if seed else "",
        ))
        out.append(env)
        prev = env.hash
    return out


class LocalGame:
    """One game run in memory: ``submit`` decides, stamps and folds like the worker does.

    ``seed``: the 32-byte secret seed (default: from the OS CSPRNG). ``chance``: override the
    seeded chance (scenarios and tests only). Outcomes are kept per command id, so a repeated
    command id returns its first outcome, as on Redis. ``commands`` holds the accepted commands
    that appended events as ``(version before, version after, envelope)``, like the Redis
    command stream (what an audit bundle needs).
    """

    def __init__(self, title: Title, game_id: str = "local", seed: bytes | None = None, chance: Chance | None = None) -> None:
        self.title = title
        self.seed = seed if seed is not None else os.urandom(32)
        self.game = lifecycle.new_game(game_id, title.name)
        self.events: list[EventEnvelope] = []
        self.outcomes: dict[str, Outcome] = {}
        self.commands: list[tuple[int, int, CommandEnvelope]] = []
        self._chance = chance
        self._n = 0
        self.clock = 0
        self.now_ms = 0
        """The time stamped on each command as ``received_at`` (ms); tests let time pass with it."""

    def submit(self, body: Command, seat: int | None = None, command_id: str | None = None,
               expected_version: int | None = None, signature: str = "") -> Outcome:
        """Decide ``body`` as ``seat``; returns Accepted or Rejected (never raises Rejection).

        ``signature``: the seat key's signature, for a seat that registered one (see
        ``services.kernel.signing``)."""
        self._n += 1
        cid = command_id or f"c{self._n}"
        if cid in self.outcomes:
            return self.outcomes[cid]
        env = CommandEnvelope(command_id=cid, game_id=self.game.game_id, title=self.title.name,
                              seat=seat, body=body, expected_version=expected_version, received_at=self.now_ms,
                              signature=signature)
        chance = self._chance or lifecycle.chance_for(self.game, self.seed)
        try:
            bodies = lifecycle.decide(self.title, self.game, env, chance, self.seed)
        except Rejection as r:
            out: Outcome = Rejected(command_id=cid, game_id=self.game.game_id, code=r.code, message=r.message, version=self.game.version,
                                    head_hash=self.game.last_hash)
            self.outcomes[cid] = out
            return out
        self.clock += 1
        envs = stamp(self.game, bodies, cid, self.clock, command_hash(env), self.seed)
        before = self.game.version
        for e in envs:
            self.game = lifecycle.evolve(self.title, self.game, e)
        self.events.extend(envs)
        if envs:
            self.commands.append((before, self.game.version, env))
        out = Accepted(command_id=cid, game_id=self.game.game_id, version=self.game.version, events=len(envs),
                       head_hash=self.game.last_hash)
        self.outcomes[cid] = out
        return out

    def create_and_start(self, seats: int, options: dict | None = None, names: Sequence[str] | None = None) -> None:
        """Create the game, seat everyone and start it. Raises AssertionError if any step is refused."""
        from schemas.envelope import JoinSeat, StartGame

        steps: list[tuple[Command, int | None]] = [(CreateGame(seats=seats, options=options or {}), None)]
        steps += [(JoinSeat(name=(names[i] if names else f"P{i}")), i) for i in range(seats)]
        steps += [(StartGame(), 0)]
        for body, seat in steps:
            out = self.submit(body, seat)
            assert isinstance(out, Accepted), out
