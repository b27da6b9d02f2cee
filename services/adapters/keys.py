"""The cluster-ready Redis key layout.

Games are spread over ``partitions`` partitions by ``crc32(game_id) % partitions``. Every key a
single atomic script touches carries the partition's hash tag ``{<ns>:p<N>}``, so the same
code runs on one Redis and on Redis Cluster (../shared/DESIGN.md "Redis key layout"):

=============================================  ==================================================
``<ns>:{<ns>:pN}:cmd:<title>``                  command stream of a title (consumer group
                                                ``worker:<title>``)
``<ns>:{<ns>:pN}:cmd:<title>:failures``         hash: recorded handling failures per message id
``<ns>:{<ns>:pN}:cmd:<title>:inflight``         hash: message id -> [game, command] of the
                                                commands read and not yet handled
``<ns>:{<ns>:pN}:dead:<title>``                 dead-letter stream of a title
``<ns>:{<ns>:pN}:log``                          partition log: every appended event (groups
                                                ``projector``, ``clock``); trimmed below every
                                                group's oldest pending entry
``<ns>:{<ns>:pN}:log-dead``                     log entries the projector parked (with the error)
``<ns>:{<ns>:pN}:games``                        set of the partition's game ids
``<ns>:{<ns>:pN}:g:<game>:meta``                hash: version, hash, status, title
``<ns>:{<ns>:pN}:g:<game>:events``              the game's event stream, entry id ``<version>-0``;
                                                never trimmed (an ended game's is packed)
``<ns>:{<ns>:pN}:g:<game>:secret``              hash: the secret seed (worker side only)
``<ns>:{<ns>:pN}:g:<game>:commands``            accepted commands that appended events, entry
                                                id = the version they brought the game to
``<ns>:{<ns>:pN}:g:<game>:snap``                snapshot: msgpack ``Snapshot{fingerprint, game}``
``<ns>:{<ns>:pN}:g:<game>:packed``              an ended game's events and commands stream in one
                                                record, read as the streams (adapters/ended.py)
``<ns>:{<ns>:pN}:g:<game>:out:<command>``       the one stored outcome of a command id
``<ns>:{<ns>:pN}:inbox:<client>``                reply inbox of one client process for the
                                                partition: outcomes pushed by the append/reject
                                                scripts (list, expires ``reply_ttl`` s after
                                                the push that made it)
``<ns>:{<ns>:pN}:changes``                      change stream: ``(game, version)`` of every
                                                projection (capped, ~10,000 entries); the
                                                gateway's one reader wakes sockets from it
``<ns>:{<ns>:pN}:rm:<game>:applied``            read models: last applied version
``<ns>:{<ns>:pN}:rm:<game>:view:<seat|spec>``   read model: JSON view envelope (an ended game's
                                                zlib-compressed: ``ended.view_json`` reads both)
``<ns>:{<ns>:pN}:rm:<game>:feed:<seat|spec>``   an event feed stored before feeds were derived
                                                when read (services/runtime/feeds.py, 2026-12-04):
                                                deleted by the projection that ends its game
``<ns>:{<ns>:pN}:deadlines``                    sorted set of the partition's pending deadlines
                                                (score = deadline ms, member
                                                ``<title>/<game>/<seat>/<set_at>``; group
                                                ``clock`` on the log keeps it)
``<ns>:{<ns>:pN}:deadline-games``               hash: game -> ``<version>|<members>`` last applied
``<ns>:{<ns>:pN}:deadline-lease:<member>``      a clock replica's short lease on firing one
``<ns>:{<ns>:pN}:g:<game>:webhooks``            set: the game's own webhook URLs (at most 8)
``<ns>:{<ns>:pN}:webhook-jobs`` / ``-due``      the notifier's queued deliveries (hash, sorted set)
``<ns>:{<ns>:pN}:webhook-dead``                 webhook deliveries given up (stream, ~10000)
``<ns>:{<ns>:lobby}:...``                       global read models (lobby, results) with their own
                                                dedupe records, in their own slot
=============================================  ==================================================
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

# \Z, not $: "$" also matches before a trailing newline ("g1\n" would pass).
GAME_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")
COMMAND_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}\Z")
INBOX = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")
"""A reply inbox name (a client process's own id)."""

SPECTATOR = "spec"

PARTITION_MEMO = 65_536
"""Game ids whose partition a namespace's :class:`Keys` remember (the memo starts again when full)."""
_MEMO: dict[tuple[str, int], tuple[tuple[str, ...], dict[str, int]]] = {}


CHANGES_MAXLEN = 10_000
"""Approximate cap of a partition's change stream (the gateway's reader only needs its tail)."""


@dataclass(frozen=True)
class Keys:
    """Key builder for one namespace (``ns``) and a fixed partition count."""

    ns: str = "qh"
    partitions: int = 8

    def __post_init__(self) -> None:
        # memos (not fields: equality and repr stay the namespace and the partition count): the
        # partitions' tags, and the partition of each game id seen, shared by every Keys of the
        # namespace (a hot path builds 5-7 keys a command; crc32 and the tag's f-string each time
        # were about 5 % of the worker's and the projector's CPU)
        memo = _MEMO.get((self.ns, self.partitions))
        if memo is None:
            memo = _MEMO[(self.ns, self.partitions)] = (
                tuple(f"{self.ns}:{{{self.ns}:p{p}}}" for p in range(self.partitions)), {})
        object.__setattr__(self, "_tags", memo[0])
        object.__setattr__(self, "_parts", memo[1])

    def partition(self, game_id: str) -> int:
        """The partition of a game: ``crc32(game_id) % partitions``."""
        p = self._parts.get(game_id)
        if p is None:
            if len(self._parts) >= PARTITION_MEMO:
                self._parts.clear()
            p = self._parts[game_id] = zlib.crc32(game_id.encode()) % self.partitions
        return p

    def tag(self, p: int) -> str:
        if 0 <= p < self.partitions:
            return self._tags[p]
        return f"{self.ns}:{{{self.ns}:p{p}}}"

    def commands(self, p: int, title: str) -> str:
        return f"{self.tag(p)}:cmd:{title}"

    def dead(self, p: int, title: str) -> str:
        return f"{self.tag(p)}:dead:{title}"

    def failures(self, stream: str) -> str:
        """Hash of the last handling error per message id of a command stream."""
        return stream + ":failures"

    def inflight(self, stream: str) -> str:
        """Hash of the commands in flight on a command stream: message id -> msgpack
        ``[game id, command id]``, written when a worker reads them, deleted once handled; it
        names a pending command whose entry was trimmed or deleted (so its caller is answered)."""
        return stream + ":inflight"

    def log(self, p: int) -> str:
        return f"{self.tag(p)}:log"

    def changes(self, p: int) -> str:
        """The partition's change stream (the projector adds ``g``, ``v`` per projection; the
        archive adds ``g`` and ``v`` 0 when it removes a game, so open sockets learn it is gone;
        capped at about :data:`CHANGES_MAXLEN` entries)."""
        return f"{self.tag(p)}:changes"

    def log_dead(self, p: int) -> str:
        """Dead-letter stream of the partition log: entries the projector parked after failed tries."""
        return f"{self.tag(p)}:log-dead"

    def games(self, p: int) -> str:
        return f"{self.tag(p)}:games"

    def game(self, game_id: str, part: str) -> str:
        return f"{self._tags[self.partition(game_id)]}:g:{game_id}:{part}"

    def game_prefix(self, game_id: str) -> str:
        """``game(game_id, part)`` is this + ``part`` (a hot path building several keys of one game)."""
        return f"{self._tags[self.partition(game_id)]}:g:{game_id}:"

    def projection_keys(self, game_id: str, view_seats: list[int | None], feed_seats: list[int | None]
                        ) -> tuple[str, list[str], list[str]]:
        """``(rm(game_id, "applied"), [view(game_id, s)...], [feed(game_id, s)...])``, the game's
        prefix built once (the projector names them for every projection)."""
        rm = f"{self._tags[self.partition(game_id)]}:rm:{game_id}:"
        return (rm + "applied", [f"{rm}view:{SPECTATOR if s is None else s}" for s in view_seats],
                [f"{rm}feed:{SPECTATOR if s is None else s}" for s in feed_seats])

    def outcome(self, game_id: str, command_id: str) -> str:
        return self.game(game_id, f"out:{command_id}")

    def inbox(self, p: int, client: str) -> str:
        """The reply inbox of client process ``client`` in partition ``p`` (same slot as its games)."""
        return f"{self.tag(p)}:inbox:{client}"

    def deadlines(self, p: int) -> str:
        return f"{self.tag(p)}:deadlines"

    def deadline_games(self, p: int) -> str:
        return f"{self.tag(p)}:deadline-games"

    def deadline_lease(self, p: int, member: str) -> str:
        return f"{self.tag(p)}:deadline-lease:{member}"

    def rm(self, game_id: str, part: str) -> str:
        return f"{self._tags[self.partition(game_id)]}:rm:{game_id}:{part}"

    def view(self, game_id: str, seat: int | None) -> str:
        return self.rm(game_id, f"view:{SPECTATOR if seat is None else seat}")

    def feed(self, game_id: str, seat: int | None) -> str:
        return self.rm(game_id, f"feed:{SPECTATOR if seat is None else seat}")

    def rm_pattern(self, p: int) -> str:
        return f"{self.tag(p)}:rm:*"

    # global read models: their own slot
    @property
    def lobby_tag(self) -> str:
        return f"{self.ns}:{{{self.ns}:lobby}}"

    def lobby_game(self, game_id: str) -> str:
        return f"{self.lobby_tag}:game:{game_id}"

    def lobby_applied(self, game_id: str) -> str:
        return f"{self.lobby_tag}:applied:{game_id}"

    def lobby_index(self, title: str, status: str) -> str:
        return f"{self.lobby_tag}:idx:{title}:{status}"

    def result(self, game_id: str) -> str:
        return f"{self.lobby_tag}:result:{game_id}"

    def lobby_pattern(self) -> str:
        return f"{self.lobby_tag}:*"

    @property
    def config(self) -> str:
        return f"{self.ns}:{{{self.ns}:config}}:partitions"
