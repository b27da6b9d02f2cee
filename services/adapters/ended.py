"""The stored form of an ended game: its event and command streams packed into one record.

While a game runs, its events are the stream ``g:<game>:events`` (entry ``<version>-0``, field
``e``: the msgpack envelope) and its accepted commands the stream ``g:<game>:commands`` (entry
``<version after>-0``, fields ``c``: the msgpack envelope, ``from``: the version before). Once it
has ended nothing can be appended to it (the lifecycle refuses every command of an ended game
or accepts it as a no-op, which appends nothing), and the projection that ended it *settles* it
(:func:`settle`): both streams are replaced by one record ``g:<game>:packed`` in the game's slot
-- the ``questhall-archive/3`` form of services/audit/compact.py (the bundle without what the
rest determines, in columns, its repeated strings as vocabulary indexes, raw LZMA2; about 5.8 kB
for a 333-event Questeros game whose streams took 230 kB; a record packed as ``/2`` before is
read as it is). The packing is checked before anything is deleted: every stored entry must come back
from the record byte for byte (same msgpack, same key order), else the streams are kept as
they are; the write is one script that also checks the game is ended and its streams are
still what was packed.

Readers never see the difference: :func:`event_rows` and :func:`command_rows` answer with the
rows ``XRANGE`` gave before (ids ``<version>-0``, the same field bytes), from the stream or, when
the stream is gone and the record is there, from the record (unpacked once per process and
kept for the last :data:`CACHE_GAMES` games). Hashes are never recomputed into the stored
bytes: the record restores the envelopes exactly as stored, so the hash chain, the audit and
a rebuild see the same bytes. A stream read before the record was written gives the stream's
rows; one read after it finds the stream gone and reads the record (written in the same
script that deletes the stream), so no reader sees a game half packed.

Also settled at the end: the stored outcomes of its accepted commands that appended events are
what the record gives back (:func:`derive_outcomes`: version, events, head hash and request hash
follow from the commands and events), so they expire :data:`GRACE_S` s later and a retry of one
of them gets it from the record (:func:`first_outcome`, which the worker asks for every command
of an ended game): one outcome per command id for as long as the game is in Redis. An outcome
the record does not give back byte for byte is kept for good (until the game is archived); a
game whose streams are not packed has its accepted outcomes expire after ``ended_outcome_ttl``
as before (see docs/architecture.md, "one outcome per command id").

Source: issue 13 ("Bounded resources": <= 50 kB live per finished game).
"""

from __future__ import annotations

import hashlib
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import msgspec

from services.adapters.keys import Keys

PART = "packed"
CACHE_GAMES = 64
"""Unpacked records a process keeps (one per game; a Questeros game is ~100 kB unpacked)."""
ENDED = ("finished", "abandoned")
GRACE_S = 60
"""Seconds an ended game's stored accepted outcomes stay once its record gives them back (a
worker that decided a retry just before the record was written still finds the stored one)."""
_ENC = msgspec.msgpack.Encoder()
VIEW_MAGIC = b"\x00qhz1"
"""First bytes of an ended game's stored view: zlib (level 9) of the JSON view envelope (JSON
never starts with a NUL byte, so a view stored before is read as it is)."""


def pack_view(view: bytes) -> bytes:
    """The stored form of an ended game's view (the JSON envelope ``view``), see :func:`view_json`."""
    return VIEW_MAGIC + zlib.compress(view, 9)


def view_json(raw: bytes | None) -> bytes | None:
    """The JSON view envelope of a stored view (``GET`` of a view key): as stored while the game
    runs, decompressed once it has ended (:func:`pack_view`); None stays None."""
    if raw is not None and raw[:len(VIEW_MAGIC)] == VIEW_MAGIC:
        return zlib.decompress(raw[len(VIEW_MAGIC):])
    return raw

