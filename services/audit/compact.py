"""The compact archive record of a game: a bundle without what it repeats (``questhall-archive/3``,
and ``/2`` before it, still read).

A ``questhall-bundle/1`` (services/audit/verify.py) stores, for every event, the game id, the
version, ``prev_hash``, ``hash`` and ``command_hash`` (three hex SHA-256 digests: 192 bytes of
noise no compressor shrinks), and for every command the game id and title. All of it follows
from the rest: the version is the position, ``prev_hash`` is the previous event's ``hash``,
``hash`` is recomputed over the event (:func:`services.audit.verify.raw_hash`), ``salt`` is
keyed by the revealed seed (``hashing.event_salt``), ``command_hash``
and ``command_id`` are those of the command whose versions cover the event, and
``recorded_at`` is usually that command's ``received_at``. :func:`pack` leaves a field out only
where it equals what :func:`unpack` derives for it (else it is kept as stored), keeps every
envelope's key order (one table of key orders) and delta-codes the times; :func:`pack` checks
the round trip before it answers, so a record it returns unpacks to the same bundle, byte for
byte and key order for key order.

``/3`` (written since 2026-12-01 evening) stores those same fields in columns (every command's
version gap and event count, key order, command id, signature, times, then the rest; every
event's key order, time, then the rest), a command id or signature that ends in lowercase hex
digits as its prefix and those bytes (``c`` + 20 hex digits: 10 bytes, not the ~12 xz makes of
the text), and every string value found in the title's frozen vocabulary
(services/audit/vocabulary.py) as its index (msgpack extension 1; a card name, a tag, an enum
value: 3 bytes before compression). Layout: ``MAGIC3`` + CRC32 (4 bytes, big-endian) of the
payload + raw LZMA2 (:data:`_RAW`: never changed for ``/3``) of msgpack ``[3, game_id, title,
vocabulary version, inner]``, ``inner`` the msgpack ``[shapes, command columns, event columns]``
(:func:`_encode3`). ``/2``: ``MAGIC`` + xz(msgpack ``[2, game_id, title, shapes, events,
commands]``), an event ``[shape index, {kept field: value}]``, a command ``[version before,
version after, shape index, {kept field: value}]``.

Figures (bot games played through the bus, 10 a title, 2026-12-01): Orange Quest (3 seats,
about 700 events) 9.6-10.4 kB as ``/2``, 6.6-7.3 kB as ``/3``; Questeros (3-4 seats) 7.9-10.1
kB, 5.7-7.1 kB; docs/operations.md has every title. What is left is mostly what no codec
shrinks: 10 bytes of random command id a command.
Source: issue 13 ("the archive compressed", "<= 10 kB archived").
"""

from __future__ import annotations

import lzma
import re
import zlib
from typing import Any

import msgspec

from services.audit import vocabulary
from services.audit.verify import build_bundle, raw_command_hash, raw_hash, revealed_seed
from services.kernel.hashing import GENESIS, event_salt

MAGIC = b"QHA2"
"""First bytes of a ``questhall-archive/2`` record (a zlib stream never starts with them)."""
MAGIC3 = b"QHA3"
"""First bytes of a ``questhall-archive/3`` record."""
MAGICS = (MAGIC, MAGIC3)
_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": 1 << 20}]
_RAW = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": 1 << 20, "lc": 0, "lp": 0, "pb": 0}]
"""/3: raw LZMA2 (no xz container: its 56 bytes of headers, index and footer), literal and
position context off (msgpack has no alignment: 1-2 % smaller on every title)."""
_REF = 1
"""msgpack extension code of a vocabulary reference in /3."""
_HEX_TAIL = re.compile(r"(.*?)((?:[0-9a-f]{2}){8,})\Z", re.S)
_MISSING = object()


class NotPackable(ValueError):
    """The bundle does not survive the compact round trip (kept in the older form instead)."""


