"""Archive finished games into one compact record each (the bundle) and restore them byte for byte.

A finished or abandoned game's Redis footprint is its event stream, command record, metadata,
secret, snapshot, outcomes and read models (views, feeds, lobby entry, result). Archiving keeps
only its bundle under ``<ns>:{<ns>:archive}:<game>``, as a ``questhall-archive/3`` record
(services/audit/compact.py: the bundle without the fields it can derive, in columns, its
repeated strings as indexes into the title's frozen vocabulary, raw LZMA2; about 5.8 kB for a
Questeros game) or, for a bundle that does not survive that round trip, as ``questhall-bundle/1``
compact JSON under zlib level 9, and deletes the rest. Records written before (``/2``, the
zlib JSON) are still read; one that does not decode raises
:class:`~services.audit.compact.CorruptRecord` (``archive_corrupt``, ``archive_unknown_format``). :func:`restore` writes the game's stream,
command record, metadata and seed back from the bundle (every event re-encoded to the bytes it
was stored as: msgpack of the same keys in the same order) and projects its read models again,
so ``rebuild`` and the audit see it as before. Outcomes are not restored: a retry of a command
of an archived game is decided again and refused (``game_archived``: the archive leaves the key
``g:<game>:archived`` in the game's slot, so a retried create cannot make a second game of that id).

Source: issue 13 ("Retention"); ``questhall archive`` / ``questhall restore`` (README).
"""

from __future__ import annotations

import time
import zlib
from typing import Any

import msgspec

from services.adapters import ended
from services.adapters.keys import CHANGES_MAXLEN
from services.adapters.redis_store import ARCHIVED, Settings, redacted_url
from services.audit.compact import MAGICS, CorruptRecord, NotPackable, pack, unpack
from services.audit.store import GameNotFound, export_bundle

ENDED = (b"finished", b"abandoned")


class NotArchivable(ValueError):
    """The game is not over (only finished or abandoned games are archived)."""


def archive_key(settings: Settings, game_id: str) -> str:
    """The key of a game's archived bundle (its own slot: the game's slot keys are deleted)."""
    ns = settings.namespace
    return f"{ns}:{{{ns}:archive}}:{game_id}"


async def _game_keys(r: Any, settings: Settings, game_id: str) -> list[str]:
    k = settings.keys
    keys = [k.game(game_id, part) for part in ("meta", "events", "commands", "secret", "snap", ended.PART)]
    for pattern in (k.game(game_id, "out:*"), k.game(game_id, "reply:*"), k.rm(game_id, "*")):
        keys += [key.decode() async for key in r.scan_iter(match=pattern, count=1000)]
    keys += [k.lobby_game(game_id), k.lobby_applied(game_id), k.result(game_id)]
    return keys


async def game_bytes(r: Any, settings: Settings, game_id: str, *, lasting: bool = False) -> int:
    """Redis memory (``MEMORY USAGE``, bytes) of every key of one live game; ``lasting``: only
    the keys without an expiry (what the game holds once its outcomes' grace has passed)."""
    total = 0
    for key in await _game_keys(r, settings, game_id):
        if lasting and await r.ttl(key) > 0:
            continue
        total += int(await r.memory_usage(key, samples=0) or 0)
    return total


async def archive(r: Any, settings: Settings, game_id: str) -> int:
    """Archive one finished or abandoned game; returns the archived record's size (bytes).

    Raises GameNotFound, NotArchivable. The bundle is written before anything is deleted.
    """
    k = settings.keys
    meta = await r.hgetall(k.game(game_id, "meta"))
    if not meta:
        raise GameNotFound(f"There is no game {game_id!r} in namespace {settings.namespace!r} on {redacted_url(settings.url)}.")
    if meta.get(b"status") not in ENDED:
        raise NotArchivable(f"game {game_id!r} is {meta.get(b'status', b'?').decode()}: only ended games are archived")
    bundle = await export_bundle(r, settings, game_id)
    try:
        record = pack(bundle)
    except NotPackable:
        record = zlib.compress(msgspec.json.encode(bundle), 9)
    await r.set(archive_key(settings, game_id), record)
    await r.set(k.game(game_id, ARCHIVED), 1)  # in the game's slot: its id is never created again
    title = meta[b"title"].decode()
    for status in ("lobby", "active", "finished", "abandoned"):
        await r.zrem(k.lobby_index(title, status), game_id)
    for key in await _game_keys(r, settings, game_id):
        await r.delete(key)  # one by one: several slots (cluster-safe)
    await r.srem(k.games(k.partition(game_id)), game_id)
    # the gateways' change reader wakes the game's open sockets: they find it gone and close (4404)
    await r.xadd(k.changes(k.partition(game_id)), {"g": game_id, "v": 0}, maxlen=CHANGES_MAXLEN, approximate=True)
    return len(record)