# KEYS: 1 meta, 2 events, 3 commands, 4 packed, 5.. outcomes of accepted commands
# ARGV: 1 record, 2 events in the record, 3 commands in the record, 4 the last command's id,
#       5.. for each outcome key: seconds it is kept (the record gives it back), or 0: kept for good
# Writes the record, deletes both streams and sets the outcomes' expiry only if the game is
# ended, at the record's version, its streams hold exactly what was packed and no record is
# there yet (so a game whose record is there has its outcomes' expiry set).
PACK = r"""
local spec = {{KEYS[1], 'hash'}, {KEYS[2], 'stream'}, {KEYS[3], 'stream'}, {KEYS[4], 'string'}}
for i = 5, #KEYS do spec[#spec + 1] = {KEYS[i], 'string'} end
for _, s in ipairs(spec) do
  local t = redis.call('TYPE', s[1])['ok']
  if t ~= 'none' and t ~= s[2] then
    return redis.error_reply('QH_WRONGTYPE key ' .. s[1] .. ' holds a ' .. t .. ', not a ' .. s[2])
  end
end
if redis.call('EXISTS', KEYS[4]) == 1 then return 'packed already' end
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'finished' and status ~= 'abandoned' then return 'not ended' end
local n = tonumber(ARGV[2])
if tonumber(redis.call('HGET', KEYS[1], 'version') or '0') ~= n or redis.call('XLEN', KEYS[2]) ~= n then
  return 'moved'
end
local top = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if n == 0 or top[1][1] ~= (n .. '-0') then return 'moved' end
if redis.call('XLEN', KEYS[3]) ~= tonumber(ARGV[3]) then return 'moved' end
local ctop = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
if #ctop > 0 and ctop[1][1] ~= ARGV[4] then return 'moved' end
redis.call('SET', KEYS[4], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[3])
for i = 5, #KEYS do
  local ttl = tonumber(ARGV[i])
  if ttl > 0 then redis.call('EXPIRE', KEYS[i], ttl) else redis.call('PERSIST', KEYS[i]) end
end
return 'ok'
"""


@dataclass
class Unpacked:
    """A packed game's stream entries as stored: ``events[i]`` is version ``i + 1``'s ``e`` field;
    ``commands`` are ``(version before, version after, c field)`` in stream order; ``outcomes``
    (derived on first use): :func:`derive_outcomes`."""

    events: list[bytes]
    commands: list[tuple[int, int, bytes]]
    outcomes: dict[str, bytes] | None = None


_cache: OrderedDict[tuple[str, str], tuple[bytes, Unpacked]] = OrderedDict()
"""(namespace, game) -> (the record's signature: its length and last bytes, its entries)."""


def key(keys: Keys, game_id: str) -> str:
    """The key of a game's packed record (the game's slot)."""
    return keys.game(game_id, PART)


def unpack(record: bytes) -> Unpacked:
    """The stream entries of a packed record. Raises ValueError if it is not one."""
    from services.audit.compact import unpack as unpack_bundle  # pure (services/audit/compact.py)

    return _entries(unpack_bundle(record))


def _entries(bundle: dict) -> Unpacked:
    return Unpacked(events=[_ENC.encode(e) for e in bundle["events"]],
                    commands=[(c["version_before"], c["version_after"], _ENC.encode(c["command"])) for c in bundle["commands"]])


def pack(game_id: str, event_rows: list, command_rows: list) -> bytes | None:
    """The packed record of a game's streams (their ``XRANGE`` rows), or None if the rows do not
    come back from it byte for byte (or are not versions 1..n): such a game keeps its streams."""
    from services.audit.compact import NotPackable
    from services.audit.compact import pack as pack_bundle
    from services.audit.verify import build_bundle

    stored = [f[b"e"] for _, f in event_rows]
    if not stored or [_version(mid) for mid, _ in event_rows] != list(range(1, len(stored) + 1)):
        return None
    cmds = [(int(f[b"from"]), _version(mid), f[b"c"]) for mid, f in command_rows]
    try:
        bundle = build_bundle(game_id, [msgspec.msgpack.decode(e) for e in stored],
                              [(a, b, msgspec.msgpack.decode(c)) for a, b, c in cmds])
        unpacked: list = []
        record = pack_bundle(bundle, back=unpacked)
        back = _entries(unpacked[0])
    except (NotPackable, ValueError, KeyError, TypeError, msgspec.DecodeError):
        return None
    if back.events != stored or back.commands != cmds:
        return None
    return record


