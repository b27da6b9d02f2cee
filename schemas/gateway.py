"""Wire contract of the gateway (HTTP + WebSocket API for chat bots and mobile clients).

JSON on the wire. Request bodies forbid unknown fields (a typo is a clear 400); responses are
the Structs below, or the envelopes of :mod:`schemas.envelope` (views, feed entries, results).
Every error body is an :class:`ErrorBody` with a stable ``code`` and one human sentence.

WebSocket messages (server to client) are :class:`WsFeed`, :class:`WsView`,
:class:`WsOutcome`, :class:`WsError` (tag field ``type``); client to server
:class:`WsCommand` and :class:`WsPing`. See docs/gateway.md.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

import msgspec

from schemas.base import Record
from schemas.envelope import FeedEntry, ViewEnvelope

B = TypeVar("B")


class Request(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base of request bodies: frozen, keyword-only, unknown fields refused."""


# ---------------------------------------------------------------------------------------------
# Titles and games


class TitleInfo(Record):
    """A registered title: seat counts and the default value of every option."""

    name: str
    display_name: str
    min_seats: int
    max_seats: int
    rules_version: str
    options: dict[str, Any]
    """Option names with their defaults (JSON object)."""


class TitleDetail(Record):
    """A title's content for clients (``GET /v1/titles/{title}``): everything needed to render
    it without copying data. ``content`` holds the title's content files as JSON, by file name
    (card texts, tile shapes, boards, quests, heroes...: the same files the rules load; the
    game pages in docs/games/ describe their fields)."""

    name: str
    display_name: str
    min_seats: int
    max_seats: int
    rules_version: str
    options: dict[str, Any]
    """Option names with their defaults."""
    options_schema: dict[str, Any]
    """JSON Schema of the title's options (``POST /games`` ``options``)."""
    lifecycle_options_schema: dict[str, Any]
    """JSON Schema of the options every title shares (clock, timeouts, undo)."""
    bots: list[str]
    """Bot names for ``POST /games/{id}/join {"bot": ...}``."""
    content: dict[str, Any]
    """File name (without ``.toml``) -> its data."""


class CreateGameRequest(Request):
    """Create a game of ``title`` with ``seats`` seats (``options`` by name; unknown ones refused)."""

    title: str
    seats: int
    options: dict[str, Any] = {}
    game_id: str | None = None
    """Optional client-chosen id (1-64 of ``[A-Za-z0-9_.-]``); a fresh one otherwise."""
    require_seat_keys: bool = False
    """Refuse joins that register no seat key."""
    command_id: str | None = None
    """Optional, a secret of the creator (1-60 of ``[A-Za-z0-9_.:-]``): a retry with the same id
    (and the same title, seats and options) gets the same game and its ``owner_token`` again,
    also without ``game_id`` (the game's id is then derived from it: make it a random secret);
    the id again without ``game_id`` but with another title, seats or options is 409
    ``command_id_reused``. Without it a create is not retried: another create of a taken ``game_id`` is 409
    ``game_exists``. Never stored, logged or exported in the clear (the bus sees its hash)."""


class Receipt(Record):
    """The game's head (version, hash) when the deployment answered, signed with its Ed25519 key.

    Signed bytes: ``questhall-receipt/1\n<game_id>\n<version>\n<head_hash>`` (UTF-8); the key
    is the one of ``key_id`` in ``GET /v1/keys``. Keep receipts: ``questhall audit --file bundle
    --receipts r.json`` proves a bundle forged if it lacks a receipted head (docs/fairness.md).
    """

    game_id: str
    version: int
    head_hash: str
    key_id: str
    signature: str
    """128 hex digits (Ed25519)."""
    format: str = "questhall-receipt/1"


class PublicKey(Record):
    key_id: str
    """First 16 hex digits of SHA-256 of the raw public key."""
    public_key: str
    """The raw 32-byte Ed25519 public key, 64 hex digits."""
    alg: str = "Ed25519"


class KeysReply(Record):
    """The deployment's receipt keys: the first signs now, the others signed earlier receipts."""

    receipt_keys: list[PublicKey]


class Head(Record):
    """A game's current head, read from the event store (not a read model: never behind)."""

    game_id: str
    version: int
    head_hash: str
    receipt: Receipt | None = None


class GameCreatedReply(Record):
    game_id: str
    title: str
    seats: int
    version: int
    receipt: Receipt | None = None
    owner_token: str = ""
    """The game owner's token (whoever created it; no seat): it starts the game with
    ``POST /games/{id}/start`` (the way to start a game every seat of which is a bot); it
    reads no view and plays no seat. Keep it secret; a retried create gets the same one."""