class CorruptRecord(ValueError):
    """An archived or packed record that does not decode. ``code``: ``archive_unknown_format``
    (not a record of a known layout) or ``archive_corrupt`` (checksum, compression or layout
    wrong); the message says which part failed."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _shape(shapes: dict[tuple[str, ...], int], d: dict) -> int:
    return shapes.setdefault(tuple(d), len(shapes))


def pack(bundle: dict, *, back: list | None = None, fmt: int = 3) -> bytes:
    """The compact record of a ``questhall-bundle/1`` dict (bytes, see the module docstring):
    ``questhall-archive/3`` (``fmt=3``, falling back to ``/2`` if the bundle does not survive
    ``/3``) or ``questhall-archive/2`` (``fmt=2``, the older form, still written for tests).

    Raises NotPackable if unpacking the record would not give the bundle back exactly (e.g.
    stored envelopes whose hashes do not recompute); the caller then keeps the bundle as is.
    ``back``: the unpacked bundle (what the check unpacked) is appended to it.
    """
    fields = _fields(bundle)
    want = _json(bundle)
    for encode in ((_encode3, _encode2) if fmt == 3 else (_encode2,)):
        try:
            record = encode(fields)
            got = unpack(record)
        except (ValueError, TypeError, OverflowError):
            continue
        if _json(got) == want:
            if back is not None:
                back.append(got)
            return record
    raise NotPackable(f"game {bundle['game_id']!r}: the bundle does not survive the compact round trip")


def unpack(record: bytes) -> dict:
    """The ``questhall-bundle/1`` dict of a compact record (``/3`` or ``/2``).

    Raises CorruptRecord (a ValueError): ``archive_unknown_format`` if it is neither,
    ``archive_corrupt`` if it does not decode (checksum, compression, layout),
    ``archive_vocabulary_missing`` if it names a vocabulary this code does not have."""
    record = bytes(record)
    if record.startswith(MAGIC3):
        decode = _decode3
    elif record.startswith(MAGIC):
        decode = _decode2
    else:
        raise CorruptRecord("archive_unknown_format", f"not a compact archive record (starts {record[:4]!r})")
    try:
        return _bundle(decode(record))
    except CorruptRecord:
        raise
    except vocabulary.VocabularyMissing as exc:
        raise CorruptRecord("archive_vocabulary_missing", str(exc)) from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, lzma.LZMAError, msgspec.DecodeError) as exc:
        raise CorruptRecord("archive_corrupt", f"the record does not decode: {type(exc).__name__}: {exc}") from None


def _fields(bundle: dict) -> list:
    """``[game id, title, shapes, events, commands]``: what a record keeps (the layout of /2)."""
    gid, title = bundle["game_id"], bundle["title"]
    shapes: dict[tuple[str, ...], int] = {}
    cover = _cover(bundle["commands"])
    cmds: list[list[Any]] = []
    last_issued = 0
    for c in bundle["commands"]:
        d = dict(c["command"])
        kept: dict[str, Any] = {}
        seen: dict[str, Any] = {}  # what unpack has restored when it reaches this key
        for key, value in d.items():
            if (key == "game_id" and value == gid) or (key == "title" and value == title):
                pass
            elif key == "issued_at" and type(value) is int:
                kept[key], last_issued = value - last_issued, value
            elif key == "received_at" and type(value) is int and type(seen.get("issued_at")) is int:
                kept[key] = value - seen["issued_at"]
            else:
                kept[key] = value
            seen[key] = value
        cmds.append([c["version_before"], c["version_after"], _shape(shapes, d), kept])
    events: list[list[Any]] = []
    prev, last_at = GENESIS, 0
    seed = _seed(bundle.get("seed"))
    for i, e in enumerate(bundle["events"]):
        cmd, chash = cover.get(i + 1, _NONE)
        derived = {"game_id": gid, "version": i + 1, "prev_hash": prev, "hash": raw_hash(e),
                   "command_id": cmd.get("command_id", _MISSING), "command_hash": chash,
                   "recorded_at": cmd.get("received_at", _MISSING),
                   "salt": event_salt(seed, gid, i + 1) if seed else _MISSING}
        kept = {}
        for key, value in e.items():
            if derived.get(key, _MISSING) == value and type(derived[key]) is type(value):
                continue
            kept[key] = value - last_at if key == "recorded_at" and type(value) is int else value
        events.append([_shape(shapes, e), kept])
        prev = e.get("hash", prev)
        last_at = e["recorded_at"] if type(e.get("recorded_at")) is int else last_at
    return [gid, title, [list(s) for s in shapes], events, cmds]


def _encode2(fields: list) -> bytes:
    payload = msgspec.msgpack.encode([2, *fields])
    return MAGIC + lzma.compress(payload, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32, filters=_FILTERS)


def _decode2(record: bytes) -> list:
    fmt, *fields = msgspec.msgpack.decode(lzma.decompress(record[len(MAGIC):]))
    if fmt != 2:
        raise CorruptRecord("archive_unknown_format", f"unknown compact archive version {fmt!r}")
    return fields


def _encode3(fields: list) -> bytes:
    """``questhall-archive/3``: the fields of /2 in columns (see the module docstring)."""
    gid, title, shapes, events, cmds = fields
    vocab_v, index = vocabulary.latest(title)
    cols: list[list[Any]] = [[] for _ in range(10)]
    gaps, counts, cshapes, id_pre, id_bin, sig_pre, sig_bin, issued, received, ckept = cols
    prev = 0
    for before, after, shape, kept in cmds:
        kept = dict(kept)
        gaps.append(before - prev)
        counts.append(after - before)
        prev = after
        cshapes.append(shape)
        for key, pre, raw in (("command_id", id_pre, id_bin), ("signature", sig_pre, sig_bin)):
            split = _hex_split(kept.get(key))
            pre.append(split[0] if split else None)
            raw.append(split[1] if split else b"")
            if split:
                del kept[key]
        for key, col in (("issued_at", issued), ("received_at", received)):
            value = kept.get(key)
            col.append(value if type(value) is int else None)
            if type(value) is int:
                del kept[key]
        ckept.append(_to_refs(kept, index))
    eshapes, erec, ekept = [], [], []
    for shape, kept in events:
        kept = dict(kept)
        eshapes.append(shape)
        value = kept.get("recorded_at")
        erec.append(value if type(value) is int else None)
        if type(value) is int:
            del kept["recorded_at"]
        ekept.append(_to_refs(kept, index))
    inner = msgspec.msgpack.encode([shapes, cols, [eshapes, erec, ekept]])
    payload = msgspec.msgpack.encode([3, gid, title, vocab_v, inner])
    return MAGIC3 + zlib.crc32(payload).to_bytes(4, "big") + lzma.compress(payload, format=lzma.FORMAT_RAW, filters=_RAW)


def _decode3(record: bytes) -> list:
    crc, body = record[len(MAGIC3):len(MAGIC3) + 4], record[len(MAGIC3) + 4:]
    payload = lzma.decompress(body, format=lzma.FORMAT_RAW, filters=_RAW)
    if zlib.crc32(payload).to_bytes(4, "big") != crc:
        raise CorruptRecord("archive_corrupt", "the record's checksum does not match its content")
    fmt, gid, title, vocab_v, inner = msgspec.msgpack.decode(payload)
    if fmt != 3:
        raise CorruptRecord("archive_unknown_format", f"unknown compact archive version {fmt!r}")
    words = vocabulary.words(title, vocab_v)

    def ref(code: int, data: memoryview) -> Any:
        if code != _REF:
            raise CorruptRecord("archive_corrupt", f"unknown extension {code} in the record")
        return words[int.from_bytes(data, "big")]

    shapes, cols, (eshapes, erec, ekept) = msgspec.msgpack.Decoder(ext_hook=ref).decode(inner)
    gaps, counts, cshapes, id_pre, id_bin, sig_pre, sig_bin, issued, received, ckept = cols
    cmds, prev = [], 0
    for i, kept in enumerate(ckept):
        before = prev + gaps[i]
        prev = before + counts[i]
        for key, pre, raw in (("command_id", id_pre, id_bin), ("signature", sig_pre, sig_bin)):
            if pre[i] is not None:
                kept[key] = pre[i] + bytes(raw[i]).hex()
        for key, col in (("issued_at", issued), ("received_at", received)):
            if col[i] is not None:
                kept[key] = col[i]
        cmds.append([before, prev, cshapes[i], kept])
    events = []
    for shape, at, kept in zip(eshapes, erec, ekept, strict=True):
        if at is not None:
            kept["recorded_at"] = at
        events.append([shape, kept])
    return [gid, title, shapes, events, cmds]


def _hex_split(value: Any) -> tuple[str, bytes] | None:
    """``(prefix, bytes)`` of a string that ends in 16 or more lowercase hex digits (an even number:
    a command id ``c`` + 20 hex digits, a signature), so ``prefix + bytes.hex()`` is the string."""
    if type(value) is not str:
        return None
    m = _HEX_TAIL.match(value)
    return (m.group(1), bytes.fromhex(m.group(2))) if m else None


def _to_refs(value: Any, index: dict[str, int]) -> Any:
    """``value`` with every string value found in the vocabulary replaced by a reference (msgpack
    extension ``_REF``: its index, 1 byte below 256, else 2); dict keys stay as they are."""
    if type(value) is str:
        i = index.get(value)
        return value if i is None else msgspec.msgpack.Ext(_REF, i.to_bytes(1 if i < 256 else 2, "big"))
    if type(value) is dict:
        return {k: _to_refs(v, index) for k, v in value.items()}
    if type(value) is list:
        return [_to_refs(v, index) for v in value]
    if type(value) is msgspec.msgpack.Ext:
        raise TypeError("a stored extension value: not packable as /3")
    return value


def _bundle(fields: list) -> dict:
    """The bundle of the fields of a record (both layouts decode to these)."""
    gid, title, shape_list, packed_events, packed_cmds = fields
    commands: list[tuple[int, int, dict]] = []
    last_issued = 0
    for before, after, shape, kept in packed_cmds:
        d: dict[str, Any] = {}
        for key in shape_list[shape]:
            if key in kept:
                value = kept[key]
                if key == "issued_at" and type(value) is int:
                    value += last_issued
                    last_issued = value
                elif key == "received_at" and type(value) is int and type(d.get("issued_at")) is int:
                    value += d["issued_at"]
                d[key] = value
            else:
                d[key] = {"game_id": gid, "title": title}[key]
        commands.append((before, after, d))
    cover = _cover([{"version_before": a, "version_after": b, "command": c} for a, b, c in commands])
    events: list[dict] = []
    prev, last_at = GENESIS, 0
    seed = _seed(revealed_seed([kept for _, kept in packed_events]))  # a body is always kept
    for i, (shape, kept) in enumerate(packed_events):
        cmd, chash = cover.get(i + 1, _NONE)
        e: dict[str, Any] = {}
        derived = None
        for key in shape_list[shape]:
            if key in kept:
                value = kept[key]
                e[key] = value + last_at if key == "recorded_at" and type(value) is int else value
            elif key == "hash":
                e[key] = None  # filled in once every other field is there
            else:
                if derived is None:
                    derived = {"game_id": gid, "version": i + 1, "prev_hash": prev, "command_id": cmd.get("command_id"),
                               "command_hash": chash, "recorded_at": cmd.get("received_at"),
                               "salt": event_salt(seed, gid, i + 1) if seed else None}
                e[key] = derived[key]
        if "hash" in e and "hash" not in kept:
            e["hash"] = raw_hash(e)
        events.append(e)
        prev = e.get("hash", prev)
        last_at = e["recorded_at"] if type(e.get("recorded_at")) is int else last_at
    return build_bundle(gid, events, commands)


def _seed(value: Any) -> bytes | None:
    """The revealed seed (64 hex digits) as bytes, None if absent or not that: every event's
    ``salt`` follows from it (``hashing.event_salt``) and is left out of the record."""
    if isinstance(value, str) and len(value) == 64:
        try:
            return bytes.fromhex(value)
        except ValueError:
            return None
    return None


def _cover(commands: list[dict]) -> dict[int, tuple[dict, Any]]:
    """Version -> (the command envelope whose versions cover it, that envelope's command hash)."""
    out: dict[int, tuple[dict, Any]] = {}
    for c in commands:
        cmd = c["command"]
        pair = (cmd, raw_command_hash(cmd) if cmd else _MISSING)
        for v in range(c["version_before"] + 1, c["version_after"] + 1):
            out[v] = pair
    return out


_NONE: tuple[dict, Any] = ({}, _MISSING)


def _json(bundle: dict) -> bytes:
    return msgspec.json.encode([bundle["events"], bundle["commands"], bundle["head_hash"], bundle["status"]])
