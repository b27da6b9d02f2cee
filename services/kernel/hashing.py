"""The hash chain over a game's events.

``hash = SHA-256(canonical(envelope without 'hash'))`` where ``canonical`` is msgspec JSON with
object keys sorted (UTF-8, no whitespace). ``prev_hash`` of version 1 is :data:`GENESIS`.
``command_hash = SHA-256(canonical(command envelope))`` of the accepted command that caused the
event, so a command record cannot be altered without breaking the chain.
Source: issue 7 ("Hash chain"); ../shared/DESIGN.md "Fairness and audit".
"""

from __future__ import annotations

import hashlib
import hmac

import msgspec

from schemas.envelope import CommandEnvelope, EventEnvelope

GENESIS = "0" * 64


def canonical(envelope: EventEnvelope) -> bytes:
    """Canonical bytes of an envelope, excluding its own ``hash`` field (and an empty ``salt``:
    events recorded before salts keep their hash)."""
    return canonical_builtins(hashed_fields(msgspec.to_builtins(envelope)))


def hashed_fields(data: dict) -> dict:
    """The fields of an envelope (as builtins) its ``hash`` covers: all but ``hash``, and
    ``salt`` only when set."""
    data = {k: v for k, v in data.items() if k != "hash"}
    if not data.get("salt"):
        data.pop("salt", None)
    return data


def event_salt(seed: bytes, game_id: str, version: int) -> str:
    """The ``salt`` of event ``version`` of a game: 32 hex digits of HMAC-SHA256(seed,
    ``salt:<game id>:<version>``). Secret while the seed is (a feed carries no salt), so the head
    hash, which covers it, cannot confirm a guess of an event's hidden part (another seat's drawn
    cards: a breaker recovered them in a fraction of a second from the head of an unsalted
    Orbtale chapter start); deterministic, so an audit re-derives it once the seed is revealed."""
    return keyed_tag(seed, f"salt:{game_id}:{version}", 32)


def event_hash(envelope: EventEnvelope) -> str:
    """Hex SHA-256 of :func:`canonical`."""
    return hashlib.sha256(canonical(envelope)).hexdigest()


def seal(envelope: EventEnvelope) -> EventEnvelope:
    """The envelope with its ``hash`` filled in."""
    return msgspec.structs.replace(envelope, hash=event_hash(envelope))


def canonical_builtins(data: object) -> bytes:
    """Canonical bytes of builtins (dicts, lists, str, int, float, bool, None): sorted-key JSON."""
    return msgspec.json.encode(data, order="sorted")


def command_hash(command: CommandEnvelope) -> str:
    """Hex SHA-256 of the canonical JSON (sorted keys) of a command envelope (body decoded).

    Fields added later are left out while they hold their default (``received_at`` 0, a
    join's ``bot`` empty), so that commands recorded before they existed keep their hash.
    """
    return command_hash_of(msgspec.to_builtins(command))


def command_hash_of(data: dict) -> str:
    """:func:`command_hash` of a command envelope given as builtins (e.g. from a bundle)."""
    data = dict(data)
    if not data.get("received_at"):
        data.pop("received_at", None)
    body = data.get("body")
    if isinstance(body, dict) and body.get("type") == "join" and "bot" in body and not body["bot"]:
        data["body"] = {k: v for k, v in body.items() if k != "bot"}
    return hashlib.sha256(canonical_builtins(data)).hexdigest()


def keyed_tag(key: bytes, text: str, digits: int = 24) -> str:
    """The first ``digits`` hex digits of HMAC-SHA256(``key``, ``text``).

    The server's own command ids (a bot seat's move, a clock's timeout) end in such a tag keyed by
    the game's secret seed: they stay deterministic (a retry after a crash repeats the id), but
    nobody can predict them before the seed is revealed. Without it every input of the hash of a
    bot's hidden choice was public or guessable (id, versions, timestamps to the millisecond), so
    hashing each candidate choice against the public head found the choice before its reveal.
    Source: docs/fairness.md "What the head hash does not give away".
    """
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()[:digits]


REQUEST_FIELDS = ("game_id", "title", "seat", "body", "expected_version")
"""What a retry of a command id must repeat; not the id itself, the client clock or the player name."""


def request_hash(command: CommandEnvelope) -> str:
    """Hex SHA-256 of the canonical JSON of the command's :data:`REQUEST_FIELDS` (body decoded).

    Stored with the outcome: a later command under the same id with another hash is refused
    (``command_id_reused``) instead of being answered with the first outcome.
    """
    return request_hash_of(msgspec.to_builtins(command))


def request_hash_of(data: dict) -> str:
    """:func:`request_hash` of a command envelope given as builtins."""
    return hashlib.sha256(canonical_builtins({k: data.get(k) for k in REQUEST_FIELDS})).hexdigest()
