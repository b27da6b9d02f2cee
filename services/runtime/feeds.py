"""Event feeds: derived from the game's event stream when they are read, never stored.

A feed entry is the title's redaction of one event for one reader (:func:`entries`, pure: the
same events give the same bytes). :func:`read` takes the game's events after the reader's
cursor, up to the projected version (``rm:<game>:applied``: a feed never runs ahead of the
views), from its event stream (the packed record once the game ended) and redacts each for the
reader. A running game's entries are derived at each read from the events after the cursor
only; an ended game's feed is immutable, and a process keeps the last :data:`CACHE_GAMES` of
them (game, reader) whole in memory.

Projectors stored every reader's feed (``rm:<game>:feed:<seat|spec>``, stream ids
``<version>-0``) until 2026-12-04: one more copy of every event per reader, written with every
command (2 ``XADD`` a command of a one-seat game, 4 for three seats, and about a tenth of the
closed loop's CPU a command in ``make bench``), read by a socket only once a change woke it.
The projection that ends a game still deletes any feed stream left from then.

Source: issue 13 ("views of finished games dropped or derived on demand"), issue 11 (fewer
Redis writes a command).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import msgspec

from schemas.envelope import EventEnvelope
from services.adapters import ended
from services.adapters.keys import Keys
from services.kernel import codec as get_codec
from services.kernel import game as lifecycle
from services.kernel.decider import Title

JSON = msgspec.json.Encoder()
CACHE_GAMES = 128
"""Ended games' feeds (one per game and reader) a process keeps; each is one game's feed (~60 kB for Questeros)."""
CHUNK = 500
"""Events one read of a running game's stream takes at most (a read with ``limit`` takes that many, at least 50)."""
_cache: OrderedDict[tuple[str, str, int | None, int], list[tuple[int, bytes]]] = OrderedDict()


def entries(title: Title, events: list[EventEnvelope], seat: int | None) -> list[tuple[int, bytes]]:
    """``[(version, JSON feed entry)]`` of ``events`` as ``seat`` (None: spectator) sees them."""
    out = []
    for e in events:
        fe = lifecycle.redact(title, e, seat)
        if fe is not None:
            out.append((e.version, JSON.encode(fe)))
    return out


class GameGone(LookupError):
    """The game has no metadata: it was archived (services/audit/archive.py), or never existed."""


async def read(r: Any, keys: Keys, game_id: str, seat: int | None, after: int, limit: int | None,
               upto: int | None = None, *, strict: bool = False) -> list[tuple[int, bytes]]:
    """Feed entries of ``seat`` (None: spectator) with ``after < version <= upto`` (``upto`` None:
    no bound) and at most the projected version, at most ``limit`` (None: all), as ``[(version,
    JSON entry)]``; ``[]`` for a game not projected yet or unknown (``strict``: an unknown game,
    one without metadata, raises :class:`GameGone` instead; the read costs the same). Raises
    CorruptEvent if a stored event is unreadable."""
    pipe = r.pipeline(transaction=False)
    pipe.get(keys.rm(game_id, "applied"))
    pipe.hmget(keys.game(game_id, "meta"), "title", "status")
    applied, (title, status) = await pipe.execute()
    if title is None and strict:
        raise GameGone(game_id)
    if not applied or title is None:
        return []
    bound = int(applied) if upto is None else min(int(applied), upto)
    if status is not None and status.decode() in ended.ENDED:
        feed = await _derived(r, keys, game_id, title.decode(), seat, int(applied))
        sel = [(v, b) for v, b in feed if after < v <= bound]
        return sel[:limit] if limit else sel
    chunk = CHUNK if limit is None else min(max(limit, 50), CHUNK)  # a few more than asked: some may be hidden
    return await _between(r, keys, get_codec(title.decode()), game_id, seat, after, bound, limit, chunk)


async def _between(r: Any, keys: Keys, codec: Any, game_id: str, seat: int | None, after: int, bound: int,
                   limit: int | None, chunk: int = CHUNK) -> list[tuple[int, bytes]]:
    """Feed entries of ``seat`` for the events ``after < version <= bound``, at most ``limit``
    (None: all), read ``chunk`` events a round trip (the stream, or the packed record)."""
    out: list[tuple[int, bytes]] = []
    lo = f"({after}-0" if after else "-"
    while after < bound:
        rows = await ended.event_rows(r, keys, game_id, lo, f"{bound}-0", count=chunk)
        out += row_entries(codec, game_id, rows, seat)
        if len(rows) < chunk or (limit and len(out) >= limit):
            break
        lo = "(" + rows[-1][0].decode()
    return out[:limit] if limit else out


def row_entries(codec: Any, game_id: str, rows: list, seat: int | None) -> list[tuple[int, bytes]]:
    """:func:`entries` of event-stream rows (``[(b"<version>-0", {b"e": envelope})]``, a field list
    ``[b"e", envelope]`` as ``send_all`` gives them, too) of ``game_id`` decoded by ``codec``.
    Raises CorruptEvent if one is unreadable."""
    events = [codec.decode_event(f[b"e"] if isinstance(f, dict) else dict(zip(f[::2], f[1::2], strict=True))[b"e"],
                                 game_id=game_id, version=int(mid.split(b"-")[0])) for mid, f in rows]
    return entries(codec.title, events, seat)


async def _derived(r: Any, keys: Keys, game_id: str, title_name: str, seat: int | None, applied: int) -> list[tuple[int, bytes]]:
    ck = (keys.ns, game_id, seat, applied)
    hit = _cache.get(ck)
    if hit is not None:
        _cache.move_to_end(ck)
        return hit
    feed = await _between(r, keys, get_codec(title_name), game_id, seat, 0, applied, None)
    _cache[ck] = feed
    while len(_cache) > CACHE_GAMES:
        _cache.popitem(last=False)
    return feed
