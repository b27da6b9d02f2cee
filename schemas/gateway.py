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


class GameCreatedReply(Record):
    game_id: str
    title: str
    seats: int
    version: int


class JoinRequest(Request):
    """Take a seat. ``seat`` None: the lowest open seat."""

    name: str = ""
    """The player's name (1-40 printable characters; default ``<bot> bot`` for a bot seat)."""
    seat: int | None = None
    client_seed: str = ""
    """Optional hex (<= 64 digits) mixed into the game's chance."""
    bot: str = ""
    """A named bot of the title (``GET /titles``): the server's bot service plays the seat."""
    command_id: str | None = None
    """For an idempotent retry of the same join (keep it secret: it returns the token again)."""


class SeatGrant(Record):
    """A taken seat and its token. The token is the only proof of the seat: keep it secret."""

    game_id: str
    title: str
    seat: int
    name: str
    token: str
    version: int


class CommandRequest(Request, Generic[B]):
    """A command sent as the token's seat."""

    command: B
    """The title's command (tagged by ``type``), or ``leave`` / ``abandon``."""
    command_id: str | None = None
    """Client-chosen id (1-60 of ``[A-Za-z0-9_.:-]``); a retry with the same id returns the
    same outcome. A fresh id otherwise."""
    expected_version: int | None = None
    """If set, refused with ``stale_version`` unless the game is at that version."""


class CommandAccepted(Record):
    """The command was accepted: the game is now at ``version`` (``events`` appended).

    With ``dry_run`` (``POST .../commands?dry_run=true``): it would be accepted at ``version``;
    nothing was appended (``events`` 0)."""

    command_id: str
    game_id: str
    version: int
    events: int
    dry_run: bool = False


class ErrorBody(Record):
    """Every 4xx/5xx body. ``code`` is stable; ``message`` is one sentence, never a secret."""

    code: str
    message: str
    command_id: str | None = None
    """For rule rejections and timeouts: the command id (retry with it)."""
    version: int | None = None
    """For rule rejections: the game's version when refused."""


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


class WsError(Record, tag_field="type", tag="error"):
    code: str
    message: str


class WsCommand(Request, Generic[B], tag_field="type", tag="command"):
    """Client to server (seat sockets only): submit a command, answered by a WsOutcome."""

    command: B
    command_id: str | None = None
    expected_version: int | None = None


class WsPing(Request, tag_field="type", tag="ping"):
    """Client to server: answered by ``{"type": "pong"}``."""