async def settle(r: Any, settings: Any, game_id: str) -> str:
    """Settle an ended game's storage (once its ending projection went through): its streams are
    packed (:data:`PACK`) and, in the same script, its stored accepted outcomes set to expire:
    those the record gives back byte for byte (:func:`derive_outcomes`) after :data:`GRACE_S`, the
    others kept for good (a retry finds them stored). Returns the script's answer (``ok``,
    ``packed already``, ``not ended``, ``moved``) or ``kept`` (the streams do not survive packing:
    left as they are). A game not packed (``kept``, ``moved``, ``not ended``) has its accepted
    outcomes expire after ``settings.ended_outcome_ttl`` s (0: kept), as before packing existed."""
    import anyio

    k = settings.keys
    ev_key, cmd_key = k.game(game_id, "events"), k.game(game_id, "commands")
    pipe = r.pipeline(transaction=True)  # one slot: a consistent view of both streams
    pipe.xrange(ev_key)
    pipe.xrange(cmd_key)
    event_rows, command_rows = await pipe.execute()
    if not event_rows:
        return "packed already" if await r.exists(key(k, game_id)) else "kept"
    ids = sorted({msgspec.msgpack.decode(f[b"e"]).get("command_id", "") for _, f in event_rows} - {""})
    async with r.pipeline(transaction=False) as p:
        for cid in ids:
            p.get(k.outcome(game_id, cid))
        stored = await p.execute()
    record = await anyio.to_thread.run_sync(pack, game_id, event_rows, command_rows)
    res = "kept"
    if record is not None:
        derived = derive_outcomes(game_id, Unpacked(  # the rows: what the record gives back, byte for byte
            events=[f[b"e"] for _, f in event_rows],
            commands=[(int(f[b"from"]), _version(mid), f[b"c"]) for mid, f in command_rows]))
        held = [(cid, raw) for cid, raw in zip(ids, stored, strict=True) if raw is not None]
        script = r.register_script(PACK)
        last_cmd = command_rows[-1][0].decode() if command_rows else ""
        got = await script(keys=[k.game(game_id, "meta"), ev_key, cmd_key, key(k, game_id),
                                 *[k.outcome(game_id, cid) for cid, _ in held]],
                           args=[record, len(event_rows), len(command_rows), last_cmd,
                                 *[GRACE_S if derived.get(cid) == raw else 0 for cid, raw in held]])
        res = got.decode() if isinstance(got, bytes) else str(got)
    ttl = settings.ended_outcome_ttl
    if res not in ("ok", "packed already") and ttl > 0:
        async with r.pipeline(transaction=False) as p:
            for cid in ids:
                p.expire(k.outcome(game_id, cid), ttl)
            await p.execute()
    return res


def derive_outcomes(game_id: str, un: Unpacked) -> dict[str, bytes]:
    """The stored outcome (msgpack ``Accepted``) of every accepted command of a packed game that
    appended events, by command id, as the worker stored it: its version after, its number of
    events, the head hash at that version and its request hash."""
    from schemas.envelope import Accepted
    from services.kernel.hashing import REQUEST_FIELDS, canonical_builtins

    out: dict[str, bytes] = {}
    for before, after, c in un.commands:
        cmd = msgspec.msgpack.decode(c)
        head = msgspec.msgpack.decode(un.events[after - 1]).get("hash", "")
        rh = hashlib.sha256(canonical_builtins({f: cmd.get(f) for f in REQUEST_FIELDS})).hexdigest()
        out[cmd["command_id"]] = _ENC.encode(Accepted(command_id=cmd["command_id"], game_id=game_id, version=after,
                                                      events=after - before, head_hash=head, request_hash=rh))
    return out


async def prime(r: Any, keys: Keys, game_ids: list[str]) -> dict[str, Unpacked]:
    """The packed records of these (ended) games, by game id (a game with none, e.g. archived,
    is left out; a record read before is taken from this process's cache): what
    :func:`first_outcome` answers from. Returned, not only cached: the cache holds
    :data:`CACHE_GAMES` games and is shared by every read loop of the process, so a record read
    here could be pushed out before it was asked (a breaker's finding: a retry of an accepted
    command of a packed game whose stored outcome had expired was decided a second time)."""
    out: dict[str, Unpacked] = {}
    for gid in game_ids:
        got = await _unpacked(r, keys, gid)
        if got is None:
            _cache.pop((keys.ns, gid), None)
        else:
            out[gid] = got
    return out


def first_outcome(records: dict[str, Unpacked], game_id: str, command_id: str) -> Any:
    """The first outcome (``Accepted``) of ``command_id`` if it is an accepted command of a packed
    game of ``records`` (:func:`prime`'s; derived from the record: the bytes the worker stored),
    else None. A retry of it after its stored outcome expired gets this, never a second decision."""
    from services.adapters.redis_store import decode_outcome

    un = records.get(game_id)
    if un is None:
        return None
    if un.outcomes is None:
        un.outcomes = derive_outcomes(game_id, un)
    raw = un.outcomes.get(command_id)
    return decode_outcome(raw) if raw is not None else None


async def outcome_bytes(r: Any, keys: Keys, game_id: str, command_id: str) -> bytes | None:
    """The stored outcome of a command id (msgpack), else the one its packed game gives back."""
    raw = await r.get(keys.outcome(game_id, command_id))
    if raw is not None:
        return raw
    got = await _unpacked(r, keys, game_id)
    if got is None:
        return None
    if got.outcomes is None:
        got.outcomes = derive_outcomes(game_id, got)
    return got.outcomes.get(command_id)


