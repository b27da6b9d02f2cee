"""The compact archive record of a game (``questhall-archive/2``): a bundle without what it repeats.

A ``questhall-bundle/1`` (services/audit/verify.py) stores, for every event, the game id, the
version, ``prev_hash``, ``hash`` and ``command_hash`` (three hex SHA-256 digests: 192 bytes of
noise no compressor shrinks), and for every command the game id and title. All of it follows
from the rest: the version is the position, ``prev_hash`` is the previous event's ``hash``,
``hash`` is recomputed over the event (:func:`services.audit.verify.raw_hash`), ``command_hash``
and ``command_id`` are those of the command whose versions cover the event, and
``recorded_at`` is usually that command's ``received_at``. :func:`pack` leaves a field out only
where it equals what :func:`unpack` derives for it (else it is kept as stored), keeps every
envelope's key order (one table of key orders), delta-codes the times, encodes with msgpack and
compresses with LZMA2 (xz container, CRC32, 1 MiB dictionary: a few MB of memory, not the 674
MB of preset 9's default); :func:`pack` checks the round trip before it answers, so a record
it returns unpacks to the same bundle, byte for byte and key order for key order.

Figures (one bot game each, 2026-12-01): Questeros 228 kB of bundle JSON, 43 kB as zlib-9 JSON
(the record before), about 8.5 kB packed.

Layout: ``MAGIC`` + xz(msgpack ``[2, game_id, title, shapes, events, commands]``) where
``shapes`` is the list of distinct key orders (lists of strings), an event is
``[shape index, {kept field: value}]`` and a command is ``[version before, version after,
shape index, {kept field: value}]``. Source: issue 13 ("the archive compressed").
"""

from __future__ import annotations

import lzma
from typing import Any

import msgspec

from services.audit.verify import build_bundle, raw_command_hash, raw_hash
from services.kernel.hashing import GENESIS

MAGIC = b"QHA2"
"""First bytes of a ``questhall-archive/2`` record (a zlib stream never starts with them)."""
_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": 1 << 20}]
_MISSING = object()


class NotPackable(ValueError):
    """The bundle does not survive the compact round trip (kept in the older form instead)."""


def _shape(shapes: dict[tuple[str, ...], int], d: dict) -> int:
    return shapes.setdefault(tuple(d), len(shapes))


def pack(bundle: dict, *, back: list | None = None) -> bytes:
    """The compact record of a ``questhall-bundle/1`` dict (bytes, see the module docstring).

    Raises NotPackable if unpacking the record would not give the bundle back exactly (e.g.
    stored envelopes whose hashes do not recompute); the caller then keeps the bundle as is.
    ``back``: the unpacked bundle (what the check unpacked) is appended to it.
    """
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
    for i, e in enumerate(bundle["events"]):
        cmd, chash = cover.get(i + 1, _NONE)
        derived = {"game_id": gid, "version": i + 1, "prev_hash": prev, "hash": raw_hash(e),
                   "command_id": cmd.get("command_id", _MISSING), "command_hash": chash,
                   "recorded_at": cmd.get("received_at", _MISSING)}
        kept = {}
        for key, value in e.items():
            if derived.get(key, _MISSING) == value and type(derived[key]) is type(value):
                continue
            kept[key] = value - last_at if key == "recorded_at" and type(value) is int else value
        events.append([_shape(shapes, e), kept])
        prev = e.get("hash", prev)
        last_at = e["recorded_at"] if type(e.get("recorded_at")) is int else last_at
    payload = msgspec.msgpack.encode([2, gid, title, [list(s) for s in shapes], events, cmds])
    record = MAGIC + lzma.compress(payload, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32, filters=_FILTERS)
    got = unpack(record)
    if _json(got) != _json(bundle):
        raise NotPackable(f"game {gid!r}: the bundle does not survive the compact round trip")
    if back is not None:
        back.append(got)
    return record


def unpack(record: bytes) -> dict:
    """The ``questhall-bundle/1`` dict of a compact record. Raises ValueError if it is not one."""
    if not record.startswith(MAGIC):
        raise ValueError("not a questhall-archive/2 record")
    fmt, gid, title, shape_list, packed_events, packed_cmds = msgspec.msgpack.decode(lzma.decompress(record[len(MAGIC):]))
    if fmt != 2:
        raise ValueError(f"unknown compact archive version {fmt!r}")
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
                               "command_hash": chash, "recorded_at": cmd.get("received_at")}
                e[key] = derived[key]
        if "hash" in e and "hash" not in kept:
            e["hash"] = raw_hash(e)
        events.append(e)
        prev = e.get("hash", prev)
        last_at = e["recorded_at"] if type(e.get("recorded_at")) is int else last_at
    return build_bundle(gid, events, commands)


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
