"""Event feeds: stored while a game runs, derived from its event stream once it has ended.

A feed entry is the title's redaction of one event for one reader (:func:`entries`, pure: the
same events give the same bytes). While a game runs, the projector stores every reader's feed
(``rm:<game>:feed:<seat|spec>``, stream ids ``<version>-0``) so that many sockets read it
cheaply. The projection that ends a game deletes them instead (each is one more copy of every
event: 4 x 62 kB of a 3-seat Questeros game), and :func:`read` derives a missing feed from the
game's own event stream up to the projected version (``rm:<game>:applied``): the same entries,
byte for byte, so no reader can tell. An ended game's derived feeds are immutable; a process
keeps the last :data:`CACHE_GAMES` of them (game, reader) in memory.

Source: issue 13 ("views of finished games dropped or derived on demand").
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
"""Derived feeds (one per game and reader) a process keeps; each is one game's feed (~60 kB for Questeros)."""
_cache: OrderedDict[tuple[str, str, int | None, int], list[tuple[int, bytes]]] = OrderedDict()


def entries(title: Title, events: list[EventEnvelope], seat: int | None) -> list[tuple[int, bytes]]:
    """``[(version, JSON feed entry)]`` of ``events`` as ``seat`` (None: spectator) sees them."""
    out = []
    for e in events:
        fe = lifecycle.redact(title, e, seat)
        if fe is not None:
            out.append((e.version, JSON.encode(fe)))
    return out


async def read(r: Any, keys: Keys, game_id: str, seat: int | None, after: int, limit: int | None,
               upto: int | None = None) -> list[tuple[int, bytes]]:
    """Feed entries of ``seat`` with ``after < version <= upto`` (``upto`` None: no bound), at most
    ``limit`` (None: all), as ``[(version, JSON entry)]``: the stored feed, or the derived one if
    the game has no stored feed (ended). Raises CorruptEvent if a stored event is unreadable."""
    key = keys.feed(game_id, seat)
    pipe = r.pipeline(transaction=False)
    pipe.xrange(key, f"({after}-0" if after else "-", f"{upto}-0" if upto is not None else "+",
                **({"count": limit} if limit else {}))
    pipe.exists(key)
    pipe.get(keys.rm(game_id, "applied"))
    pipe.hget(keys.game(game_id, "meta"), "title")
    rows, exists, applied, title = await pipe.execute()
    if rows or exists or not applied or title is None:
        return [(int(mid.split(b"-")[0]), f[b"e"]) for mid, f in rows]
    feed = await _derived(r, keys, game_id, title.decode(), seat, int(applied))
    sel = [(v, b) for v, b in feed if v > after and (upto is None or v <= upto)]
    return sel[:limit] if limit else sel


async def _derived(r: Any, keys: Keys, game_id: str, title_name: str, seat: int | None, applied: int) -> list[tuple[int, bytes]]:
    ck = (keys.ns, game_id, seat, applied)
    hit = _cache.get(ck)
    if hit is not None:
        _cache.move_to_end(ck)
        return hit
    codec = get_codec(title_name)
    events: list[EventEnvelope] = []
    lo = "-"
    while True:
        batch = await ended.event_rows(r, keys, game_id, lo, f"{applied}-0", count=500)
        events += [codec.decode_event(f[b"e"], game_id=game_id, version=int(mid.split(b"-")[0])) for mid, f in batch]
        if len(batch) < 500:
            break
        lo = "(" + batch[-1][0].decode()
    feed = entries(codec.title, events, seat)
    _cache[ck] = feed
    while len(_cache) > CACHE_GAMES:
        _cache.popitem(last=False)
    return feed