async def archive_older(r: Any, settings: Settings, days: float, now_ms: int | None = None) -> list[str]:
    """Archive every ended game whose last event is older than ``days``; returns their ids."""
    k = settings.keys
    cut = (now_ms if now_ms is not None else int(time.time() * 1000)) - int(days * 86_400_000)
    done = []
    for p in range(settings.partitions):
        for gid in sorted(m.decode() for m in await r.smembers(k.games(p))):
            meta = await r.hmget(k.game(gid, "meta"), ["status", "version"])
            if meta[0] not in ENDED:
                continue
            last = await ended.last_event(r, k, gid)
            at = msgspec.msgpack.decode(last).get("recorded_at", 0) if last else 0
            if at <= cut:
                await archive(r, settings, gid)
                done.append(gid)
    return done


async def archived_bundle(r: Any, settings: Settings, game_id: str) -> dict | None:
    """The archived bundle of a game, or None if it is not archived.

    Raises CorruptRecord (``archive_corrupt``, ``archive_unknown_format``) naming the game if its
    record does not decode."""
    raw = await r.get(archive_key(settings, game_id))
    if raw is None:
        return None
    try:
        return decode_record(raw)
    except CorruptRecord as exc:
        raise CorruptRecord(exc.code, f"archived game {game_id!r}: {exc.message}") from None


def decode_record(raw: bytes) -> dict:
    """The bundle of an archived record: ``questhall-archive/3`` or ``/2`` (compact.py), else
    ``questhall-bundle/1`` JSON under zlib (the first archive form). Raises CorruptRecord."""
    if raw.startswith(MAGICS):
        return unpack(raw)
    try:
        bundle = msgspec.json.decode(zlib.decompress(raw))
    except (zlib.error, msgspec.DecodeError) as exc:
        raise CorruptRecord("archive_unknown_format" if raw[:1] != b"\x78" else "archive_corrupt",
                            f"neither a compact record nor zlib JSON: {exc}") from None
    if not isinstance(bundle, dict) or not isinstance(bundle.get("events"), list):
        raise CorruptRecord("archive_corrupt", "the zlib JSON record is not a bundle")
    return bundle


async def restore(r: Any, settings: Settings, game_id: str) -> int:
    """Bring an archived game back (streams, metadata, seed, read models); returns its version.

    Raises GameNotFound if it is not archived, FileExistsError if the game exists live,
    CorruptRecord if its record does not decode (nothing is written then).
    """
    from services.runtime.projector import Projector

    k = settings.keys
    bundle = await archived_bundle(r, settings, game_id)
    if bundle is None:
        raise GameNotFound(f"Game {game_id!r} is not archived in namespace {settings.namespace!r} on {redacted_url(settings.url)}.")
    if await r.exists(k.game(game_id, "meta")):
        raise FileExistsError(f"game {game_id!r} exists: it was restored already")
    events, commands = bundle["events"], bundle["commands"]
    pipe = r.pipeline(transaction=True)  # one slot: the game's keys
    for e in events:
        pipe.xadd(k.game(game_id, "events"), {"e": msgspec.msgpack.encode(e)}, id=f"{e['version']}-0")
    for c in commands:
        pipe.xadd(k.game(game_id, "commands"), {"c": msgspec.msgpack.encode(c["command"]), "from": str(c["version_before"])},
                  id=f"{c['version_after']}-0")
    if bundle.get("seed"):
        pipe.hset(k.game(game_id, "secret"), "seed", bundle["seed"])
    pipe.hset(k.game(game_id, "meta"), mapping={"version": len(events), "hash": bundle["head_hash"],
                                                 "status": bundle["status"], "title": bundle["title"]})
    pipe.sadd(k.games(k.partition(game_id)), game_id)
    pipe.delete(k.game(game_id, ARCHIVED))
    await pipe.execute()
    await Projector(r, settings, consumer="restore").apply(game_id, bundle["title"], len(events))
    await r.delete(archive_key(settings, game_id))
    return len(events)