class JoinRequest(Request):
    """Take a seat. ``seat`` None: the lowest open seat."""

    name: str = ""
    """The player's name (1-40 printable characters; default ``<bot> bot`` for a bot seat)."""
    seat: int | None = None
    client_seed: str = ""
    """Optional hex (<= 64 digits) mixed into the game's chance."""
    bot: str = ""
    """A named bot of the title (``bots`` of ``GET /titles/{title}``): the server's bot service plays the seat."""
    command_id: str | None = None
    """For an idempotent retry of the same join (keep it secret: it returns the token again)."""
    public_key: str = ""
    """Optional Ed25519 public key (64 hex digits): every later command of the seat must be signed with it."""


class SeatGrant(Record):
    """A taken seat and its token. The token is the only proof of the seat: keep it secret."""

    game_id: str
    title: str
    seat: int
    name: str
    token: str
    version: int
    receipt: Receipt | None = None


class CommandRequest(Request, Generic[B]):
    """A command sent as the token's seat."""

    command: B
    """The title's command (tagged by ``type``), or ``leave`` / ``abandon``."""
    command_id: str | None = None
    """Client-chosen id (1-60 of ``[A-Za-z0-9_.:-]``); a retry with the same id returns the
    same outcome. A fresh id otherwise."""
    expected_version: int | None = None
    """If set, refused with ``stale_version`` unless the game is at that version."""
    signature: str | None = None
    """For a seat that registered a key at join: the Ed25519 signature (128 hex digits) of
    ``questhall-seat/1\n<game>\n<seat>\n<expected_version>\n<SHA-256 of the body's canonical JSON>``
    (the body with every field, defaults included; docs/fairness.md, "Seat keys")."""


class EndGameRequest(Request):
    """An operator ends a stuck game without a result (admin)."""

    reason: str
    """Why (1-200 characters, no control characters); stated in the ``game_abandoned`` event."""


class CommandAccepted(Record):
    """The command was accepted: the game is now at ``version`` (``events`` appended).

    With ``dry_run`` (``POST .../commands?dry_run=true``): it would be accepted at ``version``;
    nothing was appended (``events`` 0)."""

    command_id: str
    game_id: str
    version: int
    events: int
    receipt: Receipt | None = None
    """The signed head after the command: keep it (see :class:`Receipt`)."""
    dry_run: bool = False


class ErrorBody(Record):
    """Every 4xx/5xx body. ``code`` is stable; ``message`` is one sentence, never a secret."""

    code: str
    message: str
    command_id: str | None = None
    """For rule rejections and timeouts: the command id (retry with it)."""
    version: int | None = None
    """For rule rejections: the game's version when refused."""
    receipt: Receipt | None = None
    """For rule rejections: the signed head the command was refused on."""


class LobbyGame(Record):
    """One game in the lobby read model."""

    game_id: str
    title: str
    status: Literal["lobby", "active", "finished", "abandoned"]
    seats: int
    taken: int
    names: list[str | None]
    created_at: int
    """Milliseconds since the Unix epoch."""
    note: str = ""
    """The title's one public line about the game (e.g. an Orion Duel match: "Game 2 of 5:
    Blue 1, Orange 0"); "" for none. At most 200 characters."""


class LobbyPage(Record):
    games: list[LobbyGame]


class RebuildReply(Record):
    games: int
    """Games replayed into fresh read models."""


# ---------------------------------------------------------------------------------------------
# WebSocket messages


class WsFeed(Record, Generic[B], tag_field="type", tag="feed"):
    """One feed entry (versions strictly increasing on a socket)."""

    version: int
    entry: FeedEntry[B]


class WsView(Record, Generic[B], tag_field="type", tag="view"):
    """The seat's (or spectators') current view, sent after the feed entries up to its version."""

    version: int
    view: ViewEnvelope[B]


class WsOutcome(Record, tag_field="type", tag="outcome"):
    """The outcome of a :class:`WsCommand`: ``status`` accepted or rejected."""

    command_id: str
    status: Literal["accepted", "rejected"]
    version: int
    events: int = 0
    code: str | None = None
    message: str | None = None
    receipt: Receipt | None = None


class WsError(Record, tag_field="type", tag="error"):
    code: str
    message: str


class WsCommand(Request, Generic[B], tag_field="type", tag="command"):
    """Client to server (seat sockets only): submit a command, answered by a WsOutcome."""

    command: B
    command_id: str | None = None
    expected_version: int | None = None
    signature: str | None = None
    """The seat key's signature (see :class:`CommandRequest`)."""


class WsPing(Request, tag_field="type", tag="ping"):
    """Client to server: answered by ``{"type": "pong"}``."""