async def is_settled(r: Any, keys: Keys, game_id: str) -> bool:
    """True once the game's streams are packed."""
    return bool(await r.exists(key(keys, game_id)))


async def _unpacked(r: Any, keys: Keys, game_id: str) -> Unpacked | None:
    raw = await r.get(key(keys, game_id))
    if raw is None:
        return None
    ck, sig = (keys.ns, game_id), len(raw).to_bytes(8, "big") + raw[-64:]
    hit = _cache.get(ck)
    if hit is not None and hit[0] == sig:
        _cache.move_to_end(ck)
        return hit[1]
    got = unpack(raw)
    _cache[ck] = (sig, got)
    while len(_cache) > CACHE_GAMES:
        _cache.popitem(last=False)
    return got


def _version(mid: bytes | str) -> int:
    return int((mid.encode() if isinstance(mid, str) else mid).split(b"-")[0])


def _bounds(lo: str, hi: str) -> tuple[int, float]:
    """Versions of ``XRANGE`` bounds (``-``, ``+``, ``N-0``, ``(N-0``, ``N``)."""
    if lo == "-":
        lo_v = 1
    elif lo.startswith("("):
        lo_v = int(lo[1:].split("-")[0]) + 1
    else:
        lo_v = int(lo.split("-")[0])
    if hi == "+":
        hi_v: float = float("inf")
    elif hi.startswith("("):
        hi_v = int(hi[1:].split("-")[0]) - 1
    else:
        hi_v = int(hi.split("-")[0])
    return max(lo_v, 1), hi_v


async def event_rows(r: Any, keys: Keys, game_id: str, lo: str = "-", hi: str = "+", count: int | None = None) -> list:
    """``XRANGE`` of the game's event stream (``[(b"<version>-0", {b"e": envelope})]``), from its
    packed record once the stream has been packed."""
    rows = await r.xrange(keys.game(game_id, "events"), lo, hi, count=count)
    lo_v, hi_v = _bounds(lo, hi)
    if rows and _version(rows[0][0]) <= lo_v:
        return rows
    return await rows_from_packed(r, keys, game_id, rows, lo_v, hi_v, count)


async def rows_from_packed(r: Any, keys: Keys, game_id: str, rows: list, lo_v: int, hi_v: float, count: int | None) -> list:
    """``rows`` (read from the stream for versions ``lo_v..hi_v``), led by the packed record's
    entries before them if the game has one (else ``rows`` as they are)."""
    got = await _unpacked(r, keys, game_id)
    if got is None:
        return rows
    upto = min(len(got.events), int(min(hi_v, len(got.events))))
    out = [(f"{v}-0".encode(), {b"e": got.events[v - 1]}) for v in range(lo_v, upto + 1)]
    out += [row for row in rows if _version(row[0]) > upto]
    return out[:count] if count else out


async def last_event(r: Any, keys: Keys, game_id: str) -> bytes | None:
    """The last stored event envelope (msgpack) of a game, or None."""
    top = await r.xrevrange(keys.game(game_id, "events"), "+", "-", count=1)
    if top:
        return top[0][1][b"e"]
    got = await _unpacked(r, keys, game_id)
    return got.events[-1] if got is not None and got.events else None


async def command_rows(r: Any, keys: Keys, game_id: str, lo: str = "-", hi: str = "+") -> list:
    """``XRANGE`` of the game's accepted-commands stream (``[(b"<version after>-0", {b"c", b"from"})]``),
    from its packed record once the stream has been packed."""
    rows = await r.xrange(keys.game(game_id, "commands"), lo, hi)
    if rows:
        return rows
    got = await _unpacked(r, keys, game_id)
    if got is None:
        return rows
    lo_v, hi_v = _bounds(lo, hi)
    return [(f"{b}-0".encode(), {b"c": c, b"from": str(a).encode()}) for a, b, c in got.commands if lo_v <= b <= hi_v]


async def all_rows(r: Any, keys: Keys, game_id: str) -> tuple[list, list]:
    """Every event row and command row of a game, read together (one transaction in its slot):
    from its streams or, once they are packed, from its record."""
    pipe = r.pipeline(transaction=True)
    pipe.xrange(keys.game(game_id, "events"))
    pipe.xrange(keys.game(game_id, "commands"))
    pipe.exists(key(keys, game_id))
    events, commands, packed = await pipe.execute()
    if events or not packed:
        return events, commands
    got = await _unpacked(r, keys, game_id)
    if got is None:  # archived between the two reads
        return [], []
    return ([(f"{v}-0".encode(), {b"e": e}) for v, e in enumerate(got.events, 1)],
            [(f"{b}-0".encode(), {b"c": c, b"from": str(a).encode()}) for a, b, c in got.commands])
